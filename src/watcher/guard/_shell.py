"""A shell command line as the simple commands it would run, read with tree-sitter-bash.

The parser is tree-sitter's bash grammar through ``ast-grep-py`` (already a dependency for the
JavaScript rules): a real parser, in native code, that reads ``$(…)``, subshells, pipelines,
``&&``/``;`` chains, here-strings and here-documents, functions and compound statements, and
recovers from a broken line instead of giving up. Every simple command anywhere in the tree is
reported with its words unquoted, its redirections and what feeds its standard input.

Wrappers are then peeled off (``sudo``, ``env``, ``timeout``, ``nice``, ``command``, ``\\rm``,
``/bin/rm``, ``xargs``, ``find -exec``) and scripts handed to a shell (``bash -c '…'``, ``eval``,
a here-string or a pipe into ``sh``) are read the same way (``_wrappers``, ``_built``), so the
rules see the command that would really run.
"""

from __future__ import annotations

import re

from ast_grep_py import SgNode, SgRoot

from watcher.guard._simple import SHELLS, Command, program
from watcher.guard._wrappers import inner_script, unwrap

__all__ = ["SHELLS", "Command", "commands", "functions", "inner_script", "program"]
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})

_MAX_DEPTH = 6  # scripts inside scripts inside scripts: deeper than anyone writes by hand


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


def _value(node: SgNode) -> str:
    """A word as the shell would pass it (quotes removed; expansions kept as written)."""
    kind = node.kind()
    if kind == "word":
        return _unescape(node.text())
    if kind == "raw_string":
        return node.text()[1:-1]
    if kind == "ansi_c_string":
        body = node.text()[2:-1]
        try:
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except UnicodeDecodeError:
            return body
    if kind == "string":  # inside double quotes only \\ \" \$ \` escape; expansions stay as written
        return re.sub(r'\\([\\"$`])', r"\1", node.text()[1:-1]).replace("\\\n", "")
    if kind == "concatenation":
        return "".join(_value(c) for c in node.children())
    inner = node.child(0) if kind == "command_name" else None
    return _value(inner) if inner is not None else node.text()  # "rm", '/bin/rm': quoted, it still runs


def _walk_commands(node: SgNode, out: list[tuple[SgNode, SgNode | None]], feeder: SgNode | None = None) -> None:
    """Every ``command`` node under ``node``, with the command piped into it (if any)."""
    kind = node.kind()
    if kind == "command" or (
        kind == "declaration_command" and not any(c.kind() == "variable_assignment" for c in node.children())
    ):  # `export -p`, `declare -x`: they print the environment (an assignment prints nothing)
        out.append((node, feeder))
    if kind == "redirected_statement" and all(c.kind() in _REDIRECTS for c in node.children() if c.is_named()):
        out.append((node, None))  # `> /dev/sda` alone: a redirection is a write, with no command at all
    if kind == "pipeline":
        previous: SgNode | None = None
        for child in node.children():
            if child.is_named():
                _walk_commands(child, out, previous)
                previous = _last_command(child)
        return
    for child in node.children():
        _walk_commands(child, out, None if kind != "redirected_statement" else feeder)


def _last_command(node: SgNode) -> SgNode | None:
    if node.kind() == "command":
        return node
    found = [n for n in node.children() if n.kind() in ("command", "redirected_statement", "subshell")]
    return _last_command(found[-1]) if found else None


def _redirects(command: SgNode) -> tuple[list[tuple[str, str]], str | None, SgNode | None, list[str]]:
    """The redirections of ``command`` (its own and its enclosing statement's), its here-text, a
    command a here-document pipes into (``cat <<EOF | sh``), and the command's words written after
    a redirection (``rm -rf 2>/dev/null /``: ``/`` is rm's)."""
    nodes = [c for c in command.children() if c.kind() in _REDIRECTS]
    parent = command.parent()
    if parent is not None and parent.kind() == "redirected_statement":
        nodes += [c for c in parent.children() if c.kind() in _REDIRECTS]
    redirects, stdin, piped, after = [], None, None, []
    for r in nodes:
        parts = [c for c in r.children()]
        op = next((c.text() for c in parts if not c.is_named()), "")
        if r.kind() == "herestring_redirect":
            stdin = "".join(_value(c) for c in parts if c.is_named())
        elif r.kind() == "heredoc_redirect":
            stdin = "".join(c.text() for c in parts if c.kind() == "heredoc_body")
            pipe = next((c for c in parts if c.kind() == "pipeline"), None)
            piped = _first_command(pipe) if pipe is not None else None
        else:
            targets = [c for c in parts if c.is_named() and c.kind() != "file_descriptor"]
            if targets:
                redirects.append((op, _value(targets[0])))
                after += [_value(t) for t in targets[1:]]
    return redirects, stdin, piped, after


