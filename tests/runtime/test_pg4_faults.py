"""A PostgreSQL journal used by a careless or hostile fleet: wrong clocks, racing migrations, odd URLs, restarts."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from pg_proxy import Link, PgProxy, hang_up
from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime._pg_pool import JournalPool
from watcher.runtime.events import ObservationEvent
from watcher.testing.postgres import LocalPostgres

YEAR_S = 365 * 86400


def _event(index: int) -> ObservationEvent:
    return ObservationEvent(session="s", observation=UserMessage(text=f"m{index}"), index=index)


def test_prune_judges_its_date_by_the_servers_clock_not_a_wrong_host_clock(
    cli: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host whose clock runs two years ahead pruned 'to last year' (its year), deleting this morning's rows."""
    with Journal(pg_url) as journal:
        journal.append(_event(0))
        journal.flush()
    real_now = time.time()
    next_year = datetime.fromtimestamp(real_now + YEAR_S, UTC).strftime("%Y-%m-%dT%H:%M")
    monkeypatch.setattr(time, "time", lambda: real_now + 2 * YEAR_S)  # this host's clock only
    done = cli("journal", "prune", pg_url, "--before", next_year)
    monkeypatch.undo()
    assert done.returncode == 2, done
    assert "is still to come by the server's clock" in done.stderr and "Traceback" not in done.stderr, done.stderr
    with Journal(pg_url, create=False) as journal:
        assert [r.payload["index"] for r in journal.read()] == [0], "nothing deleted"


def test_prune_to_a_past_date_by_the_servers_clock_deletes_what_is_older(cli: Any, pg_url: str) -> None:
    with Journal(pg_url) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="old"), index=0, ts=1000.0))
        journal.append(_event(1))
        journal.flush()
    done = cli("journal", "prune", pg_url, "--before", "2001-01-01")
    assert done.returncode == 0 and "deleted 1 events" in done.stdout, done
    with Journal(pg_url, create=False) as journal:
        assert [r.payload["index"] for r in journal.read()] == [1]


def test_a_pool_left_open_and_collected_on_its_own_thread_says_nothing(pg_url: str) -> None:
    """A journal closed on a hung server leaves its pool open; collected later on one of the pool's own threads,
    psycopg_pool's ``__del__`` joined that thread: "cannot join current thread", failing whichever test ran then."""
    raised: list[BaseException | None] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: raised.append(unraisable.exc_value)
    try:
        held = [JournalPool(pg_url, min_size=1, open=True)]
        collected = threading.Event()

        class Drop:  # a task the pool's worker runs: the last reference goes there
            def run(self) -> None:
                held.clear()
                gc.collect()
                collected.set()

        held[0]._tasks.put_nowait(Drop())  # psycopg_pool's own queue of worker tasks
        assert collected.wait(10), "the pool's worker ran the task"
    finally:
        sys.unraisablehook = hook
    assert raised == []


class CrashAfterCopy(PgProxy):
    """A loopback proxy that forwards a batch's rows (up to the end of its COPY), then cuts the client off and
    refuses new links until ``up()``: the batch's transaction is left running on the server, unanswered."""

    def __init__(self, server_port: int) -> None:
        super().__init__(server_port)
        self.armed = False
        self.fired = threading.Event()

    def forward(self, link: Link, message: bytes, *, startup: bool) -> bool:
        link.server.sendall(message)
        if not (self.armed and not startup and message[:1] == b"c"):
            return True
        # CopyDone: the rows are in, the COMMIT never comes; the server's side stays open, the transaction runs on
        self.armed = False
        self.down.set()
        link.lost.set()
        hang_up(link.client)
        self.fired.set()
        return False


