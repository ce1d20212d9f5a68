"""Execute and monitor one run of the agent CLI: stream → observations → watchers, live.

Each stdout line is appended to the spawn's ``stream.jsonl``, turned into observations for the
attached watchers (through the runtime, so they are journaled and evaluated like any parent's),
and into progress. For a live CLI the end of each turn is a checkpoint: the watchers settle, and
stdin is closed (the CLI exits) only when every message sent has had its turn — an interjection
made at the checkpoint keeps the session going.

``at_boundary`` (a fleet's task host) is awaited at the live CLI's iteration boundaries: each model
response that asked for tools, and each turn's end. Time spent there (a paused task) counts
against neither the idle nor the total timeout.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.agents import Boundary
from watcher.core.redact import redact
from watcher.runtime.hub import Runtime
from watcher.runtime.session import EndState
from watcher.spawn._adapter import Denial, Final
from watcher.spawn._scrub import Scrubber, secret_values
from watcher.spawn.events import LLMCompleted, LLMStarted
from watcher.spawn.manifest import SandboxManifest
from watcher.spawn.monitor import ProgressState
from watcher.spawn.process import AgentProcess
from watcher.spawn.provision import Sandbox
from watcher.spawn.session import SpawnSession

__all__ = ["RunOutcome", "execute"]

_PROGRESS_EVERY_S = 1.0


@dataclass(slots=True)
class RunOutcome:
    """How one CLI process ended."""

    status: EndState  # completed, failed, timeout, interrupted or crashed
    exit_code: int | None
    cli_session: str = ""
    summary: str = ""
    cost_usd: float = 0.0
    denials: list[Denial] = field(default_factory=list)
    detail: str = ""
    spent_s: float = 0.0  # the spawn's time against its total timeout, this run included (pauses are not)


async def execute(
    *,
    runtime: Runtime,
    session: SpawnSession,
    sandbox: Sandbox,
    manifest: SandboxManifest,
    executable: str,
    prompt: str,
    resume: str | None,
    parent_env: Mapping[str, str],
    progress: ProgressState,
    attempt: int,
    on_progress: Callable[[ProgressState], None] | None = None,
    at_boundary: Callable[[Boundary], Awaitable[None]] | None = None,
    spent_s: float = 0.0,
) -> RunOutcome:
    """Run the CLI once (fresh, or resuming ``resume`` with ``prompt``) until it exits or times out.

    ``spent_s``: what the spawn's earlier runs used of the total timeout, which bounds the whole spawn.
    """
    adapter = session.adapter
    env = adapter.environment(sandbox, manifest, parent_env)
    adapter.prepare(sandbox, manifest, env)
    adapter.start_run()
    argv = adapter.argv(executable, sandbox, manifest, prompt, resume=resume)
    scrub = Scrubber(secret_values(env, manifest.secrets))
    proc = AgentProcess(
        argv, cwd=sandbox.worktree, env=env, stderr_log=sandbox.directory / "stderr.log", scrub=scrub.bytes
    )
    await proc.start()
    proc.started -= spent_s  # the total timeout counts from the spawn's first run, not from this one
    session.attach(proc)
    progress.phase = "execute" if attempt == 0 else f"resume {attempt}"
    runtime.publish(
        LLMStarted(
            session=session.name,
            spawn_id=sandbox.id,
            agent=adapter.name,
            pid=proc.pid,
            attempt=attempt,
            resume=resume or "",
            argv=tuple(redact(a) for a in argv),
        )
    )
    for message in adapter.stdin_lines(prompt):
        if await proc.write(message):
            session.turns_sent += 1
    if not adapter.live:
        proc.close_stdin()  # Codex reads stdin to its end before it starts
    outcome = RunOutcome(status=EndState.CRASHED, exit_code=None, cli_session=resume or "")
    final: Final | None = None
    finished_turns = 0
    last_progress = 0.0
    idle_s, total_s = manifest.timeouts

    async def boundary(*, mid_turn: bool) -> None:
        if at_boundary is None:
            return
        session.mid_turn = mid_turn
        entered = time.monotonic()
        await at_boundary(progress.boundary())
        now = time.monotonic()  # a held boundary is not the CLI idling: neither timeout counts it
        proc.last_activity, proc.started = now, proc.started + (now - entered)

    def take(record: dict[str, Any]) -> tuple[Final | None, bool]:
        """One record's observations, denials and end; (its final, whether the files changed)."""
        outcome.cli_session = adapter.session_id(record) or outcome.cli_session
        changed = False
        for obs in adapter.observations(record):
            runtime.observe(session.name, obs)
            changed = progress.update(obs) or changed
        outcome.denials += adapter.denials(record)
        progress.count(adapter.usage(record))
        ended = adapter.final(record)
        if ended is not None:
            outcome.denials += ended.denials
            progress.cost_usd = max(progress.cost_usd, ended.cost_usd)
        return ended, changed

    # line-buffered: a person tailing the stream sees each line as the CLI writes it
    with (sandbox.directory / "stream.jsonl").open("a", encoding="utf-8", buffering=1) as log:
        async for raw in proc.lines(idle_s, total_s):
            line = scrub(raw)
            log.write(line + "\n")
            progress.output_lines += 1
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a CLI's plain output line: counted, not judged
            if not isinstance(record, dict):
                continue
            taken = adapter.taken(record)
            if taken is not None:  # the CLI's echo of a message it took: an acknowledgment, not an observation
                session.took(taken)
                continue
            ended, changed = take(record)
            stepped = adapter.boundary(record)
            for extra in adapter.poll():
                changed = take(extra)[1] or changed
            final = ended or final
            progress.interjections = len(session.delivered)
            now = time.monotonic()
            if changed or now - last_progress > _PROGRESS_EVERY_S:
                last_progress = now
                runtime.publish(progress.snapshot(session.name))
                if on_progress is not None:
                    on_progress(progress)
            if stepped:
                await boundary(mid_turn=True)
            if ended is not None and ended.turn_only:
                finished_turns += 1
                await runtime.settle()  # the watchers judge the turn before the session may end
                await boundary(mid_turn=False)
                if finished_turns >= session.turns_sent and not session.queued:
                    proc.close_stdin()
    code = await proc.wait()
    outcome.spent_s = time.monotonic() - proc.started
    for extra in adapter.poll():  # what the CLI wrote to its side files last
        take(extra)
    for obs in adapter.end_run():  # what the reader still held (text streamed in deltas)
        runtime.observe(session.name, obs)
        progress.update(obs)
    session.detach()
    outcome.exit_code = code
    if final is not None:
        outcome.summary, outcome.cost_usd = final.summary, final.cost_usd
    if proc.stop_reason:
        outcome.status = EndState.TIMEOUT if "timeout" in proc.stop_reason else EndState.INTERRUPTED
        outcome.detail = proc.stop_reason
        said = _last_error_line(sandbox.directory / "stderr.log", errors_only=True)
        if said and outcome.status == EndState.TIMEOUT:  # such as a model server failing every retry
            outcome.detail += f"; the CLI last said: {said}"
    elif final is None:
        said = _last_error_line(sandbox.directory / "stderr.log")
        outcome.status = EndState.CRASHED
        outcome.detail = f"the CLI exited with status {code} without a final result" + (
            f"; it said: {said}" if said else ""
        )
    else:
        done = final.status == "success"  # the CLI's own word for a run that finished
        outcome.status = EndState.COMPLETED if done else EndState.FAILED
        outcome.detail = "" if done else final.status
    progress.permission_errors += [d.command or d.tool for d in outcome.denials]
    runtime.publish(
        LLMCompleted(
            session=session.name,
            spawn_id=sandbox.id,
            status=outcome.status,
            exit_code=code,
            cli_session=outcome.cli_session,
            summary=redact(outcome.summary)[:2000],
            cost_usd=outcome.cost_usd,
            detail=outcome.detail,
        )
    )
    return outcome


_ERROR = re.compile(r"error|fail|retry|refused|denied|timed out", re.I)


def _last_error_line(log: Path, limit: int = 300, *, errors_only: bool = False) -> str:
    """The CLI's last non-blank stderr line (its own reason, such as a missing key), cut to ``limit``.

    ``errors_only``: the last line that reads as an error or a retry, if any ('' otherwise).
    """
    try:
        with log.open("rb") as f:
            f.seek(max(0, log.stat().st_size - 8192))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if errors_only:
        lines = [line for line in lines if _ERROR.search(line) and not line.startswith("at ")]
    if not lines:
        return ""
    line = redact(lines[-1])  # the log is scrubbed of secret values already; redact catches key shapes too
    return line if len(line) <= limit else line[: limit - 1] + "…"
