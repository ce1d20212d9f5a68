"""``watcher.history``: evaluations and interjections from the journal, as a polars DataFrame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from watcher.runtime.journal import Journal

__all__ = ["HISTORY_SCHEMA", "history"]

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

    ``outcome`` is the interjection's fate (pending, delivered, dismissed, undeliverable, …) or
    null for a continue. With no argument the project's default journal is read.
    """
    owned = not isinstance(journal, Journal)
    jr = journal if isinstance(journal, Journal) else Journal(journal, create=False)  # a reader makes no files
    try:
        if not owned:
            jr.flush()  # the caller's journal may still hold events queued for its writer
        rows: list[dict[str, Any]] = []
        outcomes: dict[str, str] = {}
        said: list[str | None] = []  # per row: the interjection id whose fate fills ``outcome``
        after = 0
        while batch := jr.read(after, limit=5000, session=session):
            after = batch[-1].id
            for row in batch:
                if watcher is not None and row.watcher != watcher:
                    continue
                p = row.payload
                if row.kind == "interjection":
                    outcomes[str(p["interjection"]["id"])] = str(p.get("status", "queued"))
                elif row.kind == "delivery":
                    outcomes[str(p.get("interjection_id"))] = str(p.get("outcome"))
                elif row.kind == "evaluation":
                    i = p.get("interjection") or {}
                    said.append(None if not i or p.get("capped") else str(i.get("id")))
                    rows.append(
                        {
                            "time": int(row.ts * 1000),
                            "watcher": row.watcher,
                            "session": row.session,
                            "index": p.get("index"),
                            "decision": p.get("decision"),
                            "urgent": i.get("urgent") if i else None,
                            "severity": i.get("severity") if i else None,
                            "action": i.get("action") if i else None,
                            "content": i.get("content") if i else p.get("note") or None,
                            "outcome": "capped" if i and p.get("capped") else None,
                            "latency_s": p.get("latency_s"),
                            "input_tokens": p.get("input_tokens"),
                            "output_tokens": p.get("output_tokens"),
                            "cost_usd": p.get("cost_usd"),
                            "error": p.get("error"),
                        }
                    )
        for r, interjection_id in zip(rows, said, strict=True):
            if interjection_id is not None:
                r["outcome"] = outcomes.get(interjection_id)
        frame = pl.DataFrame(
            rows, schema={k: (pl.Int64 if k == "time" else v) for k, v in HISTORY_SCHEMA.items()}, orient="row"
        )
        return frame.with_columns(
            pl.from_epoch("time", time_unit="ms").dt.cast_time_unit("ms").dt.replace_time_zone("UTC")
        )
    finally:
        if owned:
            jr.close()
