"""What the security role reads: the pieces of an observation that hold code, commands or output.

A notebook cell is Python (with ``!shell`` lines and ``%%bash`` cells as shell); a Write/Edit-style
tool call carries file content under one of several keys, depending on the agent harness; a
shell tool carries a command; tool results and cell stdout are output, scanned for leaked
secrets only. Line numbers are kept: a shell line of a cell stays at its line in the cell.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from watcher.core.observations import CellExecuted, Observation, ToolCall, ToolResult

__all__ = ["Watched", "watched_pieces"]

Language = Literal["python", "js", "shell", "code", "text", "output"]

_WRITE_TOOLS = frozenset(
    {
        "write",
        "edit",
        "multiedit",
        "writefile",
        "createfile",
        "editfile",
        "strreplacebasededittool",
        "strreplaceeditor",
        "notebookedit",
        "applypatch",
        "replaceinfile",
        "writetofile",
        "create",
        "patch",
    }
)
_SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "sh",
        "runcommand",
        "executecommand",
        "terminal",
        "runshellcommand",
        "runterminalcommand",
        "exec",
        "localshell",
        "execcommand",
        "computer",
    }
)
_PYTHON_TOOLS = frozenset(
    {"python", "runpython", "executepython", "pythoninterpreter", "jupyter", "executecode", "runcode"}
)
_CONTENT_KEYS = ("content", "new_string", "new_str", "file_text", "insert_text", "new_source", "code", "text", "patch")
_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "file", "target_file")
_EXT = {
    ".py": "python",
    ".pyw": "python",
    ".pyi": "python",
    ".js": "js",
    ".jsx": "js",
    ".ts": "js",
    ".tsx": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".vue": "js",
    ".svelte": "js",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".java": "code",
    ".go": "code",
    ".php": "code",
    ".rb": "code",
    ".cs": "code",
    ".kt": "code",
    ".scala": "code",
    ".swift": "code",
}
_LOCKFILES = re.compile(
    r"(?:^|/)(?:package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|uv\.lock|Cargo\.lock|Pipfile\.lock|composer\.lock|go\.sum)$"
)
_ENV_FILE = re.compile(r"(?:^|/)\.env(?:\.[\w.-]+)?$")
_CELL_SHELL = re.compile(r"^%%(?:bash|sh|script\s+(?:ba)?sh)\b")
_CELL_JS = re.compile(r"^%%(?:javascript|js)\b")


@dataclass(frozen=True, slots=True)
class Watched:
    """One piece of text to scan, what language it is, and where it lives (for locations)."""

    text: str
    language: Language  # "text": scanned for secrets only; "output": for leaked secrets
    label: str  # how the interjection names it: "auth.js", "cell c3f1a2", "the Bash command"
    path: str | None = None
    cell_id: str | None = None
    secrets: bool = True  # False for a .env file: that is where secrets belong
    execution_count: int | None = None  # a cell without an id is named by these instead
    cell_index: int | None = None

    @property
    def in_cell(self) -> bool:
        """Whether this piece is (the source or output of) a notebook cell."""
        return self.path is None and (
            self.cell_id is not None or self.execution_count is not None or self.cell_index is not None
        )


def _norm(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower().rsplit(".", 1)[-1].rsplit("__", 1)[-1])


def _language(path: str | None, text: str) -> Language:
    if path:
        for ext, lang in _EXT.items():
            if path.endswith(ext):
                return lang  # type: ignore[return-value]
    first = text.lstrip()[:80]
    if first.startswith("#!"):
        return "python" if "python" in first.splitlines()[0] else "shell"
    return "text"


def watched_pieces(
    obs: Observation, calls: Mapping[str, ToolCall], *, cell_index: int | None = None
) -> Iterator[Watched]:
    """The pieces of ``obs`` worth scanning; ``calls`` pairs a tool result with its call.

    ``cell_index`` is the cell's order in the session, naming a cell that has no id.
    """
    if isinstance(obs, CellExecuted):
        yield from _cell(obs, cell_index)
    elif isinstance(obs, ToolCall):
        yield from _tool_call(obs)
    elif isinstance(obs, ToolResult) and obs.output:
        call = calls.get(obs.tool_call_id)
        if call is not None and _norm(call.name) in _WRITE_TOOLS:
            return  # "Successfully wrote auth.js": the content was scanned on the call
        name = call.name if call is not None else "a tool"
        yield Watched(obs.output[:20000], "output", f"the output of {name}")


def _cell(obs: CellExecuted, index: int | None) -> Iterator[Watched]:
    if obs.cell_id:
        label = f"cell {obs.cell_id}"
    elif obs.execution_count is not None:
        label = f"cell In[{obs.execution_count}]"
    else:
        label = f"cell #{index}" if index is not None else "the cell"
    where = functools.partial(
        Watched, label=label, cell_id=obs.cell_id or None, execution_count=obs.execution_count, cell_index=index
    )
    lines = obs.source.splitlines()
    first = lines[0].strip() if lines else ""
    if _CELL_SHELL.match(first):
        yield where("\n" + "\n".join(lines[1:]), "shell")
    elif _CELL_JS.match(first):
        yield where("\n" + "\n".join(lines[1:]), "js")
    else:
        python, shell = [], []
        open_brackets = 0  # a magic's arguments continued onto the next lines (``%timeit f(x,\n y)``)
        for i, line in enumerate(lines):
            stripped = line.lstrip()
            indent = line[: len(line) - len(stripped)]
            if open_brackets > 0:
                python.append("")
                shell.append("")
                open_brackets = max(0, open_brackets + _balance(line))
                continue
            magic = stripped.startswith(("!", "%")) or (i == 0 and stripped.startswith("%%"))
            python.append(f"{indent}pass" if magic and not stripped.startswith("%%") else ("" if magic else line))
            shell.append(stripped[1:] if stripped.startswith("!") else "")
            if magic:
                open_brackets = max(0, _balance(line))
        yield where("\n".join(python), "python")
        if any(shell):
            yield where("\n".join(shell), "shell")
    if obs.stdout:
        yield where(obs.stdout[:20000], "output", label=f"the output of {label}")


def _balance(line: str) -> int:
    """Brackets a line opens minus those it closes."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _tool_call(obs: ToolCall) -> Iterator[Watched]:
    name = _norm(obs.name)
    args: Mapping[str, Any] = obs.input if isinstance(obs.input, Mapping) else {}
    path = next((str(args[k]) for k in _PATH_KEYS if isinstance(args.get(k), str) and args[k]), None)
    contents = [args[k] for k in _CONTENT_KEYS if isinstance(args.get(k), str) and args[k]]
    for edit in args.get("edits") or ():
        if isinstance(edit, Mapping):
            contents += [
                edit[k] for k in ("new_string", "new_str", "content") if isinstance(edit.get(k), str) and edit[k]
            ]
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    if name in _WRITE_TOOLS or (contents and path):
        if path and _LOCKFILES.search(path):
            return
        label = path or obs.name
        for text in contents:
            yield Watched(text, _language(path, text), label, path=path, secrets=not (path and _ENV_FILE.search(path)))
        if path and "/.ssh/" in f"/{path}":
            yield Watched(f"cat > {path}", "shell", label, path=path, secrets=False)
    elif isinstance(command, str) and command.strip() and (name in _SHELL_TOOLS or " " in command.strip()):
        yield Watched(command, "shell", f"the {obs.name} command")
    elif name in _PYTHON_TOOLS and contents:
        yield Watched(contents[0], "python", f"the {obs.name} code")
