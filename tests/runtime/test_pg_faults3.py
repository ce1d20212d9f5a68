"""A PostgreSQL journal given a bad URL, a user without privileges, or tables another session holds locked.

Each gets one line saying what is wrong and what to do: no traceback, no password (not even its
first characters), no wait without end.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

from command_line import Ran
from pg_proxy import Link, PgProxy, hang_up
from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal, _pg_messages, _pg_store
from watcher.runtime._pg_schema import VERSION
from watcher.runtime._store import journal_label
from watcher.runtime.events import ObservationEvent
from watcher.testing.postgres import LocalPostgres
from watcher.testing.waiting import wait_until

_roles = itertools.count()


def _said_once(done: Ran) -> str:
    """The one error line a failed command printed (and nothing resembling a traceback)."""
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("watcher: error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://pw:hunter2%ZZsecret@127.0.0.1:5432/j",  # a bad percent-escape, in the password
        "postgresql://pw:hunter2secret@[::1:5432/j",  # an unclosed IPv6 bracket: libpq quotes the whole URL
        "postgresql://pw:hunter2secret@127.0.0.1:5432/j?foo=bar",  # a parameter libpq does not know
    ],
    ids=["percent", "bracket", "parameter"],
)
def test_an_unreadable_url_is_named_without_any_of_its_password(cli: Any, url: str) -> None:
    for args in (("fleet", "status", "--journal", url), ("journal", "check", url), ("journal", "migrate", url)):
        line = _said_once(cli(*args))
        assert "not a PostgreSQL URL watcher can read" in line and "postgresql://USER@HOST" in line, line
        assert "hu" not in line.replace("https", ""), f"not even the password's first characters: {line}"


def test_a_bad_parameter_is_called_that_not_a_server_down(cli: Any, pg_url: str) -> None:
    line = _said_once(cli("journal", "check", pg_url + "&sslmode=bogus"))
    assert 'invalid sslmode value: "bogus"' in line and "correct that part of the URL" in line
    assert "start the server" not in line
    line = _said_once(cli("journal", "check", pg_url + "&connect_timeout=abc"))
    assert "bad value for connect_timeout" in line and "correct that part of the URL" in line, line
    line = _said_once(cli("journal", "check", pg_url + "&sslmode=require"))  # the test server has no SSL
    assert "SSL settings and the server's disagree" in line and "start the server" not in line, line


def test_the_suggested_migration_acts_on_the_journal_the_url_names(cli: Any, pg_url: str) -> None:
    """The URL's options (here its search_path) stay in what a message suggests, quoted for a shell."""
    with pytest.raises(JournalError, match="no journal at") as caught:
        Journal(pg_url, create=False)
    command = str(caught.value).split("run `", 1)[1].split("`", 1)[0]
    argv = shlex.split(command)
    assert argv[:3] == ["watcher", "journal", "migrate"], command
    assert cli(*argv[1:]).returncode == 0
    with Journal(pg_url, create=False) as journal:  # the schema the URL names holds it now
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=0))
        journal.flush()


def _role_without_privileges(pg_server: LocalPostgres, pg_url: str) -> str:
    """A new role that may see the journal's schema but not use its tables; the journal's URL as that role."""
    role = f"nopriv{next(_roles)}"
    schema = pg_url.split("search_path%3D", 1)[1]
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO {role}')
    return pg_url.replace("watcher@", f"{role}@")


def test_a_user_without_privileges_is_told_how_to_get_them(cli: Any, pg_server: LocalPostgres, pg_url: str) -> None:
    Journal(pg_url).close()
    url = _role_without_privileges(pg_server, pg_url)
    for args in (
        ("fleet", "status", "--journal", url),
        ("journal", "check", url),
        ("fleet", "nudge", "t", "hi", "--journal", url),
    ):
        line = _said_once(cli(*args))
        assert "may not use the journal there (permission denied" in line and "grant" in line, line
        assert "start the server" not in line
    line = _said_once(cli("journal", "migrate", url.split("?")[0]))  # the public schema: no CREATE for it
    assert "may not create the journal's tables" in line and "owner" in line, line


@pytest.fixture
def short_lock_timeout(monkeypatch: pytest.MonkeyPatch) -> float:
    """Statements wait half a second for another session's lock (10 s in use: too long for a test)."""
    monkeypatch.setattr(_pg_store, "LOCK_TIMEOUT_S", 0.5)  # what each connection sets
    monkeypatch.setattr(_pg_messages, "LOCK_TIMEOUT_S", 0.5)  # what a message says it waited
    return 0.5


