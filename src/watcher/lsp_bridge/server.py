"""The language server: thin wiring between LSP and the journals it follows.

One ``JournalFollower`` per journal (found per workspace folder by the design's rule,
``WATCHER_JOURNAL`` overriding), all read by one ``JournalPoller`` on the server's loop. Findings with a location are
published as push diagnostics; interjections without one are shown as messages and announced
with a ``watcher/interjection`` notification. Features live in their own modules:
``diagnostics``, ``actions``, ``notebooks``, ``follow``, ``poller``, ``findings``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from watcher._version import __version__
from watcher.core.errors import InvalidCommandError, WatcherError
from watcher.core.logs import logger
from watcher.lsp_bridge import actions
from watcher.lsp_bridge.diagnostics import DiagnosticSet, Lines, diagnostics_for
from watcher.lsp_bridge.findings import Finding, FindingBook
from watcher.lsp_bridge.follow import Batch, JournalFollower
from watcher.lsp_bridge.notebooks import NOTEBOOK_SYNC
from watcher.lsp_bridge.poller import JournalPoller
from watcher.lsp_bridge.requests import AnsweringProtocol, invalid_params
from watcher.runtime.fates import PENDING, QUEUED, REQUESTED
from watcher.runtime.journal import default_journal_path, journal_label, project_root
from watcher.settings import Settings

__all__ = ["WatcherLanguageServer", "create_server"]

log = logger("watcher.lsp")

NOTIFICATION = "watcher/interjection"
HISTORY = "watcher.history"
WAITING = frozenset({PENDING, QUEUED, REQUESTED})  # not at their session yet (the status bar counts them)


def _names(given: str, journal: Path | str) -> bool:
    """Whether ``given`` (from an editor: a path, or a URL without its password) names ``journal``."""
    return Path(given).resolve() == journal if isinstance(journal, Path) else given == journal_label(journal)


class WatcherLanguageServer(LanguageServer):
    """A pygls server that follows watcher journals and shows their findings."""

    def __init__(self, *, interval: float = 0.05, settings: Settings | None = None) -> None:
        super().__init__(
            "watcher-lsp", __version__, notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=AnsweringProtocol
        )
        self.settings = settings or Settings.from_env()  # $WATCHER_JOURNAL names every folder's journal
        self.poller = JournalPoller(interval)
        self.followers = self.poller.followers  # by journal
        self.polling: asyncio.Task[None] | None = None
        self.published = DiagnosticSet()
        self.held: set[str] = set()  # URIs whose diagnostics changed while a journal was read from far behind
        self.shut_down = False  # the client asked for ``shutdown``: the ``exit`` after it is a clean one
        self.exit_code = 0  # what the process exits with (the LSP rule: 1 when ``exit`` came without ``shutdown``)

    # --- journals -----------------------------------------------------------------------------

    def folders(self) -> list[Path]:
        """The workspace folders as paths (the root, or the working directory, when none)."""
        uris = [f.uri for f in self.workspace.folders.values()] or [self.workspace.root_uri or ""]
        paths = [Path(p) for p in (to_fs_path(u) for u in uris if u) if p]
        return paths or [Path.cwd()]

    def follow_workspace(self) -> None:
        """Start following the journal of every workspace folder not followed yet."""
        for folder in self.folders():
            journal, root = self._journal_of(folder), project_root(folder)
            if root == folder.resolve():
                root = folder  # keep the editor's spelling of the path, so file URIs match its own
            if journal in self.followers:
                continue
            self.poller.add(JournalFollower(journal, root, self.on_batch, warn=self.warn))
            # a URL's password stays out of the log
            log.info("watching %s for the workspace folder %s", journal_label(journal), folder)
        if self.polling is None:
            self.polling = asyncio.get_running_loop().create_task(self.poller.run(), name="watcher-poll")

    async def unfollow_removed(self) -> None:
        """Stop following the journals no workspace folder names any more, and clear their diagnostics."""
        wanted = {self._journal_of(folder) for folder in self.folders()}
        for journal in [j for j in self.followers if j not in wanted]:
            await self.poller.remove(journal)
            dirty: set[str] = set()
            for key in [k for k in self.published.uris_of if k[0] == str(journal)]:
                dirty |= self.published.remove(key)
            self._publish(dirty)
            log.info("stopped watching %s: no workspace folder uses it now", journal_label(journal))

    def _journal_of(self, folder: Path) -> Path | str:
        journal = default_journal_path(folder, settings=self.settings)
        return journal.resolve() if isinstance(journal, Path) else journal

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A failure outside any request (say, an edit to a document the client never opened): one log
        line. pygls would show it to the person as "Error in server: KeyError ...", which they cannot act on."""
        log.warning("ignored a message the server could not apply (%s): %s", getattr(source, "__name__", source), error)

    def warn(self, problem: str) -> None:
        """A journal problem (damaged, locked, not a journal), shown to the person once."""
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=f"watcher: {problem}"))

    def on_batch(self, book: FindingBook, batch: Batch) -> None:
        """Fold a poll's rows into the book, publish what changed, announce what is new."""
        if batch.reset:
            dirty = set()
            for key in [k for k in self.published.uris_of if k[0] == str(book.journal)]:
                dirty |= self.published.remove(key)
            self._publish(dirty)
        update = book.apply_rows(batch.rows, live_after=batch.live_after)
        changed = update.changed + book.apply_commands(batch.commands)
        self.refresh(((book, finding) for finding in changed), hold=batch.more)
        for finding in update.live:
            self.announce(finding)

    async def stop_following(self) -> None:
        """Stop polling and release every journal."""
        polling, self.polling = self.polling, None
        if polling is not None:
            polling.cancel()
            await asyncio.gather(polling, return_exceptions=True)
        await self.poller.close()

    # --- findings ----------------------------------------------------------------------------

    def books(self) -> list[FindingBook]:
        """The current book of every followed journal."""
        return [f.book for f in self.followers.values()]

    def find(self, interjection_id: str, *, journal: str | None = None) -> tuple[FindingBook, Finding] | None:
        """The finding with this id (in ``journal`` when given)."""
        for book in self.books():
            if journal and not _names(journal, book.journal):
                continue
            finding = book.findings.get(interjection_id)
            if finding is not None:
                return book, finding
        return None

    def findings_on(self, uri: str) -> list[tuple[FindingBook, Finding, list[types.Diagnostic]]]:
        """The findings with diagnostics on ``uri``, with those diagnostics."""
        out = []
        books = {str(book.journal): book for book in self.books()}  # as ``published`` keys them
        for (journal, interjection_id), diagnostics in self.published.by_uri.get(uri, {}).items():
            book = books.get(journal)
            finding = book.findings.get(interjection_id) if book is not None else None
            if book is not None and finding is not None:
                out.append((book, finding, diagnostics))
        return out

    async def submit_command(self, book: FindingBook, finding: Finding, kind: str, payload: dict[str, Any]) -> int:
        """Write a command for the owner of ``finding``'s session to the journal; its id."""
        follower = self.followers.get(book.journal)
        journal = follower.journal if follower is not None else None
        if journal is None:
            raise InvalidCommandError(f"the journal at {book.journal} is not open; try again in a moment")
        return await asyncio.to_thread(
            journal.submit_command, finding.session, kind, finding.id, watcher=finding.watcher, payload=payload
        )

    def history(self, *, summary: bool = False) -> dict[str, Any]:
        """Every finding of every followed journal with its status, and the watchers attached now.

        The ``watcher.history`` command: an editor's history view reads it. ``summary`` (the
        argument ``{"summary": true}``, for a status bar that asks every few seconds): the watchers
        and the counts ``waiting`` and ``total`` instead of the findings (12,000 findings were 5 MB).
        """
        if summary:
            every = [finding for book in self.books() for finding in book.findings.values()]
            waiting = sum(1 for finding in every if finding.shown and finding.status in WAITING)
            return {"watchers": self._attached(), "waiting": waiting, "total": len(every)}
        findings = [
            {**finding.to_json(), "detail": finding.detail, "shown": finding.shown, "injectable": finding.injectable}
            for book in self.books()
            for finding in book.findings.values()
        ]
        return {"watchers": self._attached(), "findings": findings}

    def _attached(self) -> list[dict[str, str]]:
        return [
            {"session": session, "watcher": watcher, "journal": journal_label(book.journal)}
            for book in self.books()
            for (session, watcher), status in book.watchers.items()
            if status != "detached"
        ]

    # --- publishing --------------------------------------------------------------------------

    def refresh(self, pairs: Iterable[tuple[FindingBook, Finding]], *, hold: bool = False) -> None:
        """Re-place the diagnostics of these findings and publish every URI that changed.

        ``hold``: more rows are waiting (a journal read from far behind): publish once they are read,
        not after every 1,000 (20,000 findings on one file were published 20 times, 210,000 diagnostics).
        """
        dirty: set[str] = set()
        known = Lines()  # each document read once for all the findings on it
        for book, finding in pairs:
            try:
                placed = diagnostics_for(self.workspace, book, finding, known)
            except Exception:
                log.exception("cannot place interjection %s; skipping it", finding.id)
                continue
            dirty |= self.published.place((str(book.journal), finding.id), placed)
        if hold:
            self.held |= dirty
        else:
            self._publish(dirty)

    def refresh_all(self, *, cells_only: bool = False) -> None:
        """Re-place every finding (after documents or notebooks opened or changed)."""
        self.refresh(
            (book, finding)
            for book in self.books()
            for finding in list(book.findings.values())
            if finding.interjection.locations
            and (not cells_only or any(loc.cell_id for loc in finding.interjection.locations))
        )

    def _publish(self, uris: Iterable[str]) -> None:
        uris, self.held = set(uris) | self.held, set()
        for uri in sorted(uris):
            self.text_document_publish_diagnostics(self.published.params(uri))

    def announce(self, finding: Finding) -> None:
        """A new live interjection: ``watcher/interjection``, plus a message when it has no location."""
        self.protocol.notify(NOTIFICATION, finding.to_json())
        if finding.interjection.locations:
            return
        i = finding.interjection
        text = f"{finding.watcher} → {finding.session}: {i.content}"
        kind = types.MessageType.Error if i.severity == "critical" else types.MessageType.Warning
        if i.urgent:
            self.window_show_message(types.ShowMessageParams(type=kind, message=text))
        else:
            level = kind if i.severity != "hint" else types.MessageType.Info
            self.window_log_message(types.LogMessageParams(type=level, message=text))


