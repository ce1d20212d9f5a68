"""What processes coordinate through the journal besides events: commands, leases and task claims.

``Journal`` inherits these; each is one statement on its store (``self._store``), so it holds no
state of its own. Commands go from a person (an editor, a widget, the fleet CLI) to the process
that owns a session; a lease names who leads (a fleet's supervisor); a task claim names which task
host runs a task of a run that several hosts share. Times are the store's: a server's clock,
never a host's. A session is stored under its redacted name (``stored_session``), as its events
are; commands read for given sessions name each session as the caller asked for it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from watcher.core.errors import JournalError
from watcher.core.redact import redact
from watcher.runtime._storable import encode_payload, storable_text, stored_session
from watcher.runtime._store import CommandRow, Store

__all__ = ["COMMAND_KINDS", "Command", "Coordination"]

# inject/accept/edit/dismiss act on interjections; nudge/pause/resume/abort on fleet tasks (session fleet:<task>)
COMMAND_KINDS = ("inject", "accept", "edit", "dismiss", "nudge", "pause", "resume", "abort")


@dataclass(frozen=True, slots=True)
class Command:
    """One row of ``commands``: a request for the owning process to act on an interjection.

    A command a person gives in the process that owns the session (a panel button, a magic,
    ``AgentRun.accept``) is the same value, made by ``given`` and never journaled.
    """

    id: int
    ts: float
    session: str
    watcher: str
    kind: str
    interjection_id: str
    payload: dict[str, Any]
    status: str
    detail: str

    @classmethod
    def given(
        cls,
        session: str,
        kind: str,
        interjection_id: str = "",
        *,
        watcher: str = "",
        payload: dict[str, Any] | None = None,
    ) -> Command:
        """A command given in this process (not journaled: id 0, status new)."""
        return cls(0, time.time(), session, watcher, kind, interjection_id, payload or {}, "new", "")


def _command(row: CommandRow) -> Command:
    try:
        payload = json.loads(row[6])
    except ValueError:
        payload = {}
    return Command(row[0], row[1], row[2], row[3], row[4], row[5], payload, row[7], row[8])


def _stored(sessions: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """``sessions`` as the journal stores them (redacted), and the asked name of each stored one that differs."""
    stored = [stored_session(s) for s in sessions]
    return stored, {kept: asked for kept, asked in zip(stored, sessions, strict=True) if kept != asked}


def _as_asked(rows: Sequence[CommandRow], asked: dict[str, str]) -> list[Command]:
    """The commands of ``rows``, each naming its session as the caller asked for it (not as stored)."""
    commands = [_command(row) for row in rows]
    if not asked:  # the usual case: no session name held a secret
        return commands
    return [replace(c, session=asked[c.session]) if c.session in asked else c for c in commands]


class Coordination:
    """Commands, leases and task claims on a store (the part of ``Journal`` that is not events)."""

    _store: Store
    _claims: dict[int, float]  # command id: the token of this process's claim on it, until it is marked
    _claims_lock: threading.Lock

    # --- commands ------------------------------------------------------------------------------

    def submit_command(
        self,
        session: str,
        kind: str,
        interjection_id: str = "",
        *,
        watcher: str = "",
        payload: dict[str, Any] | None = None,
    ) -> int:
        """Record a command for the process that owns ``session``; returns its id."""
        if kind not in COMMAND_KINDS:
            raise JournalError(f"unknown command {kind!r}; expected one of {', '.join(COMMAND_KINDS)}")
        body = encode_payload(payload or {})  # redacted, and storable (a message with a byte that is not UTF-8)
        watcher, interjection_id = storable_text(watcher), storable_text(interjection_id)
        return self._store.submit_command(stored_session(session), watcher, kind, interjection_id, body)

    def commands(
        self, *, sessions: list[str] | None = None, status: str | None = "new", after: int = 0
    ) -> list[Command]:
        """Commands (by default the new ones), optionally only for ``sessions``."""
        if sessions is None:
            return [_command(row) for row in self._store.commands(after, status, None)]
        stored, asked = _stored(sessions)
        return _as_asked(self._store.commands(after, status, stored), asked)

    def new_commands_now(self, sessions: list[str]) -> list[Command] | None:
        """The new commands of ``sessions`` if they can be read without waiting (a file nobody holds
        locked), else None: an event loop reads them itself instead of on a thread."""
        stored, asked = _stored(sessions)
        rows = self._store.commands_now(0, "new", stored)
        return None if rows is None else _as_asked(rows, asked)

    def commands_since(self, after: int = 0, *, limit: int = 1000) -> list[tuple[int, Command]]:
        """Commands past position ``after`` (0: all), each with its position, in position order.

        For a follower of new commands (an editor hiding what another client dismissed): with many
        writers, command ids are not in commit order on a server, so an id cursor would pass a
        command committed late. A position (as an event's) is the cursor to pass back: a command
        read later never lies before one already read.
        """
        return [(pos, _command(row)) for pos, row in self._store.command_feed(after, limit)]

    def claim_commands(self, sessions: list[str], limit: int = 100) -> list[Command]:
        """Take up to ``limit`` new commands of ``sessions`` for this process (status ``claimed``), oldest first.

        One statement claims the batch; a command another process claimed first is not among them,
        so two processes polling one journal never both apply it. ``applied_ts`` holds the time of
        the claim (the store's clock: a server's, never a host's) until the command is marked.
        """
        if not sessions:
            return []
        stored, asked = _stored(sessions)
        claimed = self._store.claim_commands(stored, limit)
        with self._claims_lock:
            self._claims.update((row[0], claim) for row, claim in claimed)
        return _as_asked([row for row, _ in claimed], asked)

    def release_claims(self, older_than_s: float, sessions: list[str]) -> int:
        """Put back to ``new`` the commands of ``sessions`` claimed over ``older_than_s`` ago and never marked.

        The process that claimed them stopped before applying them (it crashed or was killed); a
        live poller takes them again. Returns how many were released.
        """
        if not sessions:
            return 0
        return self._store.release_claims(older_than_s, _stored(sessions)[0])

    def mark_command(self, command_id: int, status: str, detail: str = "") -> None:
        """Mark a command ``applied`` or ``failed`` (with a reason, redacted: it may name the session)."""
        self.mark_commands([(command_id, status, detail)])

    def mark_commands(self, marks: Sequence[tuple[int, str, str]]) -> None:
        """Mark a batch of commands at once: (id, ``applied`` or ``failed``, detail) each.

        A command claimed here is marked only while the claim holds: one released meanwhile (this
        process cut off for longer than the lease) and taken by another is that one's to mark.
        """
        if not marks:
            return
        with self._claims_lock:
            claims = [self._claims.get(cid) for cid, _, _ in marks]
        self._store.mark_commands(
            [(cid, status, redact(detail), claim) for (cid, status, detail), claim in zip(marks, claims, strict=True)]
        )
        with self._claims_lock:
            for cid, _, _ in marks:
                self._claims.pop(cid, None)

    # --- leases --------------------------------------------------------------------------------

    def hold_lease(self, name: str, holder: str, ttl_s: float) -> bool:
        """Take or renew lease ``name`` for ``holder`` for ``ttl_s`` seconds; False while another holds it.

        Expiry is judged on the store's clock (a server's), so holders on machines whose clocks
        disagree still agree on who holds it.
        """
        return self._store.hold_lease(storable_text(name), storable_text(holder), ttl_s)

    def drop_lease(self, name: str, holder: str) -> None:
        """Give lease ``name`` up if ``holder`` holds it, so a standby takes over at once."""
        self._store.drop_lease(storable_text(name), storable_text(holder))

    # --- task claims (a run shared by several task hosts) --------------------------------------

    def claim_task(self, group: str, task: str, host: str, lost_after_s: float) -> bool:
        """Claim ``task`` of run ``group`` for ``host``; True when it is now this host's to start.

        A task another host claimed is taken over only while unstarted and once that host has not
        beaten for ``lost_after_s`` (the store's clock); a started task is never claimed again.
        """
        return self._store.claim_task(storable_text(group), storable_text(task), storable_text(host), lost_after_s)

    def start_task(self, group: str, task: str, host: str) -> None:
        """Record that ``host`` started ``task``: from now on it runs there or is lost with it."""
        self._store.start_task(storable_text(group), storable_text(task), storable_text(host))

    def beat_claims(self, group: str, host: str) -> None:
        """``host`` is alive: its unstarted claims are not taken over."""
        self._store.beat_claims(storable_text(group), storable_text(host))

    def started_tasks(self, group: str) -> set[str]:
        """The tasks of run ``group`` some host started."""
        return self._store.started_tasks(storable_text(group))
