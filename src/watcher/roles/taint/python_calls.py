"""What calls mean in Python: sources of input, sanitisers, and sinks by class.

``call(c)`` answers the engine for every call it cannot follow into the file: a source returns
a tainted value, a sanitiser a value cleared for the classes it protects, a sink reports the
arguments that matter (only those: ``cur.execute(sql, params)`` looks at ``sql``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from watcher.roles.taint.regex import safe_classes
from watcher.roles.taint.sinks import SINKS
from watcher.roles.taint.spec import Call
from watcher.roles.taint.values import NO_CONST, Origin, Value, union

__all__ = ["call"]

_ALL = frozenset({"*"})
_CASTS = frozenset(
    [
        "int",
        "float",
        "bool",
        "complex",
        "len",
        "abs",
        "round",
        "hash",
        "ord",
        "id",
        "uuid.UUID",
        "decimal.Decimal",
        "ipaddress.ip_address",
        "datetime.date.fromisoformat",
        "datetime.datetime.fromisoformat",
        "datetime.datetime.strptime",
    ]
)
_SANITISERS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        [
            "html.escape",
            "markupsafe.escape",
            "flask.escape",
            "cgi.escape",
            "jinja2.escape",
            "bleach.clean",
            "werkzeug.utils.escape",
            "django.utils.html.escape",
            "django.utils.html.conditional_escape",
            "xml.sax.saxutils.escape",
            "xml.sax.saxutils.quoteattr",
            "markupsafe.Markup.escape",
        ],
        frozenset({"xss"}),
    ),
    **dict.fromkeys(["shlex.quote", "pipes.quote", "shlex.join"], frozenset({"command"})),
    **dict.fromkeys(
        [
            "os.path.basename",
            "werkzeug.utils.secure_filename",
            "werkzeug.secure_filename",
            "werkzeug.security.safe_join",
            "flask.safe_join",
            "werkzeug.utils.safe_join",
        ],
        frozenset({"path"}),
    ),
    **dict.fromkeys(
        [
            "ldap3.utils.conv.escape_filter_chars",
            "ldap.filter.escape_filter_chars",
            "ldap.dn.escape_dn_chars",
            "ldap3.utils.dn.escape_rdn",
            "ldap.filter.filter_format",
        ],
        frozenset({"ldap"}),
    ),
    **dict.fromkeys(
        [
            "psycopg2.sql.Literal",
            "psycopg2.sql.Identifier",
            "psycopg.sql.Literal",
            "psycopg.sql.Identifier",
            "pymysql.converters.escape_string",
            "MySQLdb.escape_string",
        ],
        frozenset({"sql"}),
    ),
    **dict.fromkeys(
        ["urllib.parse.quote", "urllib.parse.quote_plus", "urllib.parse.urlencode"],
        frozenset({"xss", "command", "ldap", "xpath", "code", "sql", "header"}),
    ),
    **dict.fromkeys(["flask.url_for", "django.urls.reverse", "django.shortcuts.resolve_url"], _ALL),
}
_NORMALISERS = frozenset(["os.path.realpath", "os.path.abspath", "os.path.normpath"])
_WEAK_RANDOM = frozenset(
    [
        "random",
        "random.random",
        "random.randint",
        "random.randrange",
        "random.choice",
        "random.choices",
        "random.sample",
        "random.getrandbits",
        "random.uniform",
        "random.randbytes",
        "random.triangular",
        "random.gauss",
    ]
)
_WEAK_HASHES = frozenset({"md5", "sha1", "sha-1", "md4", "md2", "ripemd160"})
_COMMANDS_0 = frozenset(
    [
        "os.system",
        "os.popen",
        "os.popen2",
        "os.popen3",
        "os.popen4",
        "commands.getoutput",
        "commands.getstatusoutput",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "platform.popen",
        "pty.spawn",
        "asyncio.create_subprocess_shell",
        "asyncio.create_subprocess_exec",
        "os.startfile",
    ]
)
_SUBPROCESS = frozenset(
    ["subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen"]
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "cmd", "cmd.exe", "powershell", "pwsh"})
_CODE = frozenset(
    ["eval", "exec", "compile", "execfile", "builtins.eval", "builtins.exec", "importlib.import_module", "__import__"]
)
_DESERIALISERS = re.compile(
    r"^(?:pickle|_pickle|cPickle|dill|cloudpickle|marshal|jsonpickle|shelve|pandas)\.(?:loads?|Unpickler|decode|open|read_pickle)$"
)
_PATHS = frozenset(
    [
        "open",
        "io.open",
        "codecs.open",
        "os.open",
        "os.remove",
        "os.unlink",
        "os.rmdir",
        "os.removedirs",
        "os.mkdir",
        "os.makedirs",
        "os.rename",
        "os.replace",
        "os.listdir",
        "os.scandir",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.stat",
        "os.walk",
        "shutil.copy",
        "shutil.copyfile",
        "shutil.copy2",
        "shutil.copytree",
        "shutil.rmtree",
        "shutil.move",
        "pathlib.Path",
        "pathlib.PurePath",
        "pathlib.PosixPath",
        "fileinput.input",
        "tarfile.open",
        "zipfile.ZipFile",
        "flask.send_file",
        "flask.send_from_directory",
        "django.http.FileResponse",
        "starlette.responses.FileResponse",
        "fastapi.responses.FileResponse",
        "aiofiles.open",
        "os.path.getsize",
        "linecache.getlines",
    ]
)
_HTML_OUT = frozenset(
    [
        "flask.Response",
        "flask.make_response",
        "flask.render_template_string",
        "werkzeug.Response",
        "werkzeug.wrappers.Response",
        "django.http.HttpResponse",
        "django.http.HttpResponseBadRequest",
        "django.http.HttpResponseNotFound",
        "django.http.HttpResponseForbidden",
        "django.http.HttpResponseServerError",
        "django.http.StreamingHttpResponse",
        "starlette.responses.HTMLResponse",
        "fastapi.responses.HTMLResponse",
        "starlette.responses.Response",
        "fastapi.responses.Response",
        "fastapi.Response",
        "markupsafe.Markup",
        "flask.Markup",
        "jinja2.Markup",
        "django.utils.safestring.mark_safe",
        "django.utils.html.format_html",
    ]
)
_REDIRECTS = frozenset(
    [
        "flask.redirect",
        "werkzeug.utils.redirect",
        "django.shortcuts.redirect",
        "django.http.HttpResponseRedirect",
        "django.http.HttpResponsePermanentRedirect",
        "starlette.responses.RedirectResponse",
        "fastapi.responses.RedirectResponse",
    ]
)
_SQL_METHODS = frozenset(
    ["execute", "executemany", "executescript", "mogrify", "exec_driver_sql", "raw", "read_sql", "read_sql_query"]
)
_SQL_FUNCTIONS = frozenset(
    [
        "sqlalchemy.text",
        "sqlalchemy.sql.text",
        "sqlalchemy.sql.expression.text",
        "django.db.models.expressions.RawSQL",
        "pandas.read_sql",
        "pandas.read_sql_query",
    ]
)
_LDAP_SEARCH = frozenset(["search", "search_s", "search_st", "search_ext", "search_ext_s"])
_LDAP_DN = frozenset(
    ["modify", "modify_s", "add", "add_s", "delete", "delete_s", "compare", "compare_s", "modify_dn", "rename_s"]
)
_XPATH_METHODS = frozenset({"xpath"})
_ET_FIND = frozenset({"find", "findall", "findtext", "iterfind"})
_XPATH_FUNCTIONS = frozenset(
    ["lxml.etree.XPath", "lxml.etree.ETXPath", "elementpath.select", "elementpath.iter_select"]
)
_FOLDABLE: dict[str, Any] = {
    "len": len,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "abs": abs,
    "min": min,
    "max": max,
}
_RESPONSES = frozenset(
    {
        "flask.jsonify",
        "django.http.JsonResponse",
        "flask.render_template",
        "django.shortcuts.render",
        "django.template.loader.render_to_string",
        "flask.send_file",
        "flask.send_from_directory",
        "django.http.FileResponse",
        "starlette.responses.FileResponse",
        "fastapi.responses.FileResponse",
        "starlette.responses.JSONResponse",
        "fastapi.responses.JSONResponse",
    }
)
_SERIALISERS = frozenset({"pickle.dumps", "marshal.dumps", "jsonpickle.encode", "yaml.dump", "yaml.safe_dump"})
_TRANSFORMS = (
    "base64.",
    "binascii.",
    "urllib.parse.",
    "json.",
    "codecs.",
    "html.",
    "os.path.",
    "posixpath.",
    "ntpath.",
    "shlex.",
    "string.",
    "textwrap.",
    "re.",
    "str.",
    "bytes.",
    "operator.",
    "itertools.",
    "functools.",
    "collections.",
    "copy.",
    "unicodedata.",
    "math.",
)


def call(c: Call, imports: frozenset[str]) -> Value | None:
    """The meaning of a call (see the module docstring); None leaves it to the engine's default."""
    name, method = c.name, c.method
    receiver = [c.receiver.flat()] if c.receiver is not None and "module" not in c.receiver.tags else []
    everything = union([*c.args, *c.kwargs.values(), *receiver])
    # sources
    if method in ("get_json", "get_data") and name.startswith("flask.request"):
        return c.site.source("input", f"request.{method}()")
    if c.receiver is not None and "request" in c.receiver.tags and method in ("json", "form", "body", "stream", "data"):
        return c.site.source("input", f"request.{method}()")
    if name in ("input", "raw_input") or name.startswith("sys.stdin."):
        return c.site.source("local", f"{name}()")
    if method in ("recv", "recvfrom", "recv_into", "recvmsg") and c.receiver is not None:
        return c.site.source("input", f"socket {method}()")
    if method in ("get", "getlist", "get_all", "getall", "getone") and c.receiver is not None and c.args:
        key = c.args[0].const
        named = [o for o in c.receiver.origins if o.label == "input" and not o.via]
        if isinstance(key, str) and named and len(named) == len(c.receiver.origins):
            return Value(origins=frozenset(replace(o, name=f"{o.name}[{key!r}]") for o in named))
    if name == "os.getenv" or name == "os.environ.get":
        return c.site.source("environment", f"os.getenv({_text(c, 0)})")
    # sanitisers and casts
    if name in _FOLDABLE and c.args and all(a.constant for a in c.args) and not c.kwargs:
        try:
            return Value(const=_FOLDABLE[name](*(a.const for a in c.args)))
        except Exception:  # noqa: BLE001 - int("x"): not a constant we know
            pass
    if name in _CASTS:
        return everything.cleared(_ALL)
    cleared = _SANITISERS.get(name) or _named_sanitiser(name, method)
    if cleared is not None:
        if name.endswith(("quote", "quote_plus")) and c.kwargs.get("safe", Value(const="/")).const == "":
            cleared = cleared | {"path", "redirect"}
        return everything.cleared(cleared)
    if name in _NORMALISERS or (method in ("resolve", "absolute") and c.receiver is not None):
        return _tag(everything, "normalized")
    if name in ("re.compile",) and c.args and isinstance(c.args[0].const, str):
        return Value(tags=frozenset({"regex:" + c.args[0].const}))
    # weak randomness and weak hashes
    if (
        name in _WEAK_RANDOM
        or name.startswith("numpy.random.")
        or (c.receiver is not None and "weak-random-generator" in c.receiver.tags and method != "seed")
    ):
        return c.site.source("weak-random", f"{name.rsplit('.', 1)[-1] if name else method}()")
    if name == "random.Random":
        return Value(tags=frozenset({"weak-random-generator"}))
    algorithm = _hash_algorithm(c)
    if algorithm:
        return union([everything.cleared(_ALL), c.site.source("weak-hash", algorithm.upper())])
    if name.startswith(("hashlib.", "hmac.")) and not receiver and method not in ("compare_digest",):
        return everything.cleared(_ALL)  # a digest carries none of the input's characters
    _sinks(c, imports)
    if name in _HTML_OUT or name in _REDIRECTS or name in _RESPONSES:
        return Value(tags=frozenset({"response"}))
    if name.startswith("xml.sax.make_parser") or name == "lxml.etree.XMLParser":
        return Value(tags=frozenset({"xml-parser"}))
    if (
        name in _PATHS
        or name in _COMMANDS_0
        or name in _SUBPROCESS
        or name.startswith(("requests.", "httpx.", "urllib.request."))
        or (method in _SQL_METHODS and c.receiver is not None and "module" not in c.receiver.tags)
        or method in ("read_text", "read_bytes")
    ):
        # what a file, a command, a database or a server gives back is not the input that named it
        return _tag(
            c.site.source("unknown", f"what {name or method}() returns"), "response" if name in _RESPONSES else ""
        )
    if (c.receiver is None or "module" in c.receiver.tags) and (name.startswith(_TRANSFORMS) or name in _SERIALISERS):
        return everything  # a pure transformation of its arguments
    return None  # anything else from elsewhere: the engine adds an unknown origin


