"""Point a notebook watcher's interjections at the cell they are about.

Roles that read cells may not know which cell id the frontend gave it. ``CellLocating`` wraps a
watcher's evaluator: when an interjection names no cell, it is placed on the newest executed
cell that carries an id (at the error's line when the cell raised), so editors and the language
server can put it on the right cell.
"""

from __future__ import annotations

from dataclasses import replace

from watcher.core.evaluation import EvaluationRequest, EvaluationResult, Evaluator
from watcher.core.interjection import Interject, Interjection, Location
from watcher.core.observations import CellExecuted

__all__ = ["CellLocating", "locate_in_cell"]

# location paths an evaluator may use for "the code I was shown" when it has no real file name
_CELL_PATHS = {"", "cell", "<cell>", "<string>", "<unknown>", "<stdin>", "notebook"}


def locate_in_cell(interjection: Interjection, cell: CellExecuted) -> Interjection:
    """``interjection`` with its locations on ``cell`` (unchanged when it already names a cell)."""
    if cell.cell_id is None or any(loc.cell_id for loc in interjection.locations):
        return interjection
    moved = [
        Location(cell_id=cell.cell_id, start_line=loc.start_line, end_line=loc.end_line)
        for loc in interjection.locations
        if loc.path is not None and loc.path.strip().lower() in _CELL_PATHS
    ]
    kept = [
        loc for loc in interjection.locations if loc.path is not None and loc.path.strip().lower() not in _CELL_PATHS
    ]
    if not moved and not kept:
        line = cell.error.lineno if cell.error is not None and cell.error.lineno else 1
        moved = [Location(cell_id=cell.cell_id, start_line=line)]
    return replace(interjection, locations=(*moved, *kept))


class CellLocating:
    """An evaluator wrapper that puts cell ids on the interjections of the wrapped evaluator."""

    def __init__(self, inner: Evaluator) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        result = await self.inner.evaluate(request)
        decision = result.decision
        if not isinstance(result, EvaluationResult) or not isinstance(decision, Interject):
            return result
        cell = next((o for o in reversed(request.observations) if isinstance(o, CellExecuted)), None)
        if cell is None:
            return result
        located = locate_in_cell(decision.interjection, cell)
        if located is decision.interjection:
            return result
        return replace(result, decision=replace(decision, interjection=located))
