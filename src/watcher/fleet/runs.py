"""Which fleets and runs a journal holds: their names, the latest run's tasks, where it began, its settings.

Read from the ``FleetTask`` and ``FleetSettings`` rows alone (cheap), by the CLI's steering and
``supervise`` and by a supervisor started on a fleet that already runs. A tasks file run again
under the same name is a new run: these answer for the latest one.
"""

from __future__ import annotations

from typing import Any

from watcher.runtime.journal import Journal, JournalRow

__all__ = ["fleets", "latest_tasks", "run_settings", "run_start"]


def fleets(journal: Journal) -> list[str]:
    """The names of the fleets in ``journal``, oldest first."""
    rows = journal.read(0, limit=1_000_000, kinds=("fleet_task",))
    return list(dict.fromkeys(str(r.payload.get("fleet", "")) for r in rows))


def _announced(journal: Journal, fleet: str | None) -> tuple[str, list[JournalRow]]:
    """The fleet's name (default: the latest) and its latest run's ``FleetTask`` rows (those rows alone: cheap)."""
    rows = journal.read(0, limit=1_000_000, kinds=("fleet_task",))
    name = fleet if fleet is not None else (str(rows[-1].payload.get("fleet", "")) if rows else "")
    mine = [r for r in rows if r.payload.get("fleet") == name]
    run = mine[-1].payload.get("run", "") if mine else ""
    return name, [r for r in mine if r.payload.get("run", "") == run]


def run_start(journal: Journal, fleet: str) -> int:
    """The journal id just before the latest run of ``fleet`` began (0 when it never ran here).

    A supervisor started on a running fleet reads from there: what earlier runs of the same name
    did (their nudges, their learnings) is not this run's.
    """
    _, rows = _announced(journal, fleet)
    return rows[0].id - 1 if rows else 0


def run_settings(journal: Journal, fleet: str) -> dict[str, Any] | None:
    """The settings the latest run of ``fleet`` started with (its ``FleetSettings`` row), None if it wrote none.

    Read by ``watcher fleet supervise`` so that a supervisor on any machine judges the fleet as the
    tasks file said, not with defaults.
    """
    _, rows = _announced(journal, fleet)
    run = rows[-1].payload.get("run", "") if rows else None
    found = [
        r.payload
        for r in journal.read(0, limit=1_000_000, kinds=("fleet_settings",))
        if r.payload.get("fleet") == fleet and (run is None or r.payload.get("run") == run)
    ]
    settings = found[-1].get("settings") if found else None
    return dict(settings) if isinstance(settings, dict) else None


def latest_tasks(journal: Journal, fleet: str | None = None) -> tuple[str, list[str]]:
    """The fleet's name (default: the latest) and the tasks of its latest run."""
    name, rows = _announced(journal, fleet)
    return name, list(dict.fromkeys(r.session for r in rows))
