"""Finding the notebook cell an interjection is about.

A kernel records the cell id its frontend sent. VS Code sends the cell's document URI
(``vscode-notebook-cell:…``), so such an id is the URI to publish to, while a synced notebook
holds that cell (a client that syncs no notebooks gets it always: the server cannot tell). JupyterLab sends the
nbformat cell id, and nbval/nbclient send none; then the cell is found by comparing the source
the kernel observed with the cells the editor has synced (``notebookDocument/*``), ignoring
trailing whitespace. A cell that has been edited since it ran no longer matches, and its finding
waits until it matches again; when several synced cells hold the same source, each gets it.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import Workspace

from watcher.lsp_bridge.documents import EditedWorkspace

__all__ = ["NOTEBOOK_SYNC", "cell_uris_for", "normalise_source"]

NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(notebook=kind, cells=[types.NotebookCellLanguage(language="python")])
        for kind in ("jupyter-notebook", "interactive")
    ]
)


def normalise_source(source: str) -> str:
    """Source text compared without trailing whitespace on lines or at the end."""
    return "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").split("\n")).strip()


def _looks_like_uri(cell_id: str) -> bool:
    scheme, sep, _ = cell_id.partition(":")
    return bool(sep) and scheme.isascii() and scheme.replace("-", "").replace("+", "").isalnum() and len(scheme) > 1


def _cells(workspace: Workspace) -> Iterable[tuple[types.NotebookCell, str]]:
    for notebook in list(workspace.notebook_documents.values()):
        for cell in notebook.cells:
            yield cell, cell.document


def _shown(workspace: Workspace, cell_uri: str) -> bool:
    """Whether a cell named by its URI may be published to: a synced notebook holds it (or none are synced)."""
    if isinstance(workspace, EditedWorkspace) and not workspace.syncs_notebooks:
        return True
    wanted = unquote(cell_uri)
    return any(uri == cell_uri or unquote(uri) == wanted for _cell, uri in _cells(workspace))


def cell_uris_for(workspace: Workspace, cell_id: str, source: str | None) -> list[str]:
    """The URIs of the synced cells ``cell_id`` names, or whose text is ``source`` (maybe none)."""
    if _looks_like_uri(cell_id):  # VS Code: the kernel's cell id is the cell's document URI
        return [cell_id] if _shown(workspace, cell_id) else []  # a closed notebook's cell has nowhere to be
    by_id = [
        uri for cell, uri in _cells(workspace) if isinstance(cell.metadata, dict) and cell.metadata.get("id") == cell_id
    ]
    if by_id:
        return by_id  # clients that put the nbformat id in the cell's metadata
    wanted = normalise_source(source) if source is not None else ""
    if not wanted:
        return []
    found = []
    for _cell, uri in _cells(workspace):
        document = workspace.text_documents.get(uri) or workspace.text_documents.get(unquote(uri))
        if document is not None and normalise_source(document.source) == wanted:
            found.append(uri)
    return found
