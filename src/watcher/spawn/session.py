"""A spawned agent CLI as a parent session: watchers' interjections reach the running process.

For a CLI with a live channel (Claude Code's stream-json input) an interjection is written as a
user message, which the CLI takes as a new turn when the current one ends; an urgent one is
preceded by an interrupt request, so the in-flight response is dropped and the message starts
the next turn. Written is not delivered: ``inject`` answers ``"queued"``, and the session
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
from dataclasses import dataclass

from watcher.agents._delivery import format_injection
from watcher.core.errors import SessionEndedError
from watcher.core.interjection import Interjection, Origin
from watcher.runtime.events import DeliveryEvent, Event
from watcher.runtime.session import InjectionOutcome, Session
from watcher.spawn._adapter import AgentCLI
from watcher.spawn.process import AgentProcess

__all__ = ["SpawnSession"]

_requests = itertools.count(1)


@dataclass(frozen=True, slots=True)
class _Queued:
    interjection: Interjection
    origin: Origin
    text: str


class SpawnSession(Session):
    """The parent session of one spawn; ``process`` is the CLI run currently attached (or None)."""

    def __init__(self, name: str, adapter: AgentCLI, publish: Callable[[Event], None] | None = None) -> None:
        self.name = name
        self.adapter = adapter
        self.process: AgentProcess | None = None
        self.turns_sent = 0  # user lines written to the current process
        self.queued: list[_Queued] = []  # for the next resume (no live channel, or it had closed)
        self.unacknowledged: list[_Queued] = []  # written to the live CLI, not yet taken into its conversation
        self.delivered: list[tuple[Interjection, str]] = []  # (interjection, how: "live" | "resume")
        self.stopped_by: str = ""  # a pause/abort interjection ended the run
        self.mid_turn = False  # a live CLI's turn runs past the boundary ``execute`` is at (False at a turn's end)
        self._publish = publish
        self._ended = False

    @property
    def ended(self) -> bool:
        return self._ended

    def end(self) -> None:
        """No more interjections; what still waits for a resume is journaled undeliverable."""
        self._ended = True
        for item in self.unacknowledged:
            self._settle(item, "undeliverable", "the spawn ended before its CLI took the message")
        for item in self.queued:
            self._settle(item, "undeliverable", "the spawn ended before its CLI session was resumed")
        self.unacknowledged.clear()
        self.queued.clear()

    def attach(self, process: AgentProcess) -> None:
        self.process = process
        self.turns_sent = 0

    def detach(self) -> None:
        """The CLI process ended: a message it never took waits for the resume, ahead of later ones."""
        self.process = None
        self.queued[:0], self.unacknowledged = self.unacknowledged, []

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

    async def inject(self, interjection: Interjection, *, origin: Origin) -> InjectionOutcome:
        if self._ended:
            raise SessionEndedError(
                f"spawn session {self.name!r} has ended; interjection {interjection.id!r} was not delivered"
            )
        if interjection.action in ("pause", "abort"):
            self.stopped_by = f"{interjection.action} by {origin.render()}: {interjection.content}"
            if self.process is not None:
                await self.process.stop(self.stopped_by)
            return "delivered"
        item = _Queued(interjection, origin, format_injection(interjection, by_person=origin.by_person))
        if interjection.urgent:
            await self.cut_turn()
        (self.unacknowledged if await self.send(item.text) else self.queued).append(item)
        return "queued"  # delivered when the live CLI takes it (``took``) or the resumed run starts with it

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
        if not self._live or self.process is None or any(i.interjection.urgent for i in self.unacknowledged):
            return False
        await self.process.write(self.adapter.interrupt(f"watcher_{next(_requests)}"))
        self.mid_turn = False  # the turn ends: the next line starts one
        return True

    def took(self, text: str) -> None:
        """The live CLI echoed ``text`` as taken into its conversation: the message is delivered now."""
        for index, item in enumerate(self.unacknowledged):
            if item.text.strip() == text.strip():
                del self.unacknowledged[index]
                self.delivered.append((item.interjection, "live"))
                self._settle(item, "delivered", "taken by the CLI into its conversation (it echoed the message)")
                return

    def resume_prompt(self) -> str:
        """The queued messages as the prompt of the resumed run; each is journaled delivered."""
        items, self.queued = self.queued, []
        for item in items:
            self.delivered.append((item.interjection, "resume"))
            self._settle(item, "delivered", "carried by the resumed CLI session")
        return "\n\n".join(item.text for item in items)

    def _settle(self, item: _Queued, outcome: str, detail: str) -> None:
        if self._publish is None:
            return
        self._publish(
            DeliveryEvent(
                session=self.name,
                watcher=item.interjection.watcher,
                interjection_id=item.interjection.id,
                outcome="delivered" if outcome == "delivered" else "undeliverable",
                detail=detail,
                content=item.text,
                origin=item.origin.render(),
            )
        )