def test_a_table_locked_by_another_session_is_a_bounded_wait_then_a_message(
    cli: Any, pg_url: str, short_lock_timeout: float
) -> None:
    Journal(pg_url).close()
    with psycopg.connect(pg_url) as admin:  # as a VACUUM FULL or a long migration would
        admin.execute("LOCK TABLE events, commands IN ACCESS EXCLUSIVE MODE")
        for args in (("fleet", "status", "--journal", pg_url), ("journal", "check", pg_url)):
            started = time.monotonic()
            line = _said_once(cli(*args))
            assert time.monotonic() - started < 10 * short_lock_timeout
            assert "locked by another session" in line and "pg_stat_activity" in line, line


def test_a_write_waits_out_a_lock_and_loses_nothing(
    pg_url: str, short_lock_timeout: float, caplog: pytest.LogCaptureFixture
) -> None:
    with Journal(pg_url) as journal:
        with psycopg.connect(pg_url) as admin:
            admin.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
            journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=0))
            with pytest.raises(JournalError, match="locked by another session on its server"):
                journal.flush(timeout=3 * short_lock_timeout)  # the writer met the lock, and retries
        journal.flush(timeout=30)  # the lock is gone with the admin's transaction
        assert [r.payload["index"] for r in journal.read()] == [0]
    assert "pg_stat_activity names the session holding it" in caplog.text, "what a person can do about it"


async def test_a_write_to_a_server_gone_says_to_bring_it_back(
    pg_server: LocalPostgres, pg_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "if the process holding it is stuck, end it": that is a locked file's remedy."""
    monkeypatch.setattr(_pg_store, "RETRY_S", 0.5)  # how long a write waits for a connection (5 s in use)
    with Journal(pg_url) as journal:
        journal.flush()
        pg_server.stop()
        try:
            journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=0))
            await wait_until(lambda: "retrying until it is free" in caplog.text, within=15, what="the writer's warning")
        finally:
            pg_server.start()
        journal.flush(timeout=30)
    assert "start the server or restore the link" in caplog.text and "process holding it" not in caplog.text


class AnswerLost(PgProxy):
    """A loopback proxy to the server that, once armed, loses the link right after one client message.

    Armed with some text (``COMMIT``, ``INSERT INTO task_claims``) and a message type, it forwards
    the first message of that type from the message holding the text on (``Q``: a simple query,
    ``S``: the sync that ends a statement, ``c``: the end of a COPY) to the server, answers the
    client nothing more and closes the client's side: the client cannot know whether the server
    committed. ``keep_server``: the server's side stays open, as when a cut link has not yet been
    noticed there.
    """

    def __init__(self, server_port: int) -> None:
        super().__init__(server_port)
        self.trigger: tuple[bytes, bytes] | None = None  # (text, message type)
        self.seen = False
        self.keep_server = False
        self.fired = threading.Event()

    def arm(self, containing: bytes, cut_at: bytes, *, keep_server: bool = False) -> None:
        self.trigger, self.seen, self.keep_server = (containing, cut_at), False, keep_server

    def forward(self, link: Link, message: bytes, *, startup: bool) -> bool:
        trigger = self.trigger
        self.seen = self.seen or bool(trigger and not startup and trigger[0] in message)
        if not (trigger and self.seen and message[:1] == trigger[1]):
            link.server.sendall(message)
            return True
        self.trigger = None
        link.lost.set()
        link.server.sendall(message)
        self.fired.set()
        hang_up(link.client)
        if not self.keep_server:  # else the server's side stays open until close()
            time.sleep(0.2)  # the server acts on it before it sees the link gone
            hang_up(link.server)
        return False


@pytest.mark.parametrize(
    ("containing", "cut_at", "keep_server"),
    [(b"COMMIT", b"Q", False), (b"COPY", b"c", True), (b"COPY", b"c", False)],
    ids=["committed, answer lost", "still running, link not yet seen cut", "rolled back"],
)
def test_a_batch_whose_commit_answer_is_lost_is_written_exactly_once(
    pg_server: LocalPostgres, containing: bytes, cut_at: bytes, keep_server: bool
) -> None:
    proxy = AnswerLost(pg_server.port)
    try:
        database = f"lost{next(_roles)}"
        pg_server.create_database(database)
        with Journal(proxy.url(database)) as journal:
            proxy.arm(containing, cut_at, keep_server=keep_server)
            for i in range(5):
                journal.append(ObservationEvent(session="s", observation=UserMessage(text=f"m{i}"), index=i))
            journal.flush(timeout=30)
            assert proxy.fired.is_set(), "the link was cut in the batch's transaction"
            assert [r.payload["index"] for r in journal.read()] == list(range(5)), "every row, once"
    finally:
        proxy.close()


