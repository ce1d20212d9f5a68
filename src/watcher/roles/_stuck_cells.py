"""Notebook cells raising the same error at the same line, run after run.

A cell is the same cell by id, or by source: nbclient and classic notebooks have no ids, and a
pasted copy has a new one. A cell that runs cleanly is forgotten under every name it was known by.
The role nudges at every ``nudge_every``-th identical failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from watcher.core.interjection import Location
from watcher.core.observations import CellExecuted
from watcher.roles._stuck_findings import Finding

__all__ = ["CellErrors"]

_MAX_CELLS = 512  # failing cells kept at most

Key = tuple[str, str | int]


@dataclass(slots=True)
class _Cell:
    error: tuple[str, int | None]
    count: int
    loop: int
    keys: set[Key] = field(default_factory=set)


class CellErrors:
    """Failing cells by id and by source, and how often each failed the same way."""

    def __init__(self, nudge_every: int) -> None:
        self.nudge_every = nudge_every
        self.fixed = False  # the last cell fed ran cleanly
        self._cells: dict[Key, _Cell] = {}

    def feed(self, obs: CellExecuted, new_loop: Callable[[], int]) -> list[Finding]:
        """Take a cell run; return a nudge when it failed the same way a multiple of ``nudge_every`` times."""
        keys: list[Key] = [("source", hash(obs.source.strip()))]
        if obs.cell_id:
            keys.append(("id", obs.cell_id))
        self.fixed = obs.error is None
        if obs.error is None:
            for key in keys:
                gone = self._cells.pop(key, None)
                for other in gone.keys if gone else ():
                    self._cells.pop(other, None)
            return []
        error = (obs.error.ename, obs.error.lineno)
        state = next((found for key in reversed(keys) if (found := self._cells.get(key)) is not None), None)
        if state is None or state.error != error:
            state = _Cell(error, 0, new_loop())
        while len(self._cells) >= _MAX_CELLS:
            self._cells.pop(next(iter(self._cells)))
        for key in keys:
            self._cells[key] = state
            state.keys.add(key)
        state.count += 1
        if state.count % self.nudge_every:
            return []
        where = Location(cell_id=obs.cell_id, start_line=obs.error.lineno or 1) if obs.cell_id else None
        label = f"cell {obs.cell_id}" if obs.cell_id else "the same cell"
        detail = f"{obs.error.ename}: {obs.error.evalue}".strip().rstrip(":")
        line = f" at line {obs.error.lineno}" if obs.error.lineno else ""
        return [Finding("cell", "nudge", state.count, label, state.loop, detail=f"{detail}{line}", location=where)]
