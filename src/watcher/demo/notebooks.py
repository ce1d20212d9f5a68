"""``make demo``: run the example notebooks headless on a real kernel and show what the watchers did.

``quickstart.ipynb``, ``agent_run.ipynb`` and ``fleet.ipynb`` are executed top to bottom with
nbclient on an ipykernel of this interpreter, offline (the agent run is scripted through
``watcher.testing.StubAnthropicServer`` unless ``ANTHROPIC_API_KEY`` is set). The kernel journals
everything to a temporary ``WATCHER_JOURNAL``; this process then reads that journal back and
prints, per notebook, what the watchers observed, what they concluded and what they injected.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

from watcher.core.observations import CellExecuted, UserMessage
from watcher.core.protocol import describe_observation
from watcher.fleet.events import FleetTask, LearningExtracted, SyncMessageSent, TaskTurn, WatcherNudge, WatcherPause
from watcher.runtime.events import EvaluationEvent, Event, ObservationEvent, SessionEvent
from watcher.runtime.fates import PENDING, Fates
from watcher.runtime.journal import Journal, JournalRow
from watcher.settings import Settings

__all__ = ["NOTEBOOKS", "main", "run_notebook", "summarise", "summarise_fleet"]

EXAMPLES = Path(__file__).resolve().parents[3] / "example_notebooks"
NOTEBOOKS = (
    ("quickstart.ipynb", "security (manual) and errors (autonomous) watchers on ordinary cells"),
    ("agent_run.ipynb", "an agent run with an autonomous security watcher and a manual reviewer"),
    ("fleet.ipynb", "three agent tasks as a fleet with its live dashboard, steered from a terminal"),
)
KERNEL = "watcher-demo"


def _kernelspec(root: Path) -> None:
    """A kernelspec for this interpreter, so the demo never picks up another environment's kernel."""
    folder = root / "kernels" / KERNEL
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        # loopback only; the kernel's warning about unencrypted TCP would only clutter the demo
        "argv": [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--IPKernelApp.log_level=ERROR",
        ],
        "display_name": KERNEL,
        "language": "python",
    }
    (folder / "kernel.json").write_text(json.dumps(spec))


