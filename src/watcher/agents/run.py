"""A supervised agent run: an Anthropic tool-use loop that is a parent session for watchers.

Each turn streams one Messages API response. Every user message, assistant text, tool call, tool
result and turn end is published as an observation; the run's display events fan out to the
caller's sinks. Interjections wait in the run's inbox (``_run_inbox``) and land at iteration
boundaries — never between a ``tool_use`` and its ``tool_result`` — formatted by ``_delivery``. At a
boundary the run first waits (``checkpoint_s``) for its watchers to judge what it just did, so a
finding reaches the very next request.

An **urgent** interjection (or ``pause``/``abort``) cancels the task streaming the response now;
the SDK closes the connection. The partial turn is dropped if it had begun a ``tool_use`` (the API
rejects a ``tool_use`` without its ``tool_result``), else its text is kept so the agent knows where
it was cut off. Seed 003's rules hold: at most ``max_corrections_per_step`` consecutive turns
answer watcher interjections (more are refused and journaled as failed deliveries), every turn
counts against ``max_steps``, and corrective turns and their tokens are reported.

This module is the run's shell: the ``Session`` port, the controls for people, starting, awaiting
and closing, and the marshalling that lets other threads call in. The turns are ``_run_loop``'s.

Threads: a run lives on one event loop. ``inject``, ``guide``, ``accept``, ``dismiss``, ``pause``
and ``abort`` may be called from any thread and return at once; ``await run`` works from any loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import uuid
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from watcher.agents._delivery import supervised_system
from watcher.agents._run_inbox import Inbox, InboxItem
from watcher.agents._run_loop import RunLoop
from watcher.agents._sinks import OutputSinks, RunEvent, Sink
from watcher.agents._tools import Tool
from watcher.core.errors import NoActiveRunError, NotPendingError
from watcher.core.evaluation import Evaluator
from watcher.core.interjection import Interjection, Origin
from watcher.core.spec import WatcherSpec
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import InjectionOutcome, Session

__all__ = ["DEFAULT_MODEL", "AgentRun", "RunResult"]

log = logging.getLogger("watcher.agents")

DEFAULT_MODEL = "claude-sonnet-5-5"
CANCEL_GRACE_S = 2.0


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended and what it cost.

    ``status``: completed, max_steps, paused, aborted, failed or cancelled. ``steps`` counts every
    model request, corrective ones included; ``corrective_steps``/``corrective_tokens`` are the
    turns that answered an interjection (seed 003's corrective overhead).
    """

    status: str
    text: str
    messages: tuple[dict[str, Any], ...]
    steps: int
    corrective_steps: int
    corrective_tokens: int
    input_tokens: int
    output_tokens: int
    interrupts: int
    interrupt_ms: tuple[float, ...]
    detail: str = ""


