"""The public surface of watcher.testing is locked: other engineers and users build on it."""

from __future__ import annotations

import watcher.testing


def test_all_is_sorted_and_exact() -> None:
    assert watcher.testing.__all__ == sorted(watcher.testing.__all__)
    assert set(watcher.testing.__all__) == {
        "LoopbackForge",
        "RecordedRequest",
        "Reply",
        "StubAnthropicServer",
        "StubGeminiServer",
        "StubOpenAIServer",
        "StubResponsesServer",
        "ToolUse",
    }
    for name in watcher.testing.__all__:
        assert getattr(watcher.testing, name) is not None
