"""What calls mean in Python: sources of input, sanitisers, and sinks by class.

``call(c)`` answers the engine for every call it cannot follow into the file: a source returns
a tainted value, a sanitiser a value cleared for the classes it protects, a sink reports the
arguments that matter (only those: ``cur.execute(sql, params)`` looks at ``sql``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from watcher.roles.taint import python_names as known
from watcher.roles.taint.sinks import SINKS
from watcher.roles.taint.spec import Call
from watcher.roles.taint.values import NO_CONST, Origin, Value, merge, union

__all__ = ["call"]


def call(c: Call, imports: frozenset[str]) -> Value | None:
    """The meaning of a call (see the module docstring); None leaves it to the engine's default."""
    name, method = c.name, c.method
    receiver = [c.receiver.flat()] if c.receiver is not None and "module" not in c.receiver.tags else []
    everything = union([*c.args, *c.kwargs.values(), *receiver])
    # sources
    if method in ("get_json", "get_data") and name.startswith("flask.request"):
        return c.site.source("input", f"request.{method}()")
    if c.receiver is not None and "request" in c.receiver.tags and method in known.REQUEST_READS:
        return c.site.source("input", f"request.{method}()")
    if method in known.TORNADO_READS and name.startswith("self."):
        return c.site.source("input", f"{method}({_text(c, 0)})")
    if name in ("input", "raw_input") or name.startswith("sys.stdin."):
        return c.site.source("local", f"{name}()")
    if method in ("recv", "recvfrom", "recv_into", "recvmsg") and c.receiver is not None:
        return c.site.source("input", f"socket {method}()")
    if method == "get" and c.receiver is not None and c.receiver.parts is not None and c.args:
        return _keyed(c.receiver, c.args)
    if method in ("get", "getlist", "get_all", "getall", "getone") and c.receiver is not None and c.args:
        key = c.args[0].const
        named = [o for o in c.receiver.origins if o.label == "input" and not o.via]
        if isinstance(key, str) and named and len(named) == len(c.receiver.origins):
            return Value(origins=frozenset(replace(o, name=f"{o.name}[{key!r}]") for o in named))
    if name == "os.getenv" or name == "os.environ.get":
        return c.site.source("environment", f"os.getenv({_text(c, 0)})")
    # sanitisers and casts
    if name in known.FOLDABLE and c.args and all(a.constant for a in c.args) and not c.kwargs:
        try:
            return Value(const=known.FOLDABLE[name](*(a.const for a in c.args)))
        except Exception:  # noqa: BLE001 - int("x"): not a constant we know
            pass
    if name in known.CASTS:
        return everything.cleared(known.ALL)
    cleared = known.SANITISERS.get(name) or _named_sanitiser(name, method)
    if cleared is not None:
        if name.endswith(("quote", "quote_plus")) and c.kwargs.get("safe", Value(const="/")).const == "":
            cleared = cleared | {"path", "redirect"}
        return everything.cleared(cleared)
    if name in known.NORMALISERS or (method in ("resolve", "absolute") and c.receiver is not None):
        return _tag(everything, "normalized")
    if name in ("re.compile",) and c.args and isinstance(c.args[0].const, str):
        return Value(tags=frozenset({"regex:" + c.args[0].const}))
    # weak randomness and weak hashes
    if (
        name in known.WEAK_RANDOM
        or name.startswith("numpy.random.")
        or (c.receiver is not None and "weak-random-generator" in c.receiver.tags and method != "seed")
    ):
        return c.site.source("weak-random", f"{name.rsplit('.', 1)[-1] if name else method}()")
    if name == "random.Random":
        return Value(tags=frozenset({"weak-random-generator"}))
    algorithm = _hash_algorithm(c)
    if algorithm:
        return union([everything.cleared(known.ALL), c.site.source("weak-hash", algorithm.upper())])
    if name.startswith(("hashlib.", "hmac.")) and not receiver and method not in ("compare_digest",):
        return everything.cleared(known.ALL)  # a digest carries none of the input's characters
    _sinks(c, imports)
    if name in known.HTML_OUT or name in known.REDIRECTS or name in known.RESPONSES:
        return Value(tags=frozenset({"response"}))
    if name.startswith("xml.sax.make_parser") or name == "lxml.etree.XMLParser":
        return Value(tags=frozenset({"xml-parser"}))
    if (
        name in known.PATHS
        or name in known.COMMANDS_0
        or name in known.SUBPROCESS
        or name.startswith(("requests.", "httpx.", "urllib.request."))
        or (method in known.SQL_METHODS and c.receiver is not None and "module" not in c.receiver.tags)
        or method in ("read_text", "read_bytes")
    ):
        # what a file, a command, a database or a server gives back is not the input that named it
        return _tag(
            c.site.source("unknown", f"what {name or method}() returns"), "response" if name in known.RESPONSES else ""
        )
    if (c.receiver is None or "module" in c.receiver.tags) and (
        name.startswith(known.TRANSFORMS) or name in known.SERIALISERS
    ):
        return everything  # a pure transformation of its arguments
    return None  # anything else from elsewhere: the engine adds an unknown origin