class AgentRun(Session):
    """One supervised agent run; build it with ``watcher.agents.agent(...)``."""

    def __init__(
        self,
        prompt: str,
        *,
        client: Any,
        tools: Sequence[Tool] = (),
        watchers: Sequence[tuple[WatcherSpec, Evaluator]] = (),
        model: str = DEFAULT_MODEL,
        system: str = "",
        max_steps: int = 25,
        max_tokens: int = 4096,
        max_corrections_per_step: int = 3,
        checkpoint_s: float = 30.0,
        runtime: Runtime | None = None,
        journal: Journal | None = None,
        owns_journal: bool = False,
        owns_client: bool = False,
        owned_evaluators: Sequence[Evaluator] = (),
        name: str | None = None,
        output: Sink | Sequence[Sink] | None = None,
        cache: bool = True,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.name = name or f"agent-{uuid.uuid4().hex[:6]}"
        self.prompt = prompt
        self.client = client
        self.tools = {t.name: t for t in tools}
        self.model = model
        self.system = system
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.max_corrections_per_step = max_corrections_per_step
        self.checkpoint_s = checkpoint_s
        self.cache = cache
        self.messages: list[dict[str, Any]] = []
        self.status = "created"
        self.detail = ""
        self.result: RunResult | None = None
        self.sinks = OutputSinks()
        self._initial_watchers = list(watchers)
        self._outputs: list[Sink] = [] if output is None else [output] if callable(output) else list(output)
        self._owns_runtime = runtime is None
        self.runtime = runtime or Runtime(journal=journal)
        self._owned_journal = journal if owns_journal else None
        self._owns_client = owns_client
        self._owned_evaluators = list(owned_evaluators)
        self._attached: list[Any] = []
        self._stop: tuple[str, str] | None = None
        self._ended = False
        self._loop = loop
        self._thread: int | None = None
        self._task: asyncio.Future[RunResult] | None = None
        self._done: concurrent.futures.Future[RunResult] = concurrent.futures.Future()
        self._engine = RunLoop(self)
        self._inbox = Inbox(self, self._engine)

    # --- the Session port ---------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self._ended

    async def inject(self, interjection: Interjection, *, origin: Origin) -> InjectionOutcome:
        """Queue ``interjection`` for the next boundary: it is journaled delivered when a request carries it.

        A ``pause`` or an ``abort`` stops the run at once instead. Raises ``SessionEndedError`` once
        the run has ended, and ``CorrectionCapReached`` when a watcher's interjection would exceed
        ``max_corrections_per_step``. May be called from any thread.
        """
        item = self._inbox.admit(interjection, origin)
        self._call(self._inbox.put, item)
        return "delivered" if interjection.action in ("pause", "abort") else "queued"

    async def interrupt(self) -> None:
        """Cancel the response being streamed, so a queued urgent interjection lands now."""
        self._call(self._engine.interrupt)

    # --- for people ----------------------------------------------------------------------------

    def guide(self, text: str, *, urgent: bool = False) -> Interjection:
        """Send ``Supervisor:Guidance: text`` at the next boundary (now, if ``urgent``); any thread.

        Returns the queued interjection (its ``id`` names it in the journal). Raises
        ``SessionEndedError`` once the run has ended.
        """
        person = Origin.of_person("python")
        said = Interjection(content=text.strip(), urgent=urgent, id=f"hand-{uuid.uuid4().hex[:8]}", origin=person)
        item = self._inbox.admit(said, person)
        self._call(self._inbox.put, item)
        if urgent:
            self._call(self._engine.interrupt)
        return item.interjection

    def pause(self, reason: str = "paused by a person") -> None:
        """Stop the run at once with status ``paused``."""
        self._call(self._request_stop, "paused", reason)

    def abort(self, reason: str = "aborted by a person") -> None:
        """Stop the run at once with status ``aborted``."""
        self._call(self._request_stop, "aborted", reason)

    @property
    def pending(self) -> dict[str, Interjection]:
        """Interjections of this run's manual watchers waiting for a person, by id."""
        return {iid: i for w in self._watchers() for iid, i in list(w.pending.items())}

    def accept(self, interjection_id: str, content: str | None = None) -> Any:
        """Deliver a pending interjection (with edited ``content``); returns an awaitable of the outcome."""
        watcher = self._holder(interjection_id)
        return self._submit(lambda: watcher.accept(interjection_id, content))

    def dismiss(self, interjection_id: str, reason: str = "dismissed") -> None:
        """Drop a pending interjection."""
        watcher = self._holder(interjection_id)
        self._call(watcher.dismiss, interjection_id, reason)

    def subscribe(self, sink: Sink) -> None:
        """Add a display sink (sync or async callable of ``RunEvent``) before or during the run."""
        if self._thread is None:
            self._outputs.append(sink)
        else:
            self._call(self.sinks.add, sink)

    @property
    def supervised(self) -> bool:
        """True while a watcher is attached or once a person has given guidance (seed 004)."""
        return self._inbox.guided or bool(self._watchers())

    def system_prompt(self) -> str:
        """The system prompt the next request sends (with the guidance protocol when supervised)."""
        return supervised_system(self.system) if self.supervised else self.system

    # --- starting and awaiting -----------------------------------------------------------------

    def start(self) -> AgentRun:
        """Start the run on its loop (the running one unless ``loop=`` was given); idempotent."""
        if self._task is not None:
            return self
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self._loop or running
        if loop is None:
            raise NoActiveRunError(
                f"agent run {self.name!r} cannot start: no event loop is running here; "
                "start it from async code (`await run`) or pass loop="
            )
        self._loop = loop
        if loop is running:
            self._task = loop.create_task(self._main(), name=f"watcher-agent:{self.name}")
            self._task.add_done_callback(self._finished)
        else:
            future = asyncio.run_coroutine_threadsafe(self._main(), loop)
            self._task = asyncio.wrap_future(future, loop=running) if running else None
            future.add_done_callback(self._finished)
        return self

    async def wait(self) -> RunResult:
        """Run to the end (starting if needed) and return the result; raises what the run raised."""
        self.start()
        if self._task is not None and self._loop is asyncio.get_running_loop():
            return await self._task
        return await asyncio.wrap_future(self._done)

    def __await__(self) -> Generator[Any, None, RunResult]:
        return self.wait().__await__()

    def _finished(self, future: asyncio.Future[RunResult] | concurrent.futures.Future[RunResult]) -> None:
        if self._done.done():
            return
        if future.cancelled():
            self._done.cancel()
        elif (exc := future.exception()) is not None:
            self._done.set_exception(exc)
        else:
            self._done.set_result(future.result())

    def __repr__(self) -> str:
        pending = len(self.pending) if self._thread is not None else 0
        return f"<AgentRun {self.name} {self.status} step {self._engine.steps}/{self.max_steps}, {pending} pending>"

    # --- inside the loop -----------------------------------------------------------------------

    async def _main(self) -> RunResult:
        self._thread = threading.get_ident()
        self.status = "running"
        runtime = self.runtime
        runtime.add_session(self, detail=f"agent run ({self.model})")
        self._attached = [runtime.attach(spec, evaluator, self) for spec, evaluator in self._initial_watchers]
        if runtime.journal is not None:
            runtime.start_command_poller()
        for sink in self._outputs:
            self.sinks.add(sink)
        try:
            return await self._engine.drive()
        finally:
            await self._close()

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._thread is None or self._thread == threading.get_ident() or self._loop is None:
            fn(*args)
        else:
            self._loop.call_soon_threadsafe(fn, *args)

    def _submit(self, make: Callable[[], Any]) -> Any:
        if self._loop is None:
            raise NoActiveRunError(f"agent run {self.name!r} has not started; `await run` (or run.start()) first")
        if self._thread == threading.get_ident():
            return self._loop.create_task(make())

        async def go() -> Any:
            return await make()

        return asyncio.run_coroutine_threadsafe(go(), self._loop)

    def _watchers(self) -> list[Any]:
        return [w for (sess, _), w in list(self.runtime.watchers.items()) if sess == self.name]

    def _holder(self, interjection_id: str) -> Any:
        for watcher in self._watchers():
            if interjection_id in watcher.pending:
                return watcher
        raise NotPendingError(
            f"agent run {self.name!r} has no pending interjection {interjection_id!r}; see run.pending"
        )

    def _request_stop(self, status: str, detail: str) -> None:
        if self._stop is None and not self._ended:
            self._stop = (status, detail)
            self._engine.interrupt()

    def take_inbox(self) -> list[tuple[InboxItem, str]]:
        """The queued interjections with the text each is delivered as (called at a boundary)."""
        return self._inbox.take()

    def delivered(self, items: list[InboxItem]) -> None:
        """Journal ``items`` delivered: the request carrying them is being sent (called by the loop)."""
        self._inbox.delivered(items)

    def undeliverable(self, items: list[InboxItem], detail: str) -> None:
        """Journal ``items`` undeliverable: taken for a request the run never sent (called by the loop)."""
        self._inbox.undeliverable(items, detail)

    def stop_requested(self) -> tuple[str, str] | None:
        """(status, detail) once a pause or an abort was asked for."""
        return self._stop

    def inbox_urgent(self) -> bool:
        """True when something in the inbox should not wait for the watchers to settle."""
        return self._stop is not None or self._inbox.urgent()

    def settled(self) -> bool:
        """True when every watcher of this run has judged everything published so far."""
        return all((w.subscription is None or w.subscription.idle) and not w.busy for w in self._watchers())

    async def _close(self) -> None:
        self._ended = True
        result = self.result
        status = result.status if result is not None else "cancelled" if self.status == "running" else self.status
        self.status = status
        self._inbox.close(f"the run ended ({status}) before the next turn")
        self.runtime.end_session(self, status, detail=self.detail)
        self.sinks.emit(RunEvent("status", status, {"detail": self.detail, "steps": self._engine.steps}, self.name))
        await self.sinks.close(CANCEL_GRACE_S if status == "cancelled" else 5.0)
        if self._owns_runtime and status == "cancelled":
            # the loop may be shutting down around us (its other tasks cancelled too): never hang here
            try:
                await asyncio.wait_for(self.runtime.close(), CANCEL_GRACE_S)
            except TimeoutError:
                log.warning(
                    "agent run %r: the runtime did not close within %gs of cancelling", self.name, CANCEL_GRACE_S
                )
        elif self._owns_runtime:
            await self.runtime.close()
        else:  # a shared runtime keeps running: take back the watchers this run brought
            for watcher in self._attached:
                self.runtime.detach(watcher)
        for evaluator in self._owned_evaluators:
            closing = getattr(evaluator, "aclose", None)
            if closing is not None:
                await closing()
        if self._owned_journal is not None:
            await asyncio.to_thread(self._owned_journal.close)
        if self._owns_client:
            await self.client.close()

    def finish(self, status: str, detail: str = "") -> RunResult:
        """Record the final result (called by the loop)."""
        engine = self._engine
        self.status, self.detail = status, detail
        self.result = RunResult(
            status=status,
            text=engine.last_text,
            messages=tuple(self.messages),
            steps=engine.steps,
            corrective_steps=engine.corrective_steps,
            corrective_tokens=engine.corrective_tokens,
            input_tokens=engine.input_tokens,
            output_tokens=engine.output_tokens,
            interrupts=len(engine.interrupt_ms),
            interrupt_ms=tuple(engine.interrupt_ms),
            detail=detail,
        )
        return self.result
