"""watcher's own JSONL transcripts: one observation per line, ``kind`` naming it (design.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from watcher.core.errors import TranscriptError
from watcher.core.observations import KINDS, Observation, observation_from_dict
from watcher.transcripts._base import RecordReader

__all__ = ["WatcherReader", "sniff"]


def sniff(record: Mapping[str, Any]) -> bool:
    """A watcher record has a ``kind`` watcher knows and no foreign ``type``/``raw`` envelope."""
    kind = record.get("kind")
    return isinstance(kind, str) and kind in KINDS and "raw" not in record and "type" not in record


class WatcherReader(RecordReader):
    """Reads watcher's JSONL records back into the observations they were written from."""

    format = "watcher"

    def type_of(self, record: Mapping[str, Any]) -> str:
        kind = record.get("kind")
        return kind if isinstance(kind, str) else "<no kind>"

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("kind")
        if kind not in KINDS:
            return self.skip(kind if isinstance(kind, str) else "<no kind>")
        try:
            return [observation_from_dict(record)]
        except TranscriptError as exc:
            if self.strict:
                raise
            self.skipped[f"{kind} (malformed: {exc.reason})"] += 1
            return []
