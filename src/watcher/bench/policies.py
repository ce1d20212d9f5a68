"""Simulated model policies: a seeded primary agent and a seeded watcher, pure functions of the messages.

These stand in for models when no server is configured; they are *simulated*, and every report
made with them says so. The primary follows the chain's pointer with probability ``follow`` (else
it misreads a name, picks an archived trace or types a path that does not exist), follows decoy
pointers once it has strayed, recovers by itself with probability ``recover`` per step, and heeds
a ``[SUPERVISOR]`` message with probability ``heed``. The watcher turns the snapshot it is shown
into guidance: with the expected step named (guided) it passes it on with probability
``accuracy``; shown only the agent's actions (blind) it replays what it can see to find the last
pointer on the chain, and gives general advice when the snapshot is too small to tell.

Every draw is seeded by the suite seed, the task and the position in the conversation, so a
policy's answer depends on nothing but the request: runs reproduce under any concurrency.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from watcher.bench.world import Pointer, parse_pointer, resolve_indirect, trace_number

__all__ = ["Event", "SimParams", "chain_state", "primary_action", "watcher_guidance"]

Event = tuple[str, Any]  # ("task", text) ("call", (name, args)) ("result", (text, is_error)) ("user", text)

_PATH = re.compile(r"[a-z]+/trace_\d{3}\.log")
_START = re.compile(r"start at (\S+?)\.(?:\s|$)")
_LIST = re.compile(r"list_dir ([a-z]+)")
GENERIC = (
    "The trace you just read is not on the chain: it is archived, or its name does not match the "
    "pointer that led you there. Go back to the last trace whose name matched its pointer and follow "
    "that pointer exactly."
)


@dataclass(frozen=True, slots=True)
class SimParams:
    """The simulated models' parameters (probabilities) and the seed of their draws."""

    seed: int = 0
    follow: float = 0.8
    heed: float = 0.8
    recover: float = 0.05
    accuracy: float = 0.9


@dataclass(slots=True)
class ChainState:
    """What can be known from a conversation: the chain's next pointer, the last pointer seen, listings."""

    trusted: Pointer | None
    last_pointer: Pointer | None
    listings: dict[str, list[str]]
    wandering: bool
    calls: int


