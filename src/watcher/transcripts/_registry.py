"""The formats watcher reads, how each is recognised, and automatic detection.

Detection looks at whole-JSON documents first (a saved chat, a trajectory), then at the first
records of a JSONL file; the first format in ``FORMATS`` order that recognises a record wins.
The order matters only where formats share field names: Claude Code and Gemini CLI both have
``result`` records, managed-agent events a ``kind`` (watcher's own records have no ``type``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from watcher.core.errors import TranscriptError
from watcher.transcripts import (
    _antigravity,
    _claude_code,
    _codex_exec,
    _codex_rollout,
    _gemini_chat,
    _gemini_stream,
    _managed_agents,
    _mini_swe_agent,
    _openhands,
    _pi_agent,
    _swe_agent,
    _watcher,
)
from watcher.transcripts._base import RecordReader

__all__ = ["FORMATS", "Format", "detect_document", "detect_records", "format_named"]

SNIFF_RECORDS = 50  # records looked at to recognise a JSONL file


@dataclass(frozen=True, slots=True)
class Format:
    """One transcript format: its name, what produces it, an example, and its reader."""

    name: str
    title: str
    example: str
    reader: type[RecordReader]
    sniff: Callable[[Mapping[str, Any]], bool] | None = None
    sniff_document: Callable[[object], bool] | None = None
    records: Callable[[object], Iterator[object]] | None = None

    def records_of(self, document: object) -> Iterator[object]:
        """The records a whole-JSON document holds, in the order the reader takes them."""
        if self.records is not None:
            return self.records(document)
        return iter(document) if isinstance(document, list) else iter((document,))


FORMATS: tuple[Format, ...] = (
    Format("watcher", "watcher's own JSONL transcripts (one observation per line)",
           "watcher replay example_notebooks/data/notebook_error_loop.jsonl", _watcher.WatcherReader, _watcher.sniff),
    Format("claude-code", "Claude Code saved sessions (~/.claude/projects/*/*.jsonl, 1.x and 2.x) and -p --output-format stream-json",
           "watcher replay ~/.claude/projects/-home-me-repo/SESSION.jsonl", _claude_code.ClaudeCodeReader, _claude_code.sniff),
    Format("codex", "Codex CLI session rollouts (~/.codex/sessions/.../rollout-*.jsonl)",
           "watcher replay ~/.codex/sessions/2026/05/04/rollout-2026-05-04T14-42-03-ID.jsonl",
           _codex_rollout.CodexRolloutReader, _codex_rollout.sniff),
    Format("codex-exec", "codex exec --json output (thread.started, item.*, turn.*)",
           "codex exec --json 'fix the tests' > run.jsonl; watcher replay run.jsonl",
           _codex_exec.CodexExecReader, _codex_exec.sniff),
    Format("gemini-stream", "Gemini CLI --output-format stream-json (init, message deltas, tool_use, tool_result, result)",
           "gemini -p 'fix the tests' --output-format stream-json > run.jsonl; watcher replay run.jsonl",
           _gemini_stream.GeminiStreamReader, _gemini_stream.sniff),
    Format("gemini-chat", "Gemini CLI saved chat sessions (~/.gemini/tmp/PROJECT/chats/session-*.json or .jsonl)",
           "watcher replay ~/.gemini/tmp/HASH/chats/session-2026-01-30T06-08-ID.json",
           _gemini_chat.GeminiChatReader, _gemini_chat.sniff_record, _gemini_chat.sniff, _gemini_chat.records),
    Format("openhands", "OpenHands evaluation output.jsonl (instances with history) and trajectory JSON arrays",
           "watcher replay evaluation/outputs/.../output.jsonl", _openhands.OpenHandsReader, _openhands.sniff,
           sniff_document=_openhands.sniff_document, records=_openhands.records),
    Format("swe-agent", "SWE-agent trajectories (*.traj, one JSON document)",
           "watcher replay trajectories/me/RUN/django__django-11099.traj", _swe_agent.SweAgentReader,
           sniff_document=_swe_agent.sniff, records=_swe_agent.records),
    Format("mini-swe-agent", "mini-swe-agent trajectories (*.traj.json, one JSON document)",
           "watcher replay output/astropy__astropy-12907/astropy__astropy-12907.traj.json",
           _mini_swe_agent.MiniSweAgentReader, sniff_document=_mini_swe_agent.sniff, records=_mini_swe_agent.records),
    Format("managed-agents", "Anthropic managed-agent session events (sevt_ ids, bare or {role, kind, raw})",
           "watcher replay events.jsonl", _managed_agents.ManagedAgentsReader, _managed_agents.sniff),
    Format("pi", "pi coding-agent session trees (~/.pi/agent/sessions/*.jsonl)",
           "watcher replay ~/.pi/agent/sessions/--home-me-repo--/SESSION.jsonl", _pi_agent.PiAgentReader, _pi_agent.sniff),
    Format("antigravity", "Google Antigravity step logs (step_index, PLANNER_RESPONSE, CODE_ACTION, ...)",
           "watcher replay transcript.jsonl --format antigravity", _antigravity.AntigravityReader, _antigravity.sniff),
)  # fmt: skip

_BY_NAME = {f.name: f for f in FORMATS}


def format_named(name: str) -> Format:
    """The format called ``name``; a ``TranscriptError`` lists the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise TranscriptError(f"unknown format {name!r}; known formats: {', '.join(_BY_NAME)}") from None


def detect_document(document: object) -> Format | None:
    """The document format a whole-JSON file is in, if any."""
    return next((f for f in FORMATS if f.sniff_document is not None and f.sniff_document(document)), None)


def detect_records(records: Sequence[object], *, source: str) -> Format:
    """The format of a stream whose first records are ``records``; names what it found if none."""
    sample = [r for r in records[:SNIFF_RECORDS] if isinstance(r, Mapping)]
    for fmt in FORMATS:
        if fmt.sniff is not None and any(fmt.sniff(r) for r in sample):
            return fmt
    tried = ", ".join(f.name for f in FORMATS)
    if sample:
        first = sample[0]
        kind = first.get("type", first.get("kind"))
        found = f"record type {kind!r}" if kind is not None else f"a record with keys {sorted(first)[:8]}"
    else:
        found = f"no JSON object (first record: {type(records[0]).__name__})" if records else "no records"
    raise TranscriptError(
        f"no reader recognises it: found {found}; tried formats {tried}; "
        "pass --format NAME to choose one (`watcher formats` lists them)",
        source=source,
    )
