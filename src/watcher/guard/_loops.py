"""A shell ``for`` loop over words written out once per word: ``for d in "$HOME/.cache" build; do
rm -rf "$d"; done`` is read as ``rm -rf "$HOME/.cache"`` then ``rm -rf build``, so the rules judge
the command with each value the loop gives it (a glob, ``"$root"/*``, stays one word: every entry).

Read with tree-sitter, as the rest of the line is, but only on short scripts (a long one is parsed
in a child first, by ``_shell``, because some input takes tree-sitter quadratic time); within bounds
on the words, the loops and the text written."""

from __future__ import annotations

from ast_grep_py import SgNode, SgRoot

from watcher.guard._lazy import lazy
from watcher.guard._probe import PROBED_CHARS
from watcher.guard._shell import within

__all__ = ["loops_unrolled"]

_MAX_WORDS = 16  # words of one loop written out
_MAX_LOOPS = 16  # loops written out in one script
_MAX_TEXT = 32_000  # the script's text, loops written out included
_ROUNDS = 3  # loops in loops: the outer first, then the inner ones it wrote out
_FOR_IN = lazy(r"\bfor\s+[A-Za-z_]\w*\s+in\b")
_MANY = lazy(r"\{[^{}]*\.\.[^{}]*\}|\$\(|`|\$\{\w+\[[@*]\]\}|\$[@*]")


def loops_unrolled(script: str) -> str:
    """``script`` with each ``for NAME in WORDS`` loop written out once per word (short scripts only)."""
    for _ in range(_ROUNDS):
        if len(script) > max(PROBED_CHARS, 8192) or not _FOR_IN.search(script):
            return script  # most lines hold no `for … in`: they are not parsed again here
        root = SgRoot(script, "bash").root()
        if root.find(kind="ERROR") is not None:
            return script
        loops = [n for n in root.find_all(kind="for_statement") if not within(n, "for_statement")][:_MAX_LOOPS]
        done, pos, out = False, 0, []
        for loop in loops:
            written = _written_out(loop)
            if written is None:
                continue
            r = loop.range()
            out += [script[pos : r.start.index], written]
            pos, done = r.end.index, True
        text = "".join([*out, script[pos:]])
        if not done or len(text) > _MAX_TEXT:
            return script
        script = text
    return script


def _written_out(loop: SgNode) -> str | None:
    """The loop's body once per word, the variable written as the word where it is read."""
    named = [c for c in loop.children() if c.is_named()]
    if not named or named[0].kind() != "variable_name" or named[-1].kind() != "do_group":
        return None  # for ((…)), or a loop over "$@"
    name, words, body = named[0].text(), named[1:-1], named[-1]
    if not words or len(words) > _MAX_WORDS or any(_MANY.search(w.text()) for w in words):
        return None  # `{1..100000}`, `$(seq …)`, `$(ls)`: words known only as it runs, and maybe many
    inner = [c for c in body.children() if c.is_named()]
    if not inner:
        return None
    start, end = inner[0].range().start.index, inner[-1].range().end.index
    uses = [
        e
        for e in body.find_all(kind="simple_expansion") + body.find_all(kind="expansion")
        if e.text() in (f"${name}", f"${{{name}}}")
    ]
    source = body.get_root().root().text()
    copies = []
    for word in (w.text() for w in words):
        parts, pos = [], start
        for e in sorted(uses, key=lambda n: n.range().start.index):
            r = e.range()
            parts.append(source[pos : r.start.index])
            parent = e.parent()
            # inside "…": the quote ends, the word is written as it was written, the quote goes on;
            # unquoted, a quoted word's words as the shell splits them ("iptables -F" for `sudo $s`)
            parts.append(f'"{word}"' if parent is not None and parent.kind() == "string" else _split(word))
            pos = r.end.index
        parts.append(source[pos:end])
        copies.append(f"{name}={word}\n" + "".join(parts))
    return "\n".join(copies)


def _split(word: str) -> str:
    """A loop's word as an unquoted expansion of it gives it: a quoted string's words, split (when
    they hold none of the shell's own characters, which an expansion never acts on); else as written."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'" and not _SPECIAL.search(word[1:-1]):
        return word[1:-1]
    return word


_SPECIAL = lazy(r"[\"'`$\\;&|<>(){}*?\[\]~#]")