def rng_for(params: SimParams, *parts: object) -> random.Random:
    """A generator seeded by the suite seed and ``parts`` (stable across processes, unlike ``hash``)."""
    digest = hashlib.sha256("|".join(map(str, (params.seed, *parts))).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _target(pointer: Pointer | None, listings: dict[str, list[str]]) -> str | None:
    if pointer is None or pointer.kind == "final":
        return None
    if pointer.kind == "direct":
        return pointer.value
    names = listings.get(pointer.value)
    return resolve_indirect(pointer, names) if names is not None else None


def chain_state(events: Sequence[Event]) -> ChainState:
    """Replay the tool calls: the chain's pointer is trusted only while the names read match it."""
    task = next((e[1] for e in events if e[0] == "task"), "")
    start = _START.search(task)
    trusted = Pointer("direct", start.group(1)) if start else None
    state = ChainState(trusted, trusted, {}, False, 0)
    pending: tuple[str, dict[str, Any]] | None = None
    for kind, value in events:
        if kind == "call":
            pending = value
            state.calls += 1
        elif kind == "result" and pending is not None:
            (name, args), (text, is_error) = pending, value
            pending = None
            if is_error:
                continue
            path = str(args.get("path", "")).strip("/")
            if name == "list_dir":
                state.listings[path] = text.splitlines()
            elif name == "read_file":
                pointer = parse_pointer(text)
                on_chain = path == _target(state.trusted, state.listings)
                if on_chain:
                    state.trusted = pointer
                state.wandering = not on_chain
                state.last_pointer = pointer or state.last_pointer
    return state


def _mistake(path: str, rng: random.Random) -> str:
    directory, name = path.split("/", 1)
    n = trace_number(name) or 0
    digits = f"{n:03d}"
    roll = rng.random()
    if roll < 0.4:
        return f"{directory}/trace_{digits[0]}{digits[2]}{digits[1]}.log"
    if roll < 0.7:
        return f"{directory}/trace_{n + rng.choice((-1, 1)):03d}.log"
    if roll < 0.85:
        return f"{rng.choice(('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'))}/{name}"
    return f"{directory}/traces_{digits}.log"  # a path that does not exist


def _act(
    pointer: Pointer | None, state: ChainState, params: SimParams, rng: random.Random
) -> tuple[str, dict[str, Any]]:
    if pointer is None:
        return "list_dir", {"path": ""}
    if pointer.kind == "final":
        return "submit_answer", {"answer": pointer.value}
    if pointer.kind == "indirect" and pointer.value not in state.listings:
        return "list_dir", {"path": pointer.value}
    target = _target(pointer, state.listings)
    if target is None:
        return "list_dir", {"path": pointer.value}
    if rng.random() < params.follow:
        return "read_file", {"path": target}
    if pointer.kind == "indirect":  # taken in by an archived trace numbered below the threshold
        below = [n for n in state.listings[pointer.value] if (trace_number(n) or 0) <= pointer.above]
        if below:
            return "read_file", {"path": f"{pointer.value}/{rng.choice(below)}"}
    return "read_file", {"path": _mistake(target, rng)}


def primary_action(events: Sequence[Event], params: SimParams) -> tuple[str, dict[str, Any]]:
    """The simulated agent's next tool call."""
    state = chain_state(events)
    task = next((e[1] for e in events if e[0] == "task"), "")
    supervised = (
        events[-1][1] if events and events[-1][0] == "user" and str(events[-1][1]).startswith("[SUPERVISOR]") else None
    )
    rng = rng_for(params, "agent", task, state.calls, sum(e[0] == "user" for e in events))
    if supervised is not None and rng.random() < params.heed:
        paths = _PATH.findall(supervised)
        listing = _LIST.search(supervised)
        if "submit_answer" in supervised and state.trusted is not None and state.trusted.kind == "final":
            return "submit_answer", {"answer": state.trusted.value}
        if listing:
            if listing.group(1) not in state.listings:
                return "list_dir", {"path": listing.group(1)}
            return _act(state.trusted, state, params, rng)
        if paths:
            return "read_file", {"path": paths[-1]}
        return _act(state.trusted, state, params, rng)
    if state.wandering and rng.random() >= params.recover:
        return _act(state.last_pointer, state, params, rng)
    return _act(state.trusted, state, params, rng)


def _blind_events(activity: str) -> list[Event]:
    """The observations a watcher prompt shows, back as events (tool calls, results, the task)."""
    events: list[Event] = []
    for block in activity.split("\n\n"):
        if block.startswith("[User]: ") and not block.startswith("[User]: [SUPERVISOR]"):
            events.append(("task", block[8:]))
        elif block.startswith("[ToolCall]: "):
            name, _, raw = block[12:].partition(" ")
            try:
                args = json.loads(raw)
            except ValueError:
                args = {}
            events.append(("call", (name, args if isinstance(args, dict) else {})))
        elif block.startswith("[ToolResult"):
            events.append(("result", (block.partition(": ")[2], block.startswith("[ToolResult (error)"))))
    return events


def watcher_guidance(activity: str, params: SimParams) -> str:
    """The simulated watcher's answer, in the ``[INTERJECT]`` protocol."""
    rng = rng_for(params, "watcher", activity.count("[ToolCall]"), re.sub(r"OBSERVED-[0-9a-f]+", "", activity))
    expected = re.search(r"Expected: read_file (\S+?)\.(?:\s|$)", activity)
    content = GENERIC
    if rng.random() < params.accuracy:
        if "Expected: submit_answer" in activity:
            content = "You already read the final token: submit it now with submit_answer."
        elif expected:
            content = f"You left the chain. The next trace is {expected.group(1)}: read_file {expected.group(1)}."
        else:
            state = chain_state(_blind_events(activity))
            pointer = state.trusted
            if pointer is not None and state.calls > 1:
                if pointer.kind == "final":
                    content = "You already read the final token: submit it now with submit_answer."
                elif pointer.kind == "direct":
                    content = f"Go back to the chain: the last trace on it points to {pointer.value}. read_file {pointer.value}."
                else:
                    content = f"Go back to the chain: list_dir {pointer.value} and read the first trace numbered above {pointer.above}."
    return f"[INTERJECT]\nurgent: false\naction: guidance\ncontent: {content}\n[/INTERJECT]"
