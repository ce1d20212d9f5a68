"""Transcript readers: every agent transcript and live stream watcher reads, as observations.

One module per format (``watcher formats`` lists them): watcher's own JSONL, Claude Code saved
sessions and stream-json, Codex rollouts and ``codex exec --json``, Gemini CLI stream-json and
saved chats, OpenHands event streams, SWE-agent and mini-swe-agent trajectories, pi sessions,
Antigravity step logs and Anthropic managed-agent events.

The reader API (stable: ``watcher replay``, the spawn and the hook features all use it):

- ``reader = reader_for(name, session=..., strict=False)`` makes a ``RecordReader``.
- ``reader.feed(record) -> list[Observation]`` takes one parsed JSON value (a JSONL line, a
  CLI's stdout line, a hook payload, one element of a document) and returns the observations it
  completes, often none. It never raises on a record of an unexpected type or shape: it counts it
  in ``reader.skipped`` (unknown or malformed) or ``reader.ignored`` (known bookkeeping). With
  ``strict=True`` an unknown or malformed record raises ``TranscriptError`` instead.
- ``reader.end() -> list[Observation]`` flushes what is still pending (text streamed in deltas)
  when the transcript or the live stream ends; call it once.
- Every observation names its ``session`` (the agent's own session id where the records carry
  one, else the ``session`` the reader was made with) and, for a subagent, its
  ``parent_session``. A file holding several runs yields several sessions.

``read_file(path, format=None, strict=False)`` reads a whole file on top of that: it detects the
format (``detect_records``/``detect_document``), reads whole-JSON documents as such, and returns
a ``Transcript`` with the observations and the skipped and ignored record counts.
``read_transcript(path)`` is the short form returning just the observations.

This package depends on ``watcher.core`` only (an import-linter contract checks it).
"""

from __future__ import annotations

from pathlib import Path

from watcher.core.errors import TranscriptError
from watcher.core.observations import Observation
from watcher.transcripts._base import RecordReader
from watcher.transcripts._file import Transcript, read_file, read_records
from watcher.transcripts._registry import FORMATS, Format, detect_document, detect_records, format_named

__all__ = [
    "FORMATS",
    "Format",
    "RecordReader",
    "Transcript",
    "detect_document",
    "detect_records",
    "format_named",
    "read_file",
    "read_records",
    "read_transcript",
    "reader_for",
]


def reader_for(format: str, *, session: str = "transcript", strict: bool = False) -> RecordReader:
    """A fresh reader for the format called ``format`` (see ``FORMATS``)."""
    return format_named(format).reader(session=session, strict=strict)


def read_transcript(path: str | Path, *, format: str | None = None, strict: bool = False) -> list[Observation]:
    """All observations of the transcript at ``path``; a file with none is an error."""
    transcript = read_file(path, format=format, strict=strict)
    if not transcript.observations:
        skipped = ", ".join(f"{n} {t!r}" for t, n in sorted(transcript.skipped.items())) or "none"
        raise TranscriptError(
            f"holds no observations ({transcript.format} format; records skipped: {skipped}); is it a transcript?",
            source=transcript.source,
        )
    return list(transcript.observations)
