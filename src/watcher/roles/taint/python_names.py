"""What Python names mean to the security spec: sources, sanitisers, sinks and transformations, as tables.

Names are dotted and resolved through the file's imports (``from flask import redirect`` makes
``redirect`` read as ``flask.redirect``). ``python_calls.py`` applies them.
"""

from __future__ import annotations

import re
from typing import Any

REQUEST_READS = frozenset({"json", "form", "body", "stream", "data", "text", "post", "read", "get_data", "get_json"})
TORNADO_READS = frozenset(
    {
        "get_argument",
        "get_arguments",
        "get_query_argument",
        "get_query_arguments",
        "get_body_argument",
        "get_body_arguments",
        "get_cookie",
        "get_secure_cookie",
        "get_signed_cookie",
    }
)

__all__ = [
    "ALL",
    "CASTS",
    "CODE",
    "COMMANDS_0",
    "DESERIALISERS",
    "ET_FIND",
    "FOLDABLE",
    "HTML_OUT",
    "LDAP_DN",
    "LDAP_SEARCH",
    "NORMALISERS",
    "PATHS",
    "REDIRECTS",
    "REQUEST_READS",
    "RESPONSES",
    "SANITISERS",
    "SERIALISERS",
    "SHELLS",
    "SQL_FUNCTIONS",
    "SQL_METHODS",
    "SUBPROCESS",
    "TORNADO_READS",
    "TRANSFORMS",
    "WEAK_HASHES",
    "WEAK_RANDOM",
    "XPATH_FUNCTIONS",
    "XPATH_METHODS",
]

ALL = frozenset({"*"})
CASTS = frozenset(
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
SANITISERS: dict[str, frozenset[str]] = {
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
    **dict.fromkeys(["flask.url_for", "django.urls.reverse", "django.shortcuts.resolve_url"], ALL),
}
NORMALISERS = frozenset(["os.path.realpath", "os.path.abspath", "os.path.normpath"])
WEAK_RANDOM = frozenset(
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
WEAK_HASHES = frozenset({"md5", "sha1", "sha-1", "md4", "md2", "ripemd160"})
COMMANDS_0 = frozenset(
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
SUBPROCESS = frozenset(
    ["subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen"]
)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "cmd", "cmd.exe", "powershell", "pwsh"})
CODE = frozenset(
    ["eval", "exec", "compile", "execfile", "builtins.eval", "builtins.exec", "importlib.import_module", "__import__"]
)
DESERIALISERS = re.compile(
    r"^(?:pickle|_pickle|cPickle|dill|cloudpickle|marshal|jsonpickle|shelve|pandas)\.(?:loads?|Unpickler|decode|open|read_pickle)$"
)
PATHS = frozenset(
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
        "os.path.exists",
        "os.path.isfile",
        "os.path.isdir",
        "os.access",
        "linecache.getlines",
    ]
)
HTML_OUT = frozenset(
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
REDIRECTS = frozenset(
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
SQL_METHODS = frozenset(
    ["execute", "executemany", "executescript", "mogrify", "exec_driver_sql", "raw", "read_sql", "read_sql_query"]
)
SQL_FUNCTIONS = frozenset(
    [
        "sqlalchemy.text",
        "sqlalchemy.sql.text",
        "sqlalchemy.sql.expression.text",
        "django.db.models.expressions.RawSQL",
        "pandas.read_sql",
        "pandas.read_sql_query",
    ]
)
LDAP_SEARCH = frozenset(["search", "search_s", "search_st", "search_ext", "search_ext_s"])
LDAP_DN = frozenset(
    ["modify", "modify_s", "add", "add_s", "delete", "delete_s", "compare", "compare_s", "modify_dn", "rename_s"]
)
XPATH_METHODS = frozenset({"xpath"})
ET_FIND = frozenset({"find", "findall", "findtext", "iterfind"})
XPATH_FUNCTIONS = frozenset(["lxml.etree.XPath", "lxml.etree.ETXPath", "elementpath.select", "elementpath.iter_select"])
FOLDABLE: dict[str, Any] = {
    "len": len,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "abs": abs,
    "min": min,
    "max": max,
}
RESPONSES = frozenset(
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
SERIALISERS = frozenset({"pickle.dumps", "marshal.dumps", "jsonpickle.encode", "yaml.dump", "yaml.safe_dump"})
TRANSFORMS = (
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
