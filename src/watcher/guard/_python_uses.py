"""The strings Python code uses as data, read by its syntax tree: a path handed to ``open``,
``read_text``, ``shutil.copy`` or any call that may read it counts; a path only printed or logged,
compared, checked (``exists``, ``stat``), given permissions (``chmod``), assigned to a name,
returned as its function's one value, or joined to a part known only at run time does not. The
secret-file rule reads code through this when it is Python, so a script that checks ``~/.netrc``'s
mode is not taken for one that reads it."""

from __future__ import annotations

import ast

from watcher.guard._python_values import called

__all__ = ["used_strings"]

# calls that take a path without reading what is in it: they tell, check, or change its mode
_TELLS = frozenset(
    {"print", "echo", "secho", "info", "debug", "warning", "warn", "error", "exception", "critical", "log", "format"}
)
_CHECKS = frozenset(
    {
        "exists",
        "lexists",
        "isfile",
        "isdir",
        "is_file",
        "is_dir",
        "is_symlink",
        "islink",
        "stat",
        "lstat",
        "getsize",
        "getmtime",
        "access",
        "chmod",
        "lchmod",
        "chown",
        "expanduser",
        "load_dotenv",
        "dotenv_values",
    }
)
# a path object's attributes and methods that say something of the path, not of what is in it
_PATH_PARTS = frozenset(
    {"name", "suffix", "stem", "parent", "parts", "exists", "is_file", "is_dir", "stat", "chmod", "encode"}
)


def used_strings(code: str) -> list[str] | None:
    """The strings ``code`` (Python, as ``python_readable`` writes it) uses as data; None when it
    does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    parents: dict[int, ast.AST] = {}
    defined: dict[str, int] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[node.name] = defined.get(node.name, 0) + 1
    # the file's functions written out again with their arguments (``python_readable``'s copies): a
    # string handed to one is judged where the copy uses it
    copied = frozenset(name for name, times in defined.items() if times > 1)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not _idle(node, parents, copied):
            out.append(node.value)
    return out


def _idle(node: ast.Constant, parents: dict[int, ast.AST], copied: frozenset[str]) -> bool:
    """Whether the string stands where its file's contents are not taken."""
    parent = parents.get(id(node))
    if isinstance(parent, (ast.Compare, ast.JoinedStr, ast.Assign, ast.AnnAssign)):
        return True  # compared, a message's text, or given a name (where the name is used is judged)
    if isinstance(parent, ast.Return):
        return _only_value(parent, parents)  # where the call's value is used is judged
    if isinstance(parent, ast.Expr):
        return True  # a string standing alone: a note
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Div, ast.Add)):
        other = parent.right if parent.left is node else parent.left
        return not isinstance(other, ast.Constant)  # KEYS / name: which file is not known here
    if isinstance(parent, ast.Attribute):
        return parent.attr in _PATH_PARTS
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    if isinstance(parent, ast.Call):
        f = parent.func
        name = called(parent)
        if name == "join" and any(not isinstance(a, ast.Constant) for a in parent.args):
            return True  # os.path.join('~/.ssh', name)
        return name in _TELLS or name in _CHECKS or (isinstance(f, ast.Name) and name in copied)
    return False


def _only_value(returned: ast.Return, parents: dict[int, ast.AST]) -> bool:
    """Whether ``returned`` gives its function's one value: every ``return`` of the function gives the
    same string, which the reader writes where the function is called. A function returning one of
    several paths is not written there: what it returns counts where it is."""
    function = parents.get(id(returned))
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        function = parents.get(id(function))
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    values = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Return):
            values.add(node.value.value if isinstance(node.value, ast.Constant) else None)
    return len(values) == 1 and None not in values
