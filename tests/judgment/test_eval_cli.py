"""``watcher eval`` as a user runs it (the console script's ``main``), the real ``openai`` SDK, and a stub scripted to be right on a known subset.

Every figure is checked against a hand count. The security set (``data/security_cases.jsonl``,
written for these tests) runs as 10 runs per evaluator: V1 and V2 (Python) as a write and a
cell, V3 (JavaScript) as a write, V4 (shell) as a command, B1 (Python) as a write and a cell,
B2 (JavaScript) as a write, B3 (shell) as a command. The scripted model:

* V1: interjects at the labelled line 4 (found, located) — 2 runs;
* V2: interjects at line 9 (found, not located) — 2 runs;
* V3: continues (missed); V4: interjects without a line (found; a command is not located);
* B1, B3: continue (quiet); B2: interjects (a false alarm).

So the model finds 5 of 6, misses 1, raises 1 false alarm in 4 benign runs and locates 2 of the
4 found runs that can be located. The rules find all 6, raise none, and locate all 5. Wilson 95 %
for 5/6: p = 0.8333, z² = 3.8415; centre (p + z²/12) = 1.1535, half-width 1.96·√(p(1-p)/6 + z²/144)
= 0.4375, scale 1 + z²/6 = 1.6402, so [0.436, 0.970], printed [44-97].
Each reply reports 1,000 input and 50 output tokens on claude-haiku-4-5 ($1 and $5 a million):
$0.00125 a run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from watcher.cli import main
from watcher.testing import RecordedRequest, Reply, StubOpenAIServer

DATA = Path(__file__).parent / "data"
SECURITY = DATA / "security_cases.jsonl"
LOOPS = DATA / "loop_cases.jsonl"
USAGE = {"input_tokens": 1000, "output_tokens": 50}
MODEL = "claude-haiku-4-5"


def interject(location: str | None = None) -> str:
    where = f"location: {location}\n" if location else ""
    return f"[INTERJECT]\nurgent: false\nseverity: warning\n{where}content: a problem here\n[/INTERJECT]"


CONTINUE = "[CONTINUE]\nnothing to report\n[/CONTINUE]"
# marker in the case's code -> the scripted answer
SECURITY_SCRIPT = {
    "find_user_v1": interject("app/users.py:4"),
    "list_dir_v2": interject("tools/listing.py:9"),
    "calc_v3": CONTINUE,
    "install_v4": interject(),
    "add_b1": CONTINUE,
    "total_b2": interject("sum.js:1"),
    "build_b3": CONTINUE,
}


def activity(request: RecordedRequest) -> str:
    return str((request.body or {})["messages"][-1]["content"])


def security_answer(request: RecordedRequest) -> Reply:
    text = activity(request)
    (marker,) = [m for m in SECURITY_SCRIPT if m in text]
    return Reply.text(SECURITY_SCRIPT[marker], usage=USAGE)


def loop_answer(request: RecordedRequest) -> Reply:
    text = activity(request)
    if "early_l3" in text:
        return Reply.text(interject(), usage=USAGE)  # cries wolf before the loop
    if "loop_l1" in text and text.count("FAILED tests/test_loop_l1.py") >= 2:
        return Reply.text(interject(), usage=USAGE)
    return Reply.text(CONTINUE, usage=USAGE)


@pytest.fixture(autouse=True)
def no_openai_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "WATCHER_OPENAI_BASE_URL", "WATCHER_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as server:
        yield server


class Done:
    """What a run of the command left: exit status, stdout and stderr."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def watcher_eval(*args: str | Path, cwd: Path) -> Done:
    """``watcher eval ARGS`` run in-process (``watcher.cli.main``, as the console script does) in ``cwd``."""
    saved = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["eval", *map(str, args)])
    finally:
        os.chdir(saved)
    return Done(status, out.getvalue(), err.getvalue())


