"""The guard's rule for database clients: a destructive statement (``DROP``, ``TRUNCATE``, ``DELETE``
without ``WHERE``, ``FLUSHALL``) given to ``psql``, ``mysql``, ``sqlite3``, ``mongosh``, ``redis-cli``
and the like, on their command line, their standard input or as the command itself, and SQL
handed to a cloud's query service (Athena, Redshift Data, Spanner, D1)."""

from __future__ import annotations

import re

from watcher.guard._context import At, inline_code, readable_code
from watcher.guard._files import Finding
from watcher.guard._lazy import lazy
from watcher.guard._policy import Policy, compiled
from watcher.guard._shell import program

__all__ = ["database", "destructive_sql", "server_abuse", "test_database"]

# a command aimed at a test database: its environment, settings or database name say so
_TEST_ENV = lazy(
    r"(?:^|\s)(?:RAILS_ENV|RACK_ENV|APP_ENV|NODE_ENV|MIX_ENV|FLASK_ENV|ENV)=['\"]?test(?:ing)?['\"]?(?:\s|$)"
    r"|(?:^|\s)(?:-e|--env|--environment)[=\s]['\"]?test(?:ing)?['\"]?(?:\s|$)"
    r"|(?:--settings[=\s]|DJANGO_SETTINGS_MODULE=)\S{0,200}?\btests?\b"
    r"|(?:^|\s)\w*DATABASE_URL=['\"]?[\w+.-]+://[^\s'\"/]{0,200}/(?:test|[\w.-]{0,100}[_-]test)(?:['\"?\s]|$)"
    r"|\b(?:dbname|database)=['\"]?(?:test|[\w.-]{0,100}[_-]test)\b"
    r"|(?i:\bdrop\s+database\s+(?:if\s+exists\s+)?[`\"]?(?:test|[\w.-]{0,100}[_-]test|test[_-][\w.-]{0,100})\b[`\"]?\s*;?\s*['\"]?$)"
)
_TEST_NAME = lazy(
    r"^(?:[\w./-]*/)?(?:test|[\w.-]*[_-]test|test[_-][\w.-]*)(?:\.(?:db|sqlite3?|duckdb))?$|/[\w.-]*[_-]test(?:\?|$)"
)


_TEST_SEGMENT = lazy(r"(?:^|[_.-])tests?(?:$|[_.-])")


# databases a statement names besides the one connected to: `DROP DATABASE prod`, `getSiblingDB('prod')`
_DROPPED_DATABASE = lazy(
    r"(?i)\bdrop\s+(?:database|schema)\s+(?:if\s+exists\s+)?[`\"]?([\w.-]{1,100})|getSiblingDB\(\s*['\"]([\w.-]{1,100})"
)
_PROGRAM = lazy(r"(?is)\bcopy\b.{0,2000}?\b(?:to|from)\s+program\b")
_SYSTEM_SETTING = lazy(r"(?i)\balter\s+system\s+(?:set|reset)\b")
_ESCALATES = lazy(
    r"(?is)\b(?:alter|create)\s+(?:role|user)\s+\S{1,100}\s+(?:with\s+)?(?:[\w\s]{0,100}\s)?superuser\b"
    r"|\bgrant\s+all\s+privileges\s+on\s+\*\.\*\s+to\b|\bgrant\s+all\b[^;]*\bto\s+public\b"
)


def test_database(x: At) -> bool:
    """``x`` drops or empties a test database (``RAILS_ENV=test rails db:drop``, ``dropdb app_test``,
    ``manage.py flush --settings=config.settings.test``): the test suite recreates it."""
    known = dict(x.place.values)
    args = [
        known.get(a.lstrip("$").strip("{}"), a) if a.startswith("$") else a for a in x.args
    ]  # DB=app_test; dropdb "$DB"
    if bool(_TEST_ENV.search(x.cmd.source)) or any(_TEST_NAME.search(a.split("=", 1)[-1]) for a in args):
        return True
    if x.name in ("sqlite3", "sqlite", "duckdb") and x.positional[:1] == [":memory:"]:
        # sqlite3 :memory: 'DROP TABLE x': a database in memory, gone when the client exits (unless it attaches a file)
        return not re.search(r"(?i)\battach\b|\.open\b", x.cmd.source)
    # docker exec app-test-redis redis-cli FLUSHALL: a container named for tests holds a test database
    container = re.match(
        r"\s*(?:docker|podman)\s+(?:compose\s+)?exec\s+(?:(?:-[uew]|--user|--env|--workdir|--env-file)[\s=]\S+\s+|-\w+\s+)*([\w.-]+)",
        x.cmd.source,
    )
    return bool(container and _TEST_SEGMENT.search(container.group(1)))


