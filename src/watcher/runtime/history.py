"""``watcher.history``: evaluations and interjections from the journal, as a polars DataFrame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from watcher.core.logs import logger
from watcher.runtime.events import EvaluationEvent, readable
from watcher.runtime.fates import Fates
from watcher.runtime.journal import Journal

__all__ = ["HISTORY_SCHEMA", "history"]

log = logger("watcher.history")

HISTORY_SCHEMA: dict[str, Any] = {
    "time": pl.Datetime("ms", "UTC"),
    "watcher": pl.String,
    "session": pl.String,
    "index": pl.Int64,
    "decision": pl.String,
    "urgent": pl.Boolean,
    "severity": pl.String,
    "action": pl.String,
    "content": pl.String,
    "outcome": pl.String,
    "latency_s": pl.Float64,
    "input_tokens": pl.Int64,
    "output_tokens": pl.Int64,
    "cost_usd": pl.Float64,
    "error": pl.String,
}


def history(
    journal: Journal | str | Path | None = None, *, session: str | None = None, watcher: str | None = None
) -> pl.DataFrame:
    """One row per evaluation: when, who, what was decided, what was said, what it cost.

    ``outcome`` is the interjection's fate as ``watcher.runtime.fates`` folds it (capped, pending,
    queued, delivered, edited, dismissed, undeliverable, failed) or null for a continue. With no argument the project's default journal is read.
    """
    owned = not isinstance(journal, Journal)
    jr = journal if isinstance(journal, Journal) else Journal(journal, create=False)  # a reader makes no files
    try:
        if not owned:
            jr.flush()  # the caller's journal may still hold events queued for its writer
        rows: list[dict[str, Any]] = []
        fates = Fates()
        said: list[str | None] = []  # per row: the interjection id whose fate fills ``outcome``
        after = 0
        while batch := jr.read(after, limit=5000, session=session):
            after = batch[-1].id
            mine = [row for row in batch if watcher is None or row.watcher == watcher]
            for event in readable(mine, log, "history"):
                fates.apply(event)
                if isinstance(event, EvaluationEvent):
                    said.append(event.interjection.id if event.interjection else None)
                    rows.append(_evaluation_row(event))
        for r, interjection_id in zip(rows, said, strict=True):
            fate = fates.get(interjection_id) if interjection_id is not None else None
            r["outcome"] = fate.status if fate is not None and fate.status != "proposed" else None
        frame = pl.DataFrame(
            rows, schema={k: (pl.Int64 if k == "time" else v) for k, v in HISTORY_SCHEMA.items()}, orient="row"
        )
        return frame.with_columns(
            pl.from_epoch("time", time_unit="ms").dt.cast_time_unit("ms").dt.replace_time_zone("UTC")
        )
    finally:
        if owned:
            jr.close()


def _evaluation_row(event: EvaluationEvent) -> dict[str, Any]:
    i = event.interjection
    return {
        "time": int(event.ts * 1000),
        "watcher": event.watcher,
        "session": event.session,
        "index": event.index,
        "decision": event.decision,
        "urgent": i.urgent if i else None,
        "severity": i.severity if i else None,
        "action": i.action if i else None,
        "content": i.content if i else event.note or None,
        "outcome": None,
        "latency_s": event.latency_s,
        "input_tokens": event.input_tokens,
        "output_tokens": event.output_tokens,
        "cost_usd": event.cost_usd,
        "error": event.error,
    }
