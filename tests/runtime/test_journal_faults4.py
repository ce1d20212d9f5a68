"""The journal's commands when a host is cut off past its claim's lease: each takes effect once."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from pg_proxy import Link, PgProxy, hang_up
from watcher.core.errors import JournalError
from watcher.core.interjection import Interjection, Origin
from watcher.core.observations import UserMessage
from watcher.core.spec import WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.runtime import Journal, RecordingSession, Runtime
from watcher.runtime.events import ObservationEvent
from watcher.runtime.session import InjectionOutcome
from watcher.testing.postgres import LocalPostgres

SESSION = "fleet:t"


def _effect(text: str) -> ObservationEvent:
    """Stands for a command's effect (a fleet's action row): a row written to the journal."""
    return ObservationEvent(session="t", observation=UserMessage(text=text), index=0)


def _effects(journal: Journal) -> list[str]:
    return [row.payload["observation"]["text"] for row in journal.read(session="t")]


def _status(journal: Journal, command_id: int) -> tuple[str, str]:
    (command,) = [c for c in journal.commands(status=None) if c.id == command_id]
    return command.status, command.detail


class NoCopy(PgProxy):
    """Forwards everything but a batch's rows while ``blocked``: a link sending a COPY is cut there.

    The journal's writer then retries the batch, as over a link that is down, while the same
    process's other statements (claims, releases) still reach the server.
    """

    def __init__(self, server_port: int) -> None:
        super().__init__(server_port)
        self.blocked = threading.Event()
        self.refused = threading.Event()

    def forward(self, link: Link, message: bytes, *, startup: bool) -> bool:
        if self.blocked.is_set() and not startup and b"COPY events" in message:
            link.lost.set()
            hang_up(link.client)
            hang_up(link.server)  # the server rolls the transaction back
            self.refused.set()
            return False
        link.server.sendall(message)
        return True


@pytest.fixture
def proxied(pg_server: LocalPostgres, pg_url: str) -> Iterator[tuple[NoCopy, str]]:
    """A proxy to the session's server, and the URL of ``pg_url``'s journal through it."""
    schema = pg_url.rsplit("%3D", 1)[1]
    with NoCopy(pg_server.port) as proxy:
        yield proxy, f"{proxy.url()}&options=-csearch_path%3D{schema}"


def test_a_command_applied_then_cut_off_past_its_lease_is_not_applied_by_another_host(
    proxied: tuple[NoCopy, str], pg_url: str
) -> None:
    """Host A applied a nudge and was cut off before marking it; after the lease, host B released and applied it
    again (the task was nudged twice). Its effect and its mark are one transaction now."""
    proxy, through = proxied
    with Journal(through, batch_interval=0.001) as a, Journal(pg_url, batch_interval=0.001) as b:
        cid = b.submit_command(SESSION, "nudge", payload={"message": "look at the tests"})
        (claimed,) = a.claim_commands([SESSION])
        with a.settling(claimed):
            a.append(_effect("nudged by a"))
        a.flush(timeout=10)
        proxy.cut_all()  # a is cut off before its mark, for longer than the lease
        assert b.release_claims(0.0, [SESSION]) == 0, "applied: nothing to release"
        assert b.claim_commands([SESSION]) == [], "b does not apply it again"
        assert _status(b, cid)[0] == "applied"
        proxy.up()
        a.mark_commands([(cid, "applied", "queued as nudge-1")])  # a is back: its own mark lands
        assert _status(b, cid) == ("applied", "queued as nudge-1")
        assert _effects(b) == ["nudged by a"]


def test_an_effect_unwritten_when_its_claim_is_taken_over_is_dropped_when_its_host_is_back(
    proxied: tuple[NoCopy, str], pg_url: str
) -> None:
    """Host A's effect was still queued (its link down) when B took the command over and applied it: once A was
    back, its writer wrote its copy too. Now A's is dropped (its claim no longer holds), and so is its mark."""
    proxy, through = proxied
    with Journal(through, batch_interval=0.001) as a, Journal(pg_url, batch_interval=0.001) as b:
        cid = b.submit_command(SESSION, "pause", payload={"reason": "too many retries"})
        (claimed,) = a.claim_commands([SESSION])
        proxy.cut_all()
        with a.settling(claimed):
            a.append(_effect("paused by a"))
        with pytest.raises(JournalError):
            a.flush(timeout=0.3)
        assert b.release_claims(0.0, [SESSION]) == 1, "a's claim is past its lease"
        (again,) = b.claim_commands([SESSION])
        with b.settling(again):
            b.append(_effect("paused by b"))
        b.flush(timeout=10)
        b.mark_commands([(cid, "applied", "paused by b")])
        proxy.up()
        a.flush(timeout=30)  # a's writer is through: its batch was taken (without the effect)
        a.mark_commands([(cid, "applied", "paused by a")])
        assert _effects(b) == ["paused by b"], "paused once"
        assert _status(b, cid) == ("applied", "paused by b"), "b's mark stands"