def _sinks(c: Call, imports: frozenset[str]) -> None:
    name, method, site = c.name, c.method, c.site
    first = c.arg(0)
    if name in known.COMMANDS_0 and first is not None:
        site.report(SINKS["command"], first, f"{name}()", ("input", "local", "environment"))
    elif name in known.SUBPROCESS or name.startswith("os.exec") or name.startswith("os.spawn"):
        _command(c)
    elif method == "exec_command" and first is not None:
        site.report(SINKS["command"], first, f"{method}()", ("input", "local"))
    if name in known.CODE and first is not None:
        site.report(SINKS["code"], first, f"{name}()", ("input", "local", "environment"))
    if known.DESERIALISERS.match(name) and (first is not None or c.receiver is not None):
        site.report(SINKS["deserialization"], first or Value(), f"{name}()", ("input",))
    elif name.startswith("yaml.") and method in ("load", "load_all", "unsafe_load", "full_load", "unsafe_load_all"):
        loader_name = loader_node_name(c)
        if method.startswith(("unsafe", "full")) or not re.search(r"Safe|Base", loader_name or ""):
            site.report(SINKS["deserialization"], first or Value(), f"{name}()", ("input",))
    if (
        method in known.SQL_METHODS and c.receiver is not None and "module" not in c.receiver.tags
    ) or name in known.SQL_FUNCTIONS:
        query = c.arg(0, "sql") or c.arg(0, "query") or c.arg(0, "statement")
        if query is not None:
            site.report(
                SINKS["sql"], query, f"{method}()" if c.receiver is not None else f"{name}()", ("input", "local")
            )
    if method == "extra" and "where" in c.kwargs:
        site.report(SINKS["sql"], c.kwargs["where"], "extra(where=...)", ("input",))
    if name in known.PATHS and first is not None:
        every = name.startswith(("pathlib.", "shutil.", "os.rename", "os.replace"))
        site.report(SINKS["path"], union(c.args) if every else first, f"{name}()", ("input",))
    if name in known.HTML_OUT and first is not None:
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
    if name in known.REDIRECTS and first is not None:
        site.report(SINKS["redirect"], first, f"{name.rsplit('.', 1)[-1]}()", ("input",))
    if method == "set_cookie" and c.receiver is not None:
        _cookie(c)
    if ("ldap" in imports or "ldap3" in imports) and c.receiver is not None:
        if method in known.LDAP_SEARCH:
            for value in (
                *c.args[:3],
                *(v for k, v in c.kwargs.items() if k in ("search_filter", "filterstr", "search_base", "base")),
            ):
                site.report(SINKS["ldap"], value, f"{method}()", ("input",))
        elif method in known.LDAP_DN and first is not None:
            site.report(SINKS["ldap"], first, f"{method}()", ("input",))
    if first is not None and (
        (method in known.XPATH_METHODS and c.receiver is not None)
        or name in known.XPATH_FUNCTIONS
        or (method in known.ET_FIND and c.receiver is not None and "xml" in imports and "module" not in c.receiver.tags)
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
    if isinstance(program.const, str) and program.const.rsplit("/", 1)[-1] in known.SHELLS:
        c.site.report(SINKS["command"], union(first.seq), f"{c.name}()", labels)
    else:
        c.site.report(SINKS["command"], program, f"{c.name}()", labels)


def _cookie(c: Call) -> None:
    """A cookie's value (weak random, weak hash) and its flags: no ``secure`` is a warning, no ``httponly`` a hint."""
    value = c.arg(1, "value") or Value()
    c.site.report(SINKS["weak-random"], value, "set_cookie()", ("weak-random",))
    c.site.report(SINKS["weak-hash"], value, "set_cookie()", ("weak-hash",))
    secure, httponly = c.kwargs.get("secure"), c.kwargs.get("httponly")
    key = c.arg(0, "key")
    key_text = key.const if key is not None and isinstance(key.const, str) else ""
    if value.constant and not re.search(r"(?i)sess|token|auth|remember|sid|jwt|login|user|id$", key_text):
        return  # a constant preference (theme=dark) holds nothing to steal
    if secure is None or secure.const is not True:
        missing = "secure" + (" and httponly" if httponly is None or httponly.const is not True else "")
        origin = Origin("config", f"cookie {key_text!r} set without {missing}", c.site.line)
        c.site.report(SINKS["cookie"], Value(origins=frozenset({origin})), "set_cookie()", ("config",))
    elif httponly is None or httponly.const is not True:
        origin = Origin("config", f"cookie {key_text!r} set without httponly (scripts can read it)", c.site.line)
        c.site.report(SINKS["cookie"], Value(origins=frozenset({origin})), "set_cookie()", ("config",), "hint")


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
    if name.startswith("hashlib.") and method.lower() in known.WEAK_HASHES:
        return method
    if (
        name == "hashlib.new"
        and c.args
        and isinstance(c.args[0].const, str)
        and c.args[0].const.lower() in known.WEAK_HASHES
    ):
        return c.args[0].const
    if re.match(r"^(?:Crypto|Cryptodome)\.Hash\.(MD5|SHA1?|MD4)\.new$", name) or re.match(
        r"^cryptography\.hazmat\.primitives\.hashes\.(MD5|SHA1)$", name
    ):
        return name.split(".")[-2] if name.endswith(".new") else method
    return ""


def loader_node_name(c: Call) -> str:
    """How the ``Loader`` argument of a ``yaml.load`` reads (``yaml.SafeLoader``)."""
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


def _keyed(container: Value, args: tuple[Value, ...]) -> Value:
    """``d.get(key, default)`` or ``config.get(section, option)`` of a container whose keys are known."""
    parts = container.parts or {}
    if len(args) >= 2 and any(isinstance(k, tuple) and len(k) == 2 for k in parts):
        key: Any = (args[0].const, args[1].const)
        return container.part(key if all(k is not NO_CONST for k in key) else NO_CONST)
    key = args[0].const
    found = container.part(key if key is not NO_CONST and _hashable(key) else NO_CONST)
    if len(args) >= 2 and not (key is not NO_CONST and _hashable(key) and key in parts):
        return merge(found, args[1])
    return found


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _tag(value: Value, tag: str) -> Value:
    if not tag:
        return value
    return Value(origins=value.origins, const=value.const, parts=value.parts, tags=value.tags | {tag}, seq=value.seq)


def _text(c: Call, index: int) -> str:
    node = c.arg_node(index)
    return node.text()[:40] if node is not None else ""
