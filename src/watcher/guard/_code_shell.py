"""The shell commands inline code hands to a shell: the strings given to its shell-out calls
(``os.system``, ``subprocess.run``, ``execSync``, ``system``, Ruby's and Perl's backticks, ``%x``,
``qx``), written in the call, set to a variable the call is given (``cmd = "rm -rf ~";
os.system(cmd)``), taken in turn by a loop over a list of them, or passed to the code's own
wrapper (``def run(*args): subprocess.run(args)``). A string the code never hands to a shell (a
message, a format, a path it reads) is not a command."""

from __future__ import annotations

import re
import shlex

from watcher.guard._lazy import lazy

__all__ = ["shell_strings"]

# a call that runs a command: its name, then its arguments (in parentheses, or to the line's end)
_SHELL_CALL = lazy(
    r"(?:\b(?:os\.)?(?:system|popen|spawn[lv]?p?e?|exec[lv]?p?e?)"
    r"|\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)"
    r"|\b(?:check_output|check_call|Popen|getoutput|getstatusoutput)"
    r"|\b(?:execSync|execFileSync|execFile|spawnSync|spawn|execa|execaSync|exec|\$)"
    r"|\b(?:shell_exec|passthru|proc_open|IO\.popen|Open3\.\w+|Kernel\.system|Process\.spawn|run|sh)"
    r"|\bRuntime\.getRuntime\(\)\.exec|\bProcessBuilder)\s*(?=[(\s'\"`\[])"
)
_LITERAL = lazy(r"""[fFrRbB]{0,2}(?:"((?:[^"\\\n]|\\.){0,4000})"|'((?:[^'\\\n]|\\.){0,4000})'|`([^`]{0,4000})`)""")
_WORD = r"""(?:[fFrRbB]{0,2}(?:"[^"\n]*"|'[^'\n]*')|[A-Za-z_][\w.]*)"""  # a string, or a name holding one
_LIST = lazy(rf"""\[\s*(?:{_WORD}\s*,\s*)*{_WORD}\s*,?\s*\]""")
_TUPLE = lazy(
    r"""\(\s*(?:[fFrRbB]{0,2}(?:"[^"\n]*"|'[^'\n]*')\s*,\s*)+[fFrRbB]{0,2}(?:"[^"\n]*"|'[^'\n]*')\s*,?\s*\)"""
)
_KEYWORD = lazy(r"""(?<![\w"'-])[A-Za-z_]\w*\s*=\s*(?:[\w.]+|"[^"\n]*"|'[^'\n]*')""")
_ITEM = lazy(r""""([^"\n]*)"|'([^'\n]*)'""")
_LIST_WORD = lazy(r"""[fFrRbB]{0,2}(?:"([^"\n]*)"|'([^'\n]*)')|([A-Za-z_]\w*)""")
_ASSIGNED = lazy(r"""(?:^|[\s;({,])(?:const\s+|let\s+|var\s+|my\s+|\$)?([A-Za-z_]\w*)\s*=\s*(?=[fFrRbB]{0,2}["'`\[])""")
_BACKTICKS = lazy(r"`([^`\n]{1,4000})`|%x[({\[]([^)}\]\n]{1,4000})[)}\]]|\bqx[({\[/]([^)}\]/\n]{1,4000})[)}\]/]")
_NAME = lazy(r"[A-Za-z_]\w*")
# a loop over a list, a tuple or a variable holding one: `for c in cmds:`, `for (const c of cmds)`
_LOOP = lazy(
    r"\bfor\s*\(?\s*(?:const\s+|let\s+|var\s+|my\s+)?\$?([A-Za-z_]\w*)\s+(?:in|of)\s+(?:@?\$?([A-Za-z_]\w*)\b|(?=[\[(]))"
)
# a JavaScript template's values as the shell would name them: ${process.env.HOME} is $HOME
_TEMPLATE_ENV = lazy(r"\$\{\s*process\.env\.([A-Za-z_]\w*)\s*\}")
_TEMPLATE_VALUE = lazy(r"\$\{[^}]{0,200}\}")  # any other value: known only when it runs (not an unset $dir)
_TEMPLATE_HOME = lazy(r"\$\{\s*(?:os\.|require\(['\"](?:node:)?os['\"]\)\.)?homedir\(\)\s*\}")


