"""The reader protocol every format implements: feed records one at a time, then end.

A reader turns the records of one agent's transcript or live stream into observations. It is
sans-IO: it never opens a file or a pipe, so ``watcher replay``, the spawn feature (a CLI's
stdout, line by line) and the hooks feature (one hook payload at a time) share it.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from watcher.core.errors import TranscriptError
from watcher.core.observations import Observation

__all__ = ["RecordReader", "as_text", "exit_code_in", "parse_args", "timestamp"]


class RecordReader(ABC):
    """Base of every format's reader.

    ``feed(record)`` takes one parsed JSON value and returns the observations it completes (often
    none, sometimes several); ``end()`` flushes what is still pending (a message streamed in
    deltas, a tool call never answered) when the transcript or the live stream ends. Lenient by
    default: a record of a type the format does not know is counted in ``skipped`` and nothing
    is raised; known bookkeeping records (progress, token counts, snapshots) are counted in
    ``ignored``. With ``strict=True`` an unknown or malformed record raises ``TranscriptError``.
    """

    format: ClassVar[str] = ""

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        self.session = session  # used until the records name their own session
        self.strict = strict
        self.skipped: Counter[str] = Counter()
        self.ignored: Counter[str] = Counter()
        self.records = 0

    def feed(self, record: object) -> list[Observation]:
        """The observations ``record`` completes; never raises unless ``strict``."""
        self.records += 1
        if not isinstance(record, Mapping):
            return self.skip(f"non-object ({type(record).__name__})")
        try:
            return self._feed(record)
        except TranscriptError:
            raise  # only raised in strict mode, by skip()
        except Exception as exc:
            what = f"{self.type_of(record)} (malformed)"
            if self.strict:
                raise TranscriptError(
                    f"a {self.format} record of type {self.type_of(record)!r} has an unexpected shape "
                    f"({type(exc).__name__}: {exc})"
                ) from exc
            self.skipped[what] += 1
            return []

    def end(self) -> list[Observation]:
        """Flush what is still pending at the end of the transcript or stream."""
        try:
            return self._end()
        except Exception as exc:
            if self.strict:
                raise TranscriptError(f"the {self.format} reader failed at the end ({exc})") from exc
            self.skipped["pending at the end (malformed)"] += 1
            return []

    # --- for subclasses -------------------------------------------------------------------------

    @abstractmethod
    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        """The observations ``record`` completes (a reader may hold some back until ``_end``)."""

    def _end(self) -> list[Observation]:
        return []

    def type_of(self, record: Mapping[str, Any]) -> str:
        """The record's type as error messages and the skipped counts name it."""
        kind = record.get("type")
        return kind if isinstance(kind, str) else "<no type>"

    def skip(self, what: str) -> list[Observation]:
        """Count an unknown record (or raise, when strict); returns no observations."""
        if self.strict:
            raise TranscriptError(f"unknown record type {what!r} for the {self.format} format")
        self.skipped[what] += 1
        return []

    def ignore(self, what: str) -> list[Observation]:
        """Count a known record that holds nothing a watcher judges."""
        self.ignored[what] += 1
        return []


_EPOCH_MS = 10_000_000_000  # a number above this is milliseconds since the epoch


def timestamp(value: object) -> float | None:
    """Seconds since the epoch from an ISO 8601 string or a number (seconds or milliseconds)."""
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value / 1000 if value > _EPOCH_MS else float(value)
    return None


def as_text(content: object) -> str:
    """Text of a string, or of a list of content blocks (``{"type": "text", "text": ...}``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return str(content["text"])
    return ""


def parse_args(arguments: object) -> dict[str, Any]:
    """A tool call's arguments: an object as is, a JSON-encoded object decoded, else wrapped."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return {"input": arguments}
        return dict(value) if isinstance(value, Mapping) else {"input": value}
    return {}


EXIT_CODE = re.compile(r"(?:exit(?:ed with)? code|Exit code)[:\s]+(-?\d+)", re.IGNORECASE)


def exit_code_in(text: str, *, limit: int = 400, tail: bool = False) -> int | None:
    """The exit code a tool's output reports near its start ("Process exited with code 1"), or
    near its end with ``tail`` (Gemini CLI's shell tool ends with "Exit Code: 1")."""
    match = EXIT_CODE.search(text[-limit:] if tail else text[:limit])
    return int(match.group(1)) if match else None
