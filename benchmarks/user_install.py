"""watcher installed as a user has it, for the benchmarks that time a process: a wheel in a fresh venv.

The development environment is not what a user runs: its editable install, coverage's start-up hook
and setuptools' ``distutils`` shim are ``.pth`` files that every interpreter start executes (a few
milliseconds of a hook call that is mostly interpreter start). So the hook bench builds the wheel of
this checkout (``uv build --wheel``, from a copy of the tree, so no ``build/`` is left behind and no
stale file of an earlier build slips in) and installs it, with its pinned dependencies and their
bytecode compiled as pip compiles it, into a new venv of the same base interpreter: from uv's cache
first, from the index when the cache lacks something. When any of it fails, the development
environment is timed instead and stderr says so.
"""

from __future__ import annotations

import compileall
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Interpreter", "development", "installed"]

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Interpreter:
    """A Python with watcher installed: its interpreter, its bin folder and how it was installed."""

    python: Path
    how: str

    @property
    def bin(self) -> Path:
        return self.python.parent

    def describe(self) -> str:
        return f"{self.how}: {self.python}"


def development() -> Interpreter:
    """This checkout's development venv (editable install), its bytecode compiled as an install has it.

    Otherwise a checkout whose bytecode is stale (a merge touched the files) and a shell with
    ``PYTHONDONTWRITEBYTECODE=1`` would compile every module a hook imports on every call.
    """
    compileall.compile_dir(str(ROOT / "src" / "watcher"), quiet=1)
    return Interpreter(Path(sys.executable), "the development venv (editable install)")


def _run(argv: list[str]) -> str:
    """Run ``argv``; "" when it worked, else the last line it printed on stderr."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return ""
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1].strip() if lines else f"exit {done.returncode}"


def installed(tmp: Path) -> Interpreter:
    """The wheel of this checkout installed in a new venv under ``tmp`` (the development venv on failure)."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    problem = "uv is not installed (make installs it in .venv)" if uv is None else ""
    if uv is not None:
        tree, dist, venv = tmp / "tree", tmp / "dist", tmp / "venv"
        for folder in ("src", "scripts"):  # the package, and the hook command (a script of its own)
            shutil.copytree(ROOT / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, tree / name)
        base = getattr(sys, "_base_executable", sys.executable)
        build = [uv, "build", "--wheel", "--quiet", "--out-dir", str(dist), str(tree)]
        problem = _run([*build, "--offline"]) and _run(build)
        wheels = sorted(dist.glob("*.whl"))
        if not problem and wheels:
            problem = _run([uv, "venv", "--quiet", "--python", base, str(venv)])
        if not problem and wheels:
            install = [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(venv / "bin" / "python")]
            install += ["--constraint", str(ROOT / "constraints.txt"), str(wheels[0])]
            problem = _run([*install, "--offline"]) and _run(install)
        elif not problem:
            problem = "uv build made no wheel"
    if problem:
        print(f"bench: cannot install the wheel ({problem}); timing the development venv instead", file=sys.stderr)
        return development()
    return Interpreter(tmp / "venv" / "bin" / "python", "the wheel installed in a fresh venv")
