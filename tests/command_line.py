"""The ``watcher`` command line run in the test's own process (the same ``main`` the console script
calls): what it left is returned, not printed."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from watcher.cli import main


@dataclass
class Ran:
    """What a run of the command left: exit status, stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> Ran:
    code = main(list(args))
    out, err = capsys.readouterr()
    return Ran(code, out, err)
