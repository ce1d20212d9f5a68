"""Commands written into files that tools run later: a ``package.json``'s scripts (npm runs the
lifecycle ones by itself), a Makefile's recipes (``make`` runs them), an editor's tasks
(``.vscode/tasks.json``, some run when the folder opens) and a notebook's shell lines (``!cmd``,
``%%bash`` cells: a person's Run All runs them unread). Each is judged as the shell line it is."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from watcher.guard._commands import shell_findings
from watcher.guard._files import Finding
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._policy import Policy
from watcher.guard._ran import notebook_parts

__all__ = ["scripts_written"]

# a package.json script entry: npm runs the lifecycle ones by itself (`npm install` runs postinstall)
_SCRIPT_ENTRY = lazy(
    r'"((?:pre|post)\w+|install|prepare|uninstall|build|test|start|dev|lint|clean|setup)"\s*:\s*"((?:[^"\\]|\\.)*)"'
)
_TASK_COMMAND = lazy(r'"command"\s*:\s*"((?:[^"\\]|\\.)*)"')
_MAKEFILES = lazy(r"(?:^|/)(?:GNUmakefile|[Mm]akefile|[^/]+\.mk)\Z")


def scripts_written(path: str, content: str, place: Place, policy: Policy) -> Iterator[Finding]:
    """What the commands written into ``path`` would do when the tool that reads it runs them."""
    for where, script in _scripts(path, content):
        for category, reason in shell_findings(script, place, policy):
            if category != "unreadable":
                yield category, f"puts into {where} a command that {reason}"
                return


def _scripts(path: str, content: str) -> Iterator[tuple[str, str]]:
    if path.endswith("/package.json") and '"' in content:
        for name, text in _SCRIPT_ENTRY.findall(content):
            if (script := _json_string(text)) is not None:
                yield f"package.json's {name} script", script
    elif path.endswith("/.vscode/tasks.json") and '"' in content:
        for text in _TASK_COMMAND.findall(content):
            if (script := _json_string(text)) is not None:
                yield "an editor task", script
    elif path.endswith((".ipynb", ".ipy")):  # a notebook's shell lines (!cmd, %%bash) run at the person's Run All
        shell, _ = notebook_parts(content)
        if shell.strip():
            yield "a notebook cell", shell
    elif _MAKEFILES.search(path):
        for line in content.splitlines():
            if line.startswith("\t"):  # a recipe line: make's variables as the shell's, `$$` as `$`
                yield "a Makefile recipe", re.sub(r"\$[({](\w+)[)}]", r"$\1", line.lstrip("\t@-+")).replace("$$", "$")


def _json_string(text: str) -> str | None:
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None
