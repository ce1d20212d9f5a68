"""Shared pieces of the fault-injection suite: run the real ``watcher`` CLI in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def watcher_cli(*args: str, timeout: float = 120, **kw: Any) -> subprocess.CompletedProcess[str]:
    """``python -m watcher ARGS`` in a child process, with text output captured."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "watcher", *args], capture_output=True, text=True, timeout=timeout, env=env, **kw
    )


def write_transcript(path: Path, records: list[dict[str, Any] | str]) -> Path:
    """A JSONL transcript; a str record is written as the raw line."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def no_traceback(text: str) -> bool:
    """True when ``text`` (a child's stderr) holds no Python traceback."""
    return "Traceback (most recent call last)" not in text
