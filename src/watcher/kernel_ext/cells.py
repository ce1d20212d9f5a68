"""Turning executed cells into ``CellExecuted`` observations, on the kernel's main thread.

``pre_run_cell`` notes the cell id the frontend sent (JupyterLab: the nbformat id; VS Code: the
cell URI; nbval/nbclient: none), the start time, and puts a tee on ``sys.stdout`` that keeps a
bounded sample of what the cell prints while passing every write through unchanged.
``post_run_cell`` builds the observation. Empty cells fire ``post_run_cell`` without
``pre_run_cell``: they are recognised by the ``ExecutionInfo`` they carry and produce nothing.
A cell run from inside a cell (``%%watch`` runs its body that way) is folded into the outer one.

This module does only bookkeeping: it never waits on a watcher and never raises into a cell.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TextIO

from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult

from watcher.core.observations import CellError, CellExecuted

__all__ = ["STDOUT_SAMPLE_CHARS", "CellRecorder", "Tee", "error_line"]

STDOUT_SAMPLE_CHARS = 2000
_WATCH_CELL = re.compile(r"\A\s*%%watch\b")


class Tee:
    """A stand-in for ``sys.stdout`` that forwards everything and samples the first characters."""

    def __init__(self, stream: TextIO, limit: int = STDOUT_SAMPLE_CHARS) -> None:
        self._stream = stream
        self._limit = limit
        self._parts: list[str] = []
        self._size = 0
        self.truncated = False

    def write(self, text: str) -> int:
        if self._size < self._limit and isinstance(text, str):
            part = text[: self._limit - self._size]
            self._parts.append(part)
            self._size += len(part)
            self.truncated = self.truncated or len(part) < len(text)
        elif text:
            self.truncated = True
        return self._stream.write(text)

    def sample(self) -> str:
        """What was printed, cut at the limit (with a marker when cut)."""
        text = "".join(self._parts)
        return text + "\n… (output truncated)" if self.truncated else text

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def error_line(exc: BaseException, user_globals: dict[str, Any]) -> int | None:
    """The 1-based line, within the cell, where ``exc`` was raised or passed through.

    The cell's frame is the first frame of the traceback whose globals are the user namespace; the
    deepest frame in the same file (a function defined in the same cell) gives the line.
    """
    if isinstance(exc, SyntaxError):
        return exc.lineno
    tb: TracebackType | None = exc.__traceback__
    cell_file: str | None = None
    line: int | None = None
    while tb is not None:
        frame = tb.tb_frame
        if cell_file is None and frame.f_globals is user_globals:
            cell_file = frame.f_code.co_filename
        if cell_file is not None and frame.f_code.co_filename == cell_file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


@dataclass
class _Running:
    info: Any
    started: float
    tee: Tee | None
    previous_stdout: TextIO | None
    inner_error: BaseException | None = None
    inner: list[Any] = field(default_factory=list)


class CellRecorder:
    """Pairs ``pre_run_cell`` with ``post_run_cell`` and builds the observation."""

    def __init__(self, user_globals: dict[str, Any], *, sample_chars: int = STDOUT_SAMPLE_CHARS) -> None:
        self._globals = user_globals
        self._sample_chars = sample_chars
        self._stack: list[_Running] = []

    @property
    def running(self) -> bool:
        """True while a cell executes."""
        return bool(self._stack)

    def pre(self, info: ExecutionInfo) -> None:
        """Note the start of a cell (or of a cell run from inside one)."""
        if self._stack:
            self._stack[-1].inner.append(info)
            return
        tee: Tee | None = None
        previous = sys.stdout
        if previous is not None:
            tee = Tee(previous, self._sample_chars)
            sys.stdout = tee  # a duck-typed stream
        self._stack.append(_Running(info, time.perf_counter(), tee, previous))

    def post(self, result: ExecutionResult) -> CellExecuted | None:
        """The observation for a finished cell; None for an empty cell or an inner run."""
        info = getattr(result, "info", None)
        if not self._stack:
            return None
        top = self._stack[-1]
        if info is not top.info:
            if info in top.inner:
                top.inner.remove(info)
                top.inner_error = top.inner_error or _error_of(result)
            return None  # an empty cell: post_run_cell without pre_run_cell
        self._stack.pop()
        duration = time.perf_counter() - top.started
        stdout = ""
        if top.tee is not None:
            stdout = top.tee.sample()
            if sys.stdout is top.tee:
                sys.stdout = top.previous_stdout
            # else: the cell replaced sys.stdout for good; leave its choice alone
        source: str = getattr(info, "raw_cell", "") or ""
        exc = _error_of(result) or top.inner_error
        offset = 0
        if _WATCH_CELL.match(source):
            # %%watch ROLE runs its body as a cell of its own: comment the magic line out so the
            # source parses as Python, and count body lines from line 2
            first, _, body = source.partition("\n")
            source = f"# {first.strip()}\n{body}"
            offset = 1 if top.inner_error is not None else 0
        error: CellError | None = None
        if exc is not None:
            lineno = error_line(exc, self._globals)
            error = CellError(type(exc).__name__, str(exc)[:500], lineno + offset if lineno else None)
        count = getattr(result, "execution_count", None)
        return CellExecuted(
            source=source,
            cell_id=getattr(info, "cell_id", None),
            execution_count=count if isinstance(count, int) else None,
            stdout=stdout,
            error=error,
            duration_s=round(duration, 6),
            ts=time.time(),
        )

    def abandon(self) -> None:
        """Forget running cells and take the tee off (on unload)."""
        while self._stack:
            top = self._stack.pop()
            if top.tee is not None and sys.stdout is top.tee:
                sys.stdout = top.previous_stdout


def _error_of(result: ExecutionResult) -> BaseException | None:
    exc = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    return exc if isinstance(exc, BaseException) else None