def _sinks(c: Call, imports: frozenset[str]) -> None:
    name, method, site = c.name, c.method, c.site
    first = c.arg(0)
    if name in _COMMANDS_0 and first is not None:
        site.report(SINKS["command"], first, f"{name}()", ("input", "local", "environment"))
    elif name in _SUBPROCESS or name.startswith("os.exec") or name.startswith("os.spawn"):
        _command(c)
    elif method == "exec_command" and first is not None:
        site.report(SINKS["command"], first, f"{method}()", ("input", "local"))
    if name in _CODE and first is not None:
        site.report(SINKS["code"], first, f"{name}()", ("input", "local", "environment"))
    if _DESERIALISERS.match(name) and (first is not None or c.receiver is not None):
        site.report(SINKS["deserialization"], first or Value(), f"{name}()", ("input",))
    elif name.startswith("yaml.") and method in ("load", "load_all", "unsafe_load", "full_load", "unsafe_load_all"):
        loader = c.arg(1, "Loader")
        loader_name = loader_node_name(c)
        if method.startswith(("unsafe", "full")) or not re.search(r"Safe|Base", loader_name or ""):
            site.report(SINKS["deserialization"], first or Value(), f"{name}()", ("input",))
        del loader
    elif method == "load" and c.receiver is not None and "unpickler" in c.receiver.tags:
        site.report(SINKS["deserialization"], c.receiver, "Unpickler.load()", ("input",))
    if (
        method in _SQL_METHODS and c.receiver is not None and "module" not in c.receiver.tags
    ) or name in _SQL_FUNCTIONS:
        query = c.arg(0, "sql") or c.arg(0, "query") or c.arg(0, "statement")
        if query is not None:
            site.report(
                SINKS["sql"], query, f"{method}()" if c.receiver is not None else f"{name}()", ("input", "local")
            )
    if method == "extra" and "where" in c.kwargs:
        site.report(SINKS["sql"], c.kwargs["where"], "extra(where=...)", ("input",))
    if name in _PATHS and first is not None:
        every = name.startswith(("pathlib.", "shutil.", "os.rename", "os.replace"))
        site.report(SINKS["path"], union(c.args) if every else first, f"{name}()", ("input",))
    if name in _HTML_OUT and first is not None:
        kind = c.arg(99, "mimetype") or c.arg(99, "content_type") or c.arg(99, "media_type")
        if not (kind is not None and isinstance(kind.const, str) and "html" not in kind.const):
            site.report(SINKS["xss"], first, f"{name.rsplit('.', 1)[-1]}()", ("input",))
            site.report(SINKS["weak-hash"], first, f"{name.rsplit('.', 1)[-1]}()", ("weak-hash",))
    if method in ("write", "writelines") and c.receiver is not None and first is not None:
        labels = ("weak-hash",) if "response" not in c.receiver.tags else ("weak-hash", "input")
        sink = SINKS["xss"] if "response" in c.receiver.tags else SINKS["weak-hash"]
        site.report(sink, first, f"{method}()", labels)
        if sink is SINKS["xss"]:
            site.report(SINKS["weak-hash"], first, f"{method}()", ("weak-hash",))
    if name in _REDIRECTS and first is not None:
        site.report(SINKS["redirect"], first, f"{name.rsplit('.', 1)[-1]}()", ("input",))
    if method == "set_cookie" and c.receiver is not None:
        _cookie(c)
    if ("ldap" in imports or "ldap3" in imports) and c.receiver is not None:
        if method in _LDAP_SEARCH:
            for value in (
                *c.args[:3],
                *(v for k, v in c.kwargs.items() if k in ("search_filter", "filterstr", "search_base", "base")),
            ):
                site.report(SINKS["ldap"], value, f"{method}()", ("input",))
        elif method in _LDAP_DN and first is not None:
            site.report(SINKS["ldap"], first, f"{method}()", ("input",))
    if first is not None and (
        (method in _XPATH_METHODS and c.receiver is not None)
        or name in _XPATH_FUNCTIONS
        or (method in _ET_FIND and c.receiver is not None and "xml" in imports and "module" not in c.receiver.tags)
    ):
        query = c.args[1] if name.startswith("elementpath.") and len(c.args) > 1 else first
        site.report(SINKS["xpath"], query, f"{method}()", ("input",))
    _xxe(c)