def _first_command(node: SgNode) -> SgNode | None:
    if node.kind() == "command":
        return node
    for child in node.children():
        found = _first_command(child)
        if found is not None:
            return found
    return None


def functions(script: str) -> dict[str, str]:
    """The functions ``script`` defines: name -> body text (a fork bomb is a function that spawns itself)."""
    out: dict[str, str] = {}
    for node in SgRoot(script, "bash").root().find_all(kind="function_definition"):
        name = next((c for c in node.children() if c.kind() == "word"), None)
        body = next((c for c in node.children() if c.kind() in ("compound_statement", "subshell")), None)
        if name is not None and body is not None:
            out[name.text()] = body.text()
    return out


def commands(script: str, depth: int = 0) -> list[Command]:
    """Every simple command ``script`` would run, wrappers peeled and inner scripts read too."""
    if depth > _MAX_DEPTH or not script.strip():
        return []
    root = SgRoot(script, "bash").root()
    found: list[tuple[SgNode, SgNode | None]] = []
    _walk_commands(root, found)
    built: dict[int, Command] = {}
    out: list[Command] = []
    for node, feeder_node in found:
        words = [c for c in node.children() if c.is_named() and c.kind() not in _REDIRECTS | {"variable_assignment"}]
        argv = tuple(_value(c) for c in words) if node.kind() == "command" else (":",)
        if node.kind() == "declaration_command":
            keyword = node.child(0)
            argv = (keyword.text() if keyword is not None else "declare", *(_value(c) for c in words))
        redirects, stdin, piped, after = _redirects(node)
        if after and node.kind() == "command":
            argv = (*argv, *after)
        feeder = built.get(_key(feeder_node)) if feeder_node is not None else None
        nxt = node.next()
        cmd = Command(
            argv,
            tuple(redirects),
            stdin,
            feeder,
            source=node.text(),
            background=nxt is not None and nxt.text() == "&",
            captured_by=_captured_by(node),
        )
        runs = unwrap(cmd, depth, commands)
        built[_key(node)] = runs[0]  # what feeds a pipe is the program that runs: `command curl … | sh` is curl
        out.extend(runs)
        if piped is not None:  # cat <<EOF | sh: the here-document is the shell's script
            inner = Command((_value(piped.child(0) or piped),), stdin=stdin, source=piped.text())
            out.extend(unwrap(inner, depth, commands))
    return out


def _captured_by(node: SgNode) -> str:
    """Who takes ``node``'s output when it runs inside ``$(…)``: the enclosing command's program,
    ``=`` for an assignment, ``""`` when its output is not captured (it reaches the screen)."""
    parent = node.parent()
    while parent is not None and parent.kind() not in ("command_substitution", "program"):
        parent = parent.parent()
    if parent is None or parent.kind() != "command_substitution":
        return ""
    outer = parent.parent()
    while outer is not None and outer.kind() not in ("command", "variable_assignment", "declaration_command"):
        if outer.kind() in ("program", "command_substitution"):
            return "?"
        outer = outer.parent()
    if outer is None:
        return "?"
    if outer.kind() != "command":
        return "="
    first = outer.child(0)
    while first is not None and first.kind() == "variable_assignment":
        first = first.next()
    return program(_value(first)) if first is not None else "="


def _key(node: SgNode | None) -> int:
    if node is None:
        return -1
    r = node.range()
    return r.start.index * 100_003 + r.end.index
