"""Inline code as the guard's rules read it: Perl's and Ruby's quote operators as quotes, the home
folder's expressions as the path ``'~'`` (the working folder's as ``'.'``), strings joined into one
path, a path's ``.parent`` as its folder, and what code sets once followed to where it is read: a
variable set to a string, an option's ``argparse`` default, a loop's variable over literal words
(the first) or over a folder's entries (``'folder/*'``, unless the loop picks some). A small constant
propagation over text, not a parser: it reads what agents write in a few lines, and a value computed
at run time stays unknown. No shell here: the wrappers' reading of inline code uses it too."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from watcher.guard._lazy import lazy

__all__ = ["readable_code"]


@functools.lru_cache(maxsize=32)  # each rule of a category reads the same code
def readable_code(code: str) -> str:
    """``code`` as the rules read it: Perl's and Ruby's quote operators as quotes (``q{/x}``,
    ``%q(~/x)``), the home folder's expressions as the path ``'~'``, and a string joined to it
    (``$ENV{HOME} . '/.ssh/id_rsa'``, ``'~' + '/x'``) as one path; a variable set once to a string
    as that string where it is used, and a loop's variable over a folder's entries as ``'folder/*'``.
    Python is first read by its syntax tree (``python_readable``), which follows values further."""
    if not code.strip():
        return code  # no code: nothing to read (and no parser imported for it)
    if "__import__" in code:  # __import__('shutil').rmtree(p): the module, as if imported
        code = _IMPORTED.sub(r"\1", code)
    from watcher.guard._python import python_readable  # its parser imported by the calls with code only

    python = python_readable(code)
    if python is not None:  # its values followed already, and better than the rounds below would
        return _joined(_home_written(python))
    from watcher.guard._javascript import javascript_readable

    code = javascript_readable(code) or code  # JavaScript's names as they are known, then the rounds below
    if "q" in code:
        code = _QUOTE_OPERATOR.sub(lambda m: "'" + (m.group(1) or m.group(2) or m.group(3) or "") + "'", code)
    code = _joined(_home_written(_CWD_EXPR.sub("'.'", code) if "cwd" in code or "pwd" in code else code))
    code = _folder_of(code) if "parent" in code or "dirname" in code else code
    # home = Path.home() / '.ssh'; open(home …), and the loops over a folder (Ruby's blocks have no `=`)
    return _joined(_constants(code)) if "=" in code or "|" in code or "for" in code else code


_IMPORTED = lazy(r"""__import__\(\s*['"]([\w.]+)['"]\s*\)""")


def _folder_of(code: str) -> str:
    """A file's folder written as a path: ``Path('/p/x.py').resolve().parent``, ``os.path.dirname('/p/x.py')``."""
    for _ in range(4):  # PROJECT.parent.parent: a folder at a time
        folded = _PARENT.sub(lambda m: "'" + ((m.group(1) or m.group(2)).rsplit("/", 1)[0] or "/") + "'", code)
        if folded == code:
            break
        code = folded
    return code


_PARENT = lazy(
    r"""(?:(?:pathlib\.)?Path\(\s*)?['"]([^'"\n]+)['"]\s*\)?(?:\.(?:resolve|absolute)\(\))?\.parent\b"""
    r"""|os\.path\.dirname\(\s*(?:os\.path\.(?:abspath|realpath)\(\s*)?['"]([^'"\n]+)['"]\s*\)?\s*\)"""
)


# the working folder as code names it: os.getcwd(), Path.cwd(), process.cwd(), Dir.pwd
_CWD_EXPR = lazy(r"\bos\.getcwd\(\)|(?:pathlib\.)?Path\.cwd\(\)|\bprocess\.cwd\(\)|\bDir\.pwd\b")
# Path('.claude') / 'settings.json': a relative path and a part, one path
_PATH_PART = lazy(r"""(?:pathlib\.)?Path\(\s*['"]([^'"\n]{1,300})['"]\s*\)\s*/\s*['"]([^'"\n]{1,300})['"]""")


def _joined(code: str) -> str:
    """The home joined to a path as one path: ``os.path.join('~', '.ssh')``, ``'~' + '/x'``, ``'~' / 'x'``,
    ``Path('.claude') / 'settings.json'``."""
    if "Path(" in code:
        code = _PATH_PART.sub(lambda m: "'" + m.group(1).rstrip("/") + "/" + m.group(2) + "'", code)
    if "join" in code:  # os.path.join('~', '.ssh', 'id_rsa'), path.join, File.join
        code = _PATH_JOIN.sub(
            lambda m: "'" + "/".join([m.group(1).rstrip("/"), *re.findall(r"""['"]([^'"]*)['"]""", m.group(2))]) + "'",
            code,
        )
    for _ in range(3):  # '~' + '/.netrc', $ENV{HOME} . '/x', '/srv/app' / 'build': a part at a time
        joined = _JOINED.sub(lambda m: "'" + "/".join(p.rstrip("/") for p in m.groups() if p) + "'", code)
        if "' " in joined or '" ' in joined:  # "rm -rf " . '~': a command's words and a path, one string
            joined = _WORDS_JOINED.sub(lambda m: "'" + m.group(2) + m.group(4) + "'", joined)
        if joined == code:
            break
        code = joined
    return code


# a variable set once, in a statement of its own, to a string (Python, Ruby, JavaScript's
# const/let/var, Perl's my $x): `home = '~'`, `const dir = '/etc';`
_SET_ONCE = lazy(
    r"""(?:^|[;{])[ \t]*(?:const\s+|let\s+|var\s+|my\s+)?(\$?[A-Za-z_]\w*)\s*=\s*(['"][^'"\n]{0,300}['"])[ \t]*(?=;|$)""",
    re.M,
)
# an option's default, read as the parsed option (`args.root`): add_argument("--root", default="~")
_DEFAULTED = lazy(r"""add_argument\(\s*['"]--([\w-]+)['"][^()]{0,300}?\bdefault\s*=\s*(['"][^'"\n]{0,300}['"])""")
# a loop's body that picks some entries: a condition or a filter (a condition that skips a few,
# `if name in KEEP: continue`, leaves the rest to the delete)
_CHOOSES = lazy(r"\b(?:if|unless|filter|select|when)\b(?![^\n]{0,120}\b(?:continue|next)\b)|\?[^?:]{0,80}:")
# a test of an entry's kind (every entry passes one branch or the other): `if p.is_dir():`, `elsif File.file?(e)`
_KIND_TEST = lazy(
    r"\b(?:el)?(?:if|elsif|unless)\s*\(?\s*(?:not\s+|!\s*)?[\w.$]*(?:is_dir|is_file|isdir|isfile|is_symlink|islink|exists|"
    r"isDirectory|isFile|directory\?|file\?|exist\?)\s*\([^()]*\)\s*\)?\s*[:{]?|\belse\b"
)
# a loop over a literal tuple or list of strings: `for rc in (".bashrc", ".zshrc"):`
_OVER_WORDS = lazy(
    r"""\bfor\s*\(?\s*(?:const\s+|let\s+|var\s+|my\s+)?(\$?[A-Za-z_]\w*)\s+(?:in|of)\s+[(\[]\s*(['"][^'"\n]{1,300}['"])\s*,"""
)
# a loop over a folder's entries: `for e in os.listdir('~')`, `for p in Path('/etc').iterdir()`,
# `Dir.children('~').each do |e|`, `for (const e of fs.readdirSync('/var'))`, `glob.glob('~/*')`
_LISTED = lazy(
    r"""\bfor\s*\(?\s*(?:const\s+|let\s+|var\s+|my\s+)?(\$?[A-Za-z_]\w*)\s+(?:in|of)\s+(?:sorted\()?\s*"""
    r"""(?:(?:os\.listdir|os\.scandir|glob\.glob|fs\.readdirSync)\(\s*['"]([^'"*\n]{1,300})/?\*?['"]"""
    r"""|(?:(?:pathlib\.)?Path\(\s*)?['"]([^'"*\n]{1,300})['"]\s*\)?\.(?:iterdir|glob|rglob)\()"""
    r"""|['"]([^'"\n]{1,300})['"]\s*\)?\.(?:children|entries|each_child)\s*(?:\.each\s*)?(?:do\s*|\{\s*)\|\s*(\w+)\s*\|"""
    # Ruby's Dir.children('~').each { |c| …}, Dir.glob('~/**/*').each do |f|: every entry, at any depth
    r"""|Dir\.(?:children|entries|each_child|glob)\(\s*['"]([^'"\n]{1,300}?)(?:/\*\*)?(?:/\*)?['"]\s*\)\s*(?:\.each\s*)?"""
    r"""(?:do\s*|\{\s*)\|\s*(\w+)\s*\|"""
)


def _constants(code: str) -> str:
    """``code`` with each variable set once to a string written as that string where it is read, and
    a loop variable over a folder's entries as ``'folder/*'`` (``os.path.join(folder, e)`` too): in
    rounds, so a value built from another (``target = os.path.join(home, e)``) is followed as well."""
    for _ in range(5):
        before = code
        values: dict[str, str] = {}
        counts: dict[str, int] = {}
        for m in _SET_ONCE.finditer(code):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
            values[m.group(1)] = m.group(2)
        for m in _DEFAULTED.finditer(code) if "add_argument" in code else ():  # args.root: its default
            option = re.escape(m.group(1).replace("-", "_"))
            code = re.sub(rf"(?<![\w.])[A-Za-z_]\w*\.{option}\b(?!\s*=[^=])", _always(m.group(2)), code)
        for m in _OVER_WORDS.finditer(code):  # for rc in (".bashrc", ".zshrc"): the first, as the others are alike
            values[m.group(1)], counts[m.group(1)] = m.group(2), 1
        for m in _LISTED.finditer(code):
            name, folder = (
                (m.group(1), m.group(2) or m.group(3))
                if m.group(1)
                else (m.group(5), m.group(4))
                if m.group(5)
                else (m.group(7), m.group(6))
            )
            if "*" in folder:
                continue  # Dir.glob('~/*.log'): the entries of a kind, not every one
            body = _KIND_TEST.sub(" ", code[m.end() : m.end() + 300])  # `if p.is_dir():` dispatches, it does not choose
            if _CHOOSES.search(body):
                continue  # `if p.name in CACHE_DIRS:` in the loop: some entries, not every one
            values[name], counts[name] = "'" + folder.rstrip("/") + "/*'", 1
        known = {k: v for k, v in values.items() if counts[k] == 1}
        if not known:
            return code
        names = "|".join(map(re.escape, sorted(known, key=len, reverse=True)))
        used = re.compile(rf"(?<![\w.$'\"])({names})(?![\w'\"(])(?!\s*=[^=])")
        # f"of={TARGET}", "${dir}/x": the value inside the string that interpolates it
        if "{" in code:
            code = re.sub(rf"\{{\s*({names})\s*\}}", functools.partial(_inside_of, known), code)
        code = used.sub(functools.partial(_value_of, known), code)
        # os.path.join('~', '~/*'): a folder joined with its own entries is its entries; other joins as one
        # path; a path's .parent its folder
        code = _folder_of(_joined(_JOIN_ENTRIES.sub(r"'\2/*'", code)))
        if code == before:
            return code
    return code


def _always(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement that is ``text`` as written (no escapes read in it)."""
    return lambda _: text


def _value_of(values: dict[str, str], m: re.Match[str]) -> str:
    return values[m.group(1)]


def _inside_of(values: dict[str, str], m: re.Match[str]) -> str:
    return values[m.group(1)][1:-1]  # the string's text, without its quotes


_JOIN_ENTRIES = lazy(r"""\b(?:os\.path|path|File)\.join\(\s*(['"])([^'"\n]+)\1\s*,\s*['"]\2/\*['"]\s*\)""")


# Perl's q{…} q(…) qq{…} and Ruby's %q(…) %Q{…}: a string like any other
_QUOTE_OPERATOR = lazy(
    r"(?<![\w$@%])(?:%[qQ]|qq?)(?:\{([^{}'\n]{0,500})\}|\(([^()'\n]{0,500})\)|\[([^\[\]'\n]{0,500})\])"
)
# "rm -rf " + "~", "rm -rf " . '~': a string of words that ends in a blank, and the string joined to it
_WORDS_JOINED = lazy(r"""(['"])(\w[^'"\n]*\s)\1(?:\s+\.\s+|\s*\+\s*)(['"])([^'"\n]*)\3""")
_JOINED = lazy(r"""['"]((?:~|/)[^'"\n]*?)/?['"]\s*(?:\.|\+|/)\s*['"]/?([^'"\n]*)['"]""")  # a path and a part
# os.path.join('~', '.ssh'), path.join('~/.claude', 'settings.json'), a bare join( imported from path
_PATH_JOIN = lazy(
    r"""(?:\b(?:os\.path|path|File)\.|(?<![\w.]))join\(\s*['"]((?:~|/|\.)[^'"\n]{0,200})['"]\s*((?:,\s*['"][^'"]{0,200}['"]\s*){1,8})\)"""
)


# The home folder as inline code names it (Python, Node, Deno, Ruby, Perl, PHP): read as the path `~`.
_HOME_EXPR = lazy(
    r"""os\.path\.expanduser\(\s*['"]~['"]\s*\)|(?:pathlib\.)?Path\.home\(\)"""
    r"""|(?:os\.environ\[|os\.environ\.get\(|os\.getenv\(|(?<![\w.$])getenv\(|Deno\.env\.get\(|ENV\.fetch\(|\$_(?:SERVER|ENV)\[)"""
    r"""\s*['"]HOME['"]\s*[\])]"""  # Python's, PHP's getenv and $_SERVER, Deno's, Ruby's ENV.fetch
    r"""|process\.env(?:\.HOME\b|\[\s*['"]HOME['"]\s*\])|(?:require\(\s*['"](?:node:)?os['"]\s*\)\.|\bos\.|(?<![\w.]))homedir\(\)"""
    r"""|\bDir\.home\b|\bENV\[\s*['"]HOME['"]\s*\]|File\.expand_path\(\s*['"]~['"]\s*\)|\$ENV\{\s*['"]?HOME['"]?\s*\}"""
)
_EXPANDED = lazy(  # expanduser('~/docs'), File.expand_path("~/x"), R's path.expand("~/x")
    r"""(?:os\.path\.expanduser|File\.expand_path|path\.expand|normalizePath)\(\s*(['"]~[^'"]*['"])\s*\)"""
)
_STR = lazy(r"""\b(?:str|String)\(\s*('~[^']*')\s*\)""")


# the home interpolated at the start of a string that goes on with a path
_INTERPOLATED = lazy(
    r"""(?<=["'`])(?:\$ENV\{\s*['"]?HOME['"]?\s*\}|\$\{(?:process\.env\.HOME|os\.homedir\(\)|require\(['"]os['"]\)\.homedir\(\))\}"""
    r"""|\{(?:os\.environ\[['"]HOME['"]\]|Path\.home\(\)|os\.path\.expanduser\(['"]~['"]\))\}|\#\{Dir\.home\}|\$HOME)(?=/)"""
)


# the home interpolated as a word of a command in a string, or the start of one (`cat #{Dir.home}/x`)
_INTERPOLATED_WORD = lazy(
    r"""(?<=["'`\s])(?:\$ENV\{\s*['"]?HOME['"]?\s*\}|\$\{(?:process\.env\.HOME|os\.homedir\(\)|require\(['"]os['"]\)\.homedir\(\))\}"""
    r"""|\{(?:os\.environ\[['"]HOME['"]\]|Path\.home\(\)|os\.path\.expanduser\(['"]~['"]\))\}|\#\{Dir\.home\})(?=["'`\s/])"""
)


def _home_written(code: str) -> str:
    """``code`` with the home folder's expressions written as the path ``'~'``, so a delete of it is read."""
    if "HOME" not in code and "home" not in code and "expand" not in code:
        return code
    code = _INTERPOLATED.sub("~", code)  # "$ENV{HOME}/work", f"{Path.home()}/x", `${os.homedir()}/x`
    code = _INTERPOLATED_WORD.sub("~", code)  # "rm -rf #{Dir.home}", f"du -sh {Path.home()}": a word of its own
    code = _STR.sub(r"\1", _HOME_EXPR.sub("'~'", _EXPANDED.sub(r"\1", code)))
    return code
