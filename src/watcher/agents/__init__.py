"""Parent sessions that are agents: transcript replay (and, later, the agent run loop)."""

from __future__ import annotations

from watcher.agents.replay import ReplayResult, replay
from watcher.agents.transcripts import read_transcript

__all__ = ["ReplayResult", "read_transcript", "replay"]
