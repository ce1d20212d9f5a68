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
import shlex
import time
from itertools import islice

from ast_grep_py import SgNode, SgRoot

from watcher.guard._lazy import lazy
from watcher.guard._probe import PROBED_CHARS, parses_in_time
from watcher.guard._simple import SHELLS, Command, program
from watcher.guard._wrappers import inner_script, unwrap

__all__ = ["MAX_WORDS", "SHELLS", "Command", "TooLong", "commands", "functions", "inner_script", "program", "within"]
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
# statements a redirection can follow that are not a simple command: it applies to all they run
_COMPOUND = frozenset(
    {
        "compound_statement",
        "subshell",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "if_statement",
        "case_statement",
        "pipeline",  # `… | base64 -d > ~/.ssh/authorized_keys`: the last command's output, written
        "negated_command",  # `! false > ~/.bashrc`: the file is truncated all the same
    }
)

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


def _words(node: SgNode) -> list[str]:
    """The words a command's word becomes: itself, or its brace expansion (``{/etc,/usr}``,
    ``~/{a,b}/x``: one word for each choice, as the shell passes them)."""
    if node.kind() != "concatenation":
        return [_value(node)]
    parts = node.children()
    opening = next((i for i, c in enumerate(parts) if c.kind() == "word" and c.text() == "{"), -1)
    closing = next((i for i, c in enumerate(parts) if i > opening and c.kind() == "word" and c.text() == "}"), -1)
    if opening < 0 or closing != opening + 2 or "," not in parts[opening + 1].text():
        return [_value(node)]
    head = "".join(_value(c) for c in parts[:opening])
    tail = "".join(_value(c) for c in parts[closing + 1 :])
    choices = _unescape(parts[opening + 1].text()).split(",")
    return [head + choice + tail for choice in choices[:_MAX_BRACES]]


_MAX_BRACES = 32  # a brace's choices read: {a,b,…} past these is not a path list


_DEFINES = re.compile(r"\(\s*\)|\bfunction\s")  # `name() …`, `function name …`


class TooLong(Exception):
    """A command line the guard cannot read in the time it has (it is denied, never waved through)."""


# a command, what pipes into it, the $(…) around it, its parent and the node after it (known on the
# way down: asking a node of a deep tree for its parent or sibling costs as much as the tree is deep)
Walked = tuple[SgNode, "SgNode | None", "SgNode | None", "SgNode | None", "SgNode | None"]


def _walk_commands(root: SgNode, out: list[Walked], deadline: float | None = None) -> None:
    """Every ``command`` node under ``root`` in the order written, with the command piped into it
    (if any) and the innermost ``$(…)`` it runs in. Iterative, and never walks back up the tree: a
    chain of thousands of ``&&`` nests as deep, past Python's recursion limit. Raises ``TooLong``
    past ``deadline``."""
    stack: list[Walked] = [(root, None, None, None, None)]
    walked = 0
    while stack:
        node, feeder, sub, parent, after = stack.pop()
        walked += 1
        # each of the first nodes too: one of them may hold 500,000 words, listed in one costly call
        if deadline is not None and (walked < 64 or walked % 1024 == 0) and time.monotonic() > deadline:
            raise TooLong(f"over {walked:,} parts")
        kind = node.kind()
        if kind == "command" or (
            kind == "declaration_command" and not any(c.kind() == "variable_assignment" for c in node.children())
        ):  # `export -p`, `declare -x`: they print the environment (an assignment prints nothing)
            out.append((node, feeder, sub, parent, after))
        if kind == "redirected_statement" and all(
            c.kind() in _REDIRECTS or _last_of_list(c).kind() in _COMPOUND for c in node.children() if c.is_named()
        ):  # `> /dev/sda` alone, `{ …; } > ~/.bashrc`, `while read l; …; done < .env`, `cd x && a | b > f`:
            out.append((node, None, sub, parent, after))  # the redirection is a write or a read of its own
        if kind == "command_substitution" and _reads_file(node):
            out.append((node, None, node, parent, after))  # `$(< .env)`: bash reads the file, as `$(cat < .env)`
        children = node.children()
        inner = node if kind == "command_substitution" else sub
        if kind == "pipeline":
            fed: list[Walked] = []
            previous: SgNode | None = None
            # `curl … | base64 -d > f`: the redirection around the pipeline is its last command's
            around = parent if parent is not None and parent.kind() == "redirected_statement" else None
            last = next((c for c in reversed(children) if c.is_named()), None) if around is not None else None
            for i, child in enumerate(children):
                if child.is_named():
                    nxt = children[i + 1] if i + 1 < len(children) else None
                    fed.append((child, previous, inner, around if child is last else node, nxt))
                    previous = _last_command(child)
            stack.extend(reversed(fed))
            continue
        inherited = feeder if kind == "redirected_statement" else None
        nexts = [*children[1:], None] if children else []
        # `true && echo x >> ~/.bashrc`: tree-sitter puts the redirection around the whole list, bash
        # gives it to the list's last command; so that command's parent is the redirected statement
        last = (
            next((c for c in reversed(children) if c.is_named()), None)
            if kind == "list" and parent is not None and parent.kind() == "redirected_statement"
            else None
        )
        stack.extend(
            (c, inherited, inner, parent if c is last else node, n)
            for c, n in zip(reversed(children), reversed(nexts), strict=True)
        )


