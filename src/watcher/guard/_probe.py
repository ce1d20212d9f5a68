"""Whether a long command line parses in the time a hook has.

tree-sitter's error recovery is quadratic on some broken input (``for(;;) `` written 20,000 times
takes minutes), and the parse ``ast-grep-py`` runs holds the interpreter and cannot be stopped. A
hook that does not answer in time lets the call through, so padding would open the guard. A long
line is therefore parsed first by tree-sitter's own Python binding, which stops at a deadline; a
line that does not parse in time is denied as unreadable. Short lines, the usual case, skip this
(and its import).
"""

from __future__ import annotations

import functools
import time
from typing import Any

__all__ = ["PROBED_CHARS", "parses_in_time"]

PROBED_CHARS = 4096  # shorter lines parse in well under a millisecond, whatever they hold


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parses_in_time(script: str, seconds: float) -> bool:
    """``script`` parses as bash within ``seconds`` (measured, then thrown away)."""
    text = script.encode("utf-8", "surrogatepass")
    stop = time.monotonic() + seconds

    def read(offset: int, _point: object) -> bytes:
        return text[offset : offset + 65536]

    def cancelled(*_state: object) -> bool:
        return time.monotonic() > stop

    try:
        _parser().parse(read, progress_callback=cancelled)
    except ValueError:  # "Parsing failed": stopped at the deadline
        return False
    return True
