"""Driving a real ipykernel the way a frontend does: execute requests with ``cellId``, comm clicks.

``jupyter_client``'s ``KernelClient.execute`` cannot send metadata, so requests are built with
``kc.session.msg`` as JupyterLab sends them. Every iopub message is kept, so tests can read the
widgets' comm traffic after the fact.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient


@dataclass
class Executed:
    """What one execute request produced."""

    reply: dict[str, Any]
    stdout: str
    stderr: str
    error: dict[str, Any] | None
    outputs: list[dict[str, Any]] = field(default_factory=list)


class Driver:
    """A frontend stand-in over a blocking kernel client; keeps every iopub message it read."""

    def __init__(self, kc: BlockingKernelClient) -> None:
        self.kc = kc
        self.iopub: list[dict[str, Any]] = []

    def _read_iopub(self, timeout: float) -> dict[str, Any] | None:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return None
        self.iopub.append(msg)
        return msg

    def execute(self, code: str, *, cell_id: str | None = None, timeout: float = 30.0) -> Executed:
        """Send ``code`` as a frontend would (with ``cellId`` metadata) and wait for idle."""
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        msg_id = msg["header"]["msg_id"]
        out, err, error, outputs = [], [], None, []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self._read_iopub(max(0.01, deadline - time.monotonic()))
            if got is None or got["parent_header"].get("msg_id") != msg_id:
                continue
            kind, body = got["msg_type"], got["content"]
            if kind == "stream":
                (out if body["name"] == "stdout" else err).append(body["text"])
            elif kind == "error":
                error = body
            elif kind in ("execute_result", "display_data"):
                outputs.append(body)
            elif kind == "status" and body["execution_state"] == "idle":
                reply = self.kc.get_shell_msg(timeout=timeout)
                while reply["parent_header"].get("msg_id") != msg_id:
                    reply = self.kc.get_shell_msg(timeout=timeout)
                return Executed(reply["content"], "".join(out), "".join(err), error, outputs)
        raise TimeoutError(f"no idle status within {timeout}s for {code[:60]!r}")

    def click(self, comm_id: str) -> None:
        """Send the comm message a browser sends when a button is clicked."""
        data = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", data))

    def drain(self, seconds: float = 0.05) -> None:
        """Read whatever iopub has queued (widget updates from the runtime thread)."""
        while self._read_iopub(seconds) is not None:
            pass

    def comm_opens(self, model: str) -> list[dict[str, Any]]:
        """The ``comm_open`` contents of widgets of ``model`` (e.g. ``ButtonModel``)."""
        return [
            m["content"]
            for m in self.iopub
            if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_model_name") == model
        ]

    def button(self, description: str) -> str:
        """The comm id of the newest button with ``description``."""
        found = [
            c["comm_id"] for c in self.comm_opens("ButtonModel") if c["data"]["state"].get("description") == description
        ]
        assert found, f"no {description!r} button was opened"
        return found[-1]

    def widget_values(self) -> list[str]:
        """Every string ``value`` the kernel sent to widgets (opens and updates), in order."""
        values = []
        for m in self.iopub:
            if m["msg_type"] in ("comm_open", "comm_msg"):
                state = m["content"]["data"].get("state") or {}
                if isinstance(state.get("value"), str):
                    values.append(state["value"])
        return values


def wait_for(
    predicate: Callable[[], Any],
    timeout: float = 15.0,
    *,
    poll: Callable[[], None] | None = None,
    what: str = "condition",
) -> Any:
    """Poll ``predicate`` until it returns something truthy (calling ``poll`` in between)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        if poll is not None:
            poll()
        else:
            time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
