"""What a watcher panel shows, as plain data: no ipywidgets here, so it is testable without a kernel.

``PanelState`` folds runtime events into the panel's state (one watcher, every session it is
attached to) and ``view()`` renders it to strings the widget shell copies into its children. The
panel calls ``apply`` from the runtime thread and reads ``pending`` from click handlers, so the
state is guarded by a lock. Every text is redacted before it is shown.
"""

from __future__ import annotations

import html
import threading
import time
from collections import deque
from dataclasses import dataclass

from watcher.core.interjection import Interjection
from watcher.core.observations import Observation
from watcher.core.protocol import describe_observation
from watcher.core.redact import redact
from watcher.runtime.engine import breakpoints_of
from watcher.runtime.events import (
    DeliveryEvent,
    EvaluationEvent,
    Event,
    InterjectionEvent,
    ObservationEvent,
    WatcherEvent,
)
from watcher.runtime.fates import DELIVERED, DISMISSED, PENDING, Fates
from watcher.widgets.timeline import Mark, timeline_svg

__all__ = ["PanelState", "PanelView", "Pending"]

RECENT = 6
MARKS = 200


@dataclass(frozen=True, slots=True)
class Pending:
    """An interjection waiting for a person: the session it is for, and the interjection."""

    session: str
    interjection: Interjection


@dataclass(frozen=True, slots=True)
class PanelView:
    """The rendered panel: one string per child widget, plus what the buttons act on."""

    header: str
    status: str
    observations: str
    evaluations: str
    pending: str
    pending_id: str
    delivered: str
    counters: str
    timeline: str


def _text(value: str, limit: int = 160) -> str:
    clean = redact(value).replace("\n", " ⏎ ")
    return html.escape(clean if len(clean) <= limit else clean[: limit - 1] + "…")


