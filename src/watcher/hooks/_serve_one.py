"""Judging one hook call in this process: what the hook does when no daemon answers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from watcher.hooks._desk import Desk
from watcher.hooks._session import HookConfig
from watcher.hooks._wire import HookCall
from watcher.runtime.journal import Journal, journal_target, project_root

__all__ = ["answer_once", "journal_path_for"]


def journal_path_for(config: HookConfig, call: HookCall) -> Path | str:
    """The journal of the hooked session: the hook's ``--journal`` or ``$WATCHER_JOURNAL``, else the project's.

    The hook puts ``$WATCHER_JOURNAL`` into ``config``; this process's own environment is not
    consulted, because a daemon serves hooks started from many shells.
    """
    if config.journal:
        return journal_target(config.journal)
    cwd = Path(call.cwd) if call.cwd and Path(call.cwd).is_dir() else None
    return project_root(cwd) / ".watcher" / "journal.sqlite3"


async def _answer(call: HookCall, config: HookConfig, *, late: bool) -> dict[str, Any] | None:
    journal = await asyncio.to_thread(Journal, journal_path_for(config, call))
    desk = Desk(journal)
    try:  # late: the hook already answered; what the watchers find waits for the next answer
        answer = await desk.handle(call, config, answered=late)
        return answer.wire(call.event, call.agent)
    finally:
        await desk.close()
        await asyncio.to_thread(journal.close)


def answer_once(event: str, options: dict[str, Any], raw: bytes, *, late: bool = False) -> dict[str, Any] | None:
    """The wire answer to one hook call, judged here (the caller enforces the time budget).

    ``late``: the call was already answered (by the guard alone); the watchers' findings wait.
    """
    config = HookConfig.from_dict(options)
    call = HookCall.parse(config.agent, event, raw)
    return asyncio.run(_answer(call, config, late=late))
