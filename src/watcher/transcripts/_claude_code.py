"""Claude Code transcripts: saved sessions (``~/.claude/projects/*/*.jsonl``, 1.x and 2.x) and
``claude -p --output-format stream-json`` (one run, or several runs appended to one file).

Every record names its session (``sessionId`` in saved sessions, ``session_id`` in stream-json),
so each run of a multi-run file is its own session. Subagent records (``isSidechain`` in saved
sessions, ``parent_tool_use_id`` in stream-json) form a session of their own whose
``parent_session`` is the main one. A ``summary`` record is the session's title and is ignored;
``compact_boundary`` and the ``isCompactSummary`` user record after it are one condensation;
API-error messages (``isApiErrorMessage``, model ``<synthetic>``) and error ``result`` records are
harness errors; thinking blocks are assistant messages marked ``thinking``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from watcher.core.observations import (
    AssistantMessage,
    Condensation,
    Done,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.transcripts._base import RecordReader, as_text, exit_code_in, timestamp

__all__ = ["ClaudeCodeReader", "sniff"]

_BOOKKEEPING = frozenset(
    {
        "queue-operation",
        "progress",
        "file-history-snapshot",
        "stream_event",
        "attachment",
        "custom-title",
        "tag",
        "control_request",
        "control_response",
        "control_cancel_request",
        "keep_alive",
        "rate_limit_event",
        # 2.1.3xx saved sessions: request shapes, cost and prompt bookkeeping
        "atis-latch",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "tools-used",
        "last-prompt",
        "cost-state",
        "mode",
    }
)
_TYPES = frozenset({"user", "assistant", "system", "result", "summary"}) | _BOOKKEEPING


def sniff(record: Mapping[str, Any]) -> bool:
    """A Claude Code record: a known ``type`` with its session, message or uuid alongside."""
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in _TYPES:  # a list or object type is no Claude Code record
        return False
    if kind == "summary":
        return "leafUuid" in record or "summary" in record
    return any(k in record for k in ("sessionId", "session_id", "uuid", "message", "leafUuid", "snapshot"))


class ClaudeCodeReader(RecordReader):
    """Reads Claude Code saved sessions and stream-json, record by record."""

    format = "claude-code"

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        super().__init__(session=session, strict=strict)
        self._subagent_of_uuid: dict[str, str] = {}
        self._subagents: dict[str, int] = {}
        self._after_boundary = False

    def type_of(self, record: Mapping[str, Any]) -> str:
        kind = super().type_of(record)
        subtype = record.get("subtype")
        return f"{kind}/{subtype}" if kind == "system" and isinstance(subtype, str) else kind

    # --- sessions -------------------------------------------------------------------------------

    def _sessions(self, record: Mapping[str, Any]) -> tuple[str, str | None]:
        """(session, parent session) of a record: subagent records get a session of their own."""
        sid = record.get("session_id") or record.get("sessionId")
        main = sid if isinstance(sid, str) and sid else self.session
        parent_tool = record.get("parent_tool_use_id")
        if isinstance(parent_tool, str) and parent_tool:
            return f"{main}/subagent-{parent_tool}", main
        if not record.get("isSidechain"):
            return main, None
        agent = record.get("agentId")
        parent = record.get("parentUuid")
        known = self._subagent_of_uuid.get(parent) if isinstance(parent, str) else None
        if isinstance(agent, str) and agent:
            sub = f"{main}/subagent-{agent}"
        elif known is not None:
            sub = known
        else:  # a sidechain root: a new subagent starts
            self._subagents[main] = self._subagents.get(main, 0) + 1
            sub = f"{main}/subagent-{self._subagents[main]}"
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self._subagent_of_uuid[uuid] = sub
        return sub, main

    # --- records --------------------------------------------------------------------------------

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        if kind in _BOOKKEEPING:
            return self.ignore(str(kind))
        if kind == "summary":
            return self.ignore("summary (session title)")
        if kind not in ("user", "assistant", "system", "result"):
            return self.skip(self.type_of(record))
        session, parent = self._sessions(record)
        common: dict[str, Any] = {"ts": timestamp(record.get("timestamp")), "session": session}
        if parent is not None:
            common["parent_session"] = parent
        if kind == "system":
            return self._system(record, common)
        if kind == "result":
            return self._result(record, common)
        message = record.get("message")
        if not isinstance(message, Mapping):
            return self.skip(f"{kind} (no message)")
        if kind == "user":
            return self._user(record, message, common)
        return self._assistant(record, message, common)

    def _system(self, record: Mapping[str, Any], common: dict[str, Any]) -> list[Observation]:
        if record.get("subtype") == "compact_boundary":
            self._after_boundary = True
            meta = record.get("compactMetadata") or record.get("compact_metadata")
            extra = {"compact": dict(meta)} if isinstance(meta, Mapping) else {}
            return [Condensation(**common, extra=extra)]
        return self.ignore(self.type_of(record))

    def _result(self, record: Mapping[str, Any], common: dict[str, Any]) -> list[Observation]:
        out: list[Observation] = []
        subtype = str(record.get("subtype") or "")
        if record.get("is_error") or subtype.startswith("error"):
            errors = record.get("errors")
            text = record.get("result") or (errors if isinstance(errors, list) and errors else None) or subtype
            out.append(HarnessError(**common, text=as_text(text) or str(text), extra={"subtype": subtype}))
        denials = record.get("permission_denials")
        extra = {"permission_denials": denials} if isinstance(denials, list) and denials else {}
        out.append(Done(**common, extra=extra))
        return out

    def _user(self, record: Mapping[str, Any], message: Mapping[str, Any], common: dict[str, Any]) -> list[Observation]:
        if record.get("isCompactSummary"):
            if self._after_boundary:  # the summary half of the condensation already emitted
                self._after_boundary = False
                return self.ignore("user (compact summary)")
            return [Condensation(**common)]
        self._after_boundary = False
        content = message.get("content")
        if isinstance(content, str):
            if record.get("isMeta"):
                return self.ignore("user (meta)")
            return [UserMessage(**common, text=content)]
        if not isinstance(content, list):
            return self.skip("user (no content)")
        details = record.get("toolUseResult", record.get("tool_use_result"))
        out: list[Observation] = []
        for block in content:
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                out.append(self._tool_result(block, details, common))
            elif btype == "text" and not record.get("isMeta"):
                out.append(UserMessage(**common, text=str(block.get("text", ""))))
        return out

    def _tool_result(self, block: Mapping[str, Any], details: object, common: dict[str, Any]) -> ToolResult:
        output = as_text(block.get("content"))
        is_error = bool(block.get("is_error"))
        exit_code: int | None = None
        extra: dict[str, Any] = {}
        if isinstance(details, Mapping):
            path = details.get("filePath")
            file = details.get("file")
            if not isinstance(path, str) and isinstance(file, Mapping):
                path = file.get("filePath")
            if isinstance(path, str):
                extra["file_path"] = path
            if details.get("interrupted"):
                extra["interrupted"] = True
            if "stdout" in details and not is_error:
                exit_code = 0
        if is_error:
            exit_code = exit_code_in(output if output else str(details or ""), limit=40)
        return ToolResult(
            **common,
            tool_call_id=str(block.get("tool_use_id", "")),
            output=output,
            is_error=is_error,
            exit_code=exit_code,
            extra=extra,
        )

    def _assistant(
        self, record: Mapping[str, Any], message: Mapping[str, Any], common: dict[str, Any]
    ) -> list[Observation]:
        content = message.get("content")
        if record.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            text = as_text(content) or str(record.get("error") or "API error")
            return [HarnessError(**common, text=text, extra={"api_error": record.get("error")})]
        if isinstance(content, str):
            return [AssistantMessage(**common, text=content)]
        if not isinstance(content, list):
            return self.skip("assistant (no content)")
        out: list[Observation] = []
        for block in content:
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "text":
                out.append(AssistantMessage(**common, text=str(block.get("text", ""))))
            elif btype == "thinking":
                thought = str(block.get("thinking", ""))
                out.append(AssistantMessage(**common, text=thought, extra={"thinking": True}))
            elif btype in ("tool_use", "server_tool_use"):
                args = block.get("input")
                out.append(
                    ToolCall(
                        **common,
                        id=str(block.get("id", "")),
                        name=str(block.get("name", "")),
                        input=args if isinstance(args, dict) else {},
                    )
                )
            elif btype == "redacted_thinking":
                self.ignore("assistant (redacted thinking)")
        return out
