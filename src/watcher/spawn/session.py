"""A spawned agent CLI as a parent session: watchers' interjections reach the running process.

For a CLI with a live channel (Claude Code's stream-json input) an interjection is written as a
user message, which the CLI takes as a new turn when the current one ends; an urgent one is
preceded by an interrupt request, so the in-flight response is dropped and the message starts
the next turn. Written is not delivered: ``inject`` answers ``queued``, and the session
journals ``delivered`` when the CLI echoes the message back as taken into its conversation
(``took``); every request it sends from then on carries it. A message the CLI never took (its
process ended first) waits for the resume like any queued one. For a CLI without a live channel
(Gemini CLI, Codex) the message waits for the run's next breakpoint (the end of the headless
run) and continues the same CLI session with ``--resume``/``resume``: the session journals
``delivered`` when the resumed run starts with it (``resume_prompt``). Either way, what is still
waiting when the spawn ends is journaled ``undeliverable``. ``pause`` and ``abort`` stop the
process and are not delivered as text.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from watcher.agents._delivery import format_injection
from watcher.core.interjection import Interjection, Origin
from watcher.runtime.events import Event
from watcher.runtime.fates import DELIVERED, QUEUED
from watcher.runtime.session import EndState, InjectionOutcome, Parcel, Session
from watcher.spawn._adapter import AgentCLI
from watcher.spawn.process import AgentProcess

__all__ = ["SpawnSession"]

_requests = itertools.count(1)
_STOPS = {"pause": EndState.PAUSED, "abort": EndState.ABORTED}


class SpawnSession(Session):
    """The parent session of one spawn; ``process`` is the CLI run currently attached (or None).

    Its inbox holds what waits for the next resume (no live channel, or it had closed);
    ``unacknowledged`` what was written to the live CLI and not yet taken into its conversation.
    """

    kind = "spawn session"

    def __init__(self, name: str, adapter: AgentCLI, publish: Callable[[Event], None] | None = None) -> None:
        super().__init__(name, publish=publish)
        self.adapter = adapter
        self.process: AgentProcess | None = None
        self.turns_sent = 0  # user lines written to the current process
        self.unacknowledged: list[Parcel] = []  # written to the live CLI, not yet taken into its conversation
        self.delivered: list[tuple[Interjection, str]] = []  # (interjection, how: "live" | "resume")
        self.stopped_by: str = ""  # a pause/abort interjection ended the run
        self.stopped_as: EndState | None = None  # paused or aborted, when one did
        self.mid_turn = False  # a live CLI's turn runs past the boundary ``execute`` is at (False at a turn's end)

    @property
    def queued(self) -> list[Parcel]:
        """What waits for the resume of the CLI session."""
        return self.inbox

    def end(self, state: EndState = EndState.ENDED, leftover: str = "") -> None:
        """No more interjections; what still waits for the CLI is journaled undeliverable."""
        unacknowledged, self.unacknowledged = self.unacknowledged, []
        self.undeliverable(unacknowledged, "the spawn ended before its CLI took the message")
        super().end(state, leftover or "the spawn ended before its CLI session was resumed")

    def attach(self, process: AgentProcess) -> None:
        self.process = process
        self.turns_sent = 0

    def detach(self) -> None:
        """The CLI process ended: a message it never took waits for the resume, ahead of later ones."""
        self.process = None
        self.put_back(self.unacknowledged)
        self.unacknowledged = []

    @property
    def _live(self) -> bool:
        proc = self.process
        return self.adapter.live and proc is not None and proc.returncode is None and not proc.stop_reason

    async def send(self, text: str) -> bool:
        """Write one user message to the running CLI; False when it cannot take it now."""
        if not self._live or self.process is None:
            return False
        if await self.process.write(self.adapter.message(text)):
            # a line written mid-turn rides in the running turn (Claude Code 2.1.330 adds it to the next
            # request) and starts no turn of its own; at stdin's end the CLI still takes what it was sent
            self.turns_sent += not self.mid_turn
            return True
        return False

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        stop = _STOPS.get(interjection.action)
        if stop is not None:
            self.stopped_by = f"{interjection.action} by {origin.render()}: {interjection.content}"
            self.stopped_as = stop
            if self.process is not None:
                await self.process.stop(self.stopped_by)
            return DELIVERED
        parcel = Parcel.of(interjection, origin, format_injection(interjection, by_person=origin.by_person))
        if interjection.urgent:
            await self.cut_turn()
        (self.unacknowledged if await self.send(parcel.text) else self.inbox).append(parcel)
        return QUEUED  # delivered when the live CLI takes it (``took``) or the resumed run starts with it

    async def interrupt(self) -> None:
        """Stop the current turn of a live CLI (see ``cut_turn``)."""
        await self.cut_turn()

    async def cut_turn(self) -> bool:
        """Stop the current turn of a live CLI; True when an interrupt was sent.

        A headless Gemini or Codex run is not cut: killing it mid-turn can lose the session it
        would resume, so its queued message waits for the run's end (its next breakpoint). Nor is
        the turn an urgent message is starting: an interrupt sent before the CLI took that message
        would cut off the very turn that carries it.
        """
        if not self._live or self.process is None or any(p.interjection.urgent for p in self.unacknowledged):
            return False
        await self.process.write(self.adapter.interrupt(f"watcher_{next(_requests)}"))
        self.mid_turn = False  # the turn ends: the next line starts one
        return True

    def took(self, text: str) -> None:
        """The live CLI echoed ``text`` as taken into its conversation: the message is delivered now."""
        for index, parcel in enumerate(self.unacknowledged):
            if parcel.text.strip() == text.strip():
                del self.unacknowledged[index]
                self.delivered.append((parcel.interjection, "live"))
                self.reached([parcel], "taken by the CLI into its conversation (it echoed the message)")
                return

    def resume_prompt(self) -> str:
        """The queued messages as the prompt of the resumed run; each is journaled delivered."""
        parcels = self.take()
        self.delivered.extend((parcel.interjection, "resume") for parcel in parcels)
        self.reached(parcels, "carried by the resumed CLI session")
        return "\n\n".join(parcel.text for parcel in parcels)
