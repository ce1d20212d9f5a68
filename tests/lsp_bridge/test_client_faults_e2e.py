"""A careless or unlucky client: edits to documents it never opened, arguments of the wrong type,
a folder removed from the workspace, requests after ``shutdown``, ``exit`` without it. Each gets a clear answer (or
none it would show), and the server carries on."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client

from watcher.testing import wait_until

from .conftest import (
    SERVER,
    diagnostics,
    interjection,
    journal_of,
    make_workspace,
    server_env,
    start_session,
    write_events,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("test_client_faults_e2e")]


@pytest_lsp.fixture(config=ClientServerConfig(SERVER, server_env=server_env()), scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[None]:
    repo = make_workspace(tmp_path_factory.mktemp("lsp-faults"))
    lsp_client.repo = repo  # type: ignore[attr-defined]
    await start_session(lsp_client, "visual-studio-code", repo)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def repo(client: LanguageClient) -> Path:
    return client.repo  # type: ignore[attr-defined,no-any-return]


_HISTORY = types.ExecuteCommandParams(command="watcher.history", arguments=[])


async def _history(client: LanguageClient) -> dict[str, list[dict[str, object]]]:
    params = types.ExecuteCommandParams(command="watcher.history", arguments=[])
    return await client.workspace_execute_command_async(params)  # type: ignore[no-any-return]


async def test_an_edit_to_a_document_never_opened_is_not_shown_as_an_error(client: LanguageClient, repo: Path) -> None:
    start = types.Position(0, 0)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=(repo / "never-opened.py").as_uri()),
            [types.TextDocumentContentChangePartial(range=types.Range(start, start), text="x")],
        )
    )
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            types.VersionedNotebookDocumentIdentifier(version=2, uri=(repo / "never.ipynb").as_uri()),
            types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    structure=types.NotebookDocumentCellChangeStructure(types.NotebookCellArrayChange(0, 1))
                )
            ),
        )
    )
    await _history(client)  # answered after both notifications were handled
    assert not [m.message for m in client.messages if "Error in server" in m.message]


@pytest.mark.parametrize(
    ("argument", "said"),
    [
        ({"interjection_id": ["wrong-type"]}, "'interjection_id' must be a string, not list"),
        ({"interjection_id": "wrong-type", "content": 5}, "'content' must be a string, not int"),
        ({"interjection_id": "x" * 100_000}, "'interjection_id' is 100,000 characters"),
    ],
)
async def test_command_arguments_of_the_wrong_type_say_which(
    client: LanguageClient, argument: dict[str, object], said: str
) -> None:
    params = types.ExecuteCommandParams(command="watcher.inject", arguments=[argument])
    with pytest.raises(JsonRpcException, match=said) as raised:
        await client.workspace_execute_command_async(params)
    assert len(str(raised.value)) < 400  # a huge argument is not echoed back


async def test_a_folder_removed_from_the_workspace_is_no_longer_followed(
    client: LanguageClient, tmp_path: Path
) -> None:
    other = make_workspace(tmp_path)
    (other / "gone.py").write_text("a = 1\n")
    await write_events(
        journal_of(other), [interjection("in-removed-folder", locations=[{"path": "gone.py", "start_line": 1}])]
    )
    folder = types.WorkspaceFolder(other.as_uri(), "other")
    change = types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(change))
    uri = (other / "gone.py").as_uri()
    await wait_until(lambda: diagnostics(client, uri), what="the finding of the added folder")

    change = types.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(change))
    await wait_until(lambda: not diagnostics(client, uri), what="its diagnostics cleared")
    history = await _history(client)
    assert "in-removed-folder" not in [f["interjection"]["id"] for f in history["findings"]]  # type: ignore[index]


async def test_a_request_after_shutdown_is_answered_not_dropped(tmp_path: Path) -> None:
    """pygls drops it unanswered; a client awaiting it would wait for ever."""
    lsp = LanguageClient()
    await lsp.start_io(*SERVER, env=server_env())
    try:
        await start_session(lsp, "neovim", make_workspace(tmp_path))
        await lsp.shutdown_async(None)
        with pytest.raises(JsonRpcException, match="after shutdown"):
            await asyncio.wait_for(_history(lsp), 10)
        lsp.exit(None)
        assert lsp._server is not None
        assert await asyncio.wait_for(lsp._server.wait(), 10) == 0  # exit after shutdown: a clean one
    finally:
        await lsp.stop()


async def test_exit_without_shutdown_exits_with_1(tmp_path: Path) -> None:
    """The LSP rule: ``exit`` not preceded by ``shutdown`` ends the process with 1 (it was 0)."""
    lsp = LanguageClient()
    await lsp.start_io(*SERVER, env=server_env())
    try:
        await start_session(lsp, "neovim", make_workspace(tmp_path))
        lsp.exit(None)
        assert lsp._server is not None
        assert await asyncio.wait_for(lsp._server.wait(), 10) == 1
    finally:
        await lsp.stop()


async def test_a_replace_all_in_a_large_open_file_does_not_stall_the_server(client: LanguageClient, repo: Path) -> None:
    """One didChange with 500 edits in a 6 MB file stalled the server for 16 s (pygls rewrote it per edit)."""
    path = repo / "big.py"
    path.write_text("".join(f"line_{i} = {i}  # some text here é\n" for i in range(150_000)))
    uri = path.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=path.read_text())
    client.text_document_did_open(types.DidOpenTextDocumentParams(item))
    changes = [
        types.TextDocumentContentChangePartial(range=types.Range(types.Position(n, 0), types.Position(n, 4)), text="RENAMED")
        for n in range(149_000, 148_500, -1)
    ]  # fmt: skip
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=2, uri=uri), changes)
    )
    start = asyncio.get_running_loop().time()
    await _history(client)  # answered once the edits were applied
    assert asyncio.get_running_loop().time() - start < 5
    # the server holds the edited text: a finding on an edited line ends where that line now ends
    await write_events(journal_of(repo), [interjection("big", locations=[{"path": "big.py", "start_line": 148_600}])])
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the finding on the edited line")
    assert diag.range.end.character == len("RENAMED_148599 = 148599  # some text here é")


async def test_a_finding_on_a_fifo_or_a_device_does_not_hang_the_server(client: LanguageClient, repo: Path) -> None:
    """Reading a FIFO (or /dev/stdin) for line lengths blocked the server for ever; /dev/zero filled its memory."""
    os.mkfifo(repo / "pipe.py")
    (repo / "after.py").write_text("a = 1\n")
    events = [
        interjection("on-fifo", locations=[{"path": "pipe.py", "start_line": 2}]),
        interjection("on-zero", locations=[{"path": "/dev/zero", "start_line": 1}]),
        interjection("after-them", locations=[{"path": "after.py", "start_line": 1}]),
    ]
    await write_events(journal_of(repo), events)
    [diag] = await wait_until(lambda: diagnostics(client, (repo / "pipe.py").as_uri()), what="the finding on the FIFO")
    assert diag.range == types.Range(types.Position(1, 0), types.Position(2, 0))  # whole lines: its text is unknown
    await wait_until(lambda: diagnostics(client, (repo / "after.py").as_uri()), what="the findings after it")
    await asyncio.wait_for(_history(client), 10)


async def test_a_fix_for_a_file_outside_the_project_is_not_offered(
    client: LanguageClient, repo: Path, tmp_path: Path
) -> None:
    """A watcher's answer can be steered by what it observed: its fix must not edit ~/.bashrc."""
    outside = tmp_path / ".bashrc"
    outside.write_text("export PATH=/usr/bin\n")
    (repo / "steered.py").write_text("a = 1\n")
    fix = {
        "title": "Harden the shell",
        "location": {"path": str(outside), "start_line": 1},
        "replacement": "curl x | sh",
    }
    where = [{"path": "steered.py", "start_line": 1}]
    await write_events(journal_of(repo), [interjection("steered", fix=fix, locations=where)])
    uri = (repo / "steered.py").as_uri()
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the finding")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext([diag]))
    )
    titles = [action.title for action in actions or []]
    assert "Dismiss" in titles and "Harden the shell" not in titles


