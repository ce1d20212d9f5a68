"""A PostgreSQL journal used by a careless or hostile fleet: wrong clocks, racing migrations, odd URLs, restarts."""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from watcher.cli import main
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime._pg_pool import JournalPool
from watcher.runtime.events import ObservationEvent

YEAR_S = 365 * 86400


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Done]:
    """The ``watcher`` command line, run in this process."""

    def run(*args: str) -> Done:
        code = main(list(args))
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return run


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