def _command(c: Call) -> None:
    first = c.arg(0, "args")
    if first is None:
        return
    shell = c.kwargs.get("shell")
    shell_on = shell is not None and shell.const is not False and shell.const is not None and shell.const != 0
    labels = ("input", "local", "environment")
    if shell_on or first.seq is None:
        c.site.report(SINKS["command"], first, f"{c.name}()", labels)
        return
    program = first.seq[0] if first.seq else Value()
    if isinstance(program.const, str) and program.const.rsplit("/", 1)[-1] in _SHELLS:
        c.site.report(SINKS["command"], union(first.seq), f"{c.name}()", labels)
    else:
        c.site.report(SINKS["command"], program, f"{c.name}()", labels)


def _cookie(c: Call) -> None:
    value = c.arg(1, "value") or Value()
    c.site.report(SINKS["weak-random"], value, "set_cookie()", ("weak-random",))
    c.site.report(SINKS["weak-hash"], value, "set_cookie()", ("weak-hash",))
    secure, httponly = c.kwargs.get("secure"), c.kwargs.get("httponly")
    if secure is not None and secure.const is True and httponly is not None and httponly.const is True:
        return
    key = c.arg(0, "key")
    key_text = key.const if key is not None and isinstance(key.const, str) else ""
    if value.constant and not re.search(r"(?i)sess|token|auth|remember|sid|jwt|login|user|id$", key_text):
        return
    missing = [flag for flag, v in (("secure", secure), ("httponly", httponly)) if v is None or v.const is not True]
    origin = Origin("config", f"cookie {key_text!r} set without {' and '.join(missing)}", c.site.line)
    c.site.report(SINKS["cookie"], Value(origins=frozenset({origin})), "set_cookie()", ("config",))


