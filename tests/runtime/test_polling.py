"""A journal poll logs an outage once and its end once, and never stops on a failure."""

from __future__ import annotations

import asyncio
import logging

import pytest

from watcher.core.logs import logger
from watcher.runtime.polling import poll


async def test_an_outage_is_logged_once_and_its_end_once(caplog: pytest.LogCaptureFixture) -> None:
    looks: list[int] = []
    tenth = asyncio.Event()

    async def look() -> None:
        looks.append(len(looks))
        if len(looks) == 10:
            tenth.set()
        if 2 <= len(looks) <= 6:  # five failed looks in a row: the journal held locked, say
            raise OSError("database is locked")

    with caplog.at_level(logging.WARNING, logger="watcher"):
        task = asyncio.create_task(
            poll(look, 0.001, logger("watcher.test_polling"), failed="looking", recovered="looking works again")
        )
        await asyncio.wait_for(tenth.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert caplog.text.count("looking failed; retrying every 0.001s") == 1 and "database is locked" in caplog.text
    assert caplog.text.count("looking works again") == 1
