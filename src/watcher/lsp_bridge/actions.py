"""Code actions on watcher diagnostics, and the commands they run.

On a watcher diagnostic the editor offers **Inject into <session>** (a pending interjection of a
manual watcher), **Apply suggested fix** (a ``WorkspaceEdit``, when the interjection carries a
fix) and **Dismiss**. Inject and dismiss are ``workspace/executeCommand`` commands: the server
writes them to the journal's ``commands`` table, and the process that owns the session applies
them. The command as written folds into the book's fates at once, like any client's read from
the journal: a dismissal hides the diagnostic, an injection shows "injection requested" until the
owner journals the delivery (or marks the command failed).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import Workspace

from watcher.core.errors import InvalidCommandError
from watcher.core.interjection import Location
from watcher.core.logs import logger
from watcher.lsp_bridge.diagnostics import location_uris
from watcher.lsp_bridge.findings import Finding, FindingBook
from watcher.runtime.fates import NEW, PENDING
from watcher.runtime.journal import Command, journal_label


class FindingHost(Protocol):
    """What the code actions need from the language server (``WatcherLanguageServer`` is one)."""

    @property
    def workspace(self) -> Workspace: ...

    def find(self, interjection_id: str, *, journal: str | None = None) -> tuple[FindingBook, Finding] | None: ...

    def findings_on(self, uri: str) -> list[tuple[FindingBook, Finding, list[types.Diagnostic]]]: ...

    async def submit_command(self, book: FindingBook, finding: Finding, kind: str, payload: dict[str, Any]) -> int: ...

    def refresh(self, pairs: Iterable[tuple[FindingBook, Finding]]) -> None: ...


__all__ = ["COMMANDS", "FindingHost", "code_actions", "fix_edit", "run_command"]

log = logger("watcher.lsp")

#: command name -> journal command kind
COMMANDS = {"watcher.inject": "inject", "watcher.accept": "accept", "watcher.dismiss": "dismiss"}


def _argument(finding: Finding) -> dict[str, str]:
    return {"interjection_id": finding.id, "session": finding.session, "journal": journal_label(finding.journal)}


def fix_edit(ls: FindingHost, book: FindingBook, finding: Finding) -> types.WorkspaceEdit | None:
    """The suggested fix as an edit replacing whole lines, or None when it cannot be placed."""
    fix = finding.interjection.fix
    if fix is None:
        return None
    uris = location_uris(ls.workspace, book, finding, fix.location)
    if len(uris) != 1:
        return None  # an edit must be unambiguous
    if not _in_project(ls.workspace, book, uris[0]):
        log.warning("not offering the fix of %s: %s is outside the project and the workspace", finding.id, uris[0])
        return None
    edit = types.TextEdit(_line_span(fix.location), _with_newline(fix.replacement))
    return types.WorkspaceEdit(changes={uris[0]: [edit]})


def _in_project(workspace: Workspace, book: FindingBook, uri: str) -> bool:
    """Whether a fix may edit ``uri``: a notebook cell, or a file under the journal's project or a workspace
    folder. A watcher's answer can be steered by what it observed; its fix must not reach ~/.bashrc."""
    if not uri.startswith("file:"):
        return True  # a notebook cell the editor synced
    path = Path(to_fs_path(uri) or "/").resolve()
    roots = [book.root, *(Path(to_fs_path(f.uri) or "/") for f in workspace.folders.values())]
    return any(path.is_relative_to(root.resolve()) for root in roots)


