"""Spawned CLI agents as fleet tasks: ``SpawnedRun`` runs Claude Code, Gemini CLI or Codex for a fleet's host.

A task with ``agent = "claude" | "gemini" | "codex"`` is one spawn (``watcher.spawn.run_spawn``):
the CLI works headless in its own git worktree (branch ``spawn/<id>``) of the task's ``repo``
(``TaskSpec.repo``; empty: the fleet's working directory, as ``watcher spawn`` defaults), with
the permissions the rules infer from its prompt, and no pull request (its commits stay on the
branch for a person to review). It publishes its observations on the fleet host's runtime under
the task's name, so the task's ``TaskMonitor`` sees them as it sees an agent run's; the CLI's
model, endpoint and key come from the fleet process's environment (``ANTHROPIC_BASE_URL``,
``GEMINI_MODEL``, ``OPENAI_API_KEY``...; the adapters pass on only those).

``SpawnedRun`` is a ``Session`` like an ``AgentRun`` (``ended``, ``status``, ``inject``,
``interrupt``, ``abort``, ``wait``): what the fleet hands over waits in its inbox; it calls the host's ``at_boundary``
at the CLI's natural iteration boundaries, with the steps and tokens the CLI reported:

- **Claude Code** (live stream-json channel): each model response that asked for tools, and
  each turn's end. What the fleet hands over waits for the next boundary and is written as a
  user line when the boundary is passed: mid-turn, Claude Code 2.1.330 carries it in the turn's
  next request (as a ``system`` message "The user sent a new message while you were working");
  after a turn's end it starts the next turn. An urgent one (a blocking sync) first interrupts
  the running turn, so it starts the next turn at once. **Pause**: at the next boundary the fleet
  holds the task; if a turn is running, the CLI is sent an ``interrupt`` (the in-flight step is
  dropped, the turn ends) and no user line is written until resume. The process stays alive and
  idle; at most the request already in flight at that boundary goes out. **Resume** writes what
  waited meanwhile (or, if the pause cut a turn short, a line asking it to continue) once the
  interrupted turn's end has been read — a pause decided again right there holds a CLI that is
  truly idle — so the same session continues from where it stopped.
- **Gemini CLI and Codex** (headless, no live channel): the end of each headless run, before a
  ``--resume``/``resume`` continuation. What the fleet hands over is queued and becomes the
  prompt of the resumed run. **Pause** takes effect at the run's end (a headless run is never
  killed mid-turn: that can lose the session it resumes); while paused no resume starts.
  **Resume** starts the continuation with what waited; with nothing waiting a finished run ends.

**Abort** stops the CLI's process group at once (``status`` aborted). ``max_steps`` counts the
CLI's steps (Claude Code: model responses; Gemini CLI and Codex: headless runs); past it the CLI
is stopped with status ``max_steps``. Time held at a boundary counts against neither of the
spawn's timeouts.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from watcher.agents import Boundary, format_injection
from watcher.core.errors import SessionEndedError, WatcherError
from watcher.core.interjection import Interjection, Origin
from watcher.core.logs import logger
from watcher.fleet.tasks import TaskSpec
from watcher.runtime.events import SessionEvent
from watcher.runtime.fates import QUEUED
from watcher.runtime.hub import Runtime
from watcher.runtime.session import EndState, InjectionOutcome, Parcel, Session
from watcher.spawn import SpawnConfig, SpawnResult, run_spawn
from watcher.spawn.session import SpawnSession

__all__ = ["CLI_AGENTS", "Gate", "SpawnedResult", "SpawnedRun"]

log = logger("watcher.fleet")

CLI_AGENTS = ("claude", "gemini", "codex")
CONTINUE = "Continue the task from where you stopped."  # after a pause cut a turn short
_HOLD_POLL_S = 0.01  # how often a boundary checks, until it ends or is held, whether the fleet paused the task


@dataclass(frozen=True, slots=True)
class SpawnedResult:
    """How a spawned task ended: the status (as an agent run's), the CLI's steps and tokens, the spawn's report."""

    status: EndState
    detail: str
    steps: int
    input_tokens: int
    output_tokens: int
    spawn: SpawnResult | None = None  # None when the spawn failed before it began (no repository, no CLI)


class Gate(Protocol):
    """Whether the fleet holds the task (its ``TaskChannel``): messages wait, a running turn is cut short."""

    @property
    def paused(self) -> bool: ...


class SpawnedRun(Session):
    """A spawned agent CLI run as a fleet task; started at once on the running loop.

    ``gate`` is the task's channel (``paused`` says whether the fleet holds it); ``env`` the
    environment the CLI's endpoint and key come from (default: this process's); ``cli_path``
    the CLI's executable (default: ``node_modules/.bin``, then ``PATH``).
    """

    kind = "fleet task"

    def __init__(
        self,
        spec: TaskSpec,
        *,
        runtime: Runtime,
        at_boundary: Callable[[Boundary], Awaitable[None]],
        gate: Gate | None = None,
        env: Mapping[str, str] | None = None,
        cli_path: str | None = None,
    ) -> None:
        super().__init__(spec.name, publish=runtime.publish)
        self.spec = spec
        self.runtime = runtime
        self.status: str = "running"  # then the task's EndState
        self.detail = ""
        self.result: SpawnedResult | None = None
        self._host_boundary = at_boundary
        self._gate = gate
        self._last = Boundary(0, 0, 0)
        self._in_boundary = False
        self._cut_short = False  # a pause interrupted a running turn: resume must restart it
        self._stop: tuple[EndState, str] | None = None  # (status, reason) when the fleet stopped the CLI
        self._stopping: asyncio.Task[InjectionOutcome] | None = None  # the abort handed to the session
        self.config = SpawnConfig(
            spec.prompt, agent=spec.agent, repo=Path(spec.repo or os.getcwd()), watchers=(), pr=False,
            journal=runtime.journal, env=env, cli_path=cli_path, runtime=runtime, session_name=spec.name,
            at_boundary=self._boundary,
        )  # fmt: skip
        self._task = asyncio.get_running_loop().create_task(self._main(), name=f"watcher-spawned:{spec.name}")

    # --- what the task channel and the fleet use ------------------------------------------------

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        """Take a nudge or sync for the CLI's next iteration boundary (``queued``; journaled when it reaches the CLI).

        Written between boundaries, a line could ride in the running turn or start a turn of its
        own, depending on timing; at a boundary it is known which (see the module docstring).
        """
        if self._stop is not None:
            raise SessionEndedError(
                f"fleet task {self.name!r} is stopping ({self._stop[0]}); "
                f"interjection {interjection.id!r} was not delivered"
            )
        self.inbox.append(Parcel.of(interjection, origin, format_injection(interjection, by_person=origin.by_person)))
        return QUEUED

    async def interrupt(self) -> None:
        """Nothing now: an urgent interjection interrupts a live CLI when the next boundary hands it over.

        (``SpawnSession.inject`` interrupts before it writes an urgent message, so the running turn
        ends and the message starts the next one at once.)
        """

    def abort(self, reason: str) -> None:
        """Stop the CLI now; the task ends ``aborted``."""
        self._halt(EndState.ABORTED, reason)

    async def wait(self) -> SpawnedResult:
        """Wait for the task to end and return how it ended."""
        return await asyncio.shield(self._task)

    def __await__(self) -> Generator[Any, None, SpawnedResult]:
        return self.wait().__await__()

    # --- inside -------------------------------------------------------------------------------

    @property
    def _paused(self) -> bool:
        return self._gate is not None and self._gate.paused

    def _session(self) -> SpawnSession | None:
        session = self.runtime.sessions.get(self.name)
        return session if isinstance(session, SpawnSession) and not session.ended else None

    async def _boundary(self, at: Boundary) -> None:
        """The CLI's iteration boundary: the host's turn (summary, actions, pause gate), then what waited."""
        self._last = at
        session = self._session()
        mid_turn = session is not None and session.mid_turn
        hook = asyncio.ensure_future(self._host_boundary(at))
        try:
            while not hook.done():  # held here while paused: a running turn is cut short, once
                await asyncio.wait({hook}, timeout=_HOLD_POLL_S)
                if not hook.done() and self._paused:
                    await self._hold()
                    break
            await hook
        finally:
            hook.cancel()  # a no-op once done; never left behind when the spawn is cancelled
        if self._stop is not None:
            await self._enforce_stop()  # stopped before its process was there to stop
            return
        if at.step >= self.spec.max_steps:
            self._halt(EndState.MAX_STEPS, f"stopped after {at.step} steps (max_steps)")
            return
        if self._cut_short and mid_turn:
            return  # the interrupted turn's end is the next boundary: what waited goes there, once it is over
        await self._flush()

    async def _hold(self) -> None:
        """The fleet holds the task here: a live CLI's running turn is interrupted, once."""
        session = self._session()
        if session is None or self._cut_short or not session.mid_turn:
            return
        self._cut_short = await session.cut_turn()

    async def _flush(self) -> None:
        session = self._session()
        if session is None:
            return
        waiting = self.take()
        for parcel in waiting:
            try:  # the spawn's session settles it: delivered when the CLI takes it or the resume starts with it
                await session.inject(parcel.interjection, origin=parcel.origin)
            except WatcherError as exc:
                self.undeliverable([parcel], str(exc))
        if self._cut_short:
            self._cut_short = False
            if not waiting:
                await session.send(CONTINUE)

    def _halt(self, status: EndState, reason: str) -> None:
        if self.ended or self._stop is not None:
            return
        self._stop = (status, reason)
        session = self._session()
        if session is None:  # not begun yet (provisioning, or the CLI starting): nothing to stop but the task
            self._task.cancel()
            return
        stop = Interjection(content=reason, action="abort", watcher="fleet", id=f"stop-{uuid.uuid4().hex[:8]}")
        self._stopping = asyncio.get_running_loop().create_task(session.inject(stop, origin=_FLEET))

    async def _enforce_stop(self) -> None:
        session = self._session()
        if session is not None and session.process is not None and self._stop is not None:
            await session.process.stop(session.stopped_by or self._stop[1])

    async def _main(self) -> SpawnedResult:
        spawned: SpawnResult | None = None
        try:
            spawned = await run_spawn(self.config)
            status, detail = spawned.status, spawned.detail
        except asyncio.CancelledError:
            if self._stop is None:
                raise  # cancelled from outside, not stopped by the fleet before it began
            status, detail = self._stop
            self._ended_early(status, detail)
        except WatcherError as exc:  # no repository, no CLI, a manifest it cannot meet: said, not raised
            status, detail = EndState.FAILED, str(exc)
            log.warning("fleet task %s: the spawn failed: %s", self.name, exc)
            self._ended_early(status, detail)
        except Exception as exc:  # a bug: the task ends failed (never "running" forever), then it is raised
            self._finish(EndState.FAILED, f"{type(exc).__name__}: {exc}", None)
            self._ended_early(EndState.FAILED, self.detail)
            raise
        if self._stop is not None:
            status, detail = self._stop
        if self._stopping is not None:
            await asyncio.gather(self._stopping, return_exceptions=True)
        return self._finish(status, detail, spawned)

    def _finish(self, status: EndState, detail: str, spawned: SpawnResult | None) -> SpawnedResult:
        self.end(status, f"the task ended ({status}) before its CLI took it")
        self.status, self.detail = status, detail
        at = self._last
        self.result = SpawnedResult(status, detail, at.step, at.input_tokens, at.output_tokens, spawned)
        return self.result

    def _ended_early(self, status: EndState, detail: str) -> None:
        """The spawn ended before it could say so itself: the journal hears it here."""
        self.runtime.publish(SessionEvent(session=self.name, status=status, detail=detail[:500]))


_FLEET = Origin.of_watcher("fleet")