def _arguments(code: str, start: int) -> str:
    """The text of a call's arguments from ``start``: its parentheses (balanced, quotes skipped), or the
    line; or a list's items, from its opening bracket."""
    rest = code[start:].lstrip(" \t")
    if not rest.startswith(("(", "[")):
        return rest.split("\n", 1)[0].split(";", 1)[0]
    depth, quote, out = 0, "", []
    for i, ch in enumerate(rest[:8000]):
        if quote:
            if ch == quote and rest[i - 1] != "\\":
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return rest[1:i]
        out.append(ch)
    return "".join(out[1:])


def _texts(region: str, values: dict[str, list[str]] | None = None) -> list[str]:
    """The strings in ``region``: a list of words joined as one command (a name in it as the strings
    it holds: one command for each of a loop's values), a string as it is; a program named before
    its list of arguments (``spawnSync("rm", ["-rf", dir])``, ``execFile``) runs them."""
    if _STRINGS_ONLY.fullmatch(region) and _PROGRAM_WORD.match(region):
        # system "rm", "-rf", "/etc" (Perl, Ruby), os.execl('/bin/rm', 'rm', '-rf', '/'): one program and its words
        words = [_QUOTED_ESCAPE.sub(r"\1", a or b) for a, b, _ in _LITERAL.findall(region)]
        if len(words) > 2 and words[1] == words[0].rsplit("/", 1)[-1]:
            words = words[1:]  # execl's path, then the program's own name as its first word
        return [" ".join(_word(w) for w in words)]
    program = _PROGRAM_THEN_LIST.match(region)
    lines = [line for m in _LIST.finditer(region) for line in _list_lines(m.group(0), values or {})]
    named = (program.group(1) or program.group(2)) if program is not None else ""
    if named and lines and lines[0].split(" ", 1)[0] != named.rsplit("/", 1)[-1]:
        lines[0] = _word(named) + " " + lines[0]  # os.execvp('rm', ['rm', …]): the list holds the name already
    region = _LIST.sub(" ", region)
    return lines + [_QUOTED_ESCAPE.sub(r"\1", a or b) if a or b else c for a, b, c in _LITERAL.findall(region)]


# a call's arguments that are strings alone, two or more: `"rm", "-rf", "/etc"`
_STRINGS_ONLY = lazy(
    r"""\s*(?:[fFrRbB]{0,2}(?:"[^"\n]*"|'[^'\n]*')\s*,\s*)+[fFrRbB]{0,2}(?:"[^"\n]*"|'[^'\n]*')\s*,?\s*"""
)
_PROGRAM_WORD = lazy(r"""\s*(?:"[\w./+-]{1,200}"|'[\w./+-]{1,200}')""")  # the first: a program's name, one word
_QUOTED_ESCAPE = lazy(r"\\([\"'\\])")  # a quote or a backslash escaped in a string: "rm -rf \"$dir\""


# a call's first argument, a program, followed by the list of its arguments
_PROGRAM_THEN_LIST = lazy(r"""\s*(?:"([\w./+-]{1,200})"|'([\w./+-]{1,200})')\s*,\s*(?=\[)""")


def _list_lines(listed: str, values: dict[str, list[str]]) -> list[str]:
    words = [a or b or (values.get(c) or ["{" + c + "}"]) for a, b, c in _LIST_WORD.findall(listed)]
    varying = next((w for w in words if isinstance(w, list) and len(w) > 1), None)
    rounds = varying[:16] if varying is not None else [None]
    return [
        " ".join(_word(w if isinstance(w, str) else (r if w is varying and r is not None else w[0])) for w in words)
        for r in rounds
    ]


def _word(word: str) -> str:
    """An argv word as a command line writes it: quoted when it holds spaces or the shell's own
    characters (a commit message's parentheses), else as it is (``~`` and ``dir/*`` as the paths
    they stand for)."""
    return shlex.quote(word) if _SPECIAL.search(word) else word