_SQL_FLAGS = frozenset({"-c", "--command", "-e", "--execute", "--eval", "-q", "--query", "-Q", "--sql"})
_SQL_NOISE = re.compile(r"/\*.*?\*/|--[^\n]*|'(?:[^']|'')*'|\"[^\"]*\"|\$(\w*)\$.*?\$\1\$", re.S)


def destructive_sql(policy: Policy, text: str) -> bool:
    """``text`` holds a destructive statement, read without its comments and quoted strings
    (``DELETE FROM t /* where id=5 */`` deletes every row; ``RETURNING 'where'`` is no condition),
    and without a condition every row meets (``WHERE 1=1``, ``WHERE true``, ``WHERE 'a'='a'``). A
    database or schema named for tests dropped (``DROP DATABASE IF EXISTS `shop_test```) is no loss."""
    text = _DROPS_TEST.sub(" ", text) if "test" in text.lower() else text
    plain = _SQL_NOISE.sub(" ", _ALWAYS.sub(" ", text) if "where" in text.lower() else text)
    return bool(compiled(policy, "database.destructive").search(plain))


def _sql_words(words: list[str]) -> list[str]:
    """A client's arguments that may be SQL: its words, and the values of ``-c``, ``--command=``, ``-c'…'``."""
    out = []
    for w in words:
        flag, eq, value = w.partition("=")
        if eq and flag in _SQL_FLAGS:
            out.append(value)
        elif w[:2] in _SQL_FLAGS and len(w) > 2 and not w.startswith("--"):
            out.append(w[2:])
        elif not w.startswith("-"):
            out.append(w)
    return out


# cloud CLIs that run SQL given by an option (`aws athena start-query-execution --query-string`,
# `aws redshift-data execute-statement --sql`, `gcloud spanner databases execute-sql --sql`,
# `wrangler d1 execute DB --command`), and those options
_CLOUD_CLIS = frozenset({"aws", "gcloud", "wrangler", "databricks", "az"})
_SQL_OPTIONS = frozenset({"--query-string", "--sql", "--sqls", "--command", "--statement", "--query-text"})


def _option_sql(argv: list[str]) -> str:
    """The values of a cloud CLI's SQL options (``--sql 'DROP …'``, ``--sql='DROP …'``)."""
    out = []
    for i, a in enumerate(argv):
        flag, eq, value = a.partition("=")
        if flag in _SQL_OPTIONS:
            out.append(value if eq else (argv[i + 1] if i + 1 < len(argv) else ""))
    return "\n;".join(out)


# a client's switches that open the database read-only
_READ_ONLY = frozenset({"-readonly", "--readonly", "-safe", "--read-only", "-r"})


# a WHERE every row meets, up to the statement's end: the statement touches every row
_ALWAYS = lazy(
    r"(?i)\bwhere\s+(?:1\s*=\s*1|true|1|not\s+false|'(\w*)'\s*=\s*'\1'|(\d+)\s*=\s*\2|([a-z_]\w*)\s*=\s*\3)"
    r"\s*(?=;|$|\n|\)|--|\b(?:returning|order|limit)\b)"
)
_STATEMENT = lazy(r"(?i)\s*(?:drop|truncate|delete|alter|begin|with|update|insert|create|set|flushall|flushdb)\s")


