"""Reading a hooked session back from the journal: what a process that has not seen it needs.

Without a daemon every hook call is a new process, and a daemon that restarted has forgotten its
sessions; either way the journal remembers. ``read_back`` rebuilds the session's recent
observations, the interjections still pending for a person, those queued for an answer that has
not carried them yet, how often each turn was kept going at ``Stop``, and a pause the CLI has not
honoured yet. ``prime`` hands that to a freshly attached watcher.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from watcher.core.errors import JournalError
from watcher.core.interjection import Interjection
from watcher.core.logs import logger
from watcher.core.observations import Observation
from watcher.evaluators.rules import RulesEvaluator
from watcher.hooks._events import HookEvent
from watcher.runtime.engine import Watcher
from watcher.runtime.events import EvaluationEvent, ObservationEvent, SessionEvent, readable
from watcher.runtime.fates import PENDING, QUEUED, Fates
from watcher.runtime.journal import Journal

__all__ = ["Past", "prime", "read_back"]

log = logger("watcher.hooks")

HISTORY = 200  # observations kept for the watchers' buffers
# Roles whose judgment follows the whole history (a loop): a resumed session feeds them its history
# once. Security judges each call on its own; errors reads the buffer it is primed with.
_FOLLOWS_HISTORY = frozenset({"stuck"})


@dataclass(frozen=True, slots=True)
class Past:
    """A hooked session as the journal remembers it."""

    history: list[Observation]
    observed: int  # observations journaled in all (the next one's index)
    pending: dict[str, Interjection]
    outbox: list[Interjection]
    started: bool
    stop_blocks: dict[str, int]
    paused: str
    judged: dict[str, int] = field(default_factory=dict)  # watcher -> index of the last observation it evaluated


def read_back(journal: Journal, name: str) -> Past:
    """What ``journal`` knows of session ``name`` (its own queued writes flushed first)."""
    try:  # a desk's own earlier writes count too (a session ended and resumed)
        journal.flush(timeout=1.0)
    except JournalError as exc:  # locked by another process: read what is committed, never wait on it
        log.warning("reading session %s back without its newest writes: %s", name, exc)
    rows = journal.read(0, limit=1_000_000, session=name)
    fates = Fates()  # pending for a person, or queued for an answer that has not carried it yet
    history: list[Observation] = []
    carried: set[str] = set()
    blocks: dict[str, int] = {}
    judged: dict[str, int] = {}
    started, paused = False, ""
    for event in readable(rows, log, f"reading session {name} back"):
        fates.apply(event)
        if isinstance(event, ObservationEvent):
            history.append(event.observation)
        elif isinstance(event, EvaluationEvent):
            judged[event.watcher] = max(judged.get(event.watcher, -1), event.index)
        elif isinstance(event, SessionEvent):
            started = True
        elif isinstance(event, HookEvent):
            paused = event.pause
            carried.update(event.carried)
            if event.answer == "block":
                blocks[event.turn] = blocks.get(event.turn, 0) + 1
    observed = sum(row.kind == ObservationEvent.kind for row in rows)  # unreadable ones took an index too
    pending = {f.id: f.interjection for f in fates.with_status(PENDING)}
    outbox = [f.interjection for f in fates.with_status(QUEUED) if f.id not in carried]
    return Past(history[-HISTORY:], observed, pending, outbox, started, blocks, paused, judged)


def prime(watcher: Watcher, past: Past) -> None:
    """Give a freshly attached watcher the session's history and its pending interjections."""
    # the last observations no evaluation of this watcher saw (the session's end judges them)
    unjudged = min(past.observed - 1 - past.judged.get(watcher.name, -1), len(past.history))
    watcher.prime(past.history, index=past.observed - 1, unjudged=unjudged)
    watcher.pending.update({i.id: i for i in past.pending.values() if i.watcher == watcher.name})
    evaluator = watcher.evaluator
    seen = past.history[: len(past.history) - unjudged]
    if seen and isinstance(evaluator, RulesEvaluator) and watcher.spec.role in _FOLLOWS_HISTORY:
        evaluator.role.evaluate(seen, len(seen))  # catch the role up; it judged these then
