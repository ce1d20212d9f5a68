"""Labelled cases for ``watcher eval``: the JSONL format, the security corpus's, and the transcripts a case is run as.

One JSON object per line. A **security case** is code or a command with its label::

    {"id": "sql-1", "label": "vulnerable", "language": "python", "path": "app/db.py",
     "code": "...", "lines": [4]}

``label`` is ``vulnerable`` or ``benign``; ``lines`` are the 1-based labelled lines (``vuln_lines``
is read too, so the shared security corpus is read where it lies); ``command`` may stand for
``code``. A case runs as an agent's ``Write`` of the file, a notebook cell, or a ``Bash`` command:
Python runs as a write and a cell, shell as a command, any other language as a write
(``forms`` overrides). A **loop case** is a transcript with its label::

    {"id": "loop-1", "label": "stuck", "stuck_from": 7, "transcript": [{"kind": "tool_call", ...}, ...]}

``label`` is ``stuck`` (from the 1-based observation ``stuck_from``) or ``not_stuck``;
``transcript`` holds records in watcher's transcript format, or ``transcript_file`` names a
transcript of any supported format, relative to the set's file.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError, TranscriptError
from watcher.core.observations import (
    CellExecuted,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
    observation_from_dict,
)
from watcher.transcripts import read_file

__all__ = ["FORMS", "Case", "read_cases", "run_as"]

FORMS = ("write", "cell", "bash", "transcript")
SECURITY_LABELS = ("vulnerable", "benign")
LOOP_LABELS = ("stuck", "not_stuck")
_EXTENSIONS = {"python": ".py", "js": ".js", "javascript": ".js", "ts": ".ts", "typescript": ".ts", "shell": ".sh"}
_EXTENSIONS.update(bash=".sh", text=".txt", go=".go", ruby=".rb", java=".java", php=".php", sql=".sql")


@dataclass(frozen=True, slots=True)
class Case:
    """One labelled case: security (``code``, ``lines``) or loop (``observations``, ``stuck_from``)."""

    id: str
    label: str
    kind: str  # "security" or "loop"
    forms: tuple[str, ...]
    language: str = ""
    code: str = ""
    path: str = ""
    lines: tuple[int, ...] = ()
    stuck_from: int | None = None
    observations: tuple[Observation, ...] = ()

    @property
    def positive(self) -> bool:
        """Whether there is something to find (vulnerable, stuck)."""
        return self.label in ("vulnerable", "stuck")


def read_cases(path: Path) -> list[Case]:
    """The cases of a labelled set; a line that is not a case is a ``ConfigurationError`` naming it."""
    if path.is_char_device():  # /dev/zero, /dev/urandom: reading it whole would never end
        raise ConfigurationError(f"--set {path} is a device, not a file; give a labelled JSONL file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"--set {path}: not UTF-8 text (byte {exc.start}); give a labelled JSONL file saved as UTF-8"
        ) from exc
    except OSError as exc:
        raise ConfigurationError(f"--set {path}: cannot read it ({exc.strerror}); give a labelled JSONL file") from exc
    cases: list[Case] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            cases.append(_case(record, path.parent))
        except KeyError as exc:
            raise ConfigurationError(
                f"--set {path}, line {number}: not a labelled case: it has no {exc} field"
            ) from exc
        except (ValueError, TypeError, TranscriptError, ConfigurationError) as exc:
            raise ConfigurationError(f"--set {path}, line {number}: not a labelled case: {exc}") from exc
    if not cases:
        raise ConfigurationError(f"--set {path} holds no cases")
    seen = [c.id for c in cases]
    twice = sorted({i for i in seen if seen.count(i) > 1})
    if twice:
        raise ConfigurationError(f"--set {path}: case ids must be unique; repeated: {', '.join(twice[:5])}")
    return cases


def _case(record: Mapping[str, Any], folder: Path) -> Case:
    if not isinstance(record, Mapping):
        raise ConfigurationError("expected a JSON object")
    case_id, label = str(record["id"]), str(record["label"])
    if "transcript" in record or "transcript_file" in record:
        if label not in LOOP_LABELS:
            raise ConfigurationError(f"a loop case's label is one of {', '.join(LOOP_LABELS)}, not {label!r}")
        stuck_from = record.get("stuck_from")
        if label == "stuck" and not (isinstance(stuck_from, int) and stuck_from >= 1):
            raise ConfigurationError("a stuck case needs stuck_from: the 1-based observation the loop starts at")
        observations = _transcript(record, folder)
        if label == "stuck" and stuck_from is not None and stuck_from > len(observations):
            raise ConfigurationError(
                f"stuck_from {stuck_from} is past the transcript's end ({len(observations)} observations): "
                "no watcher could find that loop"
            )
        return Case(case_id, label, "loop", ("transcript",), stuck_from=stuck_from, observations=observations)
    if label not in SECURITY_LABELS:
        raise ConfigurationError(f"a security case's label is one of {', '.join(SECURITY_LABELS)}, not {label!r}")
    code = record.get("code", record.get("command"))
    if not isinstance(code, str):
        raise ConfigurationError("a security case needs its code (or command) as a string")
    language = str(record.get("language") or ("shell" if "command" in record else "text"))
    lines = _labelled_lines(record.get("lines", record.get("vuln_lines")) or [], code)
    given = record.get("forms")
    if given is not None and not (isinstance(given, list) and all(isinstance(f, str) for f in given)):
        raise ConfigurationError(f'forms must be a list such as ["write", "cell"], not {json.dumps(given)[:60]}')
    forms = tuple(given or _forms(language))
    unknown = [f for f in forms if f not in FORMS[:3]]
    if unknown:
        raise ConfigurationError(f"unknown forms {unknown}; a security case runs as write, cell or bash")
    return Case(
        case_id,
        label,
        "security",
        forms,
        language=language,
        code=code,
        path=_file_name(str(record.get("path") or ""), language, case_id),
        lines=lines,
    )


def _labelled_lines(lines: object, code: str) -> tuple[int, ...]:
    """The labelled lines, sorted: 1-based line numbers of ``code`` (a line past its end is a typo)."""
    if not isinstance(lines, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in lines):
        raise ConfigurationError(
            f"lines must be a list of line numbers, such as [4] or [4, 5], not {json.dumps(lines)}"
        )
    count = len(code.splitlines()) or 1
    outside = sorted({n for n in lines if not 1 <= n <= count})
    if outside:
        raise ConfigurationError(
            f"lines {outside} are outside the code, which has {count} line{'s' if count > 1 else ''} (numbered from 1)"
        )
    return tuple(sorted(set(lines)))


def _forms(language: str) -> tuple[str, ...]:
    if language == "python":
        return ("write", "cell")
    if language in ("shell", "bash", "sh"):
        return ("bash",)
    return ("write",)


def _file_name(path: str, language: str, case_id: str) -> str:
    """The name a case is written under: its own file name, with its language's extension."""
    base = re.sub(r"[^\w.\-]", "_", posixpath.basename(path.split("#")[0])).strip("._") or re.sub(r"\W", "_", case_id)
    extension = _EXTENSIONS.get(language, "")
    if not extension or base.endswith(extension) or (language == "text" and "." in base):
        return base
    return posixpath.splitext(base)[0] + extension


def _transcript(record: Mapping[str, Any], folder: Path) -> tuple[Observation, ...]:
    if "transcript_file" in record:
        return tuple(read_file(folder / str(record["transcript_file"])).observations)
    records = record["transcript"]
    if not isinstance(records, Sequence) or not records:
        raise ConfigurationError("transcript must be a non-empty list of transcript records")
    return tuple(observation_from_dict(r) for r in records)


def run_as(case: Case, form: str) -> list[Observation]:
    """The observations an agent (or a notebook) would leave with ``case`` in ``form``."""
    if form == "transcript":
        return list(case.observations)
    ask = UserMessage(text="Please continue with the task.")
    if form == "cell":
        return [ask, CellExecuted(source=case.code, cell_id=f"cell-{case.id}", execution_count=1)]
    if form == "bash":
        return [
            ask,
            ToolCall(id="b1", name="Bash", input={"command": case.code}),
            ToolResult(tool_call_id="b1", output=""),
        ]
    write = ToolCall(id="w1", name="Write", input={"file_path": case.path, "content": case.code})
    return [ask, write, ToolResult(tool_call_id="w1", output=f"Successfully wrote {case.path}")]
