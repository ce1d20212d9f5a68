"""Public fakes for testing with watcher: stub LLM servers that speak the real wire protocols.

``StubAnthropicServer`` (Messages API) and ``StubOpenAIServer`` (chat completions) run on
127.0.0.1 in a background thread, answer from a script of ``Reply`` values and record every
request, so tests (and the offline demo, labelled as scripted) drive the real ``anthropic`` and
``openai`` SDKs without a network::

    with StubAnthropicServer() as stub:
        stub.push(Reply.text("[CONTINUE]\\nfine\\n[/CONTINUE]"))
        client = anthropic.AsyncAnthropic(base_url=stub.base_url, api_key="test")
"""

from __future__ import annotations

from watcher.testing.scripts import RecordedRequest, Reply, ToolUse
from watcher.testing.stub_anthropic import StubAnthropicServer
from watcher.testing.stub_openai import StubOpenAIServer

__all__ = ["RecordedRequest", "Reply", "StubAnthropicServer", "StubOpenAIServer", "ToolUse"]