def _reads_file(substitution: SgNode) -> bool:
    """``$(< FILE)``: a substitution that is one input redirection, no command (bash prints the file)."""
    named = [c for c in substitution.children() if c.is_named()]
    return (
        len(named) == 1
        and named[0].kind() == "file_redirect"
        and any(c.text() == "<" for c in named[0].children() if not c.is_named())
    )


def _last_of_list(node: SgNode) -> SgNode:
    """The statement a ``&&``/``||`` list ends with (the one a redirection after the list applies to)."""
    while node.kind() == "list":
        named = [c for c in node.children() if c.is_named()]
        if not named:
            break
        node = named[-1]
    return node


def _last_command(node: SgNode | None) -> SgNode | None:
    while node is not None and node.kind() != "command":
        found = [n for n in node.children() if n.kind() in ("command", "redirected_statement", "subshell")]
        node = found[-1] if found else None
    return node


def _redirects(
    command: SgNode, parent: SgNode | None
) -> tuple[list[tuple[str, str]], str | None, SgNode | None, list[str]]:
    """The redirections of ``command`` (its own and its enclosing statement's), its here-text, a
    command a here-document pipes into (``cat <<EOF | sh``), and the command's words written after
    a redirection (``rm -rf 2>/dev/null /``: ``/`` is rm's)."""
    nodes = [c for c in command.children() if c.kind() in _REDIRECTS]
    if parent is not None and parent.kind() == "redirected_statement":
        nodes += [c for c in parent.children() if c.kind() in _REDIRECTS]
    redirects, stdin, piped, after = [], None, None, []
    for r in nodes:
        parts = [c for c in r.children()]
        if r.kind() == "herestring_redirect":
            stdin = "".join(_value(c) for c in parts if c.is_named())
            continue
        if r.kind() == "heredoc_redirect":
            stdin = "".join(c.text() for c in parts if c.kind() == "heredoc_body")
            pipe = next((c for c in parts if c.kind() == "pipeline"), None)
            piped = _first_command(pipe) if pipe is not None else None
            files = [c for c in parts if c.kind() == "file_redirect"]  # cat <<EOF > run.sh: written after its marker
        else:
            files = [r]
        for f in files:
            op = next((c.text() for c in f.children() if not c.is_named()), "")
            targets = [c for c in f.children() if c.is_named() and c.kind() != "file_descriptor"]
            if targets:
                redirects.append((op, _value(targets[0])))
                after += [_value(t) for t in targets[1:]]
    return redirects, stdin, piped, after


def _first_command(node: SgNode) -> SgNode | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.kind() == "command":
            return current
        stack.extend(reversed(current.children()))
    return None


def functions(script: str) -> dict[str, str]:
    """The functions ``script`` defines: name -> body text (a fork bomb is a function that spawns itself)."""
    out: dict[str, str] = {}
    if not _DEFINES.search(script):
        return out  # the usual line defines no function: no second parse
    for node in SgRoot(script, "bash").root().find_all(kind="function_definition"):
        name = next((c for c in node.children() if c.kind() == "word"), None)
        body = next((c for c in node.children() if c.kind() in ("compound_statement", "subshell")), None)
        if name is not None and body is not None:
            out[name.text()] = body.text()
    return out