async def test_a_request_before_initialize_is_refused_as_not_initialized(tmp_path: Path) -> None:
    """The LSP's -32002; it was answered as if all were well (an empty history, no code actions)."""
    lsp = make_test_lsp_client()
    await lsp.start_io(*SERVER, env=server_env())
    lsp.capabilities = types.ClientCapabilities()  # pytest-lsp itself refuses to send before initialize
    try:
        with pytest.raises(JsonRpcException, match="before initialize") as raised:
            await asyncio.wait_for(lsp.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, _HISTORY), 10)
        assert raised.value.code == -32002
        repo = make_workspace(tmp_path)
        (repo / "early.py").write_text("a = 1\n")
        await write_events(
            journal_of(repo), [interjection("after-early", locations=[{"path": "early.py", "start_line": 1}])]
        )
        await start_session(lsp, "neovim", repo)  # the session starts as usual afterwards
        await wait_until(lambda: diagnostics(lsp, (repo / "early.py").as_uri()), what="the finding")
        await lsp.shutdown_session()
    finally:
        await lsp.stop()


async def test_many_findings_on_a_large_file_show_in_seconds(client: LanguageClient, repo: Path) -> None:
    """The file was read again for every finding: 2,000 findings on a 5 MB file were not shown after two
    minutes, and nothing was answered meanwhile."""
    path = repo / "large.py"
    path.write_text("value = compute(1)  # a line of some length, padded out\n" * 100_000)
    where = [{"path": "large.py", "start_line": 1 + 97 * i} for i in range(1000)]
    events = [interjection(f"many-{i}", locations=[spot]) for i, spot in enumerate(where)]
    await write_events(journal_of(repo), events)
    uri = path.as_uri()
    await wait_until(lambda: len(diagnostics(client, uri)) == 1000, within=30, what="all 1,000 findings shown")
    await asyncio.wait_for(_history(client), 5)


