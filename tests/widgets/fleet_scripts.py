"""Scripted fleet tasks for the notebook tests, run in-process or executed in a real kernel.

``writer`` states a learning on its first turn and finishes; ``worker`` runs a new shell command
every turn until ``finish`` is set, so a test can pause and resume it while it is still running.
Replies are routed by the task's marker in the prompt and count the task's turns from the
request itself, so one stub server serves both tasks in any interleaving.
"""

from __future__ import annotations

import itertools
import threading

from watcher.agents import tool
from watcher.fleet import FleetConfig, TaskSpec
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

FINDING = "Note: found that the API needs the X-Token header."
LIVELY = FleetConfig(
    name="notebook-demo", watch_interval_s=0.2, sync_interval_s=0.05, min_task_age_s=0.0, command_poll_s=0.05
)


def bash(command: str) -> str:
    """Run a shell command.

    Args:
        command: the command line
    """
    return f"ran {command}: ok"


BASH = tool(bash, name="Bash")


class FleetScript:
    """The two tasks' specs and a stub server answering them."""

    def __init__(self) -> None:
        self.finish = threading.Event()
        self.specs = [
            TaskSpec("writer", "[task writer] write the API client", tools=(BASH,), tags=("api",)),
            TaskSpec("worker", "[task worker] run the build", tools=(BASH,), tags=("api",), max_steps=600),
        ]

    def reply(self, request: RecordedRequest) -> Reply:
        messages = (request.body or {})["messages"]
        first = messages[0]["content"]
        prompt = first if isinstance(first, str) else first[0]["text"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if "[task writer]" in prompt:
            if turn == 0:
                return Reply.tool_use("Bash", {"command": "cat api/client.py"}, text=FINDING)
            return Reply.text("Done: the client sends X-Token.")
        if self.finish.is_set():
            return Reply.text("Build finished.")
        return Reply.tool_use("Bash", {"command": f"make step{turn}"}, delay_s=0.05)

    def server(self) -> StubAnthropicServer:
        return StubAnthropicServer(*itertools.repeat(Reply.dynamic(self.reply), 5000))