# the longest a long line may take to parse, a child interpreter's start included, before it is
# read (it is parsed twice: see ``_probe``)
PARSE_BUDGET_S = 0.8
# words in one command line past which it is not read: no one writes 20,000 words by hand, and
# reading each costs the rules microseconds that a hook does not have
MAX_WORDS = 20_000


# a here-document's delimiter with a quoted part that is not the whole word (E"O"F, 'EOF'Z, E\OF)
_HEREDOC_QUOTED_PART = re.compile(
    r"""(<<-?[ \t]*)((?=[^\s;&|<>()]*\w['"\\]|[^\s;&|<>()]*['"][^'"\s]*['"]\w)[^\s;&|<>()]+)"""
)


_QUOTE_PART = re.compile(r"\\(.)|'([^']*)'|\"([^\"]*)\"")


def _delimiter_as_bash_reads_it(m: re.Match[str]) -> str:
    """The delimiter with its quotes removed, quoted whole: bash ends the text where that word stands alone
    (and expands nothing in it, as any quote in the delimiter says)."""
    word = _QUOTE_PART.sub(lambda q: q.group(1) or q.group(2) or q.group(3) or "", m.group(2))
    return m.group(1) + "'" + word + "'" if word and "'" not in word else m.group(0)


def commands(script: str, depth: int = 0, deadline: float | None = None) -> list[Command]:
    """Every simple command ``script`` would run, wrappers peeled and inner scripts read too.

    Raises ``TooLong`` past ``deadline`` (a ``time.monotonic()`` value) or ``MAX_WORDS``."""
    if not script.strip():
        return []
    if depth > _MAX_DEPTH:  # not read is not harmless: bash -c inside bash -c … eleven deep is denied
        raise TooLong(f"scripts nested more than {_MAX_DEPTH} deep")
    if len(script) > PROBED_CHARS:
        left = PARSE_BUDGET_S if deadline is None else min(PARSE_BUDGET_S, deadline - time.monotonic())
        if left <= 0 or not parses_in_time(script, left):
            raise TooLong("a line the parser cannot read in the time a hook has")
    if "<<" in script and (delimited := _HEREDOC_QUOTED_PART.sub(_delimiter_as_bash_reads_it, script)) != script:
        script = delimited  # cat << E"O"F … EOF: bash ends the here-document at EOF, quotes removed
    root = SgRoot(script, "bash").root()
    if "((" in script and root.find(kind="ERROR") is not None:
        subshells = _dparens_as_subshells(script)
        if subshells != script:  # `((rm -rf ~) )`: bash runs it as two subshells, tree-sitter reads no command
            root = SgRoot(subshells, "bash").root()
    found: list[Walked] = []
    _walk_commands(root, found, deadline)
    built: dict[SgNode, Command] = {}  # by node: a node hashes by identity in native code (its range() is O(offset))
    out: list[Command] = []
    words_read = 0

    def inner_commands(text: str, inner_depth: int) -> list[Command]:
        return commands(text, inner_depth, deadline)

    for n, (node, feeder_node, sub, parent, nxt) in enumerate(found):
        if deadline is not None and n % 64 == 63 and time.monotonic() > deadline:
            raise TooLong(f"{len(found)} commands")
        words = [c for c in node.children() if c.is_named() and c.kind() not in _REDIRECTS | {"variable_assignment"}]
        words_read += len(words)
        if words_read > MAX_WORDS:
            raise TooLong(f"over {MAX_WORDS:,} words")
        argv = tuple(w for c in words for w in _words(c)) if node.kind() == "command" else (":",)
        if node.kind() == "command_substitution":
            argv, words = ("cat",), []  # $(< FILE): the file, printed into the line
        if node.kind() == "declaration_command":
            keyword = node.child(0)
            argv = (keyword.text() if keyword is not None else "declare", *(_value(c) for c in words))
        redirects, stdin, piped, after = _redirects(node, parent)
        if after and node.kind() == "command":
            argv = (*argv, *after)
        feeder = built.get(feeder_node) if feeder_node is not None else None
        cmd = Command(
            argv,
            tuple(redirects),
            stdin,
            feeder,
            source=node.text(),
            background=nxt is not None and nxt.text() == "&",
            captured_by=_captured_by(sub),
        )
        runs = unwrap(cmd, depth, inner_commands)
        built[node] = runs[0]  # what feeds a pipe is the program that runs: `command curl … | sh` is curl
        out.extend(runs)
        if piped is not None:  # cat <<EOF | sh: the here-document is the shell's script
            inner = Command((_value(piped.child(0) or piped),), stdin=stdin, source=piped.text())
            out.extend(unwrap(inner, depth, inner_commands))
    if deadline is not None and time.monotonic() > deadline:
        raise TooLong(f"{len(found)} commands")
    return out + _recovered(root, depth, deadline)