# an ORM emptying a whole table or dropping every table, by the language of the code: Rails'
# `User.delete_all` (not `User.where(…).delete_all`), Django's `User.objects.all().delete()`,
# SQLAlchemy's `db.drop_all()`/`metadata.drop_all(…)`, Sequelize's `sync({ force: true })`/`drop()`
_ORM_WIPES = {
    "ruby": lazy(r"\b[A-Z]\w*(?:\.all)?\.(?:delete_all|destroy_all)\b"),
    "python": lazy(r"\b[A-Z]\w*\.objects\.all\(\)\.delete\(\)|\b(?:db|metadata)\.drop_all\s*\("),
    "js": lazy(r"\bsequelize\.drop\s*\(|\bsequelize\.sync\s*\(\s*\{\s*force\s*:\s*true"),
}
# a database's own client emptying or dropping all of it, in any language: redis's flushall(), pymongo's
# drop_database(name), the Node driver's db.dropDatabase()
_DRIVER_WIPES = lazy(r"(?i)\.flush_?(?:all|db)\b(?:\s*\(|(?![\w.]))|\.drop_?database\s*\(")
_LANGUAGES = {"rails": "ruby", "ruby": "ruby", "python": "python", "python3": "python", "node": "js", "bun": "js"}


def _code_sql(x: At, code: str) -> Finding | None:
    """Inline code (``python -c``, ``node -e``, a here-document) whose strings hold a destructive
    statement (``c.execute('DROP TABLE users')``, ``dbExecute(con, "DELETE FROM t")``), or that
    empties a table through its ORM (``User.delete_all``), unless the database it names is a test
    or in-memory one."""
    text = readable_code(code)
    wipes = _ORM_WIPES.get(_LANGUAGES.get(x.name, ""))
    if wipes is not None and wipes.search(text) and not test_database(x):
        return "database", "empties a table or drops every table through the ORM: the data is gone for good"
    if _DRIVER_WIPES.search(text) and not test_database(x):
        return (
            "database",
            "empties or drops a whole database through its client (FLUSHALL, dropDatabase): the data is gone for good",
        )
    if not destructive_sql(x.policy, "\n;".join(_statements(_strings(text)))):
        return None
    if test_database(x) or _spared(x, text):
        return None
    return "database", "runs a destructive database statement from inline code: the data is gone for good"


def _strings(text: str) -> list[str]:
    # an empty string is one too: skipped over, its quotes would pair with the next string's
    found = re.findall(r"'([^'\n]{0,2000})'|\"([^\"\n]{0,2000})\"|`([^`]{0,2000})`", text)
    return [s for a, b, c in found if (s := a or b or c)]


def _statements(texts: list[str]) -> list[str]:
    return [t for t in texts if _STATEMENT.match(t)]  # a string that is SQL, not prose about it


def _spared(x: At, text: str) -> bool:
    """Whether the destructive statements run on a test database the code names. Where a function
    both connects and runs one (as the code's readers write a call out with its values), its own
    connection decides; else a test database named anywhere, and no other connection named."""
    decided = []
    for chunk in _FUNCTION.split(text):  # a function's body at a time
        texts = _strings(chunk)
        connections = [t for t in texts if _CONNECTS.search(t)]
        if connections and destructive_sql(x.policy, "\n;".join(_statements(texts))):
            decided.append(all(_tested(t) for t in connections))
    if decided:
        return all(decided)
    texts = _strings(text)
    tested = any(t == ":memory:" or _TEST_NAME.search(t) for t in texts)
    return tested and not any(_CONNECTS.search(t) and not _tested(t) for t in texts)


def _tested(connection: str) -> bool:
    """A connection to a test database: its URL's database (``…/app_test``) or its ``dbname=``."""
    named = re.search(r"\bdbname=([^\s;]+)", connection)
    return bool(_TEST_NAME.search(named.group(1) if named else connection))


