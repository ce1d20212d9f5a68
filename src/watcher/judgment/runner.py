"""Running evaluators over labelled cases: concurrent cases within a rate limit, rows appended as they finish, resumable.

Each run replays one case's observations through one watcher exactly as ``watcher replay`` does
(the role's own breakpoints, fail closed), so the figures are those of the watcher a user runs.
Rows already in the output file are not run again, unless they recorded an error. A run whose
model call failed and that never interjected has the outcome ``error``: it is not a judgement.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from watcher.agents.replay import replay
from watcher.core.errors import ConfigurationError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult, Evaluator
from watcher.core.spec import WatcherSpec
from watcher.judgment.cases import Case, run_as
from watcher.judgment.scoring import outcome

__all__ = ["RateLimit", "Runner", "Throttled", "read_rows"]


class RateLimit:
    """At most ``per_minute`` calls a minute, spaced evenly (None: no limit)."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        """Return when the next call may start."""
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        await asyncio.sleep(start - now)


class Throttled:
    """An evaluator whose calls wait for the rate limit."""

    def __init__(self, evaluator: Evaluator, limit: RateLimit) -> None:
        self.evaluator = evaluator
        self.limit = limit
        self.name = evaluator.name

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        await self.limit.wait()
        return await self.evaluator.evaluate(request)


# what the report reads from each row, and the JSON types it must have there
_NUMBER = (int, float)
_ROW_FIELDS: dict[str, tuple[type, ...]] = {
    "case": (str,),
    "form": (str,),
    "evaluator": (str,),
    "positive": (bool,),
    "outcome": (str,),
    "located": (bool, type(None)),
    "input_tokens": _NUMBER,
    "output_tokens": _NUMBER,
    "cost_usd": _NUMBER,
    "latency_s": _NUMBER,
    "error": (str, type(None)),
}
_JSON_TYPES = {str: "a string", bool: "true or false", int: "a number", float: "a number", type(None): "null"}


def _not_a_row(value: object) -> str | None:
    """Why ``value`` is not a row the report can read, or None when it is one."""
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    for name, types in _ROW_FIELDS.items():
        if name not in value:
            return f"it has no {name!r} field"
        field = value[name]
        if not isinstance(field, types) or (isinstance(field, bool) and bool not in types):
            wanted = " or ".join(dict.fromkeys(_JSON_TYPES[t] for t in types))
            return f"its {name!r} is {json.dumps(field)[:40]}, not {wanted}"
    return None


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an earlier run (none when the file does not exist).

    Every row is checked here, before a run starts, so a file that is not watcher eval's fails
    now, not after the run has been paid for, when the report reads it.
    """
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"--out {path}: not rows of watcher eval (not UTF-8 text: byte {exc.start}); move it away"
        ) from exc
    except OSError as exc:
        raise ConfigurationError(f"--out {path}: cannot read it ({exc.strerror}); choose another file") from exc
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ConfigurationError(
                f"--out {path}, line {number}: not a row of watcher eval ({exc}); move it away"
            ) from exc
        problem = _not_a_row(row)
        if problem is not None:
            raise ConfigurationError(
                f"--out {path}, line {number}: not a row of watcher eval ({problem}); move it away"
            )
        rows.append(row)
    return rows


def resume(out: Path) -> list[dict[str, Any]]:
    """The rows of an earlier run worth keeping; rows that recorded an error are dropped from ``out`` to run again."""
    earlier = read_rows(out)
    kept = [r for r in earlier if not r.get("error")]
    if len(kept) != len(earlier):
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
    return kept


@dataclass
class Runner:
    """Runs (case, form) pairs through named evaluators; ``evaluator_for(name)`` gives a fresh one per run."""

    spec: WatcherSpec
    evaluator_for: Callable[[str], Evaluator]
    jobs: int = 4
    on_row: Callable[[dict[str, Any]], None] | None = None

    async def run(self, cases: Sequence[Case], names: Sequence[str], out: Path | None) -> list[dict[str, Any]]:
        """Every row: those already in ``out`` (kept) and the new ones (appended to ``out`` as they finish)."""
        kept = resume(out) if out is not None else []
        done = {(r["case"], r["form"], r["evaluator"]) for r in kept}
        todo = [(c, f, n) for c in cases for f in c.forms for n in names if (c.id, f, n) not in done]
        rows = list(kept)
        sink: TextIO | None = open(out, "a", encoding="utf-8") if out is not None else None  # noqa: ASYNC230, SIM115 - appended to as runs finish; closed below
        gate = asyncio.Semaphore(max(1, self.jobs))

        async def one(case: Case, form: str, name: str) -> None:
            async with gate:
                row = await self.run_one(case, form, name)
            rows.append(row)
            if sink is not None:
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
            if self.on_row is not None:
                self.on_row(row)

        try:
            await asyncio.gather(*(one(c, f, n) for c, f, n in todo))
        finally:
            if sink is not None:
                sink.close()
        return rows

    async def run_one(self, case: Case, form: str, name: str) -> dict[str, Any]:
        """Replay one case in one form through evaluator ``name`` and score it."""
        evaluator = self.evaluator_for(name)
        started = time.monotonic()
        result = await replay(run_as(case, form), [(self.spec, evaluator)], session=f"eval-{case.id}")
        wall = time.monotonic() - started
        events = result.evaluations
        alarms = [e for e in events if e.decision == "interject" and e.interjection is not None]
        first = alarms[0] if alarms else None
        spans = [
            (loc.start_line, loc.last_line)
            for e in alarms
            for loc in (e.interjection.locations if e.interjection else ())
        ]
        errors = [e.error for e in events if e.error]
        scored = outcome(case, form, first.index if first is not None else None, spans)
        if errors and first is None:
            scored = {"outcome": "error", "located": None}  # a failed call is no judgement: not a miss, not quiet
        return {
            "case": case.id,
            "form": form,
            "evaluator": name,
            "model": next((e.model for e in events if e.model), ""),
            "label": case.label,
            "positive": case.positive,
            "evaluations": len(events),
            "interjected": first is not None,
            "first_index": first.index if first is not None else None,
            "locations": [list(span) for span in spans],
            **scored,
            "input_tokens": sum(e.input_tokens + e.cache_read_tokens + e.cache_write_tokens for e in events),
            "output_tokens": sum(e.output_tokens for e in events),
            "cost_usd": sum(e.cost_usd for e in events),
            "latency_s": round(sum(e.latency_s for e in events), 4),
            "wall_s": round(wall, 4),
            "error": errors[0] if errors else None,
        }