def _line_span(location: Location) -> types.Range:
    """From the start of the first line to the start of the line after the last one."""
    return types.Range(types.Position(location.start_line - 1, 0), types.Position(location.last_line, 0))


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def code_actions(ls: FindingHost, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The actions for the watcher diagnostics in ``params.context`` (or, failing that, in range)."""
    uri = params.text_document.uri
    wanted = [d for d in params.context.diagnostics if d.source == "watcher"]
    found: list[tuple[FindingBook, Finding, list[types.Diagnostic]]] = []
    for book, finding, diagnostics in ls.findings_on(uri):
        mine = (
            [d for d in diagnostics if any(_same(d, w) for w in wanted)]
            if wanted
            else [d for d in diagnostics if _overlaps(d.range, params.range)]
        )
        if mine:
            found.append((book, finding, mine))
    only = params.context.only
    actions: list[types.CodeAction] = []
    for book, finding, diagnostics in found:
        if finding.injectable:
            actions.append(
                types.CodeAction(
                    title=f"Inject into {finding.session}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=diagnostics,
                    command=types.Command(
                        f"Inject into {finding.session}", "watcher.inject", arguments=[_argument(finding)]
                    ),
                )
            )
        edit = fix_edit(ls, book, finding)
        if edit is not None:
            title = finding.interjection.fix.title if finding.interjection.fix else "Apply suggested fix"
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=diagnostics,
                    edit=edit,
                    is_preferred=True,
                )
            )
        actions.append(
            types.CodeAction(
                title="Dismiss",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=diagnostics,
                command=types.Command("Dismiss", "watcher.dismiss", arguments=[_argument(finding)]),
            )
        )
    if only:
        actions = [a for a in actions if a.kind is not None and any(_kind(a.kind).startswith(_kind(k)) for k in only)]
    return actions


def _short(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters: a client's huge value is not echoed back in full."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def _kind(kind: types.CodeActionKind | str) -> str:
    return kind.value if isinstance(kind, types.CodeActionKind) else str(kind)


def _same(ours: types.Diagnostic, theirs: types.Diagnostic) -> bool:
    """The client's copy of one of our diagnostics: by ``data`` when it kept it, else by place and text."""
    if isinstance(theirs.data, Mapping) and isinstance(ours.data, Mapping):
        return bool(theirs.data.get("interjection_id") == ours.data.get("interjection_id"))
    return theirs.range == ours.range and theirs.message == ours.message


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (b.start.line, b.start.character) <= (
        a.end.line,
        a.end.character,
    )


MAX_CONTENT_CHARS = 20_000  # what a person writes in place of an interjection: a message, not a file
MAX_ID_CHARS = 200  # ids are short; a longer one is not ours, and is not echoed back in full


async def run_command(ls: FindingHost, command: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """Run ``watcher.inject`` / ``watcher.accept`` / ``watcher.dismiss``; raises ``InvalidCommandError`` on bad input."""
    kind = COMMANDS[command]
    if len(args) != 1 or not isinstance(args[0], Mapping) or not args[0].get("interjection_id"):
        raise InvalidCommandError(
            f"{command} takes one argument: an object with 'interjection_id' (and optionally 'content')"
        )
    arg = args[0]
    for name in ("interjection_id", "content"):
        value = arg.get(name)
        if value is not None and not isinstance(value, str):
            raise InvalidCommandError(f"{command}: '{name}' must be a string, not {type(value).__name__}")
    if len(arg["interjection_id"]) > MAX_ID_CHARS:
        raise InvalidCommandError(
            f"{command}: 'interjection_id' is {len(arg['interjection_id']):,} characters; an id has at most "
            f"{MAX_ID_CHARS}: pass the id from the diagnostic's data"
        )
    journal = arg.get("journal")
    if journal is not None and (not isinstance(journal, str) or not journal or "\0" in journal):
        raise InvalidCommandError(
            f"{command}: 'journal' must be the path of a journal this server follows (a non-empty string "
            f"without NUL), not {_short(journal)}; leave it out to search every journal"
        )
    located = ls.find(arg["interjection_id"], journal=journal)
    if located is None:
        raise InvalidCommandError(
            f"{command}: no interjection {arg['interjection_id']!r} in the journals this server follows"
        )
    book, finding = located
    content = arg.get("content") if kind != "dismiss" else None  # a dismissal says nothing
    if isinstance(content, str) and len(content) > MAX_CONTENT_CHARS:
        raise InvalidCommandError(
            f"{command}: 'content' is {len(content):,} characters; an interjection takes at most "
            f"{MAX_CONTENT_CHARS:,}: say it shorter"
        )
    payload: dict[str, Any] = {"content": content} if isinstance(content, str) and content.strip() else {}
    if kind in ("inject", "accept") and finding.status != PENDING and not payload:
        raise InvalidCommandError(
            f"{command}: interjection {finding.id!r} is {finding.status}, not pending; nothing to inject"
        )
    command_id = await ls.submit_command(book, finding, kind, payload)
    written = Command(command_id, time.time(), finding.session, finding.watcher, kind, finding.id, payload, NEW, "")
    book.apply_commands([written])
    ls.refresh([(book, finding)])
    log.info("%s %s of session %r: command %d", kind, finding.id, finding.session, command_id)
    return {"command_id": command_id, "interjection_id": finding.id, "session": finding.session}
