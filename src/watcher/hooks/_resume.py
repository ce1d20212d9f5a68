"""Reading a hooked session back from the journal: what a process that has not seen it needs.

Without a daemon every hook call is a new process, and a daemon that restarted has forgotten its
sessions; either way the journal remembers. ``read_back`` rebuilds the session's recent
observations, the interjections still pending for a person, those queued for an answer that has
not carried them yet, how often each turn was kept going at ``Stop``, and a pause the CLI has not
honoured yet. ``prime`` hands that to a freshly attached watcher.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from watcher.core.errors import JournalError
from watcher.core.interjection import Interjection, Origin
from watcher.core.logs import logger
from watcher.core.observations import Observation, observation_from_dict
from watcher.evaluators.rules import RulesEvaluator
from watcher.runtime.engine import Watcher
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
    history: list[Observation] = []
    pending: dict[str, Interjection] = {}
    made: dict[str, Interjection] = {}
    queued: dict[str, Interjection] = {}  # handed to the session, not yet carried by an answer
    blocks: dict[str, int] = {}
    judged: dict[str, int] = {}
    started, paused, observed = False, "", 0
    for row in journal.read(0, limit=1_000_000, session=name):
        payload = row.payload
        if row.kind == "observation":
            observed += 1
            try:
                history.append(observation_from_dict(payload["observation"]))
            except Exception:  # noqa: BLE001 - one unreadable row must not lose the session
                log.warning("skipping unreadable observation %d of %s", row.id, name)
        elif row.kind == "interjection":
            found = Interjection.from_dict(payload.get("interjection") or {})
            made[found.id] = found
            if payload.get("status") == "pending":
                pending[found.id] = found
        elif row.kind == "delivery":
            ident = str(payload.get("interjection_id"))
            pending.pop(ident, None)
            if payload.get("outcome") == "queued":
                content = str(payload.get("content") or "")
                base = made.get(ident) or Interjection(content, watcher=row.watcher, id=ident)
                origin = Origin.parse(payload.get("origin")) or base.origin
                queued[ident] = replace(base, content=content or base.content, origin=origin)
            else:  # delivered, dismissed, undeliverable, failed: settled
                queued.pop(ident, None)
        elif row.kind == "evaluation":
            judged[row.watcher] = max(judged.get(row.watcher, -1), int(payload.get("index", -1)))
        elif row.kind == "session":
            started = True
        elif row.kind == "hook":
            paused = str(payload.get("pause") or "")
            for ident in payload.get("carried") or ():
                queued.pop(str(ident), None)
            if payload.get("answer") == "block":
                turn = str(payload.get("turn") or "")
                blocks[turn] = blocks.get(turn, 0) + 1
    return Past(history[-HISTORY:], observed, pending, list(queued.values()), started, blocks, paused, judged)


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
