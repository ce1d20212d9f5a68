"""The turn loop of an agent run: checkpoint, deliver, stream, run tools, repeat; returns a ``RunResult``.

The run (``watcher.agents.run``) owns the loop, the loop owns the conversation, the counters and
the inbox (``_run_inbox``); nothing points back. The run hands the loop what people and watchers
say (``admit``/``put``, ``request_stop``, ``interrupt``), and ``drive`` returns the result.

Invariants (the API rejects a conversation that breaks them):

- every assistant ``tool_use`` is answered by a ``tool_result`` in the very next user message,
  and the ``tool_result`` blocks come first in it; injected text rides after them;
- a partial assistant turn cut off by an interrupt is appended only when it holds no
  ``tool_use``, and then only its (non-empty) text;
- user messages are merged rather than sent twice in a row.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from watcher.agents._delivery import supervised_system
from watcher.agents._run_config import Boundary, RunConfig, RunResult
from watcher.agents._run_inbox import STOPS, Inbox
from watcher.agents._run_turn import Turn
from watcher.agents._sinks import OutputSinks
from watcher.core.errors import CorrectionCapReached
from watcher.core.interjection import Interjection, Origin
from watcher.core.logs import logger
from watcher.core.observations import UserMessage
from watcher.runtime.engine import Watcher
from watcher.runtime.hub import Runtime
from watcher.runtime.session import EndState, Parcel, Session

__all__ = ["RunLoop"]

log = logger("watcher.agents")


@dataclass(slots=True)
class _Counters:
    """What the loop counts while it runs; ``RunLoop.result`` freezes it into a ``RunResult``."""

    steps: int = 0
    streak: int = 0  # consecutive turns that answered an interjection
    corrective_steps: int = 0
    corrective_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    last_text: str = ""


class RunLoop:
    """Drives one run's turns; everything it needs is handed to it, and it returns the result."""

    def __init__(
        self, config: RunConfig, *, session: Session, client: Any, runtime: Runtime, sinks: OutputSinks
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.sinks = sinks
        self.session = session
        self.inbox = Inbox(session, runtime, sinks)
        self.messages: list[dict[str, Any]] = []
        self.counters = _Counters()
        self.stop: tuple[EndState, str] | None = None  # (status, detail) once a pause or an abort was asked for
        self.closed = False
        self._turn = Turn(config, client=client, runtime=runtime, sinks=sinks, messages=self.messages)
        self._attention = asyncio.Event()  # set when something should end a checkpoint early

    # --- called by the run ------------------------------------------------------------------------

    def admit(self, interjection: Interjection, origin: Origin) -> Parcel:
        """Check ``interjection`` against the run's rules (any thread): the corrective cap, its content."""
        if not origin.by_person and interjection.action not in STOPS and self.at_cap():
            raise CorrectionCapReached(
                f"agent run {self.config.name!r} already answered {self.config.max_corrections_per_step} "
                "interjections in a row (max_corrections_per_step); this one was not delivered"
            )
        return self.inbox.admit(interjection, origin)

    def put(self, item: Parcel) -> None:
        """Queue an admitted item (on the run's loop); a pause or an abort stops the run instead."""
        said = item.interjection
        if self.closed:
            self.session.undeliverable([item], "the run ended before the interjection arrived")
        elif said.action in STOPS:
            who = "a person" if item.origin.by_person else item.origin.watcher
            self.request_stop(STOPS[said.action], f"{who}: {said.content}".strip())
        else:
            self.inbox.put(item)
            if said.urgent:
                self._attention.set()

    def request_stop(self, status: EndState, detail: str) -> None:
        """Stop the run at once with ``status`` (paused or aborted)."""
        if self.stop is None and not self.closed:
            self.stop = (status, detail)
            self._attention.set()
            self.interrupt()

    def interrupt(self) -> None:
        """Cancel the streamed response in flight, if any (the SDK closes its connection)."""
        self._turn.interrupt()

    def at_cap(self) -> bool:
        """True when one more corrective turn would break ``max_corrections_per_step``."""
        return self.counters.streak >= self.config.max_corrections_per_step

    @property
    def watchers(self) -> list[Watcher]:
        """The watchers attached to this run now."""
        return [w for (session, _), w in list(self.runtime.watchers.items()) if session == self.config.name]

    @property
    def supervised(self) -> bool:
        """True while a watcher is attached or once a person has given guidance."""
        return self.inbox.guided or bool(self.watchers)

    def result(self, status: EndState, detail: str = "") -> RunResult:
        """What the run did so far, as a frozen value."""
        c = self.counters
        return RunResult(
            status=status,
            text=c.last_text,
            messages=tuple(self.messages),
            steps=c.steps,
            corrective_steps=c.corrective_steps,
            corrective_tokens=c.corrective_tokens,
            input_tokens=c.input_tokens,
            output_tokens=c.output_tokens,
            interrupts=len(self._turn.interrupt_ms),
            interrupt_ms=tuple(self._turn.interrupt_ms),
            detail=detail,
        )

    def close(self) -> None:
        """The run has ended: what arrives from now on is journaled undeliverable."""
        self.closed = True

    # --- the loop ------------------------------------------------------------------------------

    async def drive(self) -> RunResult:
        """Run turns until the run completes or stops; returns its result (errors propagate)."""
        config, c = self.config, self.counters
        pending: list[dict[str, Any]] | None = [{"type": "text", "text": config.prompt}]
        self.runtime.observe(config.name, UserMessage(text=config.prompt))
        carried: list[Parcel] = []  # interjections taken for the next request, not yet sent
        while True:
            await self._checkpoint()
            if config.at_boundary is not None and self.stop is None:
                await config.at_boundary(Boundary(c.steps, c.input_tokens, c.output_tokens))
            delivered = self.inbox.take()
            if delivered:
                pending = [*(pending or []), *({"type": "text", "text": text} for _, text in delivered)]
                carried = [*carried, *(item for item, _ in delivered)]
            if self.stop is not None:
                self._turn.append_user(pending or [])
                self.session.undeliverable(carried, f"the run was {self.stop[0]} before a request carried it")
                return self.result(*self.stop)
            if pending is None:
                return self.result(EndState.COMPLETED)
            if c.steps >= config.max_steps:
                self._turn.append_user(pending)
                self.session.undeliverable(carried, "the run reached max_steps before a request carried it")
                return self.result(EndState.MAX_STEPS, f"stopped after {c.steps} steps (max_steps)")
            self._turn.append_user(pending)
            corrective = bool(carried)
            c.steps += 1
            c.streak = c.streak + 1 if corrective else 0
            c.corrective_steps += corrective
            self.session.reached(carried, "")
            carried = []
            system = supervised_system(config.system) if self.supervised else config.system
            spent = await self._turn.stream(c.steps, system)
            c.input_tokens += spent.input_tokens
            c.output_tokens += spent.output_tokens
            if corrective:
                c.corrective_tokens += spent.input_tokens + spent.output_tokens
            if spent.message is None:
                pending = []  # interrupted: what was queued goes with the next request
                continue
            pending, text = await self._turn.after(spent.message, c.steps, lambda: self.stop)
            if text.strip():
                c.last_text = text

    async def _checkpoint(self) -> None:
        """Wait for the watchers to judge what was just published (up to ``checkpoint_s``).

        An urgent interjection or a stop ends the wait early. Waits on events (the watchers'
        subscriptions settling, their evaluations finishing), never by polling.
        """
        timeout = self.config.checkpoint_s
        if self.stop is not None or self.inbox.urgent() or timeout <= 0:
            return
        self._attention.clear()
        quiet = asyncio.ensure_future(self._watchers_quiet())
        heads_up = asyncio.ensure_future(self._attention.wait())
        try:
            done, _ = await asyncio.wait({quiet, heads_up}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            quiet.cancel()
            heads_up.cancel()
        if not done:
            log.info("agent run %r: watchers still busy after %.1fs; going on", self.config.name, timeout)

    async def _watchers_quiet(self) -> None:
        # a watcher's verdict may wake another (or attach one): go round until a pass finds all quiet
        while not all(w.quiet for w in self.watchers):
            for watcher in self.watchers:
                await watcher.settle()
