"""Fault class 5: no evaluator can freeze the run it watches or vanish from the journal."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.faults, pytest.mark.slow]

RUN = textwrap.dedent(
    """
    import asyncio, sys, time
    from watcher.agents import agent
    from watcher.core.evaluation import EvaluationResult
    from watcher.evaluators.callable import CallableEvaluator
    from watcher.roles import spec_for_role
    from watcher.runtime import Journal
    from watcher.testing import Reply, StubAnthropicServer
    from dataclasses import replace

    def frozen(request):
        time.sleep(3600)  # a synchronous judge that never answers

    class Malformed:
        name = "malformed"

        async def evaluate(self, request):
            return EvaluationResult("", None)  # decision=None

    judge = CallableEvaluator(frozen) if sys.argv[2] == "frozen" else Malformed()
    spec = spec_for_role("errors", name="judge")
    spec = replace(spec, caps=replace(spec.caps, timeout_s=1.0))

    async def main():
        with StubAnthropicServer(Reply.tool_use("lookup", {"q": "a"}), Reply.text("done")) as stub:
            def lookup(q: str) -> str:
                '''Look q up.

                Args:
                    q: what to look up
                '''
                return "found"
            run = agent("Look a up.", base_url=stub.base_url, api_key="k", max_retries=0, tools=[lookup],
                        watchers=[(spec, judge)], journal=Journal(sys.argv[1]), name="r")
            result = await run
            print(result.status, flush=True)

    asyncio.run(main())
    """
)


@pytest.mark.parametrize(
    ("judge", "error"),
    [("frozen", "timed out after 1s"), ("malformed", "decision is None")],
)
def test_a_broken_evaluator_leaves_the_run_complete_and_its_error_journaled(
    tmp_path: Path, judge: str, error: str
) -> None:
    path = tmp_path / "journal.sqlite3"
    done = subprocess.run([sys.executable, "-c", RUN, str(path), judge], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "completed"
    from watcher.runtime import Journal

    with Journal(path, create=False) as journal:
        evaluations = [r.payload for r in journal.read() if r.kind == "evaluation"]
    assert evaluations, "the evaluation is journaled, not lost"
    assert all(e["decision"] == "continue" for e in evaluations)
    assert any(error in (e["error"] or "") for e in evaluations), [e["error"] for e in evaluations]
