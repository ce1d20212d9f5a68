"""``watcher bench longchain`` end to end: offline (simulated, in a child server) and against a server URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher.bench.policies import SimParams
from watcher.bench.simulated import SIMULATED_NOTICE, SimulatedChatServer
from watcher.cli import main


@pytest.mark.slow
def test_offline_suite_prints_table_writes_rows_and_plot_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, png = tmp_path / "rows.jsonl", tmp_path / "results.png"
    argv = [
        "bench",
        "longchain",
        "--tasks",
        "6",
        "--chain-length",
        "3,5",
        "--out",
        str(out),
        "--plot",
        str(png),
        "--jobs",
        "4",
    ]
    assert main(argv) == 0
    first = capsys.readouterr().out
    lines = first.splitlines()
    assert lines[0] == SIMULATED_NOTICE
    assert [line.split()[0] for line in lines[5:9]] == ["none", "guided", "blind", "rules"]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 24 and {r["chain_length"] for r in rows} == {3, 5}
    assert png.read_bytes()[:4] == b"\x89PNG"
    # a rerun resumes: nothing new is run or written, the report is the same
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    assert len(out.read_text().splitlines()) == 24
    # more tasks: only the new ones run
    assert main([*argv[:3], "8", *argv[4:]]) == 0
    assert len(out.read_text().splitlines()) == 32
    capsys.readouterr()
    # other settings never reuse these rows: another seed runs its own tasks beside them
    assert main([*argv, "--seed", "1", "--conditions", "none"]) == 0
    report = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in report[5:6]] == [["none", "6"]] and report[6].startswith("plot:")
    assert len(out.read_text().splitlines()) == 38


@pytest.mark.slow
def test_offline_runs_reproduce(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for name in ("a", "b"):
        assert (
            main(
                [
                    "bench",
                    "longchain",
                    "--tasks",
                    "5",
                    "--chain-length",
                    "6",
                    "--out",
                    str(tmp_path / name),
                    "--jobs",
                    "5",
                ]
            )
            == 0
        )
        capsys.readouterr()
        runs.append(sorted((tmp_path / name).read_text().splitlines()))
    assert runs[0] == runs[1]
    assert Path("longchain.png").read_bytes()[:4] == b"\x89PNG", "the plot is written by default"


def test_base_url_runs_the_same_harness_against_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    """The path a real model takes: --base-url, --model, --watcher-model, through the SDK (here to the simulated server)."""
    with SimulatedChatServer(SimParams(seed=3), keep_requests=True) as server:
        argv = ["bench", "longchain", "--tasks", "4", "--chain-length", "4", "--base-url", server.base_url]
        argv += [
            "--model",
            "sim-agent",
            "--watcher-model",
            "sim-watcher",
            "--enable-watcher",
            "--jobs",
            "2",
            "--no-plot",
        ]
        assert main(argv) == 0
        models = {r.body.get("model") for r in server.requests if r.body}
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("longchain: 4 tasks") and "agent sim-agent, watcher sim-watcher (openai)" in out[0]
    assert [line.split()[0] for line in out[4:]] == ["none", "guided"]
    assert not Path("longchain.png").exists()
    assert models == {"sim-agent", "sim-watcher"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--chain-length", "four"], "--chain-length takes numbers"),
        (["--tasks", "0"], "--tasks must be at least 1"),
        (["--base-url", "http://127.0.0.1:9/v1"], "--base-url needs --model"),
        (["--follow", "1.5"], "--follow is a probability"),
        (["--conditions", "none,psychic"], "unknown condition"),
        (["--out", "/nonexistent-folder/rows.jsonl"], "the folder /nonexistent-folder does not exist"),
        (["--conditions", ","], "--conditions names no condition; choose from none, guided, blind, rules"),
        (["--conditions", ""], "--conditions names no condition"),
        (["--max-steps", "0"], "--max-steps must be at least 1, not 0"),
        (["--watcher-timeout", "-1"], "--watcher-timeout takes seconds above 0, not -1.0"),
        (["--watcher-timeout", "nan"], "--watcher-timeout takes seconds above 0, not nan"),
        (["--out", ".."], "--out .. is a folder; give a file, such as ../longchain.jsonl"),
        (["--plot", "."], "--plot . is a folder; give a file, such as longchain.png"),
        (["--plot", "rates.txt"], "--plot rates.txt: matplotlib cannot draw a .txt file; end the name in .png"),
        (["--plot", "rates"], "--plot rates: matplotlib cannot draw a file without a suffix"),
        (["--out", "/proc/rows.jsonl"], "--out /proc/rows.jsonl: cannot write there (No such file or directory)"),
    ],
)
def test_bad_flags_say_what_to_change(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "longchain", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""
    assert not Path("rates.txt").exists()  # a file made to check the path is not left behind


def test_rows_that_are_not_text_are_refused_not_appended_to(capsys: pytest.CaptureFixture[str]) -> None:
    rows = Path("rows.jsonl")  # in the scratch folder
    rows.write_bytes(b"\xff\xfe\x00binary")
    assert main(["bench", "longchain", "--tasks", "1", "--chain-length", "2", "--no-plot", "--out", str(rows)]) == 2
    captured = capsys.readouterr()
    assert "--out rows.jsonl: not rows of watcher bench (not UTF-8 text: byte 0); move it away" in captured.err
    assert captured.out == "" and rows.read_bytes() == b"\xff\xfe\x00binary"


def test_an_unreachable_server_is_reported_before_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "longchain", "--tasks", "1", "--chain-length", "2", "--base-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--model", "m"]) == 1
    captured = capsys.readouterr()
    assert "cannot reach the agent model's server at http://127.0.0.1:9/v1" in captured.err and captured.out == ""


def test_a_run_whose_every_task_failed_on_the_model_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    from watcher.testing import Reply, StubOpenAIServer

    with StubOpenAIServer(*[Reply.error(400, "invalid_request_error", "model 'm' is not loaded")] * 20) as stub:
        argv = [
            "bench",
            "longchain",
            "--tasks",
            "2",
            "--chain-length",
            "2",
            "--base-url",
            stub.base_url,
            "--model",
            "m",
        ]
        assert main([*argv, "--no-plot"]) == 1
    captured = capsys.readouterr()
    assert "2 tasks ended because the agent model failed" in captured.out  # the report still says what happened
    assert "every one of the 2 tasks failed on the agent model" in captured.err and "not loaded" in captured.err


def test_a_watcher_model_the_server_does_not_have_is_reported_before_any_task(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from watcher.testing import StubOpenAIServer

    with StubOpenAIServer(models=["agent-m", "watcher-m"]) as stub:
        argv = ["bench", "longchain", "--tasks", "2", "--chain-length", "2", "--base-url", stub.base_url]
        argv += ["--model", "agent-m", "--watcher-model", "wacher-m", "--enable-watcher", "--no-plot"]
        assert main(argv) == 2
        assert stub.requests == [] and stub.lookups  # one models request, no task started
    captured = capsys.readouterr()
    assert "has no model 'wacher-m'" in captured.err and "watcher-m" in captured.err and captured.out == ""
