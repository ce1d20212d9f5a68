"""The journal's storage port: the SQL behind ``Journal``, one implementation per engine.

``Journal`` owns everything that is not SQL (the writer thread, batching, redaction, encoding,
retries, skipping rows it cannot decode); a ``Store`` only runs statements. Two stores exist:
``SqliteStore`` (one file, the embedded default) and ``PostgresStore`` (a server that many
machines share). ``Journal`` picks one from what the user gave: a path or a ``postgresql://`` URL.

Every row a reader gets carries a *position*: an int that orders rows as they became visible
(committed), which a reader passes back as ``after`` to read on. In SQLite, where one writer lock
serialises commits, it is the row id; in PostgreSQL ids are taken at insert and committed out of
order, so the position packs the writing transaction's id with the row id (see ``_pg_store``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, unquote

from watcher.core.errors import JournalError, JournalLocationError

__all__ = [
    "SETTLED",
    "CommandRow",
    "EventRow",
    "Fences",
    "Mark",
    "RawEvent",
    "Store",
    "StoreBusy",
    "future_cutoff",
    "is_url",
    "journal_label",
    "journal_target",
    "misread_query",
    "user_part",
]

EventRow = tuple[float, str, str, str, str]
"""An ``events`` row to write: ts, session, watcher, kind, payload (JSON text, redacted)."""

RawEvent = tuple[int, float, str, str, str, "bytes | str | None"]
"""An ``events`` row as read: position, ts, session, watcher, kind, payload (not yet decoded)."""

CommandRow = tuple[int, float, str, str, str, str, str, str, str]
"""A ``commands`` row: id, ts, session, watcher, kind, interjection id, payload, status, detail."""

Mark = tuple[int, str, str, float | None]
"""How a command ended: id, ``applied`` or ``failed``, detail, and the claim it was applied under
(its token from ``claim_commands``; None for a command marked without a claim)."""

Fences = Mapping[int, tuple[int, float]]
"""Rows of a batch that are a command's effect: row index -> (command id, claim token).

Such rows are written only if the claim still holds, and the command is marked ``applied`` in the
same transaction: its effect and its mark are never one without the other, so a command whose
claim was released (its process cut off for longer than the lease) and taken by another process
is not applied twice."""

SETTLED = "applied: its effect is in the journal"
"""A command's detail once its effect is written, until its process marks it with its own detail."""

URL_SCHEMES = ("postgresql://", "postgres://")


class StoreBusy(Exception):
    """The store cannot take a write now (a file locked by another process, a server gone away).

    Retrying helps; the journal retries with backoff for as long as it lasts. The message completes
    "the journal at … is …" (``locked by another process (…)``); ``remedy`` says what a person can
    do meanwhile.
    """

    def __init__(self, message: str, remedy: str = "If the process holding it is stuck, end it") -> None:
        super().__init__(message)
        self.remedy = remedy


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_ALMOST_URL = re.compile(r"postgres(?:ql)?:", re.IGNORECASE)


def is_url(target: object) -> bool:
    """True when ``target`` names a PostgreSQL journal (``postgresql://…``, any case) rather than a file."""
    return isinstance(target, str) and target[: len(URL_SCHEMES[0])].lower().startswith(URL_SCHEMES)


def journal_target(value: str | os.PathLike[str]) -> Path | str:
    """A journal location as given on a command line or in ``$WATCHER_JOURNAL``: a URL, else a path.

    ``Path("postgresql://host/db")`` would fold the ``//`` into folders, so anything shaped like
    ``scheme://`` never becomes a Path: PostgreSQL's schemes, in any case, are kept as a URL with
    the scheme in lower case (libpq knows no other), and any other scheme is refused, as is an
    empty location (a path to the current folder), with a ``JournalLocationError``.
    """
    text = os.fspath(value)
    if not text.strip():
        raise JournalLocationError(
            "the journal location is empty; give a file path (such as .watcher/journal.sqlite3) or a postgresql:// URL"
        )
    scheme = _SCHEME.match(text)
    if scheme is None:
        if _ALMOST_URL.match(text):  # postgresql:/host/db, postgres:host: a URL with its slashes mistyped
            raise JournalLocationError(
                f"the journal location starts with {text.split(':', 1)[0]}: but not ://; write a PostgreSQL URL "
                "as postgresql://HOST/DATABASE (two slashes), or give a file path such as ./postgresql/journal.sqlite3"
            )
        try:
            return Path(text).expanduser()
        except RuntimeError as exc:  # ~name of no such user, or no home folder to put for ~
            raise JournalLocationError(
                f"the journal location {text!r} starts with a home folder that cannot be found ({exc}); "
                "give the path in full"
            ) from exc
    name = scheme.group(1).lower()
    if f"{name}://" in URL_SCHEMES:
        return name + text[scheme.end(1) :]
    # only the scheme is named: the rest of a URL may hold a password
    raise JournalLocationError(
        f"the journal location starts with {scheme.group(1)}://, a scheme watcher cannot store a journal at; "
        "give a postgresql:// URL or a file path"
    )


