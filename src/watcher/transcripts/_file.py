"""Reading a whole transcript file: detect its format, feed every record, end, and report.

Whole-JSON documents (a saved chat, a trajectory, a JSON array of records) are read as such;
anything else is read as JSONL, one record per line. A line that is not JSON is skipped and
counted (``invalid JSON``) unless ``strict``; a strict error names the file and the line.
"""

from __future__ import annotations

import json
import stat
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from watcher.core.errors import TranscriptError
from watcher.core.observations import Observation
from watcher.transcripts._base import RecordReader
from watcher.transcripts._registry import detect_document, detect_records, format_named

__all__ = ["Transcript", "read_file", "read_records"]


@dataclass(frozen=True, slots=True)
class Transcript:
    """What a transcript file held: its format, observations, and the records not read."""

    source: str
    format: str
    observations: tuple[Observation, ...]
    records: int = 0
    skipped: Mapping[str, int] = field(default_factory=dict)
    ignored: Mapping[str, int] = field(default_factory=dict)

    def sessions(self, default: str | None = None) -> dict[str, tuple[str | None, list[Observation]]]:
        """Observations grouped by session, in order of first appearance: name -> (parent, list).

        Observations that name no session belong to ``default``, else to the first session named
        in the transcript, else to one named after the file.
        """
        named = next((obs.session for obs in self.observations if obs.session), None)
        name = default or named or Path(self.source).name
        groups: dict[str, tuple[str | None, list[Observation]]] = {}
        for obs in self.observations:
            key = obs.session or name
            group = groups.get(key)
            if group is None:
                group = groups[key] = (obs.parent_session, [])
            group[1].append(obs)
        return groups


def _is_device(path: Path) -> bool:
    """A character or block device (a pipe, as ``<(cat t.jsonl)`` gives, is read: it ends)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # read_bytes says what is wrong
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def read_file(
    path: str | Path, *, format: str | None = None, strict: bool = False, session: str | None = None
) -> Transcript:
    """Read the transcript at ``path`` in ``format`` (detected when ``None``)."""
    path = Path(path)
    source = str(path)
    try:
        if _is_device(path):  # /dev/zero or a disk would be read until memory ran out
            raise TranscriptError("is a device, not a file; give the path of a transcript file", source=source)
        data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")  # orjson decodes (and checks) UTF-8 itself
    except FileNotFoundError:
        raise TranscriptError("no such file; give the path of a transcript", source=source) from None
    except IsADirectoryError:
        raise TranscriptError("is a directory; give the path of a transcript file", source=source) from None
    except OSError as exc:
        raise TranscriptError(f"cannot read it ({exc})", source=source) from exc
    wide = _wide_encoding(data)
    if wide is not None:
        raise TranscriptError(
            f"is {wide} text, and watcher reads UTF-8; convert it first "
            f"(iconv -f {wide} -t UTF-8 {source} > converted.jsonl)",
            source=source,
        )
    fmt = format_named(format) if format else None
    default = session or path.name
    document = _whole_json(data)
    invalid = Counter[str]()
    if document is not _NOT_JSON:
        fmt = fmt or detect_document(document)
        records: list[object] = list(fmt.records_of(document)) if fmt else _as_records(document)
        one_line = isinstance(document, dict) and (fmt is None or fmt.records is None)  # a one-line JSONL file
        numbered = [(1 if one_line else None, r) for r in records]
    else:
        numbered = list(_lines(data, source, strict, invalid))
        if not numbered and invalid:  # a broken document, or not JSON at all: say so, not "no records"
            raise TranscriptError(
                f"not valid JSON: none of its {invalid.total()} non-blank lines is a JSON value, and the "
                "file is not one JSON document; is it a transcript?",
                source=source,
            )
    if fmt is None:
        fmt = detect_records([r for _, r in numbered], source=source)
    reader = fmt.reader(session=default, strict=strict)
    observations = read_records(reader, numbered, source=source)
    skipped = Counter(reader.skipped)
    skipped.update(invalid)
    count = reader.records + sum(invalid.values())
    return Transcript(source, fmt.name, tuple(observations), count, dict(skipped), dict(reader.ignored))


def read_records(
    reader: RecordReader, records: Iterable[tuple[int | None, object]], *, source: str = "<transcript>"
) -> list[Observation]:
    """Feed ``(line, record)`` pairs to ``reader`` and end it; strict errors name the line."""
    observations: list[Observation] = []
    at: int | None = None
    try:
        for number, record in records:
            at = number
            observations.extend(reader.feed(record))
        at = None
        observations.extend(reader.end())
    except TranscriptError as exc:
        raise TranscriptError(exc.reason, source=source, line=at) from exc
    return observations


_NOT_JSON = object()
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_JSON_START = frozenset(b"{[ \t\r\n")


def _wide_encoding(data: bytes) -> str | None:
    """The encoding's name when ``data`` is UTF-16 or UTF-32 text (as iconv knows it), else ``None``.

    Windows tools (PowerShell's ``>``, Notepad) write UTF-16; read as UTF-8 it is no JSON at all,
    so it is named here rather than reported as invalid JSON. Known by its byte order mark, or,
    without one, by a NUL byte beside the ``{``/``[`` a transcript starts with (UTF-8 JSON has no
    NUL byte outside a string).
    """
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name
    first, second = data[:1], data[1:2]
    if first and first[0] in _JSON_START and second == b"\x00":
        return "UTF-16LE"  # without a byte order mark, iconv must be told the order
    if first == b"\x00" and second and second[0] in _JSON_START:
        return "UTF-16BE"
    return None


def _whole_json(data: bytes) -> object:
    if data.lstrip()[:1] not in (b"{", b"["):
        return _NOT_JSON
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # JSONL: a second value after the first line, or a broken document
        repaired = _utf8_repaired(data)
        if repaired is None:
            return _NOT_JSON
        try:
            return orjson.loads(repaired)
        except orjson.JSONDecodeError:
            return _NOT_JSON


def _utf8_repaired(data: bytes) -> bytes | None:
    """``data`` with its invalid UTF-8 bytes replaced by U+FFFD, or ``None`` when it was valid.

    Tool output in real transcripts carries such bytes; a record readable once they are replaced
    is read, not lost.
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace").encode("utf-8")
    return None


def _loads(line: bytes) -> object:
    """One JSON line: orjson, or the standard library for what JSON allows and orjson refuses
    (a lone surrogate escape such as ``"\\ud800"``), so such a record is read, not skipped; invalid
    UTF-8 bytes are replaced first."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        repaired = _utf8_repaired(line)
        if repaired is not None:
            return _loads(repaired)
        if b"\\u" not in line:
            raise
        try:
            return json.loads(line)
        except (ValueError, RecursionError):
            pass
        raise


def _as_records(document: object) -> list[object]:
    return list(document) if isinstance(document, list) else [document]


def _lines(data: bytes, source: str, strict: bool, invalid: Counter[str]) -> Iterable[tuple[int | None, object]]:
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, _loads(line)
        except orjson.JSONDecodeError as exc:
            if strict:
                raise TranscriptError(f"not valid JSON ({exc})", source=source, line=number) from exc
            invalid["invalid JSON"] += 1
