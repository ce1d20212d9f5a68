"""The guard never fails on what an agent sends: any shell text, any tool input (Hypothesis).

A guard that raised would leave the hook to fail open, so robustness here is a safety property.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from watcher.guard import judge, load_policy
from watcher.guard._arrays import arrays_in_place
from watcher.guard._cases import cases_chosen
from watcher.guard._commands import _with_readings
from watcher.guard._loops import loops_unrolled
from watcher.guard._own_path import with_own_path
from watcher.guard._shell import MAX_WORDS, TooLong, commands

POLICY = load_policy("/nonexistent/project", pack="strict")
SHELLISH = st.text(
    alphabet=st.sampled_from(list("rm -f/~.*$(){}[]|&;<>'\"\\`\n#=:@%^!?abcdehlnoprstux0123456789")), max_size=80
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=120, deadline=None)
@given(SHELLISH)
def test_any_shell_text_gets_a_verdict(command: str) -> None:
    verdict = judge("Bash", {"command": command}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert verdict.decision in ("allow", "deny")


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(
        ["Bash", "Read", "Write", "Edit", "MultiEdit", "Grep", "WebFetch", "apply_patch", "mcp__x__write_file", "Weird"]
    ),
    st.dictionaries(
        st.sampled_from(["command", "file_path", "path", "content", "url", "input", "edits", "glob", "cmd", "query"]),
        JSON,
        max_size=4,
    ),
)
def test_any_tool_input_gets_a_verdict(tool: str, tool_input: dict[str, Any]) -> None:
    verdict = judge(tool, tool_input, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert verdict.decision in ("allow", "deny")


def test_a_long_chain_is_read_to_its_last_command() -> None:
    """Thousands of `&&` nest as deep in the parse tree: the reading must not hit the recursion limit."""
    chain = " && ".join(["ls"] * 3000 + ["rm -rf ~"])
    verdict = judge("Bash", {"command": chain}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert (verdict.decision, verdict.category) == ("deny", "destructive-delete")


def test_a_script_too_long_to_read_in_time_is_denied_not_waved_through() -> None:
    script = "cat <<'EOF' | sh\n" + "\n".join(f"echo {i}" for i in range(60_000)) + "\nrm -rf ~\nEOF"
    verdict = judge("Bash", {"command": script}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert verdict.denied
    assert verdict.category in ("unreadable", "destructive-delete"), verdict


def test_a_line_of_more_words_than_the_guard_reads_is_denied_not_waved_through() -> None:
    line = "echo " + "a " * MAX_WORDS + "; rm -rf build"
    verdict = judge("Bash", {"command": line}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert (verdict.decision, verdict.category) == ("deny", "unreadable"), verdict
    assert "too long" in verdict.reason


def test_reading_stops_at_the_deadline_not_after_the_whole_line() -> None:
    """The parse tree's walk and the commands' reading both look at the clock: a line whose reading
    is past its deadline is given up at once (the hook's answer must come within its budget)."""
    with pytest.raises(TooLong, match=r"parts|time a hook has"):
        commands("ls; " * 5_000, deadline=time.monotonic() - 1)
    assert len(commands("ls; " * 5_000, deadline=time.monotonic() + 60)) == 5_000


@pytest.mark.timeout(60)  # unguarded, this parse takes minutes
def test_a_line_the_parser_is_slow_on_is_denied_in_time_not_waved_through() -> None:
    """tree-sitter's error recovery is quadratic on some broken input (this line took the parse
    minutes); a hook that runs out of time lets the call through, so such padding must not hide a
    delete: the line is denied as unreadable once its parse runs past the budget."""
    line = "for(;;) " * 50_000 + "; rm -rf ~"
    verdict = judge("Bash", {"command": line}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert (verdict.decision, verdict.category) == ("deny", "unreadable"), verdict
    assert "parser" in verdict.reason


@pytest.mark.timeout(30)  # each of these took the guard from 6 s to minutes before its reads were bounded
@pytest.mark.parametrize(
    "line",
    [
        "for x in " * 50_000 + "; rm -rf ~",  # a thousand unfinished loops: one scan each to the end
        "X=$(mktemp " * 30_000,
        'psql -c "' + "alter role x " * 50_000 + '"',
        "ls | " + "grep -v x | " * 20_000 + "xargs rm -rf",  # the parse itself is quadratic here
        'f; echo "' + "f() { " * 100_000 + '"',  # a called function's unclosed bodies: one scan each
    ],
    ids=["unfinished-loops", "unfinished-mktemp", "unfinished-roles", "deep-pipeline", "unclosed-functions"],
)
def test_a_long_line_built_to_be_slow_to_read_is_answered(line: str) -> None:
    """Every pattern the guard runs over a whole line reads a bounded stretch, and a line the parser
    takes too long on is denied: a hook past its time lets the call through."""
    verdict = judge("Bash", {"command": line}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert verdict.decision in ("allow", "deny")
    assert verdict.category in ("", "unreadable"), verdict


@pytest.mark.timeout(30)  # the connection-URL pattern once scanned a long word again from each letter
@pytest.mark.parametrize("content", ["a" * 3_000_000 + "://", "x://" + "a" * 3_000_000, "p://u:" * 300_000])
def test_written_content_built_to_be_slow_to_scan_is_answered(content: str) -> None:
    """The credential patterns a write's content is scanned with read each stretch a bounded number of times."""
    notes = {"file_path": "/nonexistent/project/notes.txt", "content": content}
    verdict = judge("Write", notes, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert verdict.decision == "allow", verdict


@pytest.mark.parametrize("where", [0.0, 0.5, 1.0])
@pytest.mark.parametrize(
    ("secret", "denied"),
    [
        ("password = 'Zr8pLq2vT9xWm4Kd'", True),
        ("GITHUB_TOKEN=ghp_" + "A1b2C3d4E5" * 4, True),
        ("password = 'Zr8pLq2vT9xWm4Kd_example'", False),  # a placeholder's word past the value's start
        ("api_key: " + "ab12" * 8 + "x", False),  # a hex key's word boundary is cut only past a window's end
    ],
)
def test_a_credential_in_megabytes_of_written_code_is_found_wherever_it_is(
    secret: str, denied: bool, where: float
) -> None:
    """A long text is searched only around the places the credential patterns' anchors occur: the
    same answers as a search of the whole text, in a fraction of its time (``_files._near_anchors``)."""
    code = "def handler_{n}(request):\n    return {{'status': 200, 'token_id': {n}}}\n"
    filler = "".join(code.format(n=n) for n in range(25_000))  # 1.6 MB, an anchor ("token") in every function
    at = filler.find("\n", int(len(filler) * where)) + 1  # a line of its own
    content = filler[:at] + secret + "\n" + filler[at:]
    verdict = judge("Write", {"file_path": "/p/app.py", "content": content}, cwd="/p", home="/home/dev", policy=POLICY)
    assert verdict.denied == denied, verdict


def test_a_long_line_that_parses_in_time_is_read_as_usual() -> None:
    """The parse deadline applies to long lines only, and a long ordinary one is read to its end."""
    body = "\n".join(f"  echo line {i}" for i in range(2_000))
    line = f"cat > notes.txt <<'EOF'\n{body}\nEOF\nrm -rf ~"
    verdict = judge("Bash", {"command": line}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert (verdict.decision, verdict.category) == ("deny", "destructive-delete"), verdict


@pytest.mark.parametrize(("depth", "denied"), [(3, False), (9, True)])
def test_scripts_nested_deeper_than_the_guard_reads_are_denied_not_waved_through(depth: int, denied: bool) -> None:
    line = "ls"
    for _ in range(depth):
        line = "bash -c " + shlex.quote(line)
    verdict = judge("Bash", {"command": line}, cwd="/nonexistent/project", home="/home/dev", policy=POLICY)
    assert verdict.denied is denied, verdict
    assert not denied or verdict.category == "unreadable"


@pytest.mark.timeout(30)  # a blocking read would hang here until the timeout fails the test
@pytest.mark.parametrize(
    ("command", "denied"),
    [
        ("cat key.pem", True),  # a key file that cannot be read to tell counts as a key
        ("cat .npmrc", True),
        ("xargs -a list.txt rm -rf", True),  # a list of deletes that cannot be read is not waved through
        ("git push -f origin HEAD", True),  # HEAD cannot be read: the branch is unknown
        ("bash run.sh", False),  # a script that cannot be read is judged by its line
    ],
)
def test_a_fifo_where_a_file_is_read_does_not_hold_the_guard(tmp_path: Path, command: str, denied: bool) -> None:
    """The guard opens files it judges by content (a .pem, an .npmrc, an xargs list, git's HEAD, a
    script a command runs) without blocking: a FIFO in their place would otherwise hold the hook until it ran out of time."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".git" / "HEAD").unlink()
    for name in ("key.pem", ".npmrc", "list.txt", ".git/HEAD", "run.sh"):
        os.mkfifo(tmp_path / name)
    verdict = judge("Bash", {"command": command}, cwd=str(tmp_path), home="/home/dev", policy=POLICY)
    assert verdict.denied is denied, verdict


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "text",
    [
        "".join(f"v{i} = '/tmp/x{i}'\n" for i in range(1_200)),  # a thousand variables followed to their use
        "from pathlib import Path\nP = '/a/b/c'\nQ = P" + ".parent" * 3_000 + "\n",  # folders folded in rounds
        "T = '/dev/sda'\n" + "print(f'{T}{T}{T}')\n" * 800,  # f-strings filled
        "import subprocess\ndef run(*a):\n    subprocess.run(['x', *a])\n"
        + "run('a', 'b')\n" * 1_200,  # a wrapper's calls
        "subprocess.run(" + "[" * 5_000 + "]" * 5_000 + ")",
    ],
    ids=["variables", "parents", "f-strings", "wrapper-calls", "brackets"],
)
def test_a_script_built_to_be_slow_to_read_is_answered(tmp_path: Path, text: str) -> None:
    """A script a command runs is read in bounded passes (16 KB at most, a few rounds of variables)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "s.py").write_text(text[:16_000])
    verdict = judge("Bash", {"command": "python3 s.py"}, cwd=str(tmp_path), home="/home/dev", policy=POLICY)
    assert verdict.decision in ("allow", "deny")


SHELL_TOKENS = st.lists(
    st.sampled_from(
        [
            "for",
            "d",
            "in",
            "a",
            '"$HOME"',
            "~",
            "do",
            "done",
            ";",
            "\n",
            "case",
            '"$1"',
            "x)",
            ";;",
            "esac",
            "*)",
            "arr=(",
            ")",
            '"${arr[@]}"',
            "${arr[0]}",
            "rm",
            "-rf",
            '"$d"',
            "$0",
            '"$(dirname "$0")"',
            "&&",
            "{",
            "}",
            "'q",
            '"',
            "$(",
            "`",
            "|",
            "=",
            "local",
            'v="$1"',
        ]
    ),
    max_size=40,
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(SHELL_TOKENS)
def test_the_shell_readings_never_fail(script: str) -> None:
    # a script's own path, arrays, loops and cases are written in before the rules read it; any text
    # an agent writes is read without a fault (a fault would deny the call as unreadable)
    readings = (
        arrays_in_place,
        loops_unrolled,
        lambda text: cases_chosen(text, ("flush",)),
        lambda text: with_own_path(text, "/work/project/run.sh"),
    )
    for reading in readings:
        assert isinstance(reading(script), str)


def test_a_reading_that_fails_leaves_the_script_as_written() -> None:
    def broken(text: str) -> str:
        raise ValueError("a fault in a helper")

    assert _with_readings("rm -rf build", broken, str.upper) == "RM -RF BUILD"


@given(
    st.lists(
        st.sampled_from(
            ["docker", "podman", "run", "container", "-v", "-w", "--mount", "--rm", "-it", "--name", "-e", "alpine",
             "/app", "$PWD:/app", "~:/h", "pgdata:/data", "/:/", "type=bind,src=.,dst=/x", "rm", "-rf", "/", ".",
             "..", "*", "/app/..", "sh", "-c", "cd /app && rm -rf *", "", "-", "--", "-wfoo", "--volume=.:/y"]
        ),
        max_size=12,
    )
)  # fmt: skip
def test_any_container_run_is_read_without_a_fault(argv: list[str]) -> None:
    """A container's command line of any shape is read (mounts mapped, or left alone), never a traceback."""
    from watcher.guard._containers import container_run, mounted
    from watcher.guard._simple import Command

    run = container_run(argv)
    if run is not None:
        assert run.mounts and run.argv
        assert all(isinstance(c, Command) for c in mounted(run, [Command(run.argv)]))
    assert judge("Bash", {"command": shlex.join(argv)}, cwd="/work/project", policy=POLICY).decision in (
        "allow",
        "deny",
    )
