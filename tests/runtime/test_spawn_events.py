"""The spawn events round-trip through the journal (another process reads them back typed)."""

from __future__ import annotations

from pathlib import Path

from watcher.runtime.events import EVENT_KINDS, event_from_payload
from watcher.runtime.journal import Journal
from watcher.spawn.events import (
    LLMCompleted,
    LLMStarted,
    PermissionDenied,
    PRCreated,
    ProgressUpdate,
    RecoveryAttempt,
    SandboxCreated,
)

EVENTS = [
    SandboxCreated(
        session="s", spawn_id="a1", branch="spawn/a1", worktree="/w", base="main", agent="claude", provision_ms=12.5
    ),
    LLMStarted(session="s", spawn_id="a1", agent="claude", pid=42, argv=("claude", "-p")),
    ProgressUpdate(
        session="s", spawn_id="a1", elapsed_s=1.5, files_written=("a.js",), output_lines=9, last_tool="Write"
    ),
    PermissionDenied(session="s", spawn_id="a1", tool="Bash", detail="git commit -m x", fix="command `git commit *`"),
    RecoveryAttempt(
        session="s", spawn_id="a1", strategy="moderate", attempt=1, fix="command `git commit *`", outcome="resumed"
    ),
    LLMCompleted(session="s", spawn_id="a1", status="completed", exit_code=0, summary="done"),
    PRCreated(session="s", spawn_id="a1", number=7, url="http://forge/pull/7", head="spawn/a1", base="main"),
]


def test_spawn_events_round_trip_through_the_journal(tmp_path: Path) -> None:
    assert (
        PermissionDenied.kind == "permission_error"
        and len([c for c in EVENT_KINDS.values() if c.__module__ == "watcher.spawn.events"]) == 7
    )
    journal = Journal(tmp_path / "j.sqlite3")
    for event in EVENTS:
        journal.append(event)
    journal.close()
    rows = Journal(tmp_path / "j.sqlite3", create=False).read()
    back = [event_from_payload(r.kind, r.payload, session=r.session, watcher=r.watcher, ts=r.ts) for r in rows]
    assert [(type(e), e.payload()) for e in back] == [(type(e), e.payload()) for e in EVENTS]
