"""Widgets whose ``text/plain`` form says what they show.

A frontend without the widget manager (a terminal console, ``nbconvert``, a notebook viewer on a
code host) prints a widget's ``text/plain`` form, which ipywidgets makes from ``repr``: for a
box that is the widget tree (``VBox(children=(HTML(value='<b>fleet…``). These classes print the
text their parts show instead, as ``WatcherPanel`` does, so a saved notebook reads as a summary.
That text is what the panels show of agents and models (an interjection, a cell's output), and a
terminal console prints it: redacted, with control sequences and bidirectional controls shown as
code points.
"""

from __future__ import annotations

import html
import re

import ipywidgets as w

from watcher.core.redact import redact
from watcher.core.terminal import for_terminal

__all__ = ["TextBox", "TextOutput", "visible_text"]

_TAG = re.compile(r"<[^>]*>")


def visible_text(markup: str) -> str:
    """What an HTML fragment reads as: its text, tags dropped, entities decoded, spaces joined."""
    return " ".join(html.unescape(_TAG.sub(" ", markup)).split())


def _lines(widget: w.Widget) -> list[str]:
    if isinstance(widget, w.HTML):
        text = visible_text(widget.value)
        return [text] if text else []
    return [line for child in getattr(widget, "children", ()) for line in _lines(child)]


class TextBox(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type hints
    """A ``VBox`` whose ``text/plain`` form is the text of its HTML parts, one per line (redacted)."""

    def __repr__(self) -> str:
        return for_terminal(redact("\n".join(_lines(self)))) or "(empty panel)"


class TextOutput(w.Output):  # type: ignore[misc]
    """An ``Output`` whose ``text/plain`` form is its title and the last line it holds (redacted)."""

    def __init__(self, title: str, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.title = title

    def __repr__(self) -> str:
        text = "".join(str(o.get("text", "")) for o in self.outputs if isinstance(o, dict))
        last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
        shown = " · ".join(part for part in (self.title, last.strip()) if part)
        return for_terminal(redact(shown), one_line=True) or "(no output yet)"
