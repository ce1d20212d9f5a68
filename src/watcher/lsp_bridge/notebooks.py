"""Finding the notebook cell an interjection is about.

A kernel records the cell id its frontend sent. VS Code sends the cell's document URI
(``vscode-notebook-cell:…``), so such an id is the URI to publish to. JupyterLab sends the
nbformat cell id, and nbval/nbclient send none; then the cell is found by comparing the source
the kernel observed with the cells the editor has synced (``notebookDocument/*``), ignoring
trailing whitespace. A cell that has been edited since it ran no longer matches, and its finding
waits until it matches again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import Workspace

__all__ = ["NOTEBOOK_SYNC", "cell_uri_for", "normalise_source"]

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


def cell_uri_for(workspace: Workspace, cell_id: str, source: str | None) -> str | None:
    """The URI of the synced cell ``cell_id`` names, or whose text is ``source``; None if unknown."""
    if _looks_like_uri(cell_id):
        return cell_id  # VS Code: the kernel's cell id is the cell's document URI
    wanted = normalise_source(source) if source is not None else None
    for cell, uri in _cells(workspace):
        metadata: Any = cell.metadata
        if isinstance(metadata, dict) and metadata.get("id") == cell_id:  # JupyterLab-style clients
            return uri
    if not wanted:
        return None
    for _cell, uri in _cells(workspace):
        document = workspace.text_documents.get(uri) or workspace.text_documents.get(unquote(uri))
        if document is not None and normalise_source(document.source) == wanted:
            return uri
    return None