def create_server(*, interval: float = 0.05, settings: Settings | None = None) -> WatcherLanguageServer:
    """A server with every feature registered (``interval``: journal poll period in seconds).

    ``settings``: the environment read when the server starts (default: read now).
    """
    server = WatcherLanguageServer(interval=interval, settings=settings)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: WatcherLanguageServer, params: types.InitializedParams) -> None:
        ls.follow_workspace()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(ls: WatcherLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        await ls.unfollow_removed()
        ls.follow_workspace()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: WatcherLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.refresh((book, finding) for book, finding, _ in ls.findings_on(uri))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_opened(ls: WatcherLanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.refresh_all(cells_only=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_changed(ls: WatcherLanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.refresh_all(cells_only=True)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_closed(ls: WatcherLanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.refresh_all(cells_only=True)  # a finding matched to a closed notebook's cell has nowhere to be

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )
    def code_action(ls: WatcherLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return actions.code_actions(ls, params)

    for name in actions.COMMANDS:
        server.command(name)(_command_handler(name))

    @server.command(HISTORY)
    def history(ls: WatcherLanguageServer, *args: Any) -> dict[str, Any]:
        asked = args[0] if args and isinstance(args[0], dict) else {}
        return ls.history(summary=asked.get("summary") is True)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: WatcherLanguageServer, params: None) -> None:
        ls.shut_down = True
        await ls.stop_following()

    @server.feature(types.EXIT)
    def exit_(ls: WatcherLanguageServer, params: None) -> None:
        ls.exit_code = 0 if ls.shut_down else 1  # pygls computes the same, but its exit is swallowed by start_io

    return server


def _command_handler(name: str) -> Any:
    async def handler(ls: WatcherLanguageServer, *args: Any) -> dict[str, Any]:
        try:
            return await actions.run_command(ls, name, args)
        except (ValueError, WatcherError) as exc:  # bad arguments: -32602 with the rule broken, no traceback
            raise invalid_params(str(exc)) from None

    handler.__name__ = name.replace(".", "_")
    return handler
