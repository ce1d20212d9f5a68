"""The kernel side of ``%load_ext watcher``: hooks, the notebook session, watchers and their panels.

One ``KernelExtension`` per kernel. Its cell hooks are bound methods registered once; they do
bookkeeping on the main thread and hand the observation to the runtime thread with
``call_soon_threadsafe``, so a cell never waits on a watcher and the user's own errors surface
exactly as without watcher. Watchers attached here also watch agent runs started in the notebook.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult, InteractiveShell

from watcher.agents import AgentRun
from watcher.core.errors import DuplicateNameError, NoActiveRunError, NotPendingError, UnknownWatcherError
from watcher.core.evaluation import Evaluator
from watcher.core.interjection import Interjection
from watcher.core.spec import Mode, WatcherSpec
from watcher.evaluators.preflight import check_reachable
from watcher.evaluators.registry import make_evaluator
from watcher.kernel_ext.agent_runs import notebook_agent
from watcher.kernel_ext.cells import CellRecorder
from watcher.kernel_ext.locations import CellLocating
from watcher.kernel_ext.loop import RuntimeThread
from watcher.kernel_ext.outbox import CellOutbox
from watcher.kernel_ext.session import NotebookSession, render_interjection
from watcher.roles import spec_for_role
from watcher.runtime.engine import Watcher
from watcher.runtime.events import DeliveryOutcome, Event
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Command, default_journal_path
from watcher.runtime.session import Session
from watcher.settings import Settings
from watcher.widgets import PanelState, WatcherPanel

__all__ = ["Attached", "KernelExtension", "notebook_session_name"]

WAIT_S = 10.0
# how long unloading (and a kernel's shutdown) waits for the watchers' last judgments: a frontend
# kills a kernel that takes longer to exit, and the session's end must reach the journal first
CLOSE_BOUND_S = 2.0


def notebook_session_name(settings: Settings) -> str:
    """``notebook:<name>@<pid>``: the notebook's file name when the frontend says it, else ``kernel``."""
    path = settings.notebook_path  # $JPY_SESSION_NAME, set by jupyter_server for the notebook's kernel
    stem = Path(path).stem if path else "kernel"
    return f"notebook:{stem}@{os.getpid()}"


@dataclass
class Attached:
    """A watcher attached in this notebook: how to make it again for an agent run, and its panel."""

    spec: WatcherSpec
    evaluator_name: str
    options: dict[str, Any]
    panel: WatcherPanel
    one_cell: bool = False

    def make_evaluator(self) -> Evaluator:
        """A fresh evaluator (roles keep state, so each session gets its own)."""
        return make_evaluator(self.evaluator_name, self.spec.role, **self.options)


