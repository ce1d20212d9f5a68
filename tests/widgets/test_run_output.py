"""RunOutput: an agent run's events as the cell shows them (the real run, the real SDK, a stub server)."""

from __future__ import annotations

from collections.abc import Iterator

import ipywidgets as w
import pytest

from watcher.agents import agent, tool
from watcher.testing import Reply, StubAnthropicServer
from watcher.widgets.run_output import RunOutput


def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: the file to read
    """
    return f"contents of {path}"


@pytest.fixture(autouse=True)
def _close_widgets() -> Iterator[None]:
    yield
    w.Widget.close_all()


async def test_tool_calls_show_the_tools_name_and_results_their_output() -> None:
    shown = RunOutput(title="read")
    script = [Reply.tool_use("read_file", {"path": "a.txt"}), Reply.text("done")]
    with StubAnthropicServer(*script) as stub:
        run = agent("read a.txt", tools=[tool(read_file)], output=shown, base_url=stub.base_url, api_key="test-key")
        result = await run
    shown.flush()
    assert result.status == "completed"
    assert '→ read_file({"path": "a.txt"})' in shown.text
    assert "← contents of a.txt" in shown.text
    assert "■ run completed" in shown.text