def test_the_same_host_back_after_its_lease_applies_a_command_once(proxied: tuple[NoCopy, str]) -> None:
    """Back after the lease, a host released its own claim, claimed the command again and applied it, and its
    writer then wrote the first effect it had queued: the command took effect twice on one host."""
    proxy, through = proxied
    with Journal(through, batch_interval=0.001) as a:
        cid = a.submit_command(SESSION, "abort", payload={"reason": "off track"})
        (first,) = a.claim_commands([SESSION])
        proxy.blocked.set()  # its batches cannot get through; its other statements can
        with a.settling(first):
            a.append(_effect("aborted (first claim)"))
        assert proxy.refused.wait(10)
        with pytest.raises(JournalError):
            a.flush(timeout=0.3)
        assert a.release_claims(0.0, [SESSION]) == 1
        (second,) = a.claim_commands([SESSION])
        with a.settling(second):
            a.append(_effect("aborted (second claim)"))
        proxy.blocked.clear()
        a.flush(timeout=30)
        a.mark_commands([(cid, "applied", "aborted")])
        assert _effects(a) == ["aborted (second claim)"]
        assert _status(a, cid) == ("applied", "aborted")


def test_a_file_journal_drops_the_effect_of_a_claim_another_process_took_over(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path, batch_interval=0.001) as a, Journal(path, batch_interval=0.001) as b:
        cid = a.submit_command(SESSION, "nudge", payload={"message": "m"})
        (claimed,) = a.claim_commands([SESSION])
        assert b.release_claims(-1.0, [SESSION]) == 1  # a's lease ran out (while it was stuck)
        (again,) = b.claim_commands([SESSION])
        with a.settling(claimed):
            a.append(_effect("by a"))
        a.flush()
        a.mark_commands([(cid, "applied", "by a")])
        assert _status(b, cid)[0] == "claimed", "b's claim stands"
        with b.settling(again):
            b.append(_effect("by b"))
        b.flush()
        assert _status(b, cid) == ("applied", "applied: its effect is in the journal")
        assert b.claim_commands([SESSION]) == [] and b.release_claims(-1.0, [SESSION]) == 0
        b.mark_commands([(cid, "applied", "by b")])
        assert _effects(b) == ["by b"]
        assert _status(b, cid) == ("applied", "by b")


def test_events_appended_outside_a_settling_block_or_for_an_unclaimed_command_are_written_as_before(
    journal_at: Path | str,
) -> None:
    with Journal(journal_at, batch_interval=0.001) as journal:
        cid = journal.submit_command(SESSION, "nudge", payload={"message": "m"})
        (listed,) = journal.commands(sessions=[SESSION])
        with journal.settling(listed):  # read, not claimed here: nothing to fence
            journal.append(_effect("given"))
        journal.append(_effect("plain"))
        journal.flush()
        journal.mark_command(cid, "applied", "done")
        assert _effects(journal) == ["given", "plain"]
        assert _status(journal, cid) == ("applied", "done")