SECRET_PARAMETERS = frozenset({"password", "sslpassword"})
"""The connection parameters a PostgreSQL URL may carry that are secrets: never shown."""


def journal_label(target: Path | str) -> str:
    """How a journal is named to a person, an editor or a log: its path, or its URL without its secrets.

    The one place a PostgreSQL URL is named (messages, ``journal check``, the language server). It
    keeps the URL as it was written, so the label works when pasted back (a suggested ``watcher
    journal migrate …`` acts on the same journal once the password is added back), and drops what
    libpq would read as a secret: the password after the user, and ``password=`` or
    ``sslpassword=`` in the query (any case, percent-encoded or not). It parses as libpq does, not
    as a web URL (``user_part``): the host list runs from there to the first ``/`` or ``?``, so an
    ``@`` in the query of a URL without a path (``?sslcert=/a@b``) is not taken for the end of a
    user, and a ``/`` there is not taken for the start of a path. A password with a stray ``@`` is
    dropped whole rather than shown in part.
    """
    if not is_url(target):
        return str(target)
    scheme, rest = str(target).split("://", 1)
    user_end = user_part(rest)
    start = user_end + 1 if user_end >= 0 else 0
    end = min((i for i in (rest.find("/", start), rest.find("?", start)) if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if user_end >= 0:
        # the last '@' of the user and host part: a password holding a stray '@' is dropped whole
        credentials, hosts = authority.rsplit("@", 1)
        user = credentials.split(":", 1)[0]
        if "?" in user:  # a query read as a user name (``host?options=a@b``, see ``misread_query``): no secret of it
            user, _, pairs = user.partition("?")
            user += "?" + _kept(pairs)
            hosts, _, pairs = hosts.partition("&")  # (its pairs after the '@' libpq reads as the host's)
            hosts += f"&{_kept(pairs)}" if _kept(pairs) else ""
        authority = user + "@" + hosts
    elif "@" in tail.split("?", 1)[0] or not _ports(authority):
        return "postgresql://(an unreadable URL)"  # user:pass/word@host: where the password ends is unclear
    path, query = tail.split("?", 1) if "?" in tail else (tail, "")
    kept = _kept(query)
    return _printable(f"{scheme}://{authority}{path}" + (f"?{kept}" if kept else ""))


def _printable(url: str) -> str:
    """``url`` with each control, format (a right-to-left override) or undecodable character percent-encoded:
    named in a terminal or a log, it cannot rewrite the line it is on, nor fail to print, and still reads the same
    pasted back (libpq decodes a URL's percent-encoding)."""
    if url.isprintable():
        return url
    return "".join(c if c.isprintable() else quote(c.encode("utf-8", "surrogateescape"), safe="") for c in url)


def user_part(rest: str) -> int:
    """Where libpq ends the user part of a URL (``rest``: what follows ``://``): its first ``@`` ahead of any
    ``/`` (a ``?`` or ``#`` before it belongs to the password), or -1 when it has none."""
    for i, c in enumerate(rest):
        if c == "@":
            return i
        if c == "/":
            return -1
    return -1


def misread_query(url: str) -> bool:
    """True when libpq would read part of ``url``'s query as its user name: no path, and an ``@`` in the query
    (``postgresql://host?options=a@b`` connects to host ``b`` as user ``host?options=a``)."""
    rest = url.split("://", 1)[1] if "://" in url else url
    end = user_part(rest)
    return end >= 0 and "?" in rest[:end].split(":", 1)[0]


def _ports(hosts: str) -> bool:
    """True when each ``host:port`` of a URL's host list has a port of digits: else a password without its user
    (``user:pa?ss/x@h`` read up to its ``?``) would be shown as a port."""
    for host in hosts.split(","):
        host = host.rsplit("]", 1)[-1]  # an IPv6 address holds colons of its own
        if ":" in host and not host.rsplit(":", 1)[1].isdigit():
            return False
    return True


def _kept(query: str) -> str:
    """``query`` without the pairs libpq would read as a secret."""
    return "&".join(pair for pair in query.split("&") if pair and _key(pair) not in SECRET_PARAMETERS)


def _key(pair: str) -> str:
    """The keyword of a query's ``key=value`` as libpq reads it (percent-decoded), in lower case."""
    return unquote(pair.split("=", 1)[0]).strip().lower()


def future_cutoff(before_ts: float, now: float, where: str, clock: str) -> JournalError | None:
    """The refusal of a prune to ``before_ts`` when that is still to come by the store's clock (``now``), else None.

    Pruning to a date to come would delete every event, those of running sessions too (a mistyped
    year, most likely). The store's clock judges, not the pruning machine's: a host whose clock runs
    a year ahead must not delete the rows other hosts wrote this morning.
    """
    if before_ts <= now:
        return None
    when = f"{datetime.fromtimestamp(before_ts, UTC):%Y-%m-%d %H:%M} UTC"
    return JournalError(
        f"{when} is still to come by {clock} ({datetime.fromtimestamp(now, UTC):%Y-%m-%d %H:%M} UTC): pruning the "
        f"journal at {where} to it would delete every event, those of running sessions too; give a date in the past"
    )


class Store(Protocol):
    """The statements a journal runs; a store raises ``JournalError`` (saying what to do) or ``StoreBusy``."""

    where: str
    """The journal's location for messages: a file path, or a URL without its password."""

    def append(self, rows: Sequence[EventRow], *, wake: bool, fences: Fences | None = None) -> set[int]:
        """Insert ``rows`` in one transaction; ``wake``: tell waiting readers (decisions, commands).

        ``fences``: the rows that are a claimed command's effect; the command is marked ``applied``
        in the same transaction, or, when its claim no longer holds, those rows are left out.
        Returns the commands whose claim no longer held.
        """

    def events(self, after: int, limit: int, session: str | None, kinds: Sequence[str] | None) -> list[RawEvent]:
        """Committed events past position ``after``, in position order."""

    def latest(self, kind: str, after: int, upto: int | None) -> list[tuple[int, str, bytes | str | None]]:
        """The newest row of ``kind`` of each session with ``after`` < position <= ``upto`` (None: the head)."""

    def tail(self, session: str, kinds: Sequence[str], limit: int) -> list[RawEvent]:
        """The newest ``limit`` rows of ``session`` of ``kinds``, newest first."""

    def head(self) -> int:
        """The position of the newest committed event that every reader can see (0 when empty)."""

    def submit_command(self, session: str, watcher: str, kind: str, interjection_id: str, payload: str) -> int:
        """Insert a new command; returns its id."""

    def commands(self, after: int, status: str | None, sessions: Sequence[str] | None) -> list[CommandRow]:
        """Commands with id > ``after`` (of ``status`` and ``sessions`` when given), oldest first."""

    def commands_now(self, after: int, status: str | None, sessions: Sequence[str] | None) -> list[CommandRow] | None:
        """``commands`` if they can be read at once, without waiting on a lock or a network; else None."""

    def command_feed(self, after: int, limit: int) -> list[tuple[int, CommandRow]]:
        """Commands past position ``after``, in position order (as events'): (position, row) each."""

    def claim_commands(self, sessions: Sequence[str], limit: int) -> list[tuple[CommandRow, float]]:
        """Mark up to ``limit`` new commands of ``sessions`` ``claimed`` now (the store's clock), in one statement.

        Returns the claimed rows, oldest first, each with its claim's token (the time of the claim,
        which a claim released and taken again changes); a command another process claimed first is
        not among them.
        """

    def release_claims(self, older_than_s: float, sessions: Sequence[str]) -> int:
        """Put back to ``new`` the claims of ``sessions`` older than ``older_than_s`` (the store's clock)."""

    def mark_commands(self, marks: Sequence[Mark]) -> None:
        """Mark commands, all in one statement; one with a claim token only while that claim holds."""

    def hold_lease(self, name: str, holder: str, ttl_s: float) -> bool:
        """Take lease ``name`` for ``holder`` (or renew it) for ``ttl_s`` on the store's clock; False if another holds it."""

    def drop_lease(self, name: str, holder: str) -> None:
        """Give lease ``name`` up, if ``holder`` holds it (a clean exit hands over at once)."""

    def claim_task(self, group: str, task: str, host: str, lost_after_s: float) -> bool:
        """Claim ``task`` of ``group`` for ``host``: free, or claimed but not started by a host silent ``lost_after_s``.

        True too when ``host`` holds the claim already (a retry whose first answer was lost).
        """

    def start_task(self, group: str, task: str, host: str) -> None:
        """Record that ``host`` started its claimed ``task`` (it is never claimed again)."""

    def beat_claims(self, group: str, host: str) -> None:
        """``host`` is alive: its claims stay its own."""

    def started_tasks(self, group: str) -> set[str]:
        """The tasks of ``group`` that some host started."""

    def prune(self, before_ts: float) -> tuple[int, int]:
        """Delete events and finished commands older than ``before_ts``; returns (events, commands) deleted.

        A ``before_ts`` still to come by the store's clock is refused (``future_cutoff``) and nothing is deleted.
        """

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` s for a wake-up from a writer; False at the timeout (or if the store has none)."""

    def close(self) -> None:
        """Close every connection."""
