"""``WatcherPanel``: the live panel of one watcher, a thin ipywidgets shell over ``PanelState``.

Threading rules (ipywidgets is not thread-safe, research §2.2):

- one writer: every trait of every child is written on the runtime thread only (``flush``), so
  it keeps updating while a cell blocks the kernel's main thread;
- updates are coalesced: ``notify`` schedules at most one flush per ``1 / MAX_FLUSHES_PER_S``
  seconds, each flush sends only the children whose text changed, inside ``hold_sync``;
- clicks arrive on the kernel's main thread and only hand work over (``schedule``), so a click is
  never queued behind an agent run or an evaluation. The one trait a person writes from the
  browser, the edit box's text, is written by the panel only when editing starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

import ipywidgets as w

from watcher.core.redact import redact
from watcher.runtime.events import Event
from watcher.widgets._flush import MAX_FLUSHES_PER_S, FlushLimiter
from watcher.widgets.state import PanelState, PanelView

__all__ = ["MAX_FLUSHES_PER_S", "PanelActions", "WatcherPanel"]

_STATUS_STYLE = {"idle": "success", "evaluating": "info", "error": "danger", "detached": ""}


class PanelActions(Protocol):
    """What the panel's buttons ask for; the kernel extension runs them on the runtime thread."""

    def accept(self, session: str, watcher: str, interjection_id: str, content: str | None) -> None: ...

    def dismiss(self, session: str, watcher: str, interjection_id: str) -> None: ...


class WatcherPanel(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type hints
    """Name, role, status, recent observations and evaluations, the pending interjection, counters, timeline."""

    def __repr__(self) -> str:
        # what a frontend without the widget manager prints (text/plain): the state, never widget internals
        return self.state.text()

    def __init__(
        self,
        state: PanelState,
        actions: PanelActions,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        schedule: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.state = state
        self._actions = actions
        self._loop = loop
        self._schedule = schedule or (lambda fn: fn())
        self._limiter = FlushLimiter(self.flush, loop=loop)
        self._editing_shown = False
        self.flushes = 0
        self.header = w.HTML()
        self.status = w.Button(description="idle", disabled=True, layout=w.Layout(width="auto"))
        self.counters = w.HTML()
        self.observations = w.HTML()
        self.evaluations = w.HTML()
        self.pending = w.HTML()
        self.delivered = w.HTML()
        self.timeline = w.HTML()
        self.inject_button = w.Button(
            description="Inject", button_style="danger", icon="paper-plane", tooltip="deliver this interjection"
        )
        self.edit_button = w.Button(description="Edit", icon="pencil", tooltip="edit before injecting")
        self.dismiss_button = w.Button(description="Dismiss", icon="times", tooltip="drop this interjection")
        self.editor = w.Textarea(layout=w.Layout(width="100%", display="none"), rows=3)
        self.pending_box = w.VBox([])
        self.inject_button.on_click(self._on_inject)
        self.edit_button.on_click(self._on_edit)
        self.dismiss_button.on_click(self._on_dismiss)
        self._pending_children = (
            self.pending,
            w.HBox([self.inject_button, self.edit_button, self.dismiss_button]),
            self.editor,
        )
        super().__init__(
            [
                w.HBox([self.header, self.status]),
                self.counters,
                w.HBox([self.observations, self.evaluations]),
                self.pending_box,
                self.delivered,
                self.timeline,
            ],
            layout=w.Layout(border="1px solid #d8e1e8", padding="4px 8px", margin="4px 0"),
        )
        self.add_class("watcher-panel")
        self.flush()

    # --- updates (runtime thread) ----------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """Fold an event into the state and schedule a coalesced flush."""
        if self.state.apply(event):
            self.notify()

    def notify(self) -> None:
        """Ask for a flush: at once if none happened for a while, else at the next slot."""
        if self._loop is None:
            self.flush()
        else:
            self._limiter.request()

    def flush(self) -> None:
        """Copy the rendered state into the child widgets (only what changed)."""
        self._limiter.mark()
        view = self.state.view()
        self.flushes += 1
        with self.hold_sync():
            self._set(self.header, view.header)
            self._set(self.counters, view.counters)
            self._set(self.observations, view.observations)
            self._set(self.evaluations, view.evaluations)
            self._set(self.delivered, view.delivered)
            self._set(self.timeline, view.timeline)
            self._show_status(view)
            self._show_pending(view)

    @staticmethod
    def _set(widget: w.HTML, value: str) -> None:
        if widget.value != value:
            widget.value = value

    def _show_status(self, view: PanelView) -> None:
        if self.status.description != view.status:
            self.status.description = view.status
            self.status.button_style = _STATUS_STYLE.get(view.status, "")

    def _show_pending(self, view: PanelView) -> None:
        self._set(self.pending, view.pending)
        wanted = self._pending_children if view.pending_id else ()
        if tuple(self.pending_box.children) != wanted:
            self.pending_box.children = wanted
        editing = bool(view.pending_id) and self.state.editing
        if editing and not self._editing_shown:
            found = self.state.first_pending()
            self.editor.value = redact(found.interjection.content) if found else ""
        if editing != self._editing_shown:
            self.editor.layout.display = "" if editing else "none"
            self.edit_button.description = "Cancel edit" if editing else "Edit"
            self._editing_shown = editing

    # --- clicks (kernel main thread): hand over and return --------------------------------------

    def _on_inject(self, _button: w.Button) -> None:
        found = self.state.first_pending()
        if found is None:
            return
        content = self.editor.value if self.state.editing and self.editor.value.strip() else None
        self._actions.accept(found.session, self.state.name, found.interjection.id, content)

    def _on_edit(self, _button: w.Button) -> None:
        def toggle() -> None:
            with self.state.lock:
                self.state.editing = not self.state.editing
                self.state.version += 1
            self.notify()

        self._schedule(toggle)

    def _on_dismiss(self, _button: w.Button) -> None:
        found = self.state.first_pending()
        if found is not None:
            self._actions.dismiss(found.session, self.state.name, found.interjection.id)
