"""Whether a long command line parses in the time a hook has.

tree-sitter's parse of some input takes time quadratic in its length (broken syntax it recovers
from, like ``for(;;) `` written 20,000 times; a pipeline of 20,000 commands with arguments), and the
parse ``ast-grep-py`` runs holds the interpreter and cannot be stopped, not even by tree-sitter's
own progress callback in every phase. A hook that does not answer in time lets the call through,
so padding would open the guard. A long line is therefore parsed first in a child interpreter,
killed at the deadline; a line that does not parse in time is denied as unreadable. Short lines,
the usual case, skip this.
"""

from __future__ import annotations

import subprocess
import sys

__all__ = ["PROBED_CHARS", "parses_in_time"]

PROBED_CHARS = 4096  # shorter lines parse in well under a millisecond, whatever they hold

_PARSE = "import sys\nfrom ast_grep_py import SgRoot\nSgRoot(sys.stdin.read(), 'bash').root()\n"


def parses_in_time(script: str, seconds: float) -> bool:
    """``script`` parses as bash within ``seconds``, the child's start included (it is parsed and
    thrown away; a child that cannot run at all answers no, so the line is denied, never waved through)."""
    try:
        subprocess.run(
            [sys.executable, "-I", "-c", _PARSE],
            input=script.encode("utf-8", "surrogatepass"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=max(seconds, 0.01),
            check=True,
        )
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError, OSError):
        return False
    return True
