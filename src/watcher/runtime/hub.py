"""The runtime hub: one bus, the journal, the sessions and the watchers attached to them.

Parent sessions publish observations through ``Runtime.observe``; watchers and the journal
subscribe to the bus. Commands written to the journal by other processes (a language server, a
widget in another kernel) are applied here for the sessions this process owns.
"""

from __future__ import annotations

import asyncio
import time

from watcher.core.errors import DuplicateNameError, JournalError, NotPendingError, UnknownWatcherError
from watcher.core.evaluation import Evaluator
from watcher.core.interjection import Interjection, Origin, PersonChannel
from watcher.core.logs import logger
from watcher.core.observations import Observation
from watcher.core.spec import WatcherSpec
from watcher.runtime.bus import EventBus
from watcher.runtime.engine import Watcher
from watcher.runtime.events import DeliveryOutcome, Event, ObservationEvent, SessionEvent, WatcherEvent
from watcher.runtime.fates import APPLIED, DELIVERED, DISMISSED, FAILED, QUEUED, CommandState
from watcher.runtime.journal import Command, Journal
from watcher.runtime.polling import poll
from watcher.runtime.session import EndState, Session

__all__ = ["Runtime"]

log = logger("watcher.runtime")


class Runtime:
    """Wires sessions, watchers, the bus and the journal together on one event loop.

    ``live=False`` (replay) evaluates at every breakpoint in order and runs no idle timers, so a
    replay gives the same evaluations every time.
    """

    def __init__(self, *, journal: Journal | None = None, live: bool = True, maxsize: int = 10_000) -> None:
        self.bus = EventBus(maxsize=maxsize)
        self.journal = journal
        self.sessions: dict[str, Session] = {}
        self.watchers: dict[tuple[str, str], Watcher] = {}
        self._live = live
        self._indexes: dict[str, int] = {}
        self._journal_attached = False
        self._poller: asyncio.Task[None] | None = None
        self._applying: asyncio.Future[None] | None = None  # the command being applied, if any
        self._unmarked: dict[int, tuple[CommandState, str]] = {}  # command id: its outcome, applied, not yet marked

    def _ensure_journal(self) -> None:
        if self.journal is not None and not self._journal_attached:
            self.bus.subscribe("journal", self.journal.append, maxsize=100_000)
            self._journal_attached = True

    def publish(self, event: Event) -> None:
        """Publish any event (sessions use ``observe`` for observations)."""
        self._ensure_journal()
        self.bus.publish(event)

    def add_session(
        self, session: Session, *, detail: str = "", first_index: int = 0, announce: bool = True
    ) -> Session:
        """Register a parent session; its name must be unique in this runtime.

        A session resumed from the journal (a hooked CLI session judged by a new process) passes
        ``first_index`` (how many observations it already has) and ``announce=False`` (it was
        announced when it started).
        """
        self._ensure_journal()
        if session.name in self.sessions and self.sessions[session.name] is not session:
            raise DuplicateNameError(
                f"cannot add session {session.name!r}: another session of this runtime has that name; give it another name"
            )
        self.sessions[session.name] = session
        session.bind(self.publish)
        self._indexes[session.name] = max(self._indexes.get(session.name, 0), first_index)
        if announce:
            self.bus.publish(SessionEvent(session=session.name, status="started", detail=detail))
        return session

    def end_session(self, session: Session, state: EndState | None = None, detail: str = "") -> None:
        """Record that ``session`` finished, ending it first if it has not ended yet.

        ``state`` defaults to the state the session ended in (``ended`` when it was still open).
        """
        if not session.ended:
            session.end(state or EndState.ENDED)
        ended = state or session.end_state or EndState.ENDED
        self.bus.publish(SessionEvent(session=session.name, status=ended.value, detail=detail))

    def remove_session(self, name: str) -> None:
        """Forget session ``name`` and detach its watchers (a session that comes back is added afresh)."""
        for (session, _), watcher in list(self.watchers.items()):
            if session == name:
                self.detach(watcher)
        self.sessions.pop(name, None)

    async def evaluate_session_end(self, session: Session) -> None:
        """The end of ``session`` is a breakpoint: its watchers judge what is still buffered."""
        await self.settle()
        for watcher in [w for (name, _), w in self.watchers.items() if name == session.name]:
            await watcher.evaluate_session_end()
        await self.settle()

    def attach(self, spec: WatcherSpec, evaluator: Evaluator, session: Session) -> Watcher:
        """Attach a watcher to ``session`` (registering the session if needed)."""
        if session.name not in self.sessions:
            self.add_session(session)
        key = (session.name, spec.name)
        if key in self.watchers:
            raise DuplicateNameError(
                f"cannot attach watcher {spec.name!r} to session {session.name!r}: it already has a watcher of that "
                "name; give the new watcher another name, or attach each role once"
            )
        watcher = Watcher(spec, evaluator, session, self.bus, live=self._live)
        watcher.subscription = self.bus.subscribe(f"watcher:{spec.name}", watcher.handle)
        self.watchers[key] = watcher
        self.bus.publish(
            WatcherEvent(
                session=session.name,
                watcher=spec.name,
                status="attached",
                role=spec.role,
                mode=spec.mode,
                authority=spec.authority,
                evaluator=getattr(evaluator, "name", ""),
            )
        )
        return watcher

    def speaker(self, spec: WatcherSpec, evaluator: Evaluator, session: Session) -> Watcher:
        """A watcher of ``session`` that judges nothing here: it speaks decisions made elsewhere (``Watcher.speak``).

        Its role's evaluations run in another loop, possibly on another machine (a fleet's
        supervisor); so it takes no observations from the bus and is not one of ``watchers``
        (the session is not supervised by it here: an agent run's prompt is not changed), but
        what it says and what became of it are journaled and folded like any watcher's.
        """
        self._ensure_journal()
        return Watcher(spec, evaluator, session, self.bus, live=self._live)

    def detach(self, watcher: Watcher) -> None:
        """Stop a watcher; its pending interjections are dropped."""
        self.watchers.pop((watcher.session.name, watcher.name), None)
        if watcher.subscription is not None:
            self.bus.unsubscribe(watcher.subscription)
        self.bus.publish(
            WatcherEvent(session=watcher.session.name, watcher=watcher.name, status="detached", role=watcher.spec.role)
        )

    def observe(self, session: str, observation: Observation) -> ObservationEvent:
        """Publish an observation of ``session``; returns the event with its index."""
        index = self._indexes.get(session, 0)
        self._indexes[session] = index + 1
        event = ObservationEvent(
            session=session, observation=observation, index=index, ts=observation.ts or time.time()
        )
        self.publish(event)
        return event

    async def settle(self, session: str | None = None) -> None:
        """Wait until every published event is handled and no evaluation is in flight (no polling).

        ``session``: only that session's watchers (and the subscribers that are no watcher's, such as
        the journal) are waited for, so one session's long judgment does not hold another's answer.
        """
        if session is None:
            while True:
                await self.bus.drain()
                for watcher in list(self.watchers.values()):
                    await watcher.settle()  # a verdict may publish more: go round until a pass finds all idle
                if all(sub.idle for sub in self.bus.subscriptions) and all(w.quiet for w in self.watchers.values()):
                    return
        while True:
            mine = [w for (name, _), w in list(self.watchers.items()) if name == session]
            others = {id(w.subscription) for (name, _), w in self.watchers.items() if name != session}
            subs = [sub for sub in self.bus.subscriptions if id(sub) not in others]
            for sub in subs:
                if not sub.idle:
                    await sub.settled.wait()
            for watcher in mine:
                await watcher.settle()
            if all(sub.idle for sub in subs) and all(w.quiet for w in mine):
                return

    # --- a person's commands: from other processes through the journal, or given here ---------

    def watcher_for(self, session: str, interjection_id: str, name: str = "") -> Watcher | None:
        """The watcher of ``session`` holding (or having made) ``interjection_id``."""
        for (sess, wname), watcher in self.watchers.items():
            if sess != session or (name and wname != name):
                continue
            if interjection_id in watcher.pending or name:
                return watcher
        return None

    async def act(self, command: Command, *, by: PersonChannel = "editor") -> DeliveryOutcome:
        """Carry out a person's command on an interjection of a session owned here; its outcome.

        The one place every surface reaches: a journal command (an editor's code action, a widget
        in another process), the notebook panel's buttons, the magics and ``AgentRun.accept`` /
        ``dismiss`` (with ``Command.given``; ``by`` names the surface of a person's own words).
        ``accept`` and ``edit`` deliver a pending interjection (the person's ``content`` in its
        place); ``inject`` does too, or delivers the person's own words when nothing is pending
        under that id; ``dismiss`` drops it. A command naming its watcher may also dismiss an
        interjection already handed on (an editor hiding a finding: the dismissal is journaled);
        one naming none acts only on a pending interjection. Raises ``NotPendingError`` or
        ``UnknownWatcherError`` when there is nothing to act on.
        """
        iid, name = command.interjection_id, command.watcher
        watcher = self.watcher_for(command.session, iid, name)
        if watcher is None and name:
            known = ", ".join(w for (s, w) in self.watchers if s == command.session) or "none"
            raise UnknownWatcherError(
                f"session {command.session!r} has no watcher named {name!r} (its watchers: {known})"
            )
        if watcher is None:
            raise NotPendingError(f"no watcher of session {command.session!r} holds interjection {iid!r}")
        if command.kind == "dismiss":
            watcher.dismiss(iid, reason=str(command.payload.get("reason") or DISMISSED))
            return DISMISSED
        content = command.payload.get("content")
        if iid in watcher.pending:
            return await watcher.accept(iid, content if isinstance(content, str) else None)
        if command.kind == "inject" and isinstance(content, str) and content.strip():
            by_hand = Interjection(content=content.strip(), watcher=watcher.name, id=iid or f"cmd{command.id}")
            return await watcher.deliver(by_hand, origin=Origin.of_person(by))
        raise NotPendingError(f"interjection {iid!r} is not pending")

    async def apply(self, command: Command) -> tuple[CommandState, str]:
        """Apply one journal command to the session this process owns: (state, detail) for its row."""
        try:
            outcome = await self.act(command)
        except (NotPendingError, UnknownWatcherError) as exc:
            return FAILED, str(exc)
        except Exception as exc:  # noqa: BLE001 - a bad command never breaks the session that owns it
            return FAILED, f"{type(exc).__name__}: {exc}"
        return (
            (APPLIED, outcome) if outcome in (DELIVERED, QUEUED, DISMISSED) else (FAILED, f"not delivered ({outcome})")
        )

    async def apply_commands(self) -> int:
        """Apply every new command for the sessions owned here; returns how many were handled.

        An outcome is kept from the moment its command is applied until its mark is written: when
        the journal goes away in between (the mark raises), the next poll marks it first, and the
        command, still new in the journal, is not applied again (a person's words delivered twice).
        """
        if self.journal is None or not self.sessions:
            return 0
        await self._mark()
        sessions = list(self.sessions)
        # a file's read takes microseconds, less than a thread's round trip; a locked file or a
        # server is read on a thread, so the loop never waits
        commands = self.journal.new_commands_now(sessions)
        if commands is None:
            commands = await asyncio.to_thread(self.journal.commands, sessions=sessions)
        for command in commands:
            if command.id not in self._unmarked:  # else applied already, its mark lost: never twice
                self._applying = asyncio.ensure_future(self._apply_unmarked(command))
                await asyncio.shield(self._applying)  # a close() meanwhile lets it finish, then marks it
        await self._mark()
        return len(commands)

    async def _apply_unmarked(self, command: Command) -> None:
        self._unmarked[command.id] = await self.apply(command)

    async def _mark(self) -> None:
        """Mark the commands applied here and not yet marked (one statement); they are forgotten once marked."""
        if self._unmarked and self.journal is not None:
            marks = [(cid, status, detail) for cid, (status, detail) in self._unmarked.items()]
            await asyncio.to_thread(self.journal.mark_commands, marks)
            for cid, _, _ in marks:
                del self._unmarked[cid]

    def start_command_poller(self, interval: float = 0.25) -> None:
        """Poll the journal for commands in the background until ``close``.

        A quarter of a second is quick for a person's click in an editor, and each poll is a thread
        hop and a query competing with the watched process (a notebook's cells) for the CPU.
        """
        if self._poller is None and self.journal is not None:
            self._poller = asyncio.get_running_loop().create_task(self._poll(interval), name="watcher-commands")

    async def _poll(self, interval: float) -> None:
        await poll(
            self.apply_commands,
            interval,
            log,
            failed="applying journal commands",
            recovered="journal commands are applied again",
            nap=self.journal.nap if self.journal is not None else None,
        )

    async def close(self) -> None:
        """Settle, stop background tasks, and flush the journal."""
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
            self._poller = None
        if self._applying is not None:  # a command half applied when the poller stopped: its outcome too
            await asyncio.gather(self._applying, return_exceptions=True)
        try:
            await self._mark()
        except JournalError as exc:  # left new, they are applied again by the session's next owner
            log.warning("%d journal command(s) applied here could not be marked: %s", len(self._unmarked), exc)
        await self.settle()
        await self.bus.close()
        if self.journal is not None:
            await asyncio.to_thread(self.journal.flush)