def run_notebook(path: Path, timeout: float = 120.0) -> tuple[float, list[str]]:
    """Execute ``path`` in place (in memory); returns (seconds, errors of cells not tagged to raise)."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    started = time.perf_counter()
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name=KERNEL, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    errors = [
        f"cell {cell.get('id', '?')}: {out['ename']}: {out['evalue']}"
        for cell in nb.cells
        if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", [])
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    return time.perf_counter() - started, errors


def _rows(journal: Path, after: int) -> list[JournalRow]:
    with Journal(journal) as jr:
        rows, last = [], after
        while batch := jr.read(last, limit=5000):
            rows.extend(batch)
            last = batch[-1].id
    return rows


def _line(text: str, width: int = 96) -> str:
    first = " ⏎ ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    return first if len(first) <= width else first[: width - 1] + "…"


def summarise_fleet(events: list[Event]) -> list[str]:
    """A fleet's record in one notebook: each task's end, the nudges and pauses, the learnings relayed."""
    out: list[str] = []
    tasks = {e.session: e.fleet for e in events if isinstance(e, FleetTask)}
    for fleet in dict.fromkeys(tasks.values()):
        mine = [e for e in events if e.session in tasks and tasks[e.session] == fleet]
        ended = {
            e.session: e.status for e in mine if isinstance(e, SessionEvent) and e.status not in ("started", "running")
        }
        steps = {e.session: e.step for e in mine if isinstance(e, TaskTurn)}
        texts = {e.learning_id: e.text for e in mine if isinstance(e, LearningExtracted)}
        out.append(f"  fleet {fleet}: {len(ended)} of {sum(1 for f in tasks.values() if f == fleet)} tasks ended")
        for task in (t for t, f in tasks.items() if f == fleet):
            out.append(f"    {task:<14} {ended.get(task, 'running'):<10} {steps.get(task, 0)} steps")
        for e in mine:
            if isinstance(e, WatcherNudge):
                out.append(f"    nudge {e.severity} to {e.session} by {e.by}: {_line(e.message, 72)}")
            elif isinstance(e, WatcherPause):
                out.append(f"    {'resume' if e.resumed else 'pause'} {e.session} by {e.by}: {_line(e.reason, 72)}")
            elif isinstance(e, SyncMessageSent) and e.status == "sent":
                to = ", ".join(e.recipients or (e.session,))
                out.append(f"    learning relayed {e.source_task} -> {to}: {_line(texts.get(e.learning_id, ''), 64)}")
    return out


def summarise(rows: list[JournalRow]) -> list[str]:
    """The report for one notebook's journal rows: observed, concluded, injected (a fleet: its record)."""
    events = [row.event() for row in rows]
    out: list[str] = summarise_fleet(events)
    fleet_tasks = {e.session for e in events if isinstance(e, FleetTask)}
    sessions = [
        e.session
        for e in events
        if isinstance(e, SessionEvent) and e.status == "started" and e.session not in fleet_tasks
    ]
    for session in sessions:
        mine = [e for e in events if e.session == session]
        kind = "agent run" if session.startswith("agent-") else "notebook"
        observations = [e for e in mine if isinstance(e, ObservationEvent)]
        out.append(f"  {kind} {session}: {len(observations)} observations")
        for e in observations:
            obs = e.observation
            if isinstance(obs, CellExecuted) and describe_observation(obs).split("\n", 1)[-1].lstrip().startswith("%"):
                continue  # the magics that set watchers up
            out.append(f"    #{e.index:<3} {_line(describe_observation(obs))}")
        evaluations = [e for e in mine if isinstance(e, EvaluationEvent)]
        per = Counter(e.watcher for e in evaluations)
        said = Counter(e.decision for e in evaluations)
        if evaluations:
            who = ", ".join(f"{name} {n}" for name, n in sorted(per.items()))
            out.append(
                f"  concluded: {len(evaluations)} evaluations ({who}): {said['continue']} continue, {said['interject']} interject"
            )
        fates = Fates()
        for event in mine:
            fates.apply(event)
        for fate in fates:
            if fate.status in ("proposed", "capped") or fate.origin.by_person:
                continue
            i = fate.interjection
            where = ", ".join(loc.render() for loc in i.locations)
            urgency = "urgent " if i.urgent else ""
            status = "pending: waiting for a person" if fate.status == PENDING else fate.status
            out.append(
                f"  >> {fate.watcher} interjected ({urgency}{i.severity}, {i.action}{' @ ' + where if where else ''}) -> {status}"
            )
            out.extend("       " + line for line in textwrap.wrap(i.content, 92))
        for e in observations:
            if isinstance(e.observation, UserMessage) and e.observation.extra.get("interjection_id"):
                out.append(f"  injected into the run at #{e.index}: {_line(e.observation.text, 88)}")
    return out


def main() -> int:
    """Run the notebooks and print the watchers' record of them."""
    settings = Settings.from_env()
    scripted = not settings.environ.get("ANTHROPIC_API_KEY")  # what the notebooks themselves look at
    print("watcher demo: example notebooks executed headless on a real ipykernel (nbclient)")
    print(
        f"  the agent run is {'SCRIPTED (StubAnthropicServer, no network)' if scripted else 'live (ANTHROPIC_API_KEY is set)'}; watchers use offline rules"
    )
    with tempfile.TemporaryDirectory(prefix="watcher-demo-") as tmp:
        root = Path(tmp)
        _kernelspec(root)
        journal = root / "journal.sqlite3"
        # the kernels the notebooks start inherit these (and the kernelspec is found through JUPYTER_PATH here)
        os.environ["WATCHER_JOURNAL"] = str(journal)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(root), settings.environ.get("JUPYTER_PATH")]))
        after = 0
        failed = False
        for name, title in NOTEBOOKS:
            os.environ["JPY_SESSION_NAME"] = str(EXAMPLES / name)  # as jupyter_server sets it: names the session
            seconds, errors = run_notebook(EXAMPLES / name)
            rows = _rows(journal, after)
            after = rows[-1].id if rows else after
            print(f"\n=== {name}: {title}\n    executed in {seconds:.1f} s")
            for error in errors:
                failed = True
                print(f"  !! {error}")
            print("\n".join(summarise(rows)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
