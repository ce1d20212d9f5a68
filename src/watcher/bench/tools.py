"""The agent's tools over a world, and each step's status, drift score and wrong-read streak.

After every tool call the harness judges the step against the chain:

- **OK**: the expected next file was read, its directory (or the root) was listed, or the right
  token was submitted;
- **WRONG**: a valid call on something real that is not the way forward (a file off the chain, an
  earlier chain file again, another directory, a wrong answer);
- **OFF**: an invalid call (unknown tool, missing argument) or a path that does not exist.

The **drift score** says how far the agent is from the chain: the number of steps it has taken
since it last touched the chain (reading a chain file it already reached counts as touching it, so
going back is not drift). The **wrong-read streak** counts consecutive reads of files off the chain.
The watcher is triggered on WRONG or OFF with a drift above zero (seed 003's composite condition).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from watcher.bench.world import World

__all__ = ["TOOLS", "Status", "StepStatus", "ToolOutcome", "Tracker", "anthropic_tools", "execute", "openai_tools"]

Status = Literal["OK", "WRONG", "OFF"]

TOOLS: tuple[tuple[str, str, str, str], ...] = (
    (
        "list_dir",
        "List the files in a directory of the trace store ('' lists the directories).",
        "path",
        "a directory, e.g. 'alpha'",
    ),
    ("read_file", "Read one trace file.", "path", "a file path such as 'alpha/trace_123.log'"),
    ("submit_answer", "Submit the final token; this ends the task.", "answer", "the final token, e.g. 'TOKEN-1A2B3C'"),
)


def openai_tools() -> list[dict[str, Any]]:
    """The tools in the chat-completions ``tools`` format."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": text,
                "parameters": {
                    "type": "object",
                    "properties": {arg: {"type": "string", "description": about}},
                    "required": [arg],
                },
            },
        }
        for name, text, arg, about in TOOLS
    ]


def anthropic_tools() -> list[dict[str, Any]]:
    """The tools in the Messages API ``tools`` format."""
    return [
        {
            "name": name,
            "description": text,
            "input_schema": {
                "type": "object",
                "properties": {arg: {"type": "string", "description": about}},
                "required": [arg],
            },
        }
        for name, text, arg, about in TOOLS
    ]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a tool call returned to the agent; ``answer`` is set when the agent submitted one."""

    text: str
    is_error: bool = False
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class StepStatus:
    """The harness's judgment of one tool call."""

    status: Status
    drift: int
    wrong_streak: int
    expected: str  # the expected next action in words: a path, "list <dir>/", or "submit_answer"

    @property
    def deviating(self) -> bool:
        """Seed 003's trigger: WRONG or OFF, and the drift score above zero."""
        return self.status != "OK" and self.drift > 0


def _arg(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) else None


def execute(world: World, name: str, args: Mapping[str, Any]) -> ToolOutcome:
    """Run one tool call against ``world`` (no state: the world never changes — fix forward, no undo)."""
    if name == "list_dir":
        path = _arg(args, "path")
        names = world.listing(path or "") if path is not None else None
        if path is None:
            return ToolOutcome("list_dir needs a 'path' argument (a directory, or '' for the top level)", True)
        if names is None:
            return ToolOutcome(f"no such directory: {path}", True)
        return ToolOutcome("\n".join(names))
    if name == "read_file":
        path = _arg(args, "path")
        if path is None:
            return ToolOutcome("read_file needs a 'path' argument such as 'alpha/trace_123.log'", True)
        content = world.files.get(path.strip().strip("/"))
        return ToolOutcome(content, False) if content is not None else ToolOutcome(f"no such file: {path}", True)
    if name == "submit_answer":
        answer = _arg(args, "answer")
        if answer is None:
            return ToolOutcome("submit_answer needs an 'answer' argument", True)
        return ToolOutcome("answer recorded; the task is over", answer=answer.strip())
    return ToolOutcome(f"unknown tool {name!r}; the tools are list_dir, read_file and submit_answer", True)


class Tracker:
    """Follows one agent through its world and judges each step (status, drift, wrong-read streak)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.progress = -1  # index in the chain of the furthest file read; -1 before the start file
        self.drift = 0
        self.wrong_streak = 0

    @property
    def expected(self) -> str:
        """The expected next action: the next chain file, or ``submit_answer`` once the last was read."""
        if self.progress + 1 < len(self.world.chain):
            return self.world.chain[self.progress + 1]
        return "submit_answer"

    def judge(self, name: str, args: Mapping[str, Any], outcome: ToolOutcome) -> StepStatus:
        """The status of a tool call that returned ``outcome``; updates progress, drift and streak."""
        chain = self.world.chain
        expected = self.expected
        status: Status
        on_chain = False
        if outcome.answer is not None:
            status = "OK" if outcome.answer == self.world.token else "WRONG"
        elif outcome.is_error:
            status = "OFF"
        elif name == "read_file":
            path = str(args.get("path", "")).strip().strip("/")
            if path == expected:
                status, on_chain = "OK", True
                self.progress += 1
            else:
                status = "WRONG"
                on_chain = path in chain[: self.progress + 1]
        else:  # list_dir of something that exists
            directory = str(args.get("path", "")).strip().strip("/")
            status = "OK" if directory in ("", expected.split("/")[0]) and expected != "submit_answer" else "WRONG"
            on_chain = status == "OK"
        if status == "OK" or on_chain:
            self.drift = 0
        else:
            self.drift += 1
        if status == "WRONG" and name == "read_file" and not on_chain:
            self.wrong_streak += 1
        elif status == "OK" or on_chain:
            self.wrong_streak = 0
        return StepStatus(status, self.drift, self.wrong_streak, expected)