@pytest.mark.parametrize("others_write", [False, True], ids=["alone", "its transaction id used again"])
def test_a_batch_cut_off_by_a_server_crash_is_written_once_the_server_is_back(
    pg_server: LocalPostgres, others_write: bool
) -> None:
    """The server crashed before writing any of the batch's log: back, it has never heard of that transaction
    ("transaction ID … is in the future"); the journal asked it again and again, for ever, and wrote nothing more.

    And it hands that transaction id out again: once another host's transaction committed under it,
    the journal took the batch for written, and lost it.
    """
    proxy = CrashAfterCopy(pg_server.port)
    database = f"crash{os.getpid()}_{int(others_write)}"
    direct = pg_server.create_database(database)
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET wal_writer_delay = '10s'")  # the batch's log stays in memory until the crash
        admin.execute("SELECT pg_reload_conf()")
    try:
        with Journal(proxy.url(database), batch_interval=0.001) as journal:
            proxy.armed = True
            for i in range(5):
                journal.append(_event(i))
            assert proxy.fired.wait(20), "the batch's rows reached the server"
            with psycopg.connect(direct, autocommit=True) as admin:
                row = admin.execute(
                    "SELECT backend_xid::text::bigint FROM pg_stat_activity WHERE backend_xid IS NOT NULL "
                    "AND datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone()
            assert row is not None, "the batch's transaction runs on, unanswered"
            postmaster = pg_server.pid()
            assert postmaster is not None
            os.kill(postmaster, signal.SIGQUIT)  # an immediate shutdown: what a crash leaves
            deadline = time.monotonic() + 30
            while pg_server.pid() is not None and time.monotonic() < deadline:
                time.sleep(0.05)  # polling for the server's exit
            pg_server.start()
            if others_write:  # another host writes until a transaction of its own commits under the batch's id
                with psycopg.connect(direct, autocommit=True) as other:
                    for _ in range(1000):
                        with other.transaction():
                            got = other.execute("SELECT pg_current_xact_id()::text::bigint % 4294967296").fetchone()
                            other.execute(
                                "INSERT INTO events(ts, session, kind, payload) VALUES (1.0, 'other', 'x', '{}')"
                            )
                        if got and got[0] >= row[0]:
                            break
                    assert got == row, "the crash gave the batch's transaction id out again"
            proxy.up()
            journal.flush(timeout=30)
            mine = [r.payload["index"] for r in journal.read() if r.session == "s"]
            assert mine == list(range(5)), "every row, once"
    finally:
        if pg_server.pid() is None:
            pg_server.start()
        with psycopg.connect(pg_server.url(), autocommit=True) as admin:
            admin.execute("ALTER SYSTEM RESET wal_writer_delay")
            admin.execute("SELECT pg_reload_conf()")
        proxy.close()


def test_a_host_whose_user_may_not_create_the_journal_is_told_to_migrate_as_the_owner(pg_server: LocalPostgres) -> None:
    """Not "connect as the user that ran `watcher journal migrate`": nobody has yet."""
    database, role = f"nocreate{os.getpid()}", f"plain{os.getpid()}"
    pg_server.create_database(database)
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")  # PostgreSQL 15: CREATE on public is the owner's alone
    url = pg_server.url(database).replace("watcher@", f"{role}@")
    with pytest.raises(JournalError, match="may not create the journal's tables") as caught:
        Journal(url)
    assert "watcher journal migrate" in str(caught.value) and "owner" in str(caught.value)


def test_prune_older_than_an_age_counts_back_from_the_servers_clock(
    cli: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cron job on a host whose clock runs two years ahead prunes what is a day old by the server's clock."""
    with Journal(pg_url) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="old"), index=0, ts=1000.0))
        journal.append(_event(1))  # written now
        journal.flush()
    real_now = time.time()
    monkeypatch.setattr(time, "time", lambda: real_now + 2 * YEAR_S)  # this host's clock only
    done = cli("journal", "prune", pg_url, "--older-than", "1d")
    monkeypatch.undo()
    assert done.returncode == 0 and "deleted 1 events" in done.stdout, done
    with Journal(pg_url, create=False) as journal:
        assert [r.payload["index"] for r in journal.read()] == [1], "this morning's row is kept"


@pytest.mark.parametrize("age", ["30", "thirty days", "-5d"])
def test_an_age_that_is_not_one_is_a_usage_error(cli: Any, pg_url: str, age: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli("journal", "prune", pg_url, "--older-than", age)
    assert stopped.value.code == 2
