"""The engine on an asyncio loop: event bus, watcher loops, injection delivery, the journal."""

from __future__ import annotations

from watcher.runtime.bus import EventBus
from watcher.runtime.engine import Watcher
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal, default_journal_path
from watcher.runtime.session import RecordingSession, Session

__all__ = ["EventBus", "Journal", "RecordingSession", "Runtime", "Session", "Watcher", "default_journal_path"]