def _xxe(c: Call) -> None:
    name, method = c.name, c.method
    resolve: Any = NO_CONST
    if name == "lxml.etree.XMLParser":
        resolve = c.kwargs["resolve_entities"].const if "resolve_entities" in c.kwargs else False
        if resolve is not True and "load_dtd" in c.kwargs and c.kwargs["load_dtd"].const is True:
            no_network = c.kwargs.get("no_network")
            resolve = no_network is not None and no_network.const is False
    elif method == "setFeature" and len(c.arg_nodes) >= 2:
        feature = c.arg_nodes[0].text().rsplit(".", 1)[-1]
        flag = c.args[1].const
        if feature in ("feature_external_ges", "feature_external_pes") or "external-general-entities" in str(
            c.args[0].const
        ):
            resolve = flag is True or flag == 1
    elif name == "xmltodict.parse" and "disable_entities" in c.kwargs:
        resolve = c.kwargs["disable_entities"].const is False
    if resolve is True:
        origin = Origin("config", "external entities enabled", c.site.line)
        c.site.report(SINKS["xxe"], Value(origins=frozenset({origin})), f"{method}()", ("config",))


def _hash_algorithm(c: Call) -> str:
    name, method = c.name, c.method
    if "usedforsecurity" in c.kwargs and c.kwargs["usedforsecurity"].const is False:
        return ""
    if name.startswith("hashlib.") and method.lower() in _WEAK_HASHES:
        return method
    if (
        name == "hashlib.new"
        and c.args
        and isinstance(c.args[0].const, str)
        and c.args[0].const.lower() in _WEAK_HASHES
    ):
        return c.args[0].const
    if re.match(r"^(?:Crypto|Cryptodome)\.Hash\.(MD5|SHA1?|MD4)\.new$", name) or re.match(
        r"^cryptography\.hazmat\.primitives\.hashes\.(MD5|SHA1)$", name
    ):
        return name.split(".")[-2] if name.endswith(".new") else method
    return ""


