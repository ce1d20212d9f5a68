"""Shared pieces of the fleet tests: per-task scripts on one stub server, texts a task received."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from watcher.runtime import Journal
from watcher.runtime.fates import Fate, Fates
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

Script = Callable[[int, RecordedRequest], Reply]  # the reply to a task's n-th request (0-based)


def marker(task: str) -> str:
    return f"[task {task}]"


class Scripts:
    """One stub server answering many tasks: each request is routed to its task's script by the prompt."""

    def __init__(self, scripts: dict[str, Script], *, delay_s: float = 0.0) -> None:
        self.scripts = scripts
        self.delay_s = delay_s
        self.requests: dict[str, list[RecordedRequest]] = {name: [] for name in scripts}

    def task_of(self, request: RecordedRequest) -> str:
        first = (request.body or {})["messages"][0]["content"]
        text = first if isinstance(first, str) else first[0]["text"]
        return next(name for name in self.scripts if marker(name) in text)

    def reply(self, request: RecordedRequest) -> Reply:
        task = self.task_of(request)
        self.requests[task].append(request)
        return self.scripts[task](len(self.requests[task]) - 1, request)

    def server(self, n: int = 2000) -> StubAnthropicServer:
        return StubAnthropicServer(*itertools.repeat(Reply.dynamic(self.reply), n))


def user_texts(request: RecordedRequest) -> Iterator[str]:
    """Every text block of the user messages of a request."""
    for message in (request.body or {})["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block.get("type") == "text":
                yield block["text"]


def last_user_texts(request: RecordedRequest) -> list[str]:
    """The text blocks of the last user message (what this request added)."""
    message = (request.body or {})["messages"][-1]
    content = message["content"]
    return [b["text"] for b in content if b.get("type") == "text"] if isinstance(content, list) else [content]


def tool(name: str, fn: Callable[..., str]) -> Any:
    from watcher.agents import tool as make

    return make(fn, name=name)


def syncs_in(request: RecordedRequest) -> list[str]:
    """The ``<sync-message>`` texts anywhere in a request's user messages."""
    return [t for t in user_texts(request) if t.startswith("<sync-message")]


def fates(journal: Journal, session: str) -> list[Fate]:
    """What became of each interjection said to ``session``, folded from the journal as every display folds it."""
    journal.flush()
    fold = Fates()
    for row in journal.read(0, limit=100_000, session=session, kinds=("interjection", "delivery")):
        fold.apply(row.event())
    return list(fold)