def watcher_eval_process(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m watcher eval ARGS`` as a separate process, with no OpenAI settings in its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WATCHER_OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "watcher", "eval", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def rows_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def table_line(stdout: str, start: str) -> list[str]:
    (line,) = [line for line in stdout.splitlines() if line.startswith(start)]
    return line.split()


def test_security_figures_match_the_hand_count(stub: StubOpenAIServer, tmp_path: Path) -> None:
    stub.default_reply = None
    stub.push(*[Reply.dynamic(security_answer)] * 10)
    args = ("--role", "security", "--set", SECURITY, "--evaluator", "openai", "--base-url", stub.base_url)
    done = watcher_eval(*args, "--model", MODEL, "--jobs", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    llm = f"openai:{MODEL}"
    # evaluator, form, runs, found, missed, false alarms, located, tokens, cost
    assert table_line(out, "rules")[:15] == (
        [
            "rules",
            "all",
            "10",
            "6/6",
            "100%",
            "[61-100]",
            "0",
            "0/4",
            "0%",
            "[0-49]",
            "5/5",
            "100%",
            "[57-100]",
            "0",
            "0.00000",
        ]
    )
    assert table_line(out, llm)[:15] == (
        f"{llm} all 10 5/6 83% [44-97] 1 1/4 25% [5-70] 2/4 50% [15-85] 1050 0.00125".split()
    )
    lines = out.splitlines()
    llm_at = next(i for i, line in enumerate(lines) if line.startswith(llm))
    forms = {line.split()[0]: line.split()[1:12] for line in lines[llm_at + 1 : llm_at + 4]}
    assert forms["write"] == ["5", "2/3", "67%", "[21-94]", "1", "1/2", "50%", "[9-91]", "1/2", "50%", "[9-91]"]
    assert forms["cell"] == ["3", "2/2", "100%", "[34-100]", "0", "0/1", "0%", "[0-79]", "1/2", "50%", "[9-91]"]
    assert forms["bash"][:9] == ["2", "1/1", "100%", "[21-100]", "0", "0/1", "0%", "[0-79]", "-"]  # a command: no line

    rows = rows_of(tmp_path / "eval-security.jsonl")
    assert len(rows) == 20
    outcomes = {(r["case"], r["form"]): (r["outcome"], r["located"]) for r in rows if r["evaluator"] == llm}
    assert outcomes == {
        ("V1", "write"): ("found", True),
        ("V1", "cell"): ("found", True),
        ("V2", "write"): ("found", False),
        ("V2", "cell"): ("found", False),
        ("V3", "write"): ("missed", None),
        ("V4", "bash"): ("found", None),
        ("B1", "write"): ("quiet", None),
        ("B1", "cell"): ("quiet", None),
        ("B2", "write"): ("false_alarm", None),
        ("B3", "bash"): ("quiet", None),
    }
    for row in rows:
        if row["evaluator"] == llm:
            assert (row["input_tokens"], row["output_tokens"], row["evaluations"]) == (1000, 50, 1)
            assert row["cost_usd"] == pytest.approx(0.00125) and row["error"] is None
    assert (tmp_path / "eval-security.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "plot: eval-security.png" in out and "rows: eval-security.jsonl" in out
    # the model was shown the code the reading way: numbered as the file has it
    v1 = next(activity(r) for r in stub.requests if "find_user_v1" in activity(r) and "writes users.py" in activity(r))
    assert "4 |     return conn.execute(f\"SELECT * FROM users WHERE name = '{name}'\")" in v1


def test_an_interrupted_run_resumes_with_only_the_missing_runs(stub: StubOpenAIServer, tmp_path: Path) -> None:
    stub.push(*[Reply.dynamic(security_answer)] * 10)
    args = ("--role", "security", "--set", SECURITY, "--evaluator", "openai", "--base-url", stub.base_url)
    first = watcher_eval(*args, "--model", MODEL, "--no-plot", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    rows_file = tmp_path / "eval-security.jsonl"
    lines = rows_file.read_text().splitlines()
    llm_lines = [line for line in lines if json.loads(line)["evaluator"] != "rules"]
    kept = [line for line in lines if line not in llm_lines[:3]]  # as if three model runs never finished
    broken = json.loads(llm_lines[3])
    broken["error"] = "openai: rate limited (HTTP 429)"  # and one failed: it runs again
    kept[kept.index(llm_lines[3])] = json.dumps(broken)
    rows_file.write_text("\n".join(kept) + "\n")
    asked = len(stub.requests)
    stub.push(*[Reply.dynamic(security_answer)] * 4)
    again = watcher_eval(*args, "--model", MODEL, "--no-plot", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(stub.requests) - asked == 4
    assert len(rows_of(rows_file)) == 20 and not any(r["error"] for r in rows_of(rows_file))
    assert table_line(again.stdout, f"openai:{MODEL}")[:6] == table_line(first.stdout, f"openai:{MODEL}")[:6]


def test_loop_figures_match_the_hand_count(stub: StubOpenAIServer, tmp_path: Path) -> None:
    stub.default_reply = Reply.dynamic(loop_answer)
    args = ("--role", "stuck", "--set", LOOPS, "--evaluator", "openai", "--base-url", stub.base_url)
    done = watcher_eval(*args, "--model", MODEL, "--no-plot", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # L1 stuck from 4 and found by both; L2 quiet for both; L3 stuck from 8: found by the rules,
    # alarmed early by the model
    assert table_line(done.stdout, "rules")[:11] == [
        "rules",
        "all",
        "3",
        "2/2",
        "100%",
        "[34-100]",
        "0",
        "0/1",
        "0%",
        "[0-79]",
        "0",
    ]
    assert table_line(done.stdout, f"openai:{MODEL}")[:11] == (
        f"openai:{MODEL} all 3 1/2 50% [9-91] 0 0/1 0% [0-79] 1".split()
    )
    rows = {(r["case"], r["evaluator"]): r for r in rows_of(tmp_path / "eval-stuck.jsonl")}
    l1, l3 = rows[("L1", f"openai:{MODEL}")], rows[("L3", f"openai:{MODEL}")]
    assert l1["outcome"] == "found" and isinstance(l1["first_index"], int) and l1["first_index"] >= 4
    assert l3["outcome"] == "early" and isinstance(l3["first_index"], int) and l3["first_index"] < 8
    for row in rows.values():
        if row["evaluator"] != "rules":
            assert row["input_tokens"] == 1000 * row["evaluations"]


def test_without_a_server_it_refuses_rather_than_simulate(tmp_path: Path) -> None:
    done = watcher_eval_process(
        "--role", "security", "--set", SECURITY, "--evaluator", "openai", "--model", "m", cwd=tmp_path
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "needs --base-url" in done.stderr and "never simulates" in done.stderr
    env_key = watcher_eval_process("--role", "security", "--set", SECURITY, "--evaluator", "anthropic", cwd=tmp_path)
    assert env_key.returncode == 2 or "ANTHROPIC_API_KEY" in os.environ
    assert not list(tmp_path.iterdir()), "nothing written"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x", "label": "maybe", "code": "x"}', "label is one of vulnerable, benign"),
        ('{"id": "x", "label": "stuck", "transcript": [{"kind": "done"}]}', "needs stuck_from"),
        ('{"id": "x", "label": "benign"}', "needs its code"),
        ("not json", "not a labelled case"),
        ('{"label": "benign", "code": "x"}', "it has no 'id' field"),
        (
            '{"id": "x", "label": "vulnerable", "code": "x", "lines": "notalist"}',
            "lines must be a list of line numbers",
        ),
        (
            '{"id": "x", "label": "vulnerable", "code": "x", "lines": ["4"]}',
            'line numbers, such as [4] or [4, 5], not ["4"]',
        ),
        (
            '{"id": "x", "label": "vulnerable", "code": "a\\nb", "lines": [2, 999]}',
            "lines [999] are outside the code, which has 2 lines",
        ),
        (
            '{"id": "x", "label": "vulnerable", "code": "x", "lines": [0]}',
            "lines [0] are outside the code, which has 1 line (numbered from 1)",
        ),
    ],
)
def test_a_bad_case_is_named_with_its_line(tmp_path: Path, line: str, message: str) -> None:
    bad = tmp_path / "set.jsonl"
    bad.write_text('{"id": "ok", "label": "benign", "code": "x = 1"}\n' + line + "\n")
    done = watcher_eval("--role", "security", "--set", bad, "--evaluator", "rules", "--no-plot", cwd=tmp_path)
    assert done.returncode == 2 and "set.jsonl, line 2: not a labelled case" in done.stderr
    assert message in done.stderr


def test_a_server_that_does_not_answer_fails_before_any_run(tmp_path: Path) -> None:
    with StubOpenAIServer() as dead:
        url = dead.base_url
    done = watcher_eval(
        "--role",
        "security",
        "--set",
        SECURITY,
        "--evaluator",
        "openai",
        "--base-url",
        url,
        "--model",
        "m",
        cwd=tmp_path,
    )
    assert done.returncode == 1 and "cannot reach openai:m's server" in done.stderr  # a failed run, not bad input
    assert not list(tmp_path.iterdir()), "no rows, no plot"


def test_a_set_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    binary = tmp_path / "set.jsonl"
    binary.write_bytes(b"\xff\xfe{\x00")
    done = watcher_eval("--role", "security", "--set", binary, "--evaluator", "rules", "--no-plot", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert f"--set {binary}: not UTF-8 text (byte 0); give a labelled JSONL file saved as UTF-8" in done.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--out", "."], "--out . is a folder; give a file, such as eval-security.jsonl"),
        (["--plot", "."], "--plot . is a folder; give a file, such as eval-security.png"),
        (["--plot", "rates.txt"], "--plot rates.txt: matplotlib cannot draw a .txt file; end the name in .png"),
        (["--plot", "rates"], "--plot rates: matplotlib cannot draw a file without a suffix"),
    ],
)
def test_out_and_plot_are_refused_before_the_run(tmp_path: Path, flags: list[str], message: str) -> None:
    done = watcher_eval("--role", "security", "--set", SECURITY, "--evaluator", "rules", *flags, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and done.stdout == ""
    assert not list(tmp_path.iterdir()), "nothing ran: no rows written"


@pytest.mark.parametrize(
    ("earlier", "message"),
    [
        (b"\xff\xfe\x00\x01", "rows.jsonl: not rows of watcher eval (not UTF-8 text: byte 0); move it away"),
        (b"[1, 2]\n", "rows.jsonl, line 1: not a row of watcher eval (a JSON list, not an object); move it away"),
        (
            b'{"case": "a", "form": "write", "evaluator": "rules", "found": "yes"}\n',
            "rows.jsonl, line 1: not a row of watcher eval (it has no 'positive' field); move it away",
        ),
        (b"{not json\n", "rows.jsonl, line 1: not a row of watcher eval (Expecting property name"),
    ],
    ids=["bytes", "list", "fields", "json"],
)
def test_earlier_rows_the_report_cannot_read_are_refused_before_the_run(
    stub: StubOpenAIServer, tmp_path: Path, earlier: bytes, message: str
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(earlier)
    args = ("--role", "security", "--set", SECURITY, "--evaluator", "openai", "--base-url", stub.base_url)
    done = watcher_eval(*args, "--model", MODEL, "--no-plot", "--out", rows, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and done.stdout == ""
    assert not [r for r in stub.requests if r.body], "no model was asked: nothing paid for"
    assert rows.read_bytes() == earlier


def test_a_row_with_a_field_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    first = watcher_eval("--role", "security", "--set", SECURITY, "--evaluator", "rules", "--no-plot", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    rows = tmp_path / "eval-security.jsonl"
    row = json.loads(rows.read_text().splitlines()[0])
    rows.write_text(json.dumps({**row, "positive": "yes"}) + "\n")
    again = watcher_eval("--role", "security", "--set", SECURITY, "--evaluator", "rules", "--no-plot", cwd=tmp_path)
    assert again.returncode == 2
    assert "line 1: not a row of watcher eval (its 'positive' is \"yes\", not true or false)" in again.stderr


def test_openai_without_a_model_names_evals_own_flag(stub: StubOpenAIServer, tmp_path: Path) -> None:
    args = ("--role", "security", "--set", SECURITY, "--evaluator", "openai", "--base-url", stub.base_url)
    done = watcher_eval(*args, "--no-plot", cwd=tmp_path)
    assert done.returncode == 2 and "watcher eval --evaluator openai needs --model" in done.stderr
    assert "--watcher-model" not in done.stderr, "eval has no such flag"
