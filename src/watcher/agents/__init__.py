"""Parent sessions that are agents: supervised agent runs and transcript replay.

``agent(prompt, tools=[...], watchers=["security"])`` starts an ``AgentRun``: an Anthropic
tool-use loop whose observations the watchers judge and into which their interjections land.
"""

from __future__ import annotations

from watcher.agents._delivery import GUIDANCE_MARKER, GUIDANCE_PROTOCOL, format_injection
from watcher.agents._run_config import Boundary, RunConfig, RunResult
from watcher.agents._run_setup import RunHost, agent, make_client, set_host
from watcher.agents._sinks import RunEvent, RunEventKind
from watcher.agents._tools import Tool, ToolOutcome, tool
from watcher.agents.replay import ReplayResult, replay
from watcher.agents.run import DEFAULT_MODEL, AgentRun
from watcher.transcripts import read_transcript

__all__ = [
    "DEFAULT_MODEL",
    "GUIDANCE_MARKER",
    "GUIDANCE_PROTOCOL",
    "AgentRun",
    "Boundary",
    "ReplayResult",
    "RunConfig",
    "RunEvent",
    "RunEventKind",
    "RunHost",
    "RunResult",
    "Tool",
    "ToolOutcome",
    "agent",
    "format_injection",
    "make_client",
    "read_transcript",
    "replay",
    "set_host",
    "tool",
]