def loader_node_name(c: Call) -> str:
    node = c.arg_node(1, "Loader")
    return node.text() if node is not None else ""


def _named_sanitiser(name: str, method: str) -> frozenset[str] | None:
    """An escaping helper from elsewhere, known by its name (``escape_for_html``, ``escape_ldap``)."""
    word = method.lower()
    if not re.search(r"escape|saniti[sz]e|quote|encode_for", word) or word in ("unescape", "unquote"):
        return None
    if name.startswith(("urllib.", "base64.", "codecs.", "json.", "re.")):
        return None
    classes = {
        "xss": r"html|xml|attr",
        "command": r"shell|cmd|command|arg",
        "sql": r"sql|query",
        "ldap": r"ldap|filter|dn",
        "xpath": r"xpath",
        "path": r"path|filename|file",
    }
    found = frozenset(cls for cls, pattern in classes.items() if re.search(pattern, word))
    return found or frozenset({"xss"})


def _tag(value: Value, tag: str) -> Value:
    if not tag:
        return value
    return Value(origins=value.origins, const=value.const, parts=value.parts, tags=value.tags | {tag}, seq=value.seq)


def _text(c: Call, index: int) -> str:
    node = c.arg_node(index)
    return node.text()[:40] if node is not None else ""


def regex_classes(pattern: str, whole: bool) -> frozenset[str]:
    """Re-exported for the guards: the classes a validating pattern clears."""
    return safe_classes(pattern, whole)