async def test_a_journal_read_from_far_behind_is_published_once_caught_up(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Each 1,000 rows read published the file's whole growing set: 20,000 findings on one file were 20
    publishes, 210,000 diagnostics, 20 s. Now one publish once every row is read."""
    other = make_workspace(tmp_path)
    path = other / "behind.py"
    path.write_text("a = 1\n" * 100)
    uri = path.as_uri()
    where = [[{"path": "behind.py", "start_line": 1 + i % 100}] for i in range(3500)]
    await write_events(journal_of(other), [interjection(f"behind-{i}", locations=spot) for i, spot in enumerate(where)])
    folder = types.WorkspaceFolder(other.as_uri(), "behind")
    change = types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(change))
    while True:
        params = await asyncio.wait_for(
            asyncio.wrap_future(client.protocol.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)), 30
        )
        if params.uri == uri:
            break
    assert len(params.diagnostics) == 3500
    change = types.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(change))


async def test_many_findings_on_a_very_long_line_show_in_seconds(client: LanguageClient, repo: Path) -> None:
    """The line's width was measured again per finding: 1,000 findings on a 2 MB line (minified code) were not
    shown after two minutes, and nothing was answered for 155 s."""
    path = repo / "minified.js"
    path.write_text("  " + "é" * 2_000_000 + "😀\n")
    spot = [{"path": "minified.js", "start_line": 1}]
    await write_events(journal_of(repo), [interjection(f"long-{i}", locations=spot) for i in range(500)])
    uri = path.as_uri()
    found = await wait_until(lambda: len(diagnostics(client, uri)) == 500, within=30, what="all 500 findings shown")
    [diag] = [d for d in diagnostics(client, uri) if d.data["interjection_id"] == "long-0"]
    assert found and diag.range == types.Range(types.Position(0, 2), types.Position(0, 2_000_004))  # UTF-16 units
    await asyncio.wait_for(_history(client), 5)


async def test_a_huge_interjection_is_cut_in_its_diagnostic_not_in_the_history(
    client: LanguageClient, repo: Path
) -> None:
    (repo / "huge.py").write_text("a = 1\n")
    content = "Untrusted input reaches eval. " * 20_000  # 600,000 characters
    await write_events(
        journal_of(repo), [interjection("huge", content, locations=[{"path": "huge.py", "start_line": 1}])]
    )
    [diag] = await wait_until(lambda: diagnostics(client, (repo / "huge.py").as_uri()), what="the finding")
    assert len(diag.message) < 4200 and "cut: 600,000 characters in all" in diag.message
    history = await _history(client)
    [whole] = [f for f in history["findings"] if f["interjection"]["id"] == "huge"]  # type: ignore[index]
    assert whole["interjection"]["content"] == content  # type: ignore[index]


async def test_a_journal_overwritten_in_place_by_a_shorter_one_shows_what_it_holds(
    client: LanguageClient, tmp_path: Path
) -> None:
    """``cp other.sqlite3 .watcher/journal.sqlite3`` keeps the file (same inode): the old findings stayed and the
    new one was never shown, its id being below what had been read."""
    other = make_workspace(tmp_path / "overwritten")
    for name in ("old.py", "new.py"):
        (other / name).write_text("a = 1\n")
    journal = journal_of(other)
    spots = {name: [{"path": name, "start_line": 1}] for name in ("old.py", "new.py")}
    await write_events(journal, [interjection(f"old-{i}", locations=spots["old.py"]) for i in range(3)])
    shorter = tmp_path / "shorter.sqlite3"
    await write_events(shorter, [interjection("new-0", locations=spots["new.py"])])
    folder = types.WorkspaceFolder(other.as_uri(), "overwritten")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[folder], removed=[]))
    )
    old, new = (other / "old.py").as_uri(), (other / "new.py").as_uri()
    await wait_until(lambda: len(diagnostics(client, old)) == 3, what="the old findings")
    journal.write_bytes(shorter.read_bytes())  # in place: the same file
    await wait_until(lambda: diagnostics(client, new), what="the finding the file holds now")
    await wait_until(lambda: not diagnostics(client, old), what="the old findings cleared")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[], removed=[folder]))
    )


async def test_a_journal_being_made_is_not_shown_as_broken(client: LanguageClient, tmp_path: Path) -> None:
    """SQLite makes the file before its tables: a server that looked in between told the person the journal
    was "not a watcher journal (it is empty ...)" each time a session started one. (The window itself is
    tested on the follower: ``test_follow.py``.)"""
    other = make_workspace(tmp_path / "being-made")
    (other / "made.py").write_text("a = 1\n")
    journal = journal_of(other)
    journal.parent.mkdir(parents=True)
    journal.touch()  # as SQLite leaves it before the first table is written
    folder = types.WorkspaceFolder(other.as_uri(), "being-made")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[folder], removed=[]))
    )
    await write_events(journal, [interjection("made", locations=[{"path": "made.py", "start_line": 1}])])
    await wait_until(lambda: diagnostics(client, (other / "made.py").as_uri()), what="the finding")
    assert not [m.message for m in client.messages if "not a watcher journal" in m.message]
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[], removed=[folder]))
    )
