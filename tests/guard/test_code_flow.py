"""Code a command runs is read for where its values go: Python by its syntax tree, JavaScript and
TypeScript by tree-sitter's; a value is followed from where it is set to the call that uses it
(through functions, objects, options and loops), within bounds.

The scripts are real files in a temporary project, judged as the data file's runner runs them
(``python3 NAME``, ``node NAME``), never run.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ast_grep_py import SgRoot

from watcher.guard import _javascript, judge, load_policy
from watcher.guard._javascript import javascript_readable
from watcher.guard._python import python_readable

DATA = Path(__file__).parent / "data" / "scripts"
SCRIPTS = {
    s["name"]: {**s, "runner": data["runner"]}
    for path in sorted(DATA.glob("*.toml"))
    for data in [tomllib.loads(path.read_text())]
    for s in data["script"]
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_value_is_followed_to_the_call_that_uses_it(place: tuple[Path, Path], name: str) -> None:
    case = SCRIPTS[name]
    project, home = place
    (project / name).write_text(case["text"].lstrip())
    command = f"{case['runner']} {name}"
    v = judge("Bash", {"command": command}, cwd=str(project), home=str(home), policy=load_policy(str(project)))
    assert v.decision == case["expect"], v.reason
    if case["expect"] == "deny":
        assert v.category == case["category"], v.reason
        assert v.reason.startswith(f"runs {name}, a script that"), v.reason


@pytest.mark.parametrize("runner", ["python3", "node"])
def test_both_kinds_of_vector_are_there(runner: str) -> None:
    expected = [s["expect"] for s in SCRIPTS.values() if s["runner"].startswith(runner)]
    assert expected.count("deny") >= 8 and expected.count("allow") >= 8


def test_a_scripts_own_argument_chooses_its_case(place: tuple[Path, Path]) -> None:
    project, home = place
    script = project / "cache.sh"
    script.write_text(
        '#!/bin/sh\nMODE=${1:-stats}\ncase "$MODE" in\n  flush) redis-cli -h db.prod FLUSHALL ;;\n'
        "  stats) redis-cli -h db.prod INFO ;;\nesac\n"
    )
    script.chmod(0o755)
    verdicts = {
        command: judge("Bash", {"command": command}, cwd=str(project), home=str(home)).decision
        for command in ("sh cache.sh", "sh cache.sh stats", "sh cache.sh flush", "./cache.sh flush")
    }
    assert verdicts == {
        "sh cache.sh": "allow",
        "sh cache.sh stats": "allow",
        "sh cache.sh flush": "deny",
        "./cache.sh flush": "deny",
    }


def test_the_same_code_inline_is_read_the_same_way(place: tuple[Path, Path]) -> None:
    project, home = place
    code = "import shutil\nfrom pathlib import Path\nBASE = Path.home()\ndef go(p):\n    shutil.rmtree(p)\ngo(BASE)\n"
    v = judge("Bash", {"command": f"python3 - <<'EOF'\n{code}EOF"}, cwd=str(project), home=str(home))
    assert (v.decision, v.category) == ("deny", "destructive-delete"), v.reason


def test_what_is_not_python_is_left_to_the_text_readers() -> None:
    assert python_readable("require('fs').rmSync(process.env.HOME, {recursive: true})") is None
    assert python_readable("import x from 'y'; x()") is None  # JavaScript's import
    assert python_readable("def broken(:\n    pass\n") is None


def test_notes_are_left_out_and_values_written_in_place() -> None:
    out = python_readable(
        '"""Deletes nothing."""\nimport os\n# rm -rf ~\nroot = os.path.expanduser("~")\nos.rmdir(root)\n'
    )
    assert out is not None
    assert "Deletes nothing" not in out and "rm -rf" not in out
    assert "os.rmdir('~')" in out


def test_a_sequence_is_never_repeated_while_reading() -> None:
    # computing this would take a terabyte; the reader leaves it as written
    out = python_readable("import os\nN = 10 ** 12\nblob = b'x' * N\nos.write(1, blob)\n")
    assert out is not None and "b'x' * 1000000000000" in out


def test_a_count_kept_by_a_loop_is_not_known_after_it() -> None:
    out = python_readable("import os\nn = 0\nfor f in os.listdir('.'):\n    n += 1\nprint(n)\n")
    assert out is not None and "print(n)" in out


def test_loops_in_loops_are_written_out_within_bounds() -> None:
    words = "[" + ", ".join(f"'d{i}'" for i in range(16)) + "]"
    code = "import shutil\n" + "".join("    " * i + f"for v{i} in {words}:\n" for i in range(6))
    code += "    " * 6 + "shutil.rmtree(v0 + v1 + v2 + v3 + v4 + v5)\n"
    out = python_readable(code)  # 16**6 bodies, were each written: the reader stops well before
    assert out is not None and len(out) < 100 * len(code)


def test_a_function_calling_itself_is_copied_a_few_times_only() -> None:
    code = "import shutil\ndef f(p):\n    shutil.rmtree(p)\n    f(p + '/x')\n    f(p + '/y')\nf('/srv')\n"
    out = python_readable(code)
    assert out is not None and "shutil.rmtree('/srv')" in out
    assert out.count("def f(") <= 1 + 2 + 4 + 8


def test_long_values_keep_their_names() -> None:
    code = "import os\n" + "v0 = '/srv'\n" + "".join(f"v{i + 1} = v{i} + '/abcdefgh'\n" for i in range(400))
    code += "os.rmdir(v400)\n"
    out = python_readable(code)  # a 3.6 kB path at each of 400 uses would be 700 kB of text
    assert out is not None and len(out) < 4 * len(code)


def test_javascript_names_are_written_where_they_are_read() -> None:
    code = (
        'const os = require("os");\nconst path = require("path");\nconst base = path.join(os.homedir(), ".config");\n'
        "function clear(dir) { require('fs').rmSync(dir, { recursive: true }); }\nclear(base);\n"
    )
    out = javascript_readable(code)
    assert out is not None
    assert 'clear("~/.config")' in out and 'rmSync("~/.config"' in out


def test_what_is_not_javascript_is_left_to_the_text_readers() -> None:
    assert javascript_readable("puts File.read(Dir.home + '/.netrc')") is None  # Ruby
    assert javascript_readable('my $h = $ENV{HOME}; system("rm -rf $h");') is None  # Perl
    assert javascript_readable("const x = ;; )(") is None


def test_javascript_copies_are_written_within_bounds() -> None:
    body = "".join(f"  require('fs').rmSync(p + '/{i}');\n" for i in range(400))
    code = "function f(p) {\n" + body + "}\n" + "".join(f"f('/srv/x{i}');\n" for i in range(30))
    out = javascript_readable(code)  # 30 copies of a 14 kB body would be 420 kB: the reader stops well before
    assert out is not None and len(out) < 4 * len(code)


def test_javascript_objects_and_patterns_are_read() -> None:
    code = (
        "class Box {\n  constructor({ dir, mode = 'rm' }) { this.dir = dir; this.mode = mode; }\n"
        "  wipe(...flags) { execFileSync(this.mode, [...flags, this.dir]); }\n}\n"
        "const [first] = Object.values({ a: '/srv/data' });\n"
        "new Box({ dir: first }).wipe('-rf');\n"
    )
    out = javascript_readable(code)
    assert out is not None
    assert 'execFileSync("rm", ["-rf", "/srv/data"])' in out  # the object's fields, the rest and the spread


def test_a_javascript_name_assigned_again_keeps_its_name() -> None:
    out = javascript_readable(
        "let n = 0;\nlet dir = '/srv/a';\nfor (const x of xs) { n++; dir += x; }\nconsole.log(n, dir);\n"
    )
    assert out is not None and "console.log(n, dir)" in out and '"0"++' not in out


def test_javascript_reading_stops_at_its_bound() -> None:
    # objects made by a class whose constructor calls the other's: read a few levels deep, not forever
    assert (
        javascript_readable(
            "class A { constructor() { this.b = new B(); } }\n"
            "class B { constructor() { this.a = new A(); } }\nconst a = new A();\n"
        )
        is not None
    )
    # 1,000 maps of 16 by 16 values would be 256,000 values worked out: the reader stops at its bound
    letters = [chr(97 + i) for i in range(16)]
    code = f"const l = {letters!r};\n" + "".join(
        f"const m{i} = l.map((x) => l.map((y) => x + y));\n" for i in range(1000)
    )
    reader = _javascript._Reader(code, SgRoot(code, "javascript").root())
    reader.read()
    assert reader.steps == _javascript._MAX_STEPS


def test_calls_without_code_import_no_code_reader() -> None:
    # a cold hook pays for every import: a Bash, Read or Write call with no inline code needs no parser
    probe = (
        "import sys\n"
        "from watcher.guard import judge\n"
        "for c in ['rm -rf build', 'git push --force origin main', 'cat .env', 'psql -c \"DROP TABLE t\"']:\n"
        "    judge('Bash', {'command': c}, cwd='/tmp')\n"
        "judge('Read', {'file_path': '/tmp/x/.env'}, cwd='/tmp')\n"
        "judge('Write', {'file_path': '/tmp/x/a.py', 'content': 'import os\\nprint(1)\\n'}, cwd='/tmp')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('watcher.guard._python', 'watcher.guard._javascript'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
