"""Parent sessions that are agents: supervised agent runs and transcript replay.

``agent(prompt, tools=[...], watchers=["security"])`` starts an ``AgentRun``: an Anthropic
tool-use loop whose observations the watchers judge and into which their interjections land.
"""

from __future__ import annotations

from watcher.agents._delivery import GUIDANCE_MARKER, GUIDANCE_PROTOCOL, format_injection
from watcher.agents._run_setup import agent, make_client
from watcher.agents._sinks import RunEvent
from watcher.agents._tools import Tool, ToolOutcome, tool
from watcher.agents.replay import ReplayResult, replay
from watcher.agents.run import DEFAULT_MODEL, AgentRun, RunResult
from watcher.agents.transcripts import read_transcript
from watcher.core.errors import CorrectionCapReached

__all__ = [
    "DEFAULT_MODEL",
    "GUIDANCE_MARKER",
    "GUIDANCE_PROTOCOL",
    "AgentRun",
    "CorrectionCapReached",
    "ReplayResult",
    "RunEvent",
    "RunResult",
    "Tool",
    "ToolOutcome",
    "agent",
    "format_injection",
    "make_client",
    "read_transcript",
    "replay",
    "tool",
]