@pytest.fixture
def lossy(pg_server: LocalPostgres) -> Iterator[tuple[AnswerLost, str]]:
    """A proxy that loses answers, and a fresh journal's URL through it."""
    proxy = AnswerLost(pg_server.port)
    database = f"lost{next(_roles)}"
    pg_server.create_database(database)
    Journal(proxy.url(database)).close()
    with proxy:
        yield proxy, proxy.url(database)


@pytest.mark.parametrize("cut_at", [b"S", b"Q"], ids=["the statement's end", "the commit"])
def test_a_command_whose_answer_is_lost_is_given_once(lossy: tuple[AnswerLost, str], cut_at: bytes) -> None:
    proxy, url = lossy
    with Journal(url) as journal:
        proxy.arm(b"INSERT INTO commands", cut_at)
        given = journal.submit_command("fleet:t1", "abort")
        assert proxy.fired.is_set()
        assert [c.id for c in journal.commands()] == [given], "one abort, under the id the caller was given"


def test_a_task_claim_whose_answer_is_lost_is_still_this_hosts(lossy: tuple[AnswerLost, str]) -> None:
    """Otherwise the task would stay claimed by a live host that thinks it is not its own: never started."""
    proxy, url = lossy
    with Journal(url) as journal:
        proxy.arm(b"INSERT INTO task_claims", b"S")
        assert journal.claim_task("run", "t1", "host-a", lost_after_s=60)
        assert proxy.fired.is_set()
        journal.start_task("run", "t1", "host-a")
        assert journal.started_tasks("run") == {"t1"}
        assert not journal.claim_task("run", "t1", "host-b", lost_after_s=0), "a started task is never claimed again"


def test_a_server_restarted_between_two_reads_is_not_reported_away(pg_server: LocalPostgres, pg_url: str) -> None:
    """Every idle pooled connection died with the restart; the reads after it find a live one."""
    with Journal(pg_url, batch_interval=0.001) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=0))
        journal.flush()
        with ThreadPoolExecutor(4) as readers:  # several pooled connections, all idle when the server stops
            list(readers.map(lambda _: journal.read(), range(8)))
        pg_server.stop()
        pg_server.start()
        for read in (journal.read, journal.commands, journal.last_id, lambda: journal.started_tasks("run")):
            read()  # no "not answering": the server is back
        assert [r.payload["index"] for r in journal.read()] == [0]


def test_a_dropped_table_is_named_and_migrate_makes_it_again(cli: Any, pg_url: str) -> None:
    """Schema version current, a table gone (dropped by hand, a partial restore): not 'already at version'."""
    Journal(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE events")
    line = _said_once(cli("fleet", "status", "--journal", pg_url))
    assert "lacks some of its tables (events)" in line and "journal migrate" in line, line
    checked = cli("journal", "check", pg_url)
    assert checked.returncode == 1 and "without events" in checked.stdout, checked
    migrated = cli("journal", "migrate", pg_url)
    assert migrated.returncode == 0 and "created again, empty: events" in migrated.stdout, migrated
    with Journal(pg_url, create=False) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=0))
        journal.flush()
        assert len(journal.read()) == 1


def test_check_of_a_newer_schema_says_upgrade_watcher_not_migrate(cli: Any, pg_url: str) -> None:
    Journal(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO watcher_schema(version) VALUES (%s)", (VERSION + 1,))
    checked = cli("journal", "check", pg_url)
    assert checked.returncode == 1 and "newer than this watcher's" in checked.stdout, checked
    assert "journal migrate" not in checked.stdout


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("postgresql://pw:hunter2@h:5/db", "postgresql://pw@h:5/db"),
        ("postgresql:///db?host=/tmp/s&password=hunter2&user=w", "postgresql:///db?host=/tmp/s&user=w"),
        ("postgresql://w@h/db?PASSWORD=hunter2", "postgresql://w@h/db"),
        ("postgresql://pw:hunter2@[::1:5/db", "postgresql://pw@[::1:5/db"),
        ("postgresql://u:hun?ter2@h/db", "postgresql://u@h/db"),  # libpq reads '?' and '#' in a password as its own
        ("postgresql://u:hun#ter2@h", "postgresql://u@h"),
        ("postgresql://u:hun@ter2@h/db", "postgresql://u@h/db"),  # a stray '@': dropped whole, not shown in part
        ("postgresql://u:hun/ter2@h/db", "postgresql://(an unreadable URL)"),
        ("postgresql://u@h/db?pass%77ord=hunter2&sslmode=require", "postgresql://u@h/db?sslmode=require"),
    ],
)
def test_a_journal_label_holds_no_password(url: str, label: str) -> None:
    """What an editor is told the journal is: the password is neither in the user part nor in the query."""
    assert journal_label(url) == label


