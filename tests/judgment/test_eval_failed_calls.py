"""``watcher eval`` never counts a failed model call as a judgement: not as a miss, not as a quiet run.

The real ``openai`` SDK against the stub server, through the console script's ``main``. The set is
``data/security_cases.jsonl`` (10 runs per evaluator: 6 with something to find, 4 without).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from watcher.cli import main
from watcher.core.errors import ConfigurationError
from watcher.judgment import read_cases
from watcher.testing import RecordedRequest, Reply, StubOpenAIServer

SECURITY = Path(__file__).parent / "data" / "security_cases.jsonl"
FAILED = Reply.error(500, "server_error", "the model crashed", should_retry=False)
INTERJECT = "[INTERJECT]\nurgent: false\ncontent: a problem here\n[/INTERJECT]"
CONTINUE = "[CONTINUE]\nnothing to report\n[/CONTINUE]"


@pytest.fixture(autouse=True)
def no_openai_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "WATCHER_OPENAI_BASE_URL", "WATCHER_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as server:
        yield server


def watcher_eval(stub: StubOpenAIServer, cwd: Path) -> tuple[int, str, str]:
    """``watcher eval`` of the security set against ``stub``, in-process, in ``cwd``: status, stdout, stderr."""
    args = ["eval", "--role", "security", "--set", str(SECURITY), "--evaluator", "openai"]
    args += ["--base-url", stub.base_url, "--model", "m", "--no-plot"]
    saved = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(args)
    finally:
        os.chdir(saved)
    return status, out.getvalue(), err.getvalue()


def llm_line(stdout: str) -> list[str]:
    (line,) = [line for line in stdout.splitlines() if line.startswith("openai:m ")]
    return line.split()


def test_a_server_failing_every_call_judges_nothing(stub: StubOpenAIServer, tmp_path: Path) -> None:
    stub.default_reply = FAILED
    status, out, err = watcher_eval(stub, tmp_path)
    assert status == 1
    # runs, found, missed, false alarms: no rate at all, not "0/6 found, 6 missed, 0/4 false alarms"
    assert llm_line(out)[1:6] == ["all", "10", "-", "0", "-"]
    assert llm_line(out)[-1] == "10"  # errors
    assert "10 of 20 runs had a failed model call; 10 of them judged nothing" in err
    assert "HTTP 500" in err and "the model crashed" in err
    rows = [json.loads(line) for line in (tmp_path / "eval-security.jsonl").read_text().splitlines()]
    assert {r["outcome"] for r in rows if r["evaluator"] == "openai:m"} == {"error"}


def test_failed_runs_are_left_out_of_the_rates(stub: StubOpenAIServer, tmp_path: Path) -> None:
    def answer(request: RecordedRequest) -> Reply:
        text = str((request.body or {})["messages"][-1]["content"])
        if "find_user_v1" in text:
            return FAILED  # V1, as a write and as a cell: two positive runs that judged nothing
        return Reply.text(INTERJECT if any(m in text for m in ("list_dir_v2", "install_v4")) else CONTINUE)

    stub.default_reply = Reply.dynamic(answer)
    status, out, err = watcher_eval(stub, tmp_path)
    assert status == 1
    # V2 (2 runs) and V4 found, V3 missed: 3 of the 4 judged positive runs; the 4 benign runs quiet
    assert llm_line(out)[1:10] == ["all", "10", "3/4", "75%", "[30-95]", "1", "0/4", "0%", "[0-49]"]
    assert "2 of 20 runs had a failed model call" in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--timeout", "0"), ("--timeout", "-5"), ("--timeout", "nan"), ("--timeout", "inf"), ("--rate", "nan")],
)
def test_a_timeout_or_rate_that_cannot_work_is_refused_before_any_call(
    stub: StubOpenAIServer, tmp_path: Path, flag: str, value: str
) -> None:
    args = ["eval", "--role", "security", "--set", str(SECURITY), "--evaluator", "openai"]
    args += ["--base-url", stub.base_url, "--model", "m", "--no-plot", flag, value]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(args)
    assert status == 2
    assert f"watcher: error: {flag} takes" in err.getvalue() and f"not {value}" in err.getvalue()
    assert stub.requests == []


SETS = {
    "stuck_from past the end": (
        '{"id": "a", "label": "stuck", "stuck_from": 9, "transcript": [{"kind": "done"}]}',
        "stuck_from 9 is past the transcript's end (1 observations)",
    ),
    "forms as a string": (
        '{"id": "a", "label": "vulnerable", "code": "x", "forms": "write"}',
        'forms must be a list such as ["write", "cell"], not "write"',
    ),
}


@pytest.mark.parametrize(("line", "message"), SETS.values(), ids=SETS.keys())
def test_a_case_that_cannot_be_scored_is_refused_with_its_line(tmp_path: Path, line: str, message: str) -> None:
    cases = tmp_path / "set.jsonl"
    cases.write_text(line + "\n")
    with pytest.raises(ConfigurationError, match=re.escape(f"--set {cases}, line 1: not a labelled case: {message}")):
        read_cases(cases)


def test_a_device_as_the_set_is_refused_rather_than_read_forever() -> None:
    with pytest.raises(ConfigurationError, match="is a device, not a file"):
        read_cases(Path("/dev/zero"))


def test_failed_calls_are_summed_up_once_not_logged_per_evaluation(stub: StubOpenAIServer, tmp_path: Path) -> None:
    stub.default_reply = FAILED
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WATCHER_OPENAI_"))}
    args = ["eval", "--role", "security", "--set", str(SECURITY), "--evaluator", "openai", "--limit", "2"]
    args += ["--base-url", stub.base_url, "--model", "m", "--no-plot"]
    done = subprocess.run(
        [sys.executable, "-m", "watcher", *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert done.returncode == 1
    assert "evaluator failed" not in done.stderr
    assert (
        done.stderr.count("HTTP 500") == 1 and "4 of 8 runs had a failed model call" in done.stderr
    )  # V1, V2: 4 forms, twice