_SPECIAL = lazy(r"""[\s()<>;&|'"`\\]""")


def _values(code: str) -> dict[str, list[str]]:
    """Each variable the code sets to a string or a list of strings: the commands they hold."""
    out: dict[str, list[str]] = {}
    for m in _ASSIGNED.finditer(code):
        value = code[m.end() : m.end() + 4000]
        first = _LIST.match(value) or _LITERAL.match(value)
        if first is not None:
            out.setdefault(m.group(1), []).extend(_texts(first.group(0)))
        elif re.match(r"\[\s*\[", value):  # STEPS = [["umount", "/dev/x"], ["mkfs.ext4", "/dev/x"]]: each a command
            out.setdefault(m.group(1), []).extend(_texts(_arguments(value, 0)))
    for m in _LOOP.finditer(code):  # for c in cmds: each of the list's commands in turn
        listed = _LIST.match(code, m.end()) or _TUPLE.match(code, m.end())
        out.setdefault(m.group(1), []).extend(_texts(listed.group(0)) if listed else out.get(m.group(2) or "", []))
    return out


# a Python or Ruby function taking any number of words and running them: `def kubectl(*args):`
_WRAPPER_DEF = lazy(
    r"^([ \t]*)def\s+([A-Za-z_]\w*)\s*\(\s*\*([A-Za-z_]\w*)[^)]*\)[^:\n]*:?[ \t]*\n((?:\1[ \t]+[^\n]*\n|[ \t]*\n){1,40})",
    re.M,
)


def _wrapped_calls(code: str, values: dict[str, list[str]]) -> list[str]:
    """The commands a script's own wrapper runs (``def kubectl(*args): subprocess.run(["kubectl",
    "--context", CONTEXT, *args])``, then ``kubectl("delete", "namespace", "prod")``): its fixed words
    and the words of each call."""
    out: list[str] = []
    for m in _WRAPPER_DEF.finditer(code):
        name, param, body = m.group(2), m.group(3), m.group(4)
        if not _SHELL_CALL.search(body):
            continue
        # ["kubectl", "--context", CONTEXT, *args], or Ruby's system("kubectl", *args)
        fixed = re.search(rf"\[([^\]]*?)\*{param}\b", body) or re.search(rf"\(([^()]*?)\*{param}\b", body)
        prefix: list[str] = []
        for word in re.findall(r"""[fFrRbB]{0,2}["']([^"'\n]*)["']|([A-Za-z_]\w*)""", fixed.group(1) if fixed else ""):
            prefix += [word[0]] if word[0] else values.get(word[1], [])[:1]
        for call in re.finditer(rf"(?<![\w.]){re.escape(name)}\(", code[m.end() :]):
            args = _arguments(code[m.end() :], call.end() - 1)
            args = _KEYWORD.sub(" ", args)  # check=True, capture=False: the wrapper's options, not words
            words = [a or b for a, b in _ITEM.findall(args)]
            names = [n for n in _NAME.findall(_LITERAL.sub(" ", args)) if n in values]
            words += [values[n][0] for n in names if values[n]]
            if words:
                out.append(" ".join(map(_word, prefix + words)))
    return out[:64]


def shell_strings(code: str, backticks: bool) -> list[str]:
    """The command lines ``code`` runs through a shell (``backticks``: its language runs `…` as one)."""
    found: list[str] = []
    values = _values(code)
    for m in _SHELL_CALL.finditer(code):
        region = _arguments(code, m.end())
        found += _texts(region, values)
        names = set(_NAME.findall(_LITERAL.sub(" ", _LIST.sub(" ", region))))
        found += [text for name in names for text in values.get(name, ())]
    if backticks:
        found += [a or b or c for a, b, c in _BACKTICKS.findall(code)]
    found += _wrapped_calls(code, values)
    found = [
        _TEMPLATE_VALUE.sub("{value}", _TEMPLATE_HOME.sub("~", _TEMPLATE_ENV.sub(r"$\1", f))) if "${" in f else f
        for f in found
    ]
    return [f for f in found if " " in f.strip() or "/" in f][:64]