class KernelExtension:
    """Everything ``%load_ext watcher`` set up in this kernel."""

    def __init__(
        self, shell: InteractiveShell, *, journal_path: str | Path | None = None, settings: Settings | None = None
    ) -> None:
        settings = settings or Settings.from_env()  # read once, when the extension loads
        self.shell = shell
        self.thread = RuntimeThread(journal_path or default_journal_path(settings=settings))
        self.session = NotebookSession(notebook_session_name(settings))
        self.recorder = CellRecorder(shell.user_global_ns)
        self.attached: dict[str, Attached] = {}  # written on the runtime thread only
        self.panels: dict[str, WatcherPanel] = {}  # kept after a detach, so the panel shows it
        self.agent_sessions: list[Session] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._registered = False
        self.outbox = CellOutbox(self.thread.loop, lambda: self.runtime, self.session.name)
        self.outbox.after_batch = self._after_batch
        self.thread.wait(self._start(), WAIT_S)

    @property
    def runtime(self) -> Runtime:
        """The runtime living on the runtime thread (touch it only from there)."""
        assert self.thread.runtime is not None
        return self.thread.runtime

    @property
    def journal_path(self) -> Path | str:
        """Where this kernel's events are journaled."""
        return self.thread.journal.path

    async def _start(self) -> None:
        self.runtime.add_session(self.session, detail="notebook kernel")
        self.runtime.bus.subscribe("widgets", self._to_panels)

    # --- hooks (kernel main thread) ------------------------------------------------------------

    def register(self) -> None:
        """Register the cell hooks (bound methods, once)."""
        if not self._registered:
            self.shell.events.register("pre_run_cell", self.pre_run_cell)
            self.shell.events.register("post_run_cell", self.post_run_cell)
            self._registered = True

    def unregister(self) -> None:
        """Remove the cell hooks; safe to call twice."""
        if self._registered:
            for name, hook in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
                with contextlib.suppress(ValueError):  # someone removed it already
                    self.shell.events.unregister(name, hook)
            self._registered = False
        self.recorder.abandon()

    def pre_run_cell(self, info: ExecutionInfo) -> None:
        """IPython hook: a cell starts."""
        self.recorder.pre(info)

    def post_run_cell(self, result: ExecutionResult) -> None:
        """IPython hook: a cell ended. Show what watchers delivered, hand the cell over."""
        obs = self.recorder.post(result)
        for interjection in self.session.take_unshown():
            print(render_interjection(interjection))
        if obs is not None and self.thread.alive:
            self.outbox.put(obs)

    # --- the runtime thread ---------------------------------------------------------------------

    def _after_batch(self) -> None:
        one_cell = [a.spec.name for a in self.attached.values() if a.one_cell]
        if one_cell:
            task = asyncio.get_running_loop().create_task(self._detach_after(one_cell))
            self._tasks.add(task)  # a strong reference until done
            task.add_done_callback(self._tasks.discard)

    async def _detach_after(self, names: list[str]) -> None:
        await self.runtime.settle()
        for name in names:
            self._detach_everywhere(name)

    def _to_panels(self, event: Event) -> None:
        for panel in list(self.panels.values()):
            panel.apply(event)

    def _watchers_named(self, name: str) -> list[Watcher]:
        return [w for (_, wname), w in self.runtime.watchers.items() if wname == name]

    def _detach_everywhere(self, name: str) -> int:
        found = self._watchers_named(name)
        for watcher in found:
            self.runtime.detach(watcher)
        self.attached.pop(name, None)
        return len(found)

    # --- watchers (called from magics on the main thread) ---------------------------------------

    def watch(
        self,
        role: str,
        *,
        name: str | None = None,
        brief: str | None = None,
        evaluator: str = "rules",
        mode: Mode = "autonomous",
        options: dict[str, Any] | None = None,
        one_cell: bool = False,
    ) -> WatcherPanel:
        """Attach a watcher to this notebook (and to agent runs started here); returns its panel."""
        spec = spec_for_role(role, name=name, brief=brief, mode=mode)
        if spec.name in self.attached:
            raise DuplicateNameError(
                f"a watcher named {spec.name!r} is already attached; pass --name to add another {role!r} watcher"
            )
        opts = {k: v for k, v in (options or {}).items() if v is not None}
        first = make_evaluator(evaluator, role, **opts)  # raises a clear error before anything is attached
        check_reachable(first)  # an LLM watcher whose server does not answer is said now, not at every cell
        state = PanelState(
            spec.name,
            role=spec.role,
            authority=spec.authority,
            mode=spec.mode,
            evaluator=getattr(first, "name", evaluator),
        )
        state.triggers = frozenset(spec.triggers.on)
        panel = WatcherPanel(state, self, loop=self.thread.loop, schedule=self.thread.call)
        attached = Attached(spec, evaluator, opts, panel, one_cell)
        self.thread.wait(self._attach(attached, first), WAIT_S)
        return panel

    async def _attach(self, attached: Attached, first: Evaluator) -> None:
        self.attached[attached.spec.name] = attached
        self.panels[attached.spec.name] = attached.panel
        self.runtime.attach(attached.spec, CellLocating(first), self.session)
        for session in self.agent_sessions:  # runs already going get the new watcher too
            if not session.ended and not attached.one_cell:
                self.runtime.attach(attached.spec, attached.make_evaluator(), session)

    def unwatch(self, name: str) -> int:
        """Detach the watcher called ``name`` everywhere; returns how many sessions it left."""
        if name not in self.attached:
            known = ", ".join(self.attached) or "none attached"
            raise UnknownWatcherError(f"no watcher named {name!r} is attached ({known}); see %watchers")
        return self.thread.wait(self._unwatch(name), WAIT_S)

    async def _unwatch(self, name: str) -> int:
        return self._detach_everywhere(name)

    def settle(self, timeout: float = 5.0) -> bool:
        """Wait (up to ``timeout``) until watchers have judged every cell run so far."""
        try:
            self.thread.wait(asyncio.wait_for(self._settle(), timeout), timeout + 1)
        except TimeoutError:
            return False
        return True

    async def _settle(self) -> None:
        self.outbox.publish()
        await self.runtime.settle()
        if self.runtime.journal is not None:  # readers in other connections see everything judged so far
            await asyncio.to_thread(self.runtime.journal.flush)

    def states(self) -> list[dict[str, Any]]:
        """One row per (watcher, session): the engine's snapshot."""
        return self.thread.wait(self._states(), WAIT_S)

    async def _states(self) -> list[dict[str, Any]]:
        return [{"session": sess, **w.state()} for (sess, _), w in self.runtime.watchers.items()]

    # --- agent runs -----------------------------------------------------------------------------

    def agent(self, prompt: str, **options: Any) -> AgentRun:
        """``watcher.agent(...)`` in this notebook: the run shares this runtime and gets its watchers."""
        inherited = [(a.spec, a.make_evaluator) for a in list(self.attached.values()) if not a.one_cell]
        run = notebook_agent(prompt, inherited=inherited, runtime=self.runtime, loop=self.thread.loop, **options)
        self.agent_sessions.append(run)
        return run

    def active_agent_session(self) -> Session | None:
        """The most recent agent run that has not ended."""
        return next((s for s in reversed(self.agent_sessions) if not s.ended), None)

    def inject_by_hand(self, name: str, text: str) -> DeliveryOutcome:
        """Deliver ``text`` as watcher ``name`` into the active agent run; returns the outcome."""
        session = self.active_agent_session()
        if session is None:
            raise NoActiveRunError("no agent run is active; start one with `run = watcher.agent(...)`")
        return self.thread.wait(self._inject(session, name, text), WAIT_S)

    async def _inject(self, session: Session, name: str, text: str) -> DeliveryOutcome:
        said = Command.given(
            session.name, "inject", f"hand-{uuid.uuid4().hex[:8]}", watcher=name, payload={"content": text}
        )
        return await self.runtime.act(said, by="magic")

    # --- panel actions (PanelActions: called on the main thread, run on the runtime thread) -----

    def accept(self, session: str, watcher: str, interjection_id: str, content: str | None) -> None:
        """Deliver a pending interjection (the Inject button); returns at once."""
        self.thread.submit(self._accept(session, interjection_id, content))

    async def _accept(self, session: str, interjection_id: str, content: str | None) -> None:
        # naming no watcher, the command acts only on a pending interjection (a second click does nothing)
        given = Command.given(session, "accept", interjection_id, payload={"content": content} if content else None)
        with contextlib.suppress(NotPendingError):
            await self.runtime.act(given, by="panel")

    def dismiss(self, session: str, watcher: str, interjection_id: str) -> None:
        """Drop a pending interjection (the Dismiss button); returns at once."""
        self.thread.submit(self._dismiss(session, interjection_id))

    async def _dismiss(self, session: str, interjection_id: str) -> None:
        given = Command.given(session, "dismiss", interjection_id, payload={"reason": "dismissed in the notebook"})
        with contextlib.suppress(NotPendingError):
            await self.runtime.act(given, by="panel")

    def pending(self) -> list[tuple[str, str, Interjection]]:
        """Every interjection waiting for a person: (session, watcher, interjection), oldest watcher first."""
        return self.thread.wait(self._pending(), WAIT_S)

    async def _pending(self) -> list[tuple[str, str, Interjection]]:
        return [(sess, name, i) for (sess, name), w in self.runtime.watchers.items() for i in w.pending.values()]

    def act_on(self, interjection_id: str, *, accept: bool, content: str | None = None) -> tuple[str, str]:
        """Accept (deliver) or dismiss the pending interjection ``interjection_id``; its (session, watcher).

        Raises ``NotPendingError`` when no watcher holds it pending (a wrong id, or already decided).
        """
        for session, name, interjection in self.pending():
            if interjection.id == interjection_id:
                if accept:
                    self.thread.wait(self._accept(session, interjection_id, content), WAIT_S)
                else:
                    self.thread.wait(self._dismiss(session, interjection_id), WAIT_S)
                return session, name
        raise NotPendingError(f"no pending interjection {interjection_id!r}; %watcher_pending lists those waiting")

    # --- shutting down -------------------------------------------------------------------------

    def close(self) -> None:
        """Unregister, end the notebook session and stop the runtime thread (flushing the journal).

        The end of the session is a breakpoint: cells still waiting for their batch are handed
        over and the watchers judge what is buffered, for at most the longest timeout of the
        watchers attached here, so a kernel shutdown never waits longer than one evaluation may.
        """
        self.unregister()
        if self.thread.alive:
            longest = max((a.spec.caps.timeout_s for a in list(self.attached.values())), default=0.0)
            bound = min(longest, CLOSE_BOUND_S)
            ending = self.thread.submit(self._end(bound))
            try:
                ending.result(WAIT_S + bound)
            except KeyboardInterrupt:  # the session still ends, within the same bound: never half-unloaded
                print("watcher: interrupted; the notebook session ends without its last judgments", file=sys.stderr)
                with contextlib.suppress(Exception, KeyboardInterrupt):
                    ending.result(WAIT_S + bound)
            except Exception as exc:  # noqa: BLE001 - closing never raises into %unload_ext or atexit
                print(f"watcher: ending the notebook session failed: {exc}", file=sys.stderr)
        self.thread.stop(timeout=CLOSE_BOUND_S)

    async def _end(self, bound: float) -> None:
        """Judge the last cells for at most ``bound`` seconds, then end the session in the journal."""
        self.outbox.publish()  # the last cells, still waiting for their batch
        judging = asyncio.ensure_future(self.runtime.evaluate_session_end(self.session))
        done, _ = await asyncio.wait({judging}, timeout=bound)  # not wait_for: it would wait for the cancellation
        if not done:
            judging.cancel()
            print(f"watcher: judging the notebook's last cells took over {bound:g} s; left unjudged", file=sys.stderr)
        self.runtime.end_session(self.session, detail="extension unloaded")
