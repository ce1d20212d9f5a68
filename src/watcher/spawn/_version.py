"""Which version of an agent CLI a spawn drives, against the version watcher's adapter is checked with.

Adapters follow each CLI's flags and stream format at one version (pinned in the project's
``package.json``); another version may refuse a flag or stream another shape. The version is
read from the npm package beside the executable (instant), else asked with ``--version``; a
difference is said in the report, and in a crash's detail, with the command that installs the
checked version.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

__all__ = ["cli_version", "version_note"]

_VERSION = re.compile(r"\b(\d+\.\d+\.\d+(?:[-+][\w.]+)?)\b")


def cli_version(executable: str, package: str) -> str:
    """The version of the CLI at ``executable`` ('' when it cannot be told)."""
    resolved = Path(executable).resolve()
    for folder in resolved.parents:  # node_modules/<package>/package.json, however deep the binary sits
        manifest = folder / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                break
            if isinstance(data, dict) and data.get("name") == package:
                return str(data.get("version") or "")
            break
    try:
        done = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    found = _VERSION.search(done.stdout) if done.returncode == 0 else None
    return found[1] if found else ""


def version_note(name: str, package: str, version: str, checked: str) -> str:
    """A note when ``version`` is not the one the adapter is checked against ('' when it is, or is unknown)."""
    if not version or version == checked:
        return ""
    return (
        f"the {name} CLI is version {version}, and watcher spawn is checked against {checked}: another version may "
        f"refuse a flag or stream another format; if the run misbehaves, install the checked one "
        f"(npm install -g {package}@{checked}) or pass --cli-path to it"
    )