_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;", "\n"})
_DPAREN = lazy(r"(?:^|(?<=[\s;&|(!{$`]))\(\(")  # a `((` where a command or `$(` can start


def _dparens_as_subshells(script: str) -> str:
    """``script`` with each ``((`` that is no arithmetic written ``( (``, as bash reads it.

    bash takes ``((`` for arithmetic only when the parenthesis that closes it at depth 0 is followed
    by another ``)``; otherwise (``((rm -rf ~) )``, ``((cmd);)``, ``$((cmd) )``) it reads the text
    again as a subshell in a subshell. tree-sitter-bash does not fall back: it reads an error.
    """
    cuts = []
    for m in islice(_DPAREN.finditer(script), 64):  # bounded: a line of a thousand `((` is read as written
        depth, i, end = 0, m.end(), min(len(script), m.end() + 65536)
        while i < end:
            c = script[i]
            if c in "'\"":  # a quoted stretch: its parentheses do not count
                close = script.find(c, i + 1)
                i = end if close == -1 else close + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    if not script.startswith(")", i + 1):
                        cuts.append(m.start())
                    break
                depth -= 1
            i += 1
    for at in reversed(cuts):
        script = f"{script[:at]}( ({script[at + 2 :]}"
    return script


def _recovered(root: SgNode, depth: int, deadline: float | None) -> list[Command]:
    """The commands in stretches the parser could not read (its ERROR nodes). tree-sitter-bash fails
    on some lines bash runs (``[[ -d ~ ]] && rm -rf ~``: a ``~`` in a test), and a command it cannot
    see must not pass unjudged: each stretch is split at its operators and each part read on its own
    (a part that still cannot be read, like the test itself, is left)."""
    out: list[Command] = []
    for error in islice(root.find_all(kind="ERROR"), 16):
        text = error.text()
        if len(text) > 65536 or (deadline is not None and time.monotonic() > deadline):
            raise TooLong("a long stretch the parser cannot read")
        try:
            lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            tokens = list(islice(lexer, MAX_WORDS))
        except ValueError:  # an unclosed quote: bash would not run the line either
            continue
        parts: list[list[str]] = [[]]
        for token in tokens:
            if token in _OPERATORS:
                parts.append([])
            else:
                parts[-1].append(token)
        parts = [p for p in parts if p]
        if len(parts) > 1:
            for part in parts:
                out += commands(shlex.join(part), depth + 1, deadline)
    return out


def _captured_by(sub: SgNode | None) -> str:
    """Who takes the output of a command run inside ``sub`` (its innermost ``$(…)``): the enclosing
    command's program, ``=`` for an assignment, ``""`` when not captured (it reaches the screen)."""
    if sub is None:
        return ""
    outer = sub.parent()
    while outer is not None and outer.kind() not in ("command", "variable_assignment", "declaration_command"):
        if outer.kind() in ("program", "command_substitution"):
            return "?"
        outer = outer.parent()
    if outer is None:
        return "?"
    if outer.kind() == "variable_assignment" and (line := outer.parent()) is not None and line.kind() == "command":
        outer = line  # GH_TOKEN=$(gh auth token) gh api user: the variable is that command's alone
    if outer.kind() != "command":
        return "="
    first = outer.child(0)
    while first is not None and first.kind() == "variable_assignment":
        first = first.next()
    return program(_value(first)) if first is not None else "="


def within(node: SgNode, kind: str) -> bool:
    """Whether ``node`` is inside a node of ``kind`` (a loop in a loop, a ``case`` in a function)."""
    parent = node.parent()
    while parent is not None:
        if parent.kind() == kind:
            return True
        parent = parent.parent()
    return False
