"""A PostgreSQL journal behind PgBouncer in transaction mode: it works, and leaves nothing in the sessions it shares.

Before, the sixth run of one query failed ("prepared statement "_pg3_0" already exists": psycopg
prepares a query on the server after five runs, on a session the pooler then gave to another
client), the journal's lock and idle timeouts were set on whichever session a statement got and
stayed there for other applications, and its own statements ran without them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from watcher.cli import main
from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal, _pg_messages, _pg_store
from watcher.runtime.events import ObservationEvent
from watcher.testing.postgres import LocalPostgres

pytestmark = pytest.mark.skipif(shutil.which("pgbouncer") is None, reason="needs pgbouncer (apt-get install pgbouncer)")

_names = itertools.count()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def bouncer(pg_server: LocalPostgres) -> Iterator[tuple[str, str]]:
    """A fresh journal database behind PgBouncer in transaction mode (two server sessions, shared by every
    client): (its URL through PgBouncer, its URL on the server itself)."""
    database = f"pooled{os.getpid()}_{next(_names)}"
    direct = pg_server.create_database(database)
    folder = Path(tempfile.mkdtemp(prefix="watcher-pgbouncer-"))
    port = _free_port()
    (folder / "users.txt").write_text('"watcher" ""\n')
    (folder / "pgbouncer.ini").write_text(
        f"[databases]\n* = host=127.0.0.1 port={pg_server.port}\n[pgbouncer]\nlisten_addr = 127.0.0.1\n"
        f"listen_port = {port}\nunix_socket_dir =\nauth_type = trust\nauth_file = {folder}/users.txt\n"
        f"pool_mode = transaction\ndefault_pool_size = 2\nlogfile = {folder}/log\n"
    )
    as_root = os.geteuid() == 0
    if as_root:  # pgbouncer will not run as root: it switches to the postgres user
        os.chmod(folder, 0o755)
        for path in (folder, *folder.iterdir()):
            shutil.chown(path, "postgres", "postgres")
    proc = subprocess.Popen(
        ["pgbouncer", *(["-u", "postgres"] if as_root else []), str(folder / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert proc.poll() is None and time.monotonic() < deadline, "pgbouncer did not start"
            time.sleep(0.05)  # polling for the port to open
        yield f"postgresql://watcher@127.0.0.1:{port}/{database}", direct
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


_END_OTHER_SESSIONS = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"


def _event(index: int) -> ObservationEvent:
    return ObservationEvent(session="s", observation=UserMessage(text=f"m{index}"), index=index)


def test_a_journal_behind_pgbouncer_works_and_leaves_no_setting_behind(
    bouncer: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    pooled, _ = bouncer
    assert main(["journal", "migrate", pooled]) == 0
    with Journal(pooled, batch_interval=0.001) as journal:
        for i in range(8):  # a query run more than five times was prepared on the server
            journal.append(_event(i))
            journal.flush()
            assert [r.payload["index"] for r in journal.read()] == list(range(i + 1))
        given = [journal.submit_command("fleet:t", "nudge", payload={"message": f"n{i}"}) for i in range(7)]
        assert [c.id for c in journal.claim_commands(["fleet:t"])] == given
        journal.mark_commands([(cid, "applied", "done") for cid in given])
        assert journal.commands(sessions=["fleet:t"]) == []
        for _ in range(6):
            assert journal.hold_lease("lead", "me", 30)
            assert journal.claim_task("run", "t1", "host-a", lost_after_s=60)
        assert journal.prune(1000.0) == (0, 0)
    assert main(["journal", "check", pooled]) == 0, capsys.readouterr()
    with psycopg.connect(pooled, autocommit=True, prepare_threshold=None) as other:  # another application
        for _ in range(4):  # whichever of the two server sessions it gets
            assert other.execute("SHOW lock_timeout").fetchone() == ("0",)
            assert other.execute("SHOW idle_in_transaction_session_timeout").fetchone() == ("0",)
            assert other.execute("SELECT count(*) FROM pg_prepared_statements").fetchone() == (0,)


def test_behind_pgbouncer_a_lock_is_a_bounded_wait_then_a_message(
    bouncer: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal's lock timeout holds for its own statements, set in each transaction: not on a session,
    which the pooler replaces (here: its server sessions ended, as in a server restart) or hands to others."""
    monkeypatch.setattr(_pg_store, "LOCK_TIMEOUT_S", 0.5)  # 10 s in use
    monkeypatch.setattr(_pg_messages, "LOCK_TIMEOUT_S", 0.5)
    pooled, direct = bouncer
    with Journal(pooled) as journal, psycopg.connect(direct) as admin:
        assert journal.read() == []
        admin.execute(_END_OTHER_SESSIONS)
        admin.commit()
        admin.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        with pytest.raises(JournalError, match="locked by another session on its server"):
            journal.read()
        assert time.monotonic() - started < 10, "the lock timeout, not the 30 s of a server that does not answer"
        admin.rollback()
        journal.append(_event(0))
        journal.flush(timeout=30)
        assert len(journal.read()) == 1


def test_a_batch_behind_pgbouncer_whose_server_session_ends_is_written_once(bouncer: tuple[str, str]) -> None:
    """PgBouncer's server sessions end under the journal (a restart, an administrator): the next batch is written, once."""
    pooled, direct = bouncer
    with Journal(pooled, batch_interval=0.001) as journal, psycopg.connect(direct, autocommit=True) as admin:
        journal.append(_event(0))
        journal.flush()
        admin.execute(_END_OTHER_SESSIONS)
        journal.append(_event(1))
        journal.flush(timeout=30)
        assert [r.payload["index"] for r in journal.read()] == [0, 1], "the batch after the sessions ended, once"


def test_a_url_option_pgbouncer_refuses_is_said_to_be_the_poolers(
    bouncer: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Was "start the server or correct the host and port": PgBouncer refuses ``options`` (a search_path)."""
    pooled, _ = bouncer
    assert main(["journal", "check", pooled + "?options=-csearch_path%3Dj"]) == 2
    said = capsys.readouterr().err
    assert "connection pooler" in said and "ALTER ROLE" in said and "start the server" not in said, said
