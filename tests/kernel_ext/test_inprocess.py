"""The extension in an in-process IPython shell: hooks, cell observations, magics, unloading."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from watcher.kernel_ext import current, extension, outbox
from watcher.kernel_ext.cells import STDOUT_SAMPLE_CHARS
from watcher.kernel_ext.extension import KernelExtension
from watcher.runtime.journal import Journal


def ext() -> KernelExtension:
    found = current()
    assert found is not None
    return found


def observed(kind: str = "observation") -> list[dict[str, Any]]:
    """The payloads of ``kind`` events journaled so far, once the watchers settled."""
    e = ext()
    assert e.settle()
    e.thread.journal.flush()
    return [row.payload for row in e.thread.journal.read(0, limit=10_000) if row.kind == kind]


def cells() -> list[dict[str, Any]]:
    return [p["observation"] for p in observed() if p["observation"]["kind"] == "cell_executed"]


def test_hooks_are_registered_once_and_removed_on_unload(shell: InteractiveShell) -> None:
    e = ext()
    assert shell.events.callbacks["post_run_cell"].count(e.post_run_cell) == 1
    shell.extension_manager.load_extension("watcher")  # a second %load_ext does nothing
    shell.run_line_magic("reload_ext", "watcher")  # unload + load: a fresh extension
    fresh = ext()
    assert fresh is not e and not e.thread.alive
    assert e.post_run_cell not in shell.events.callbacks["post_run_cell"]
    assert shell.events.callbacks["post_run_cell"].count(fresh.post_run_cell) == 1
    assert shell.events.callbacks["pre_run_cell"].count(fresh.pre_run_cell) == 1
    shell.run_line_magic("unload_ext", "watcher")
    assert current() is None
    assert fresh.post_run_cell not in shell.events.callbacks["post_run_cell"]
    assert "watchers" not in shell.magics_manager.magics["line"]
    assert "watch" not in shell.magics_manager.magics["cell"]
    shell.run_line_magic("load_ext", "watcher")  # the fixture unloads it again


def test_unloading_judges_the_last_cells_still_waiting_for_their_batch(
    shell: InteractiveShell, journal_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the end of the notebook session is a breakpoint: cells run just before %unload_ext (or a
    # kernel shutdown) are still in the outbox, and a loop in them is judged all the same
    monkeypatch.setattr(outbox, "INTERVAL", 60.0)  # the batch after the first waits a minute
    shell.run_line_magic("watch", "errors")
    for i in range(3):
        shell.run_cell("x = 1\n{}['k']", cell_id=f"end{i}")
    shell.run_line_magic("unload_ext", "watcher")
    with Journal(journal_path, create=False) as journal:
        rows = journal.read(0, limit=10_000)
    kinds = [row.payload["observation"]["kind"] for row in rows if row.kind == "observation"]
    assert kinds == ["cell_executed"] * 3
    [said] = [row.payload["interjection"] for row in rows if row.kind == "interjection"]
    assert "KeyError has now been raised 3 times" in said["content"]
    ended = [row for row in rows if row.kind == "session" and row.payload["status"] == "ended"]
    assert len(ended) == 1 and ended[0].id > max(row.id for row in rows if row.kind == "evaluation")
    shell.run_line_magic("load_ext", "watcher")  # the fixture unloads it again


def test_unloading_during_a_slow_evaluation_ends_the_session_within_seconds(
    shell: InteractiveShell, journal_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from watcher.testing import Reply, StubAnthropicServer

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with StubAnthropicServer(default_reply=Reply.stall(30)) as stub:
        shell.run_line_magic("watch", f"errors --evaluator anthropic --base-url {stub.root_url} --model claude-test")
        for i in range(3):
            shell.run_cell("1/0", cell_id=f"slow{i}")
        started = time.monotonic()
        shell.run_line_magic("unload_ext", "watcher")  # a frontend kills a kernel that takes longer to exit
        took = time.monotonic() - started
    assert took < extension.CLOSE_BOUND_S + 5, took
    with Journal(journal_path, create=False) as journal:
        rows = journal.read(0, limit=10_000)
    assert any(row.kind == "session" and row.payload["status"] == "ended" for row in rows)
    for name in ("watcher_pending", "watcher_accept", "watcher_dismiss", "watchers"):  # every magic is gone
        assert name not in shell.magics_manager.magics["line"], name
    shell.run_line_magic("load_ext", "watcher")  # the fixture unloads it again


def test_a_key_typed_as_the_model_is_never_shown(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    from watcher.widgets import PanelState

    key = "sk-ant-api03-" + "Q" * 40
    state = PanelState("m1", role="errors", evaluator=f"anthropic:{key}")
    assert key not in state.evaluator and key not in state.text() and key not in str(state.view())


def test_a_cell_becomes_an_observation_with_id_count_stdout_and_duration(shell: InteractiveShell) -> None:
    shell.run_cell("print('hello')\nx = 41 + 1", store_history=True, cell_id="cell-a")
    [cell] = cells()
    assert cell["source"] == "print('hello')\nx = 41 + 1"
    assert cell["cell_id"] == "cell-a"
    assert cell["execution_count"] == 1
    assert cell["stdout"] == "hello\n"
    assert cell["error"] is None
    assert 0 <= cell["duration_s"] < 5


def test_the_error_line_is_the_line_within_the_cell(shell: InteractiveShell) -> None:
    source = "def f(d):\n    return d['missing']\n\nvalue = 1\nf({})\n"
    result = shell.run_cell(source, cell_id="cell-b")
    assert isinstance(result.error_in_exec, KeyError)  # the user's error surfaces unchanged
    [cell] = cells()
    assert cell["error"] == {"ename": "KeyError", "evalue": "'missing'", "lineno": 2}


def test_syntax_errors_carry_their_line(shell: InteractiveShell) -> None:
    shell.run_cell("x = 1\ny = (\n", cell_id="cell-c")
    [cell] = cells()
    assert cell["error"]["ename"] == "SyntaxError"
    assert cell["error"]["lineno"] == 2


def test_empty_cells_produce_nothing_and_do_not_unpair_the_hooks(shell: InteractiveShell) -> None:
    shell.run_cell("   \n")
    shell.run_cell("1 + 1", cell_id="after-empty")
    assert [c["cell_id"] for c in cells()] == ["after-empty"]
    assert not ext().recorder.running


def test_stdout_is_sampled_within_bounds_and_passed_through(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_cell(f"print('x' * {STDOUT_SAMPLE_CHARS * 3})")
    [cell] = cells()
    assert len(cell["stdout"]) < STDOUT_SAMPLE_CHARS + 40
    assert cell["stdout"].endswith("(output truncated)")
    assert capsys.readouterr().out.count("x") == STDOUT_SAMPLE_CHARS * 3  # the user saw all of it
    assert type(sys.stdout).__name__ != "Tee"


def test_a_repeating_error_gets_an_interjection_on_that_cell_printed_under_the_next_cell(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("watch", "errors")
    for i in range(3):
        shell.run_cell("x = 1\n{}['k']", cell_id=f"c{i}")
    [said] = [p["interjection"] for p in observed("interjection")]
    # the three cells may reach the watcher in one batch; the role then points at one of them
    [location] = said["locations"]
    assert location["cell_id"] in {"c0", "c1", "c2"} and location["start_line"] == 2
    capsys.readouterr()
    shell.run_cell("pass")
    out = capsys.readouterr().out
    assert re.search(r"\[watcher errors\] warning \(nudge @ cell:c[012]:2\)", out)
    assert "KeyError has now been raised 3 times" in out


def test_magic_argument_errors_print_one_clear_line(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("watch", "no_such_role")
    shell.run_line_magic("watch", "errors --mode sometimes")
    shell.run_line_magic("watch", "errors --evaluator magic")
    shell.run_line_magic("unwatch", "ghost")
    shell.run_line_magic("watcher_inject", "errors hello")
    shell.run_line_magic("watch", "'unbalanced")
    shell.run_line_magic("watch", "errors --name ''")
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 7, err
    assert "--name is blank" in lines[6]
    assert "unknown role 'no_such_role'" in lines[0]
    assert "invalid choice: 'sometimes'" in lines[1]
    assert "unknown evaluator 'magic'" in lines[2]
    assert "no watcher named 'ghost'" in lines[3]
    assert "no agent run is active" in lines[4]
    assert "cannot read the arguments" in lines[5]
    assert not ext().attached


def test_a_magic_line_pasted_with_its_comment_works(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("watch", "security --mode manual      # you decide: Inject / Edit / Dismiss in the panel")
    shell.run_line_magic("watch", "errors --name 'err #2'   # autonomous: speaks by itself")
    shell.run_line_magic("watchers", "                         # what is attached, and its state")
    out = capsys.readouterr()
    assert "unrecognized arguments" not in out.err, out.err
    assert set(ext().attached) == {"security", "err #2"}
    assert "security" in out.out and "err #2" in out.out


@pytest.mark.parametrize("magic", ["watch", "watchers", "unwatch", "watcher_history", "watcher_inject"])
def test_every_magic_has_help(shell: InteractiveShell, capsys: pytest.CaptureFixture[str], magic: str) -> None:
    shell.run_line_magic(magic, "--help")
    out = capsys.readouterr()
    assert f"usage: %{magic}" in out.out
    assert out.err == ""


def test_watchers_unwatch_and_history(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("watch", "errors --mode manual --name err")
    shell.run_line_magic("watch", "errors")
    shell.run_line_magic("watch", "errors")  # a duplicate name is refused with a hint
    assert "pass --name" in capsys.readouterr().err
    for _ in range(3):
        shell.run_cell("1/0", cell_id="z")
    shell.run_line_magic("watchers", "")
    listing = capsys.readouterr().out
    assert "err          errors    manual" in listing and "1 pending" in listing
    frame = shell.run_line_magic("watcher_history", "")
    assert frame.height >= 2 and set(frame["watcher"]) == {"err", "errors"}  # cells may be judged in batches
    assert sorted(frame["outcome"].drop_nulls()) == ["delivered", "pending"]
    shell.run_line_magic("unwatch", "err")
    assert "detached from 1 session" in capsys.readouterr().out
    assert list(ext().attached) == ["errors"]


def test_cell_magic_watches_one_cell_and_keeps_the_users_error(shell: InteractiveShell) -> None:
    result = shell.run_cell("%%watch errors --name once\nx = 1\nraise ValueError('boom')\n", cell_id="m1")
    assert result.error_in_exec is None  # the magic's cell reports through the inner run, as %%capture does
    [cell] = cells()
    assert cell["source"].startswith("# %%watch errors --name once\nx = 1\n")
    assert cell["error"] == {"ename": "ValueError", "evalue": "boom", "lineno": 3}
    assert cell["cell_id"] == "m1"
    [attached] = [p for p in observed("watcher") if p["status"] == "attached"]
    assert attached["role"] == "errors"
    assert ext().settle()
    assert "once" not in ext().attached  # detached after its one cell
    assert any(p["status"] == "detached" for p in observed("watcher"))