@pytest.fixture
def hung(pg_server: LocalPostgres) -> Iterator[Callable[[], None]]:
    """``hang()`` stops every process of the server (SIGSTOP): its host still acknowledges packets, nothing answers.

    The server is let go on again when the test ends.
    """
    stopped: list[int] = []

    def hang() -> None:
        postmaster = pg_server.pid()
        assert postmaster is not None
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
        for pid in (postmaster, *map(int, children)):
            with contextlib.suppress(ProcessLookupError):  # a backend that ended since pgrep listed it
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)

    yield hang
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


@pytest.mark.skipif(shutil.which("pgrep") is None, reason="needs pgrep to find the server's processes")
def test_a_hung_server_is_a_bounded_wait_for_a_reader_and_for_close(
    pg_url: str, hung: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pg_store, "QUERY_TIMEOUT_S", 0.5)  # 30 s in use
    journal = Journal(pg_url)
    journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=0))
    journal.flush()
    hung()
    started = time.monotonic()
    with pytest.raises(JournalError, match=r"did not answer a read within 0.5s: it may be hung"):
        journal.read()
    journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=1))
    with pytest.raises(JournalError, match=r"1 events (could not be|were not) written"):
        journal.close(timeout=0.5)
    assert time.monotonic() - started < 10, "neither waited for ever"


@pytest.mark.skipif(shutil.which("pgrep") is None, reason="needs pgrep to find the server's processes")
def test_a_hung_server_at_connect_is_said_to_answer_too_slowly(cli: Any, pg_url: str, hung: Callable[[], None]) -> None:
    """The URL's own connect_timeout is kept (watcher's default is 10 s, 5 s for check), and the hint fits."""
    hung()
    started = time.monotonic()
    line = _said_once(cli("journal", "check", pg_url + "&connect_timeout=2"))
    assert time.monotonic() - started < 4.5, "the URL's 2 s, not watcher's 5 s"
    assert "did not answer in time" in line and "start the server" not in line, line


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            "postgresql://u:hunter2@h1:1,h2:2/db?target_session_attrs=read-write",
            "postgresql://u@h1:1,h2:2/db?target_session_attrs=read-write",
        ),
        ("postgresql://u:hunter2@[::1]:5432/db", "postgresql://u@[::1]:5432/db"),
        ("postgresql://w@%2Ftmp%2Fpg:5/db?password=hunter2", "postgresql://w@%2Ftmp%2Fpg:5/db"),
        (
            "postgresql://us%40er:hunter2@h/db?options=-csearch_path%3Dt1",
            "postgresql://us%40er@h/db?options=-csearch_path%3Dt1",
        ),
    ],
    ids=["hosts", "ipv6", "socket", "options"],
)
def test_a_journal_is_named_by_a_url_that_works_pasted_back_without_its_password(url: str, said: str) -> None:
    assert journal_label(url) == said


def test_a_search_path_naming_no_schema_is_said_so(cli: Any, pg_server: LocalPostgres) -> None:
    """'run journal migrate', said before, failed with 'no schema has been selected to create in'."""
    url = f"{pg_server.url()}?options=-csearch_path%3Dno_such_schema"
    for args in (("journal", "migrate", url), ("journal", "check", url), ("fleet", "status", "--journal", url)):
        line = _said_once(cli(*args))
        assert "has no schema to live in" in line and "CREATE SCHEMA" in line, line
    with pytest.raises(JournalError, match="has no schema to live in"):
        Journal(url)  # creating one: not 'cannot reach the server'


def test_a_statement_timeout_too_short_is_named_not_called_an_outage(pg_url: str, short_lock_timeout: float) -> None:
    """A statement_timeout (the URL's here, a role's or a database's alike) cancels a read waiting on a lock
    (0.1 s, before the lock timeout of 0.5 s)."""
    Journal(pg_url).close()
    url = pg_url.replace("options=", "options=-cstatement_timeout%3D100%20")
    with Journal(url, create=False) as journal, psycopg.connect(pg_url) as admin:
        admin.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(JournalError, match=r"cancelled a statement \(canceling statement due to statement timeout"):
            journal.read()


def test_a_server_full_of_connections_is_said_so(cli: Any, pg_server: LocalPostgres, pg_url: str) -> None:
    role = f"full{next(_roles)}"
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 0")  # as a server at max_connections
    line = _said_once(cli("fleet", "status", "--journal", pg_url.replace("watcher@", f"{role}@")))
    assert "takes no more connections" in line and "start the server" not in line, line
