"""A supervised agent run: an Anthropic tool-use loop that is a parent session for watchers.

Each turn streams one Messages API response. Every user message, assistant text, tool call, tool
result and turn end is published as an observation; the run's display events fan out to the
caller's sinks. Interjections wait in the run's inbox and land at iteration boundaries — never
between a ``tool_use`` and its ``tool_result`` — formatted by ``_delivery``. At a boundary the run
first waits (``checkpoint_s``) for its watchers to judge what it just did, so a finding reaches the
very next request.

An **urgent** interjection (or ``pause``/``abort``) cancels the task streaming the response now;
the SDK closes the connection. The partial turn is dropped if it had begun a ``tool_use`` (the API
rejects a ``tool_use`` without its ``tool_result``), else its text is kept so the agent knows where
it was cut off. At most ``max_corrections_per_step`` consecutive turns answer watcher
interjections (more are refused and journaled as failed deliveries), every turn counts against
``max_steps``, and corrective turns and their tokens are reported.

One direction: this module (the ``Session`` port, the controls for people, starting, awaiting,
closing) owns a ``RunLoop`` (``_run_loop``: the turns), which owns the ``Inbox`` (``_run_inbox``).
What the run must release when it ends (its runtime, or the watchers it attached to a shared one;
clients, journals and evaluators built for it) is on one ``AsyncExitStack``.

Threads: a run lives on one event loop. ``inject``, ``guide``, ``accept``, ``dismiss``, ``pause``
and ``abort`` may be called from any thread and return at once; ``await run`` works from any loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from collections.abc import Awaitable, Callable, Generator, Sequence
from contextlib import AsyncExitStack
from typing import Any

from watcher.agents._run_config import DEFAULT_MODEL, RunConfig, RunResult
from watcher.agents._run_loop import RunLoop
from watcher.agents._sinks import OutputSinks, RunEvent, Sink
from watcher.core.errors import NoActiveRunError, NotPendingError, SessionEndedError
from watcher.core.evaluation import Evaluator
from watcher.core.interjection import Interjection, Origin
from watcher.core.logs import logger
from watcher.core.observations import HarnessError
from watcher.core.spec import WatcherSpec
from watcher.runtime.calls import LoopCalls
from watcher.runtime.engine import Watcher
from watcher.runtime.events import DeliveryOutcome
from watcher.runtime.fates import DELIVERED, QUEUED
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Command, Journal
from watcher.runtime.session import EndState, InjectionOutcome, Session

__all__ = ["DEFAULT_MODEL", "AgentRun", "RunConfig", "RunResult"]

log = logger("watcher.agents")

CANCEL_GRACE_S = 2.0


class AgentRun(Session):
    """One supervised agent run; build it with ``watcher.agents.agent(...)``."""

    kind = "agent run"

    def __init__(
        self,
        config: RunConfig,
        *,
        client: Any,
        watchers: Sequence[tuple[WatcherSpec, Evaluator]] = (),
        runtime: Runtime | None = None,
        journal: Journal | None = None,
        output: Sink | Sequence[Sink] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.runtime = runtime or Runtime(journal=journal)
        super().__init__(config.name, publish=self.runtime.publish)
        self.config = config
        self.status: str = "created"  # created, running, then the run's EndState
        self.detail = ""
        self.result: RunResult | None = None
        self.sinks = OutputSinks()
        # what ending gives back: a runtime made for this run is closed; a shared one keeps its
        # loop and only loses the watchers this run attached
        self._release_runtime: Callable[[list[Watcher]], Awaitable[None]] = (
            self._close_runtime if runtime is None else self._detach_watchers
        )
        self._initial_watchers = list(watchers)
        self._outputs: list[Sink] = [] if output is None else [output] if callable(output) else list(output)
        self._resources = AsyncExitStack()  # released in reverse order when the run ends
        self._calls = LoopCalls(loop)
        self._task: asyncio.Future[RunResult] | None = None
        self._done: concurrent.futures.Future[RunResult] = concurrent.futures.Future()
        self._loop = RunLoop(config, session=self, client=client, runtime=self.runtime, sinks=self.sinks)

    def release_at_end(self, close: Callable[[], Awaitable[object]]) -> None:
        """Call ``close`` when the run ends (a client, a journal or evaluators built for this run)."""
        self._resources.push_async_callback(close)

    # --- the Session port ---------------------------------------------------------------------

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        """Queue ``interjection`` for the next boundary: it is journaled delivered when a request carries it.

        A ``pause`` or an ``abort`` stops the run at once instead. Raises ``CorrectionCapReached``
        when a watcher's interjection would exceed ``max_corrections_per_step``. May be called
        from any thread.
        """
        item = self._loop.admit(interjection, origin)
        self._calls.call(self._loop.put, item)
        return DELIVERED if interjection.action in ("pause", "abort") else QUEUED

    async def interrupt(self) -> None:
        """Cancel the response being streamed, so a queued urgent interjection lands now."""
        self._calls.call(self._loop.interrupt)

    def _check_open(self, interjection: Interjection) -> None:
        if self.ended:
            raise SessionEndedError(
                f"agent run {self.name!r} has ended ({self.status}); interjection {interjection.id!r} was not delivered"
            )

    # --- for people ----------------------------------------------------------------------------

    def guide(self, text: str, *, urgent: bool = False) -> Interjection:
        """Send ``Supervisor:Guidance: text`` at the next boundary (now, if ``urgent``); any thread.

        Returns the queued interjection (its ``id`` names it in the journal). Raises
        ``SessionEndedError`` once the run has ended.
        """
        person = Origin.of_person("python")
        said = Interjection(content=text.strip(), urgent=urgent, id=f"hand-{uuid.uuid4().hex[:8]}", origin=person)
        self._check_open(said)
        item = self._loop.admit(said, person)
        self._calls.call(self._loop.put, item)
        if urgent:
            self._calls.call(self._loop.interrupt)
        return item.interjection

    def pause(self, reason: str = "paused by a person") -> None:
        """Stop the run at once with status ``paused``."""
        self._calls.call(self._loop.request_stop, EndState.PAUSED, reason)

    def abort(self, reason: str = "aborted by a person") -> None:
        """Stop the run at once with status ``aborted``."""
        self._calls.call(self._loop.request_stop, EndState.ABORTED, reason)

    @property
    def pending(self) -> dict[str, Interjection]:
        """Interjections of this run's manual watchers waiting for a person, by id."""
        return {iid: i for w in self._loop.watchers for iid, i in list(w.pending.items())}

    def accept(
        self, interjection_id: str, content: str | None = None
    ) -> Awaitable[DeliveryOutcome] | concurrent.futures.Future[DeliveryOutcome]:
        """Deliver a pending interjection (with edited ``content``).

        Returns its outcome to await on the run's loop, or a ``concurrent.futures.Future`` from another thread.
        """
        self._check_pending(interjection_id)
        given = Command.given(self.name, "accept", interjection_id, payload={"content": content} if content else None)
        return self._calls.submit(lambda: self.runtime.act(given, by="python"))

    def dismiss(
        self, interjection_id: str, reason: str = "dismissed"
    ) -> Awaitable[DeliveryOutcome] | concurrent.futures.Future[DeliveryOutcome]:
        """Drop a pending interjection (done on the run's loop: await the result to wait for it)."""
        self._check_pending(interjection_id)
        given = Command.given(self.name, "dismiss", interjection_id, payload={"reason": reason})
        return self._calls.submit(lambda: self.runtime.act(given, by="python"))

    def subscribe(self, sink: Sink) -> None:
        """Add a display sink (sync or async callable of ``RunEvent``) before or during the run."""
        if not self._calls.started:
            self._outputs.append(sink)
        else:
            self._calls.call(self.sinks.add, sink)

    @property
    def supervised(self) -> bool:
        """True while a watcher is attached or once a person has given guidance."""
        return self._loop.supervised

    def _check_pending(self, interjection_id: str) -> None:
        if interjection_id in self.pending:
            return
        raise NotPendingError(
            f"agent run {self.name!r} has no pending interjection {interjection_id!r}; see run.pending"
        )

    # --- starting and awaiting -----------------------------------------------------------------

    def start(self) -> AgentRun:
        """Start the run on its loop (the running one unless ``loop=`` was given); idempotent."""
        if self._task is not None:
            return self
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self._calls.loop or running
        if loop is None:
            raise NoActiveRunError(
                f"agent run {self.name!r} cannot start: no event loop is running here; "
                "start it from async code (`await run`) or pass loop="
            )
        self._calls.loop = loop
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
        if self._task is not None and self._calls.loop is asyncio.get_running_loop():
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
        pending = len(self.pending) if self._calls.started else 0
        steps = self._loop.counters.steps
        return f"<AgentRun {self.name} {self.status} step {steps}/{self.config.max_steps}, {pending} pending>"

    # --- inside the loop -----------------------------------------------------------------------

    async def _main(self) -> RunResult:
        self._calls.enter()
        self.status = "running"
        runtime = self.runtime
        runtime.add_session(self, detail=f"agent run ({self.config.model})")
        attached = [runtime.attach(spec, evaluator, self) for spec, evaluator in self._initial_watchers]
        self._resources.push_async_callback(self._release_runtime, attached)
        if runtime.journal is not None:
            runtime.start_command_poller()
        for sink in self._outputs:
            self.sinks.add(sink)
        try:
            result = self._finish(await self._loop.drive())
        except asyncio.CancelledError:
            self._finish(self._loop.result(EndState.CANCELLED, "the run's task was cancelled"))
            raise
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"
            runtime.observe(self.name, HarnessError(text=detail))
            self._finish(self._loop.result(EndState.FAILED, detail))
            raise
        finally:
            await self._close()
        return result

    def _finish(self, result: RunResult) -> RunResult:
        if self.result is None:
            self.result = result
            self.status, self.detail = result.status, result.detail
        return self.result

    async def _close(self) -> None:
        status = self.result.status if self.result is not None else EndState.CANCELLED
        self.status = status
        self._loop.close()
        self.end(status, f"the run ended ({status}) before the next turn")
        if status != EndState.CANCELLED:  # the end is a breakpoint: the last observations are judged too
            await self.runtime.evaluate_session_end(self)
        self.runtime.end_session(self, detail=self.detail)
        self.sinks.emit(
            RunEvent("status", status, {"detail": self.detail, "steps": self._loop.counters.steps}, self.name)
        )
        await self.sinks.close(CANCEL_GRACE_S if status == EndState.CANCELLED else 5.0)
        await self._resources.aclose()

    async def _detach_watchers(self, attached: list[Watcher]) -> None:
        for watcher in attached:
            self.runtime.detach(watcher)

    async def _close_runtime(self, attached: list[Watcher]) -> None:
        if self.status != EndState.CANCELLED:
            await self.runtime.close()
            return
        # the loop may be shutting down around us (its other tasks cancelled too): never hang here
        try:
            await asyncio.wait_for(self.runtime.close(), CANCEL_GRACE_S)
        except TimeoutError:
            log.warning("agent run %r: the runtime did not close within %gs of cancelling", self.name, CANCEL_GRACE_S)