class PanelState:
    """The state of one watcher's panel, built from the events the runtime publishes."""

    def __init__(self, name: str, *, role: str = "", authority: str = "", mode: str = "", evaluator: str = "") -> None:
        self.name = name
        # the evaluator's label names its model, which a person may have typed a key into by mistake
        self.role, self.authority, self.mode, self.evaluator = role, authority, mode, redact(evaluator)
        self.status = "idle"
        self.sessions: set[str] = set()
        self.triggers: frozenset[str] = frozenset()
        self.evaluations = 0
        self.fates = Fates()  # the interjections' fates: the same fold as the engine's and the editor's
        self.tokens = 0
        self.cost_usd = 0.0
        self.observations: deque[tuple[int, Observation]] = deque(maxlen=RECENT)
        self.decisions: deque[str] = deque(maxlen=RECENT)
        self.outcomes: deque[str] = deque(maxlen=RECENT)
        self.marks: deque[Mark] = deque(maxlen=MARKS)
        self.editing = False
        self.version = 0
        self.lock = threading.RLock()

    @property
    def interjections(self) -> int:
        """Interjections this watcher made (capped ones not counted), as ``%watchers`` counts them."""
        return self.fates.count()

    @property
    def pending(self) -> dict[str, Pending]:
        """Interjections waiting for a person, oldest first, by id."""
        return {f.id: Pending(f.session, f.interjection) for f in self.fates.with_status(PENDING)}

    def apply(self, event: Event) -> bool:
        """Fold one event in; returns True when the panel changed."""
        with self.lock:
            changed = self._apply(event)
            if changed:
                self.version += 1
            return changed

    def _apply(self, event: Event) -> bool:
        if isinstance(event, ObservationEvent):
            if event.session not in self.sessions:
                return False
            obs = event.observation
            self.observations.appendleft((event.index, obs))  # rendered at flush time, not per event
            points = breakpoints_of(obs)
            self.marks.append(Mark(event.ts, "error" if "error" in points else "observation"))
            if any(p in self.triggers for p in points):
                self.status = "evaluating"
            return True
        if event.watcher != self.name:
            return False
        if isinstance(event, WatcherEvent):
            if event.status == "attached":
                self.sessions.add(event.session)
                self.role = event.role or self.role
                self.mode = event.mode or self.mode
                self.authority = event.authority or self.authority
                self.evaluator = redact(event.evaluator) if event.evaluator else self.evaluator
            elif event.status == "detached":
                self.sessions.discard(event.session)
                self.status = "detached" if not self.sessions else self.status
            return True
        if isinstance(event, EvaluationEvent):
            return self._evaluation(event)
        if isinstance(event, InterjectionEvent):
            self.fates.apply(event)
            return True
        if isinstance(event, DeliveryEvent):
            was = self.fates.get(event.interjection_id)
            fate = self.fates.apply(event)
            if fate is None:
                return False
            if was is not None and was.status == PENDING:
                self.editing = False
            what = fate.interjection.content
            self.outcomes.appendleft(f"{fate.status}: {_text(what, 120)}" if what else fate.status)
            self.marks.append(Mark(event.ts, DISMISSED if fate.status == DISMISSED else DELIVERED))
            return True
        return False

    def _evaluation(self, event: EvaluationEvent) -> bool:
        self.fates.apply(event)
        self.evaluations += 1
        self.tokens += event.input_tokens + event.output_tokens
        self.cost_usd += event.cost_usd
        self.status = "error" if event.error else "idle"
        if event.error:
            said = f"error: {_text(event.error, 120)}"
            self.marks.append(Mark(event.ts, "failed"))
        elif event.interjection is not None:
            extra = f" (capped: {_text(event.capped)})" if event.capped else ""
            said = f"<b>interject</b>{extra}: {_text(event.interjection.content, 120)}"
            self.marks.append(Mark(event.ts, "interject"))
        else:
            said = f"continue{': ' + _text(event.note, 120) if event.note else ''}"
            self.marks.append(Mark(event.ts, "continue"))
        self.decisions.appendleft(f"#{event.index} {event.breakpoint} → {said}")
        return True

    def first_pending(self) -> Pending | None:
        """The oldest interjection waiting for a person (the one the buttons act on)."""
        with self.lock:
            return next(iter(self.pending.values()), None)

    def view(self, now: float | None = None) -> PanelView:
        """Render the state to strings; cheap enough to call at every flush."""
        with self.lock:
            waiting = self.pending
            pending = next(iter(waiting.values()), None)
            badge = "manual: you decide" if self.mode == "manual" else "autonomous: delivers by itself"
            header = (
                f"<b>watcher {html.escape(self.name)}</b> · role <code>{html.escape(self.role)}</code> · "
                f"{html.escape(self.authority or 'supervisor')} · {badge}"
                f"{' · ' + html.escape(self.evaluator) if self.evaluator else ''}"
            )
            return PanelView(
                header=header,
                status=self.status,
                observations=_list(
                    "recent observations",
                    deque(f"#{i} {_text(describe_observation(o) or o.kind, 110)}" for i, o in self.observations),
                ),
                evaluations=_list("evaluations", self.decisions),
                pending=_pending_html(pending, len(waiting)),
                pending_id=pending.interjection.id if pending else "",
                delivered=_list(DELIVERED if self.mode != "manual" else "outcomes", self.outcomes, badge=True),
                counters=(
                    f"evaluations <b>{self.evaluations}</b> · interjections <b>{self.interjections}</b> · "
                    f"tokens <b>{self.tokens}</b> · cost <b>${self.cost_usd:.4f}</b>"
                ),
                timeline=timeline_svg(list(self.marks), now=now if now is not None else time.time()),
            )

    def text(self) -> str:
        """The panel as plain text, for a frontend without widgets (a console, nbconvert): what is
        pending, with the id ``%watcher_accept`` / ``%watcher_dismiss`` take."""
        with self.lock:
            waiting = self.pending
            lines = [
                f"watcher {self.name!r} ({self.role or 'custom'}, {self.evaluator or 'rules'}, {self.mode or 'autonomous'}): "
                f"{self.status} · {self.evaluations} evaluations, {self.interjections} interjections, {len(waiting)} pending"
            ]
            for interjection_id, pending in waiting.items():
                i = pending.interjection
                content = " ".join(redact(i.content).split())
                content = content if len(content) <= 200 else content[:199] + "…"
                lines.append(f"  pending {interjection_id} · {i.severity}{', urgent' if i.urgent else ''} · {content}")
            if waiting:
                lines.append("  %watcher_accept ID [TEXT] delivers it (TEXT replaces it); %watcher_dismiss ID drops it")
            return "\n".join(lines)


def _list(title: str, items: deque[str], *, badge: bool = False) -> str:
    if not items:
        return f'<div class="watcher-{title.split()[-1]}"><i>no {html.escape(title)} yet</i></div>'
    style = ' style="color:#0f9960"' if badge else ""
    rows = "".join(f"<li{style}>{item}</li>" for item in items)
    return f'<div class="watcher-{title.split()[-1]}"><b>{html.escape(title)}</b><ul style="margin:2px 0;padding-left:18px;line-height:1.35;font-size:12px">{rows}</ul></div>'


def _pending_html(pending: Pending | None, count: int) -> str:
    if pending is None:
        return ""
    i = pending.interjection
    where = ", ".join(loc.render() for loc in i.locations)
    more = f" (+{count - 1} more)" if count > 1 else ""
    return (
        f'<div class="watcher-pending" style="border-left:3px solid #c23030;padding-left:6px">'
        f"<b>pending interjection</b>{more} · {html.escape(i.severity)}{', urgent' if i.urgent else ''} · "
        f"{html.escape(i.action)}{' @ ' + html.escape(where) if where else ''} · for <code>{html.escape(pending.session)}</code>"
        f"<div>{_text(i.content, 600)}</div></div>"
    )