# a statement dropping (or recreating) a database or schema named for tests
_DROPS_TEST = lazy(
    r"(?i)\bdrop\s+(?:database|schema)\s+(?:if\s+exists\s+)?[`\"\[]?(?:[\w-]*[_-]test|test[_-][\w-]*|test)[`\"\]]?"
    r"(?=\s*(?:;|$|cascade\b|with\b))"
)
# a connection's address: a database URL, or a libpq connection string's host or database
_CONNECTS = lazy(r"(?i)^(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss)://|\b(?:dbname|host)=\S")
_FUNCTION = lazy(r"(?m)^[ \t]*(?:async[ \t]+)?(?:def|function)[ \t]")


def _bulk_key_delete(x: At, args: list[str]) -> bool:
    """``redis-cli --scan --pattern 'p:*' | xargs redis-cli DEL``: a key store's keys deleted by the
    thousand, as many as the pattern matches (``KEYS`` too)."""
    if "xargs" not in x.cmd.wrapped_by or not any(a.upper() in ("DEL", "UNLINK") for a in args):
        return False
    feeder = x.cmd.feeder
    return feeder is not None and any(a in ("--scan", "KEYS", "keys", "SCAN", "scan") for a in feeder.args)


def database(x: At) -> Finding | None:
    if not x.on("database"):
        return None
    clients = x.policy.data["database"]["clients"]
    argv = list(x.cmd.argv)
    at = next((i for i, a in enumerate(argv) if program(a) in clients), None)
    if at is None and argv and argv[0].upper() in ("DELETE", "DROP", "TRUNCATE", "ALTER"):
        at = -1  # an SQL statement given as the command: a console or tool that runs SQL
    if (at is None or x.name == "rails") and (code := inline_code(x.cmd)):  # python -c, rails runner
        return _code_sql(x, code)
    if at is None:
        if argv and program(argv[0]) in _CLOUD_CLIS and destructive_sql(x.policy, _option_sql(argv)):
            return (
                "database",
                "runs a destructive SQL statement through the cloud's query service: the data is gone for good",
            )
        return None
    if at >= 0 and _READ_ONLY & set(argv[at + 1 :]):
        return None  # sqlite3 -readonly, duckdb -readonly: the database refuses every write
    text = "\n;".join(_sql_words(argv[at + 1 :])) if at >= 0 else x.cmd.source  # as written: quotes, comments
    text += "\n;" + (x.cmd.stdin or "")
    if "$" in text and x.place.values:  # DROP DATABASE ${DB_NAME}: the name the line set it to
        known = dict(x.place.values)
        text = re.sub(
            r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))",
            lambda m: known.get(m.group(1) or m.group(2), m.group(0)),
            text,
        )
    feeder = x.cmd.feeder
    if feeder is not None and feeder.name in ("echo", "printf", "cat"):
        text += "\n;" + " ".join(feeder.args)
    dropped = [a or b for a, b in _DROPPED_DATABASE.findall(text)]  # connected to a test one, it may drop another
    if test_database(x) and all(_TEST_NAME.search(name) for name in dropped):
        return None
    if destructive_sql(x.policy, text):
        return (
            "database",
            "runs a destructive database statement (DROP, TRUNCATE, DELETE without WHERE, FLUSHALL): the data is gone for good",
        )
    if _bulk_key_delete(x, argv[at + 1 :] if at >= 0 else []) and not test_database(x):
        return "database", "deletes every key a scan finds (a scan piped into DEL): the data is gone for good"
    found = server_abuse(text)
    return found if found is not None and x.on(found[0]) else None


def server_abuse(text: str) -> Finding | None:
    """SQL that takes over the database server rather than its data: an account made superuser or
    every right granted to everyone, a shell command run by the server (``COPY … TO PROGRAM``), the
    server's own settings changed (``ALTER SYSTEM``)."""
    plain = _SQL_NOISE.sub(" ", text)
    if _ESCALATES.search(plain):
        return "permissions", "makes a database account a superuser, or grants every right to everyone"
    if _PROGRAM.search(text):
        return (
            "download-exec",
            "has the database server run a shell command (COPY … PROGRAM): it runs with the server's rights",
        )
    if _SYSTEM_SETTING.search(plain):
        return (
            "system-change",
            "changes the database server's own settings (ALTER SYSTEM): logging, TLS or access for everyone",
        )
    return None
