"""Commands, leases and task claims on a PostgreSQL journal: statements judged on the server's clock.

Claims and leases use the server's ``now()``; nothing compares two machines' clocks. Each
statement runs through the store's ``_retrying`` (a server that went away is retried for a few
seconds; an insert that is not idempotent is never written twice) and reads through ``_query``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from watcher.runtime._pg_order import VISIBLE, position, split
from watcher.runtime._pg_pooler import Statements
from watcher.runtime._store import SETTLED, CommandRow, Fences, Mark

__all__ = ["CHANNEL", "CLAIM", "COMMAND_COLUMNS", "PostgresCoordination", "Proof"]

CHANNEL = "watcher_journal"  # what writers NOTIFY and readers LISTEN on
COMMAND_COLUMNS = "id, ts, session, watcher, kind, interjection_id, payload, status, detail"
CLAIM = "extract(epoch FROM commands.claimed_at)::float8"  # a claim's token: when it was taken (the server's clock)
_T = TypeVar("_T")
Proof = Callable[[str, _T], tuple[str, Sequence[Any]]]
"""For a write not to be repeated: the query (``SELECT EXISTS …``) telling that transaction ``xid`` wrote ``result``."""


class PostgresCoordination(ABC):
    """The commands, leases and task claims of ``PostgresStore``, which gives them ``_retrying`` and ``_query``."""

    @abstractmethod
    def _retrying(
        self, run: Callable[[Statements], _T], *, once: Proof[_T] | None = None, bounded: bool = True
    ) -> _T: ...

    @abstractmethod
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]: ...

    def submit_command(self, session: str, watcher: str, kind: str, interjection_id: str, payload: str) -> int:
        def run(conn: Statements) -> int:
            row = conn.execute(  # one statement: the insert and its wake-up (sent when it commits)
                "WITH added AS (INSERT INTO commands(session, watcher, kind, interjection_id, payload) "
                f"VALUES (%s, %s, %s, %s, %s) RETURNING id) SELECT id, pg_notify('{CHANNEL}', '') FROM added",
                (session, watcher, kind, interjection_id, payload),
            ).fetchone()
            return int(row[0]) if row else 0

        # a person's nudge or abort is given once, whatever the link does
        return self._retrying(run, once=_command_written)

    def commands(self, after: int, status: str | None, sessions: Sequence[str] | None) -> list[CommandRow]:
        sql = f"SELECT {COMMAND_COLUMNS} FROM commands WHERE id > %s"
        args: list[Any] = [after]
        if status is not None:
            sql += " AND status = %s"
            args.append(status)
        if sessions is not None:
            sql += " AND session = ANY(%s)"
            args.append(list(sessions))
        return self._query(sql + " ORDER BY id", args)

    def commands_now(self, after: int, status: str | None, sessions: Sequence[str] | None) -> list[CommandRow] | None:
        return None  # a server is a network round trip away: read on a thread

    def command_feed(self, after: int, limit: int) -> list[tuple[int, CommandRow]]:
        # as events: ids are committed out of order, so by (tx, id) and below the oldest running transaction
        raw = self._query(
            f"SELECT tx, {COMMAND_COLUMNS} FROM commands WHERE (tx, id) > (%s::xid8, %s) AND {VISIBLE} "
            "ORDER BY tx, id LIMIT %s",
            [*split(after), limit],
        )
        return [(position(row[0], row[1]), tuple(row[1:])) for row in raw]

    def claim_commands(self, sessions: Sequence[str], limit: int) -> list[tuple[CommandRow, float]]:
        # one round trip claims a batch; SKIP LOCKED: a command another poller is claiming is left to it,
        # and the partial index on new commands (commands_new) finds them however many are done. The
        # claim's token is its time (the server's): a claim released and taken again has another
        rows: list[Any] = self._retrying(
            lambda conn: conn.execute(
                "UPDATE commands SET status = 'claimed', claimed_at = now(), applied_ts = extract(epoch FROM now()) "
                "WHERE id = ANY(ARRAY(SELECT id FROM commands WHERE status = 'new' AND session = ANY(%s) ORDER BY id "
                f"LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING {COMMAND_COLUMNS}, {CLAIM}",
                (list(sessions), limit),
            ).fetchall()
        )
        return sorted((tuple(row[:-1]), float(row[-1])) for row in rows)

    def release_claims(self, older_than_s: float, sessions: Sequence[str]) -> int:
        return self._retrying(
            lambda conn: (
                conn.execute(
                    "UPDATE commands SET status = 'new', applied_ts = NULL, claimed_at = NULL, "
                    "detail = 'released: the process that claimed it stopped before applying it' "
                    "WHERE status = 'claimed' AND claimed_at < now() - make_interval(secs => %s) AND session = ANY(%s)",
                    (older_than_s, list(sessions)),
                ).rowcount
            )
        )

    def hold_lease(self, name: str, holder: str, ttl_s: float) -> bool:
        return self._retrying(
            lambda conn: (
                conn.execute(
                    "INSERT INTO leases(name, holder, until) VALUES (%s, %s, now() + make_interval(secs => %s)) "
                    "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until "
                    "WHERE leases.holder = excluded.holder OR leases.until < now() RETURNING holder",
                    (name, holder, ttl_s),
                ).fetchone()
                is not None
            )
        )

    def drop_lease(self, name: str, holder: str) -> None:
        self._retrying(lambda conn: conn.execute("DELETE FROM leases WHERE name = %s AND holder = %s", (name, holder)))

    def claim_task(self, group: str, task: str, host: str, lost_after_s: float) -> bool:
        return self._retrying(
            lambda conn: (
                conn.execute(
                    "INSERT INTO task_claims(grp, task, host) VALUES (%s, %s, %s) ON CONFLICT (grp, task) DO UPDATE "
                    "SET host = excluded.host, beat = now() WHERE task_claims.started = false AND "
                    # its own claim too: a retry after the first try's answer was lost must not strand the task
                    "(task_claims.host = excluded.host OR task_claims.beat < now() - make_interval(secs => %s)) "
                    "RETURNING host",
                    (group, task, host, lost_after_s),
                ).fetchone()
                is not None
            )
        )

    def start_task(self, group: str, task: str, host: str) -> None:
        self._retrying(
            lambda conn: conn.execute(
                "UPDATE task_claims SET started = true WHERE grp = %s AND task = %s AND host = %s", (group, task, host)
            )
        )

    def beat_claims(self, group: str, host: str) -> None:
        self._retrying(
            lambda conn: conn.execute("UPDATE task_claims SET beat = now() WHERE grp = %s AND host = %s", (group, host))
        )

    def started_tasks(self, group: str) -> set[str]:
        return {row[0] for row in self._query("SELECT task FROM task_claims WHERE grp = %s AND started", [group])}

    def mark_commands(self, marks: Sequence[Mark]) -> None:
        # a claimed command is marked only while its claim is this process's: released and taken by
        # another meanwhile (this one cut off for longer than the lease), it is the other's to mark
        columns = [list(column) for column in zip(*marks, strict=True)] if marks else [[], [], [], []]
        self._retrying(
            lambda conn: conn.execute(
                "UPDATE commands SET status = m.status, applied_ts = extract(epoch FROM now()), detail = m.detail "
                "FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::float8[]) AS m(id, status, detail, claim) "
                f"WHERE commands.id = m.id AND (m.claim IS NULL OR {CLAIM} = m.claim)",
                columns,
            )
        )

    def settle(self, conn: Statements, fences: Fences) -> set[int]:
        """Mark ``applied`` (in ``conn``'s transaction) the commands whose effects ``fences`` names, where
        this process's claim on them still holds; returns those where it no longer does.

        One statement a command: a batch holds the effect of one command, rarely of a few.
        """
        lost = set()
        for command_id, claim in sorted(set(fences.values())):
            held = conn.execute(
                "UPDATE commands SET status = 'applied', applied_ts = extract(epoch FROM now()), detail = %s "
                f"WHERE id = %s AND status = 'claimed' AND {CLAIM} = %s RETURNING id",
                (SETTLED, command_id, claim),
            ).fetchone()
            if held is None:
                lost.add(command_id)
        return lost


def _command_written(xid: str, command_id: int) -> tuple[str, Sequence[Any]]:
    """The query telling that transaction ``xid`` wrote command ``command_id`` (ids are never handed out twice)."""
    return "SELECT EXISTS (SELECT 1 FROM commands WHERE id = %s AND tx = %s::xid8)", (command_id, xid)
