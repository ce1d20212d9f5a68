"""What a tool call does to files: writes, edits and patches read from tool inputs, and the file texts a session has shown.

The evaluation prompt numbers lines as the file will have them. That needs to know a file's text
before an edit: the session may have shown it (a ``Write``, a ``Read`` result, an earlier edit),
or the evaluator may read it from the worktree (``lookup``). ``Files`` keeps what was shown;
``FileChange`` is one change read from a tool input, whatever the agent CLI called the tool.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from watcher.core.observations import Observation, ToolCall, ToolResult

__all__ = ["FileChange", "Files", "KnownFile", "Lookup", "file_changes", "patch_changes"]

Lookup = Callable[[str], str | None]  # a path -> the file's text now, or None (the worktree, read by an evaluator)

_WRITE_TOOLS = frozenset({"Write", "write_file", "create", "create_file", "write"})
_EDIT_TOOLS = frozenset({"Edit", "replace", "edit_file", "str_replace", "edit"})
_READ_TOOLS = frozenset({"Read", "read_file", "view", "read"})
# Claude Code's Read result: "     7→text" (older versions: a tab)
_READ_LINE = re.compile(r"^\s*(\d+)(?:→|\t)(.*)$")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$")


@dataclass(frozen=True, slots=True)
class KnownFile:
    """Some consecutive lines of a file, starting at ``first_line`` (1 when the whole file is known)."""

    first_line: int
    text: str


@dataclass(frozen=True, slots=True)
class FileChange:
    """One change to one file: ``write`` (the whole new text), ``edit`` (``old`` to ``new``) or ``delete``.

    ``hunks`` holds an edit's pieces when a patch changes several places; ``old``/``new`` are then empty.
    """

    kind: str
    path: str
    new: str = ""
    old: str = ""
    replace_all: bool = False
    hunks: tuple[tuple[str, str], ...] = ()

    @property
    def pieces(self) -> tuple[tuple[str, str], ...]:
        """The (old, new) pieces of an edit, in order."""
        return self.hunks or ((self.old, self.new),)


def _text(args: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def file_changes(call: ToolCall) -> list[FileChange]:
    """The file changes a tool call makes, or ``[]`` for a call that changes no file it names."""
    args = call.input
    path = _text(args, "file_path", "path", "filename", "notebook_path") or ""
    name = call.name
    if name == "str_replace_editor":  # OpenHands, SWE-agent: one tool, the command says which
        name = {"create": "create", "str_replace": "str_replace"}.get(str(args.get("command")), name)
    if name in _WRITE_TOOLS and path:
        content = _text(args, "content", "file_text", "text")
        return [FileChange("write", path, new=content)] if content is not None else []
    if name in _EDIT_TOOLS and path:
        old, new = _text(args, "old_string", "old_str", "old"), _text(args, "new_string", "new_str", "new")
        if old is None or new is None:
            return []
        return [FileChange("edit", path, old=old, new=new, replace_all=bool(args.get("replace_all")))]
    if call.name == "MultiEdit" and path and isinstance(args.get("edits"), list):
        pieces = tuple(
            (str(e.get("old_string", "")), str(e.get("new_string", "")))
            for e in args["edits"]
            if isinstance(e, Mapping)
        )
        return [FileChange("edit", path, hunks=pieces)] if pieces else []
    patch = _text(args, "input", "patch", "command", "cmd")
    if patch and "*** Begin Patch" in patch:
        return patch_changes(patch)
    return []


def patch_changes(patch: str) -> list[FileChange]:
    """The changes of an ``apply_patch`` patch (``*** Begin Patch`` … ``*** End Patch``, Codex's format)."""
    changes: list[FileChange] = []
    lines = patch.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        header = _PATCH_FILE.match(lines[i].strip())
        i += 1
        if header is None:
            continue
        kind, path = header.group(1), header.group(2).strip()
        body: list[str] = []
        while i < len(lines) and not _PATCH_FILE.match(lines[i].strip()) and lines[i].strip() != "*** End Patch":
            body.append(lines[i])
            i += 1
        if kind == "Delete":
            changes.append(FileChange("delete", path))
        elif kind == "Add":
            added = [line[1:] for line in body if line.startswith("+")]
            changes.append(FileChange("write", path, new="\n".join(added) + ("\n" if added else "")))
        else:
            changes.append(FileChange("edit", path, hunks=tuple(_hunks(body))))
    return changes


def _hunks(body: list[str]) -> Iterator[tuple[str, str]]:
    """(old, new) text of each ``@@``-separated hunk of an update."""
    old: list[str] = []
    new: list[str] = []
    for line in [*body, "@@"]:
        if line.startswith("@@") or line.startswith("*** "):
            if old or new:
                yield "\n".join(old) + "\n", "\n".join(new) + "\n"
            old, new = [], []
            continue
        sign, text = (line[:1], line[1:]) if line[:1] in " +-" else (" ", line)
        if sign != "+":
            old.append(text)
        if sign != "-":
            new.append(text)


class Files:
    """The file texts a session has shown so far, learnt observation by observation.

    ``lookup`` is asked for a file the session never showed (an evaluator reads the worktree);
    its answer may already hold a change, so ``before`` accepts a text holding either side.
    """

    def __init__(self, known: Mapping[str, KnownFile] | None = None, lookup: Lookup | None = None) -> None:
        self.known: dict[str, KnownFile] = dict(known or {})
        self.lookup = lookup
        self._reads: dict[str, str] = {}  # tool call id -> path of a read in flight

    def learn(self, obs: Observation) -> None:
        """Update what is known after ``obs`` happened."""
        if isinstance(obs, ToolCall):
            viewing = obs.name == "str_replace_editor" and obs.input.get("command") == "view"
            if obs.name in _READ_TOOLS or viewing:
                path = _text(obs.input, "file_path", "path", "absolute_path")
                if path:
                    self._reads[obs.id] = path
            for change in file_changes(obs):
                self._apply(change)
        elif isinstance(obs, ToolResult) and obs.tool_call_id in self._reads:
            path = self._reads.pop(obs.tool_call_id)
            read = _read_result(obs.output)
            if read is not None and not obs.is_error:
                self.known[path] = read

    def _apply(self, change: FileChange) -> None:
        if change.kind == "write":
            self.known[change.path] = KnownFile(1, change.new)
        elif change.kind == "delete":
            self.known.pop(change.path, None)
        else:
            before = self.known.get(change.path)
            after = apply_edit(before.text, change) if before is not None else None
            if before is not None and after is not None:
                self.known[change.path] = KnownFile(before.first_line, after)
            else:
                self.known.pop(change.path, None)  # no longer sure of it

    def before(self, change: FileChange) -> KnownFile | None:
        """The file's text before ``change``, when the session showed it or the lookup finds either side."""
        known = self.known.get(change.path)
        if known is not None and apply_edit(known.text, change) is not None:
            return known
        now = self.lookup(change.path) if self.lookup is not None else None
        if now is None:
            return None
        if apply_edit(now, change) is not None:
            return KnownFile(1, now)
        undone = apply_edit(now, FileChange("edit", change.path, hunks=tuple((n, o) for o, n in change.pieces)))
        return KnownFile(1, undone) if undone is not None else None  # the change is on disk already


def apply_edit(text: str, change: FileChange) -> str | None:
    """``text`` with every piece of ``change`` replaced once (all with ``replace_all``); None if a piece is missing."""
    for old, new in change.pieces:
        if not old or old not in text:
            return None
        text = text.replace(old, new) if change.replace_all else text.replace(old, new, 1)
    return text


def _read_result(output: str) -> KnownFile | None:
    """The lines a ``Read`` result shows (``     7→text``), when they are numbered and consecutive."""
    numbered = [_READ_LINE.match(line) for line in output.split("\n") if line.strip()]
    if not numbered or any(m is None for m in numbered):
        return None
    numbers = [int(m.group(1)) for m in numbered if m is not None]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return None
    return KnownFile(numbers[0], "\n".join(m.group(2) for m in numbered if m is not None) + "\n")
