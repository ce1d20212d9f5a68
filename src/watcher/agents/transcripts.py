"""Reading recorded agent transcripts: watcher's JSONL, Claude Code stream-json and saved sessions.

Every format becomes the observation kinds of design.md. Claude Code records are recognised by
their ``type`` field (``system``, ``assistant``, ``user``, ``result``, ``summary``): assistant
text and ``tool_use`` blocks become ``assistant_message`` and ``tool_call``; ``tool_result``
blocks in user records become ``tool_result``; a ``result`` record ends the turn; compaction
summaries become ``condensation``. Bad input raises ``TranscriptError`` naming file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from watcher.core.errors import TranscriptError
from watcher.core.observations import (
    AssistantMessage,
    Condensation,
    Done,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
    observation_from_dict,
)

__all__ = ["read_transcript", "records_to_observations"]

_CLAUDE_TYPES = {
    "system",
    "assistant",
    "user",
    "result",
    "summary",
    "file-history-snapshot",
    "stream_event",
    "attachment",
}


def read_transcript(path: str | Path) -> list[Observation]:
    """All observations of the transcript at ``path`` (any supported format)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TranscriptError("no such file; give the path of a JSONL transcript", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"cannot read it ({exc})", source=str(path)) from exc
    observations = list(records_to_observations(text.splitlines(), source=str(path)))
    if not observations:
        raise TranscriptError("holds no observations; is it a transcript?", source=str(path))
    return observations


def decode_line(text: str, *, source: str = "<transcript>", line: int | None = None) -> Any:
    """One JSON line of a transcript; whatever json cannot take (bad syntax, deep nesting) is a TranscriptError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(f"not valid JSON ({exc.msg} at column {exc.colno})", source=source, line=line) from exc
    except RecursionError:
        raise TranscriptError("JSON nested too deeply to read; flatten the record", source=source, line=line) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise TranscriptError(f"not valid JSON ({exc})", source=source, line=line) from exc


def records_to_observations(lines: list[str], *, source: str = "<transcript>") -> Iterator[Observation]:
    """Convert transcript lines, whatever their format, into observations."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = decode_line(line, source=source, line=number)
        try:
            if not isinstance(record, dict):
                raise TranscriptError(f"expected a JSON object, got {type(record).__name__}")
            if "kind" in record:
                yield observation_from_dict(record)
            elif record.get("type") in _CLAUDE_TYPES:
                yield from _claude(record)
            else:
                raise TranscriptError(
                    "neither a watcher record (it has no 'kind') nor a Claude Code record (no known 'type')"
                )
        except TranscriptError as exc:
            raise TranscriptError(exc.reason, source=source, line=number) from exc


def _ts(record: Mapping[str, Any]) -> float | None:
    stamp = record.get("timestamp")
    if isinstance(stamp, str):
        try:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text", "") for c in content if isinstance(c, Mapping) and c.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _claude(record: dict[str, Any]) -> Iterator[Observation]:
    kind = record["type"]
    common: dict[str, Any] = {"ts": _ts(record), "session": record.get("session_id") or record.get("sessionId")}
    if (
        kind == "summary"
        or record.get("isCompactSummary")
        or (kind == "system" and record.get("subtype") == "compact_boundary")
    ):
        yield Condensation(**common)
        return
    if kind == "result":
        if record.get("is_error") or str(record.get("subtype", "")).startswith("error"):
            yield HarnessError(**common, text=str(record.get("result") or record.get("subtype")))
        yield Done(**common)
        return
    message = record.get("message")
    if kind not in ("assistant", "user") or not isinstance(message, Mapping):
        return  # system init, snapshots, stream events: nothing a watcher judges
    content = message.get("content")
    if kind == "user" and isinstance(content, str):
        yield UserMessage(**common, text=content)
        return
    if not isinstance(content, list):
        raise TranscriptError(f"a Claude Code {kind!r} record needs message.content as a string or a list")
    for block in content:
        if not isinstance(block, Mapping):
            continue
        btype = block.get("type")
        if btype == "text" and kind == "assistant":
            yield AssistantMessage(**common, text=str(block.get("text", "")))
        elif btype == "text":
            yield UserMessage(**common, text=str(block.get("text", "")))
        elif btype == "tool_use":
            args = block.get("input")
            yield ToolCall(
                **common,
                id=str(block.get("id", "")),
                name=str(block.get("name", "")),
                input=args if isinstance(args, dict) else {},
            )
        elif btype == "tool_result":
            yield ToolResult(
                **common,
                tool_call_id=str(block.get("tool_use_id", "")),
                output=_text_of(block.get("content")),
                is_error=bool(block.get("is_error")),
            )
