"""Public fakes for testing with watcher: stub LLM servers that speak the real wire protocols.

``StubAnthropicServer`` (Messages API), ``StubOpenAIServer`` (chat completions),
``StubResponsesServer`` (OpenAI Responses, for Codex) and ``StubGeminiServer`` (for Gemini CLI) run on
127.0.0.1 in a background thread, answer from a script of ``Reply`` values and record every
request, so tests (and the offline demo, labelled as scripted) drive the real ``anthropic`` and
``openai`` SDKs without a network::

    with StubAnthropicServer() as stub:
        stub.push(Reply.text("[CONTINUE]\\nfine\\n[/CONTINUE]"))
        client = anthropic.AsyncAnthropic(base_url=stub.base_url, api_key="test")

``FakeClock`` is a clock that moves only when told (``Fleet(clock=...)``), ``wait_until`` polls what has no
event to await; ``LoopbackForge`` is a git smart-HTTP remote with GitHub's pull-request endpoint, and
``watcher.testing.fake_cli`` a fake agent CLI that replays recorded stream lines.
"""

from __future__ import annotations

from watcher.testing.clock import FakeClock
from watcher.testing.forge import LoopbackForge
from watcher.testing.scripts import RecordedRequest, Reply, ToolUse
from watcher.testing.stub_anthropic import StubAnthropicServer
from watcher.testing.stub_gemini import StubGeminiServer
from watcher.testing.stub_openai import StubOpenAIServer
from watcher.testing.stub_responses import StubResponsesServer
from watcher.testing.waiting import wait_until

__all__ = [
    "FakeClock",
    "LoopbackForge",
    "RecordedRequest",
    "Reply",
    "StubAnthropicServer",
    "StubGeminiServer",
    "StubOpenAIServer",
    "StubResponsesServer",
    "ToolUse",
    "wait_until",
]
