"""Fault class 10: a journal poll that meets a handled condition logs one line, not a traceback."""

from __future__ import annotations

import asyncio
import logging

import pytest

from watcher.core.errors import JournalError
from watcher.runtime.polling import poll

pytestmark = pytest.mark.faults


@pytest.mark.parametrize(
    ("failure", "traceback"),
    [(JournalError("10 events are not yet written to the journal at j; they are still being retried"), False),
     (RuntimeError("a bug of ours"), True)],
)  # fmt: skip
async def test_an_outage_is_logged_once_with_a_traceback_only_for_a_bug(
    caplog: pytest.LogCaptureFixture, failure: Exception, traceback: bool
) -> None:
    log = logging.getLogger("watcher.test.poll")
    calls = 0
    enough = asyncio.Event()

    async def step() -> None:
        nonlocal calls
        calls += 1
        if calls >= 8:
            enough.set()
        if calls <= 5:
            raise failure

    with caplog.at_level(logging.WARNING, logger="watcher.test.poll"):
        task = asyncio.create_task(poll(step, 0.001, log, failed="applying commands", recovered="applied again"))
        await asyncio.wait_for(enough.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    failures = [r for r in caplog.records if "applying commands failed" in r.getMessage()]
    assert len(failures) == 1
    assert (failures[0].exc_info is not None) is traceback
    assert ("Traceback" in caplog.text) is traceback
    assert str(failure) in caplog.text
    assert sum("applied again" in r.getMessage() for r in caplog.records) == 1
