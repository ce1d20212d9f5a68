"""Simulated model servers: the seeded policies behind the real wire APIs on 127.0.0.1.

One server per provider hosts both simulated models and routes by the ``model`` field, as LM
Studio does with two models loaded: ``sim-agent`` answers with the primary policy, any model whose
name contains ``watcher`` with the watcher policy. They extend the public stub servers of
``watcher.testing``, so the agent and the watcher reach them through the official ``openai`` and
``anthropic`` SDKs exactly as they would reach a real server — only the answers are simulated.

``watcher_fails`` makes the watcher model fail ("error": HTTP 500; "stall": no answer) so tests
can check that a failing watcher leaves the run going.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import select
import subprocess
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from watcher.bench.policies import Event, SimParams, primary_action, watcher_guidance
from watcher.core.errors import ConfigurationError
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer, StubOpenAIServer

if TYPE_CHECKING:
    from watcher.testing._http import Exchange

__all__ = [
    "AGENT_MODEL",
    "SIMULATED_NOTICE",
    "WATCHER_MODEL",
    "SimulatedChatServer",
    "SimulatedMessagesServer",
    "simulated_process",
    "simulated_server",
]

AGENT_MODEL = "sim-agent"
WATCHER_MODEL = "sim-watcher"
SIMULATED_NOTICE = (
    "SIMULATED models (seeded policies behind local servers speaking the real APIs): "
    "these figures demonstrate the machinery, not any model."
)
Failure = Literal["error", "stall"] | None


def _call_id(prefix: str, events: list[Event], name: str, args: dict[str, Any]) -> str:
    """A tool-call id that depends only on the conversation, so token counts reproduce exactly."""
    key = json.dumps([len(events), str(events[0][1]) if events else "", name, args], sort_keys=True)
    return f"{prefix}_{hashlib.sha256(key.encode()).hexdigest()[:16]}"


class _Simulated:
    """What both simulated servers share: the seeded policies, and the failure the watcher is given."""

    def __init__(
        self, params: SimParams | None = None, *, watcher_fails: Failure = None, keep_requests: bool = False
    ) -> None:
        super().__init__()
        self.params = params or SimParams()
        self.watcher_fails = watcher_fails
        self.keep_requests = keep_requests

    def simulate(self, model: str, events: list[Event] | None, activity: str | None, *, id_prefix: str) -> Reply:
        if "watcher" in model:
            if self.watcher_fails == "error":
                return Reply.error(500, "server_error", "simulated watcher failure", should_retry=False)
            if self.watcher_fails == "stall":
                return Reply.stall(30.0)
            return Reply.text(watcher_guidance(activity or "", self.params))
        name, args = primary_action(events or [], self.params)
        return Reply.tool_use(name, args, id=_call_id(id_prefix, events or [], name, args))


def _usage(request: RecordedRequest, reply: Reply) -> tuple[int, int]:
    """Simulated token counts: four characters a token of the request body and of the answer."""
    answer = reply.content + "".join(json.dumps(dict(t.input)) for t in reply.tools)
    return max(1, len(request.raw) // 4), max(1, len(answer) // 4)


class SimulatedChatServer(_Simulated, StubOpenAIServer):
    """The simulated models behind the OpenAI chat-completions API (``base_url`` ends with ``/v1``)."""

    name = "simulated-openai"

    def usage(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        prompt, completion = _usage(request, reply)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def answer(self, exchange: Exchange) -> None:
        request = exchange.request
        body = request.body
        if request.method != "POST" or request.path != "/v1/chat/completions" or body is None:
            super().answer(exchange)
            return
        messages = body.get("messages") or []
        events: list[Event] = []
        for m in messages[1:]:
            role = m.get("role")
            if role == "user":
                events.append(("task" if not events else "user", m.get("content") or ""))
            elif role == "assistant":
                for call in m.get("tool_calls") or []:
                    fn = call.get("function") or {}
                    try:
                        args = json.loads(fn.get("arguments") or "{}")
                    except ValueError:
                        args = {}
                    events.append(("call", (fn.get("name", ""), args if isinstance(args, dict) else {})))
            elif role == "tool":  # the wire carries no error flag: the tools' error messages say it
                content = str(m.get("content") or "")
                events.append(
                    ("result", (content, content.startswith(("no such ", "unknown tool")) or " needs a " in content))
                )
        activity = str(messages[-1].get("content") or "") if messages else ""
        self.answer_with(exchange, self.simulate(str(body.get("model", "")), events, activity, id_prefix="call"))
        if not self.keep_requests:
            self.requests.clear()


class SimulatedMessagesServer(_Simulated, StubAnthropicServer):
    """The simulated models behind the Anthropic Messages API (``base_url`` without ``/v1``)."""

    name = "simulated-anthropic"

    def usage(self, request: RecordedRequest, reply: Reply, output: str) -> dict[str, int]:
        prompt, completion = _usage(request, reply)
        return {
            "input_tokens": prompt,
            "output_tokens": completion,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }

    def answer(self, exchange: Exchange) -> None:
        request = exchange.request
        body = request.body
        if request.method != "POST" or request.path != "/v1/messages" or body is None:
            super().answer(exchange)
            return
        events: list[Event] = []
        activity = ""
        for m in body.get("messages") or []:
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for block in blocks:
                kind = block.get("type")
                if kind == "text" and m.get("role") == "user":
                    activity = block.get("text", "")
                    events.append(("task" if not events else "user", activity))
                elif kind == "tool_use":
                    events.append(("call", (block.get("name", ""), block.get("input") or {})))
                elif kind == "tool_result":
                    text = block.get("content")
                    if isinstance(text, list):
                        text = "".join(b.get("text", "") for b in text)
                    events.append(("result", (str(text or ""), bool(block.get("is_error")))))
        self.answer_with(exchange, self.simulate(str(body.get("model", "")), events, activity, id_prefix="toolu"))
        if not self.keep_requests:
            self.requests.clear()


def simulated_server(
    provider: str, params: SimParams, *, watcher_fails: Failure = None, keep_requests: bool = False
) -> SimulatedChatServer | SimulatedMessagesServer:
    """A started simulated server for ``provider`` ("openai" or "anthropic"); close it when done."""
    cls = SimulatedMessagesServer if provider == "anthropic" else SimulatedChatServer
    return cls(params, watcher_fails=watcher_fails, keep_requests=keep_requests).start()


@contextlib.contextmanager
def simulated_process(provider: str, params: SimParams) -> Iterator[str]:
    """A simulated server in a child interpreter (so the harness keeps a core to itself); yields its base URL.

    The child serves until its stdin closes: when the block ends, or when this process dies.
    """
    command = [sys.executable, "-m", "watcher.bench._serve", provider, json.dumps(dataclasses.asdict(params))]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 30)
        line = child.stdout.readline().strip() if ready else ""
        if not line.startswith("http"):
            raise ConfigurationError(
                f"the simulated model server did not start (exit status {child.poll()}); run {' '.join(command[:4])} to see why"
            )
        yield line
    finally:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(5)
        if child.stdout is not None:
            child.stdout.close()