async def test_a_command_whose_mark_was_lost_is_not_applied_again_by_the_process_owning_its_session(
    tmp_path: Path,
) -> None:
    """The journal was locked by another process after a person's words were delivered and before the command was
    marked: the next poll found it still new and delivered the words again."""
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    runtime = Runtime(journal=journal)
    session = RecordingSession("s")
    runtime.attach(WatcherSpec(name="w", role="test", mode="manual"), CallableEvaluator(lambda r: None), session)
    cid = journal.submit_command("s", "inject", watcher="w", payload={"content": "run the tests first"})
    with closing(sqlite3.connect(path)) as other:
        other.execute("BEGIN IMMEDIATE")  # another process holds the file: the mark waits, then gives up
        with pytest.raises(JournalError):
            await runtime.apply_commands()
        other.rollback()
    await runtime.apply_commands()  # marks it first: it is not new any more
    await runtime.apply_commands()
    await runtime.settle()
    assert [i.content for i in session.delivered] == ["run the tests first"], "delivered once"
    assert _status(journal, cid) == ("applied", "delivered")
    await runtime.close()
    journal.close()


def test_a_prune_of_a_live_journal_does_not_hide_new_rows_from_its_followers_until_it_ends(pg_url: str) -> None:
    """A prune was one DELETE: for as long as it ran (minutes on a big journal), every row written after it began
    lay above the oldest running transaction, and no follower (a supervisor, a task host) read anything new."""
    with Journal(pg_url, batch_interval=0.001) as journal, psycopg.connect(pg_url, autocommit=True) as admin:
        with admin.cursor().copy("COPY events(ts, session, watcher, kind, payload) FROM STDIN") as copy:
            for _ in range(300_000):
                copy.write_row((1000.0, "old", "", "observation", "{}"))
        head = journal.last_id()
        pruned: list[tuple[int, int]] = []
        pruning = threading.Thread(target=lambda: pruned.append(journal.prune(2000.0)))
        pruning.start()
        try:
            running = (
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'DELETE FROM events%'"
            )
            while not admin.execute(running).fetchone()[0] and pruning.is_alive():  # type: ignore[index]
                pass
            journal.append(_effect("written while pruning"))
            journal.flush(timeout=10)
            while not journal.read(head, session="t") and pruning.is_alive():
                pass
            left = admin.execute("SELECT count(*) FROM events WHERE ts < 2000").fetchone()[0]  # type: ignore[index]
        finally:
            pruning.join()
        assert pruned == [(300_000, 0)]
        assert left > 0, "a follower read the new row while the prune was still deleting"
        assert _effects(journal) == ["written while pruning"]


class SlowSession(RecordingSession):
    """Hands a message over only once the test lets it: a delivery still under way."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.started = asyncio.Event()
        self.go = asyncio.Event()

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        self.started.set()
        await self.go.wait()
        return await super().hand_over(interjection, origin)


async def test_a_command_being_applied_when_the_runtime_closes_is_finished_and_marked(tmp_path: Path) -> None:
    """An agent run that ended while it was delivering a person's words closed its runtime: the poller was
    cancelled mid-delivery, and the command stayed new for the session's next owner to apply again."""
    journal = Journal(tmp_path / "journal.sqlite3")
    runtime = Runtime(journal=journal)
    session = SlowSession("s")
    runtime.attach(WatcherSpec(name="w", role="test", mode="manual"), CallableEvaluator(lambda r: None), session)
    cid = journal.submit_command("s", "inject", watcher="w", payload={"content": "run the tests first"})
    runtime.start_command_poller(interval=0.01)
    await asyncio.wait_for(session.started.wait(), 10)
    closing_down = asyncio.ensure_future(runtime.close())
    await asyncio.sleep(0.05)  # the poller is cancelled while the delivery waits
    session.go.set()
    await asyncio.wait_for(closing_down, 10)
    assert [i.content for i in session.delivered] == ["run the tests first"]
    assert _status(journal, cid) == ("applied", "delivered")
    journal.close()
