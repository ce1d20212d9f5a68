"""How a PostgreSQL journal's URL is named when it has no path, or an '@' or a '/' in its query."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from psycopg.conninfo import conninfo_to_dict

from watcher.core.errors import JournalError
from watcher.runtime import Journal
from watcher.runtime._store import journal_label

SECRET = "hunter2"


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("postgresql://u:hunter2@h?options=a@b", "postgresql://u@h?options=a@b"),  # was u@b: the wrong host
        ("postgresql://u:hunter2@h?password=hunter2@x", "postgresql://u@h"),  # was u@x: 'x' is the password's end
        ("postgresql://h?sslcert=/x&password=hunter2", "postgresql://h?sslcert=/x"),  # the password was shown
        ("postgresql://u:hunter2@h?sslcert=/x@y&password=hunter2", "postgresql://u@h?sslcert=/x@y"),
        ("postgresql://u:hunter2@h?sslcert=/x@y", "postgresql://u@h?sslcert=/x@y"),
        ("postgresql://h:5?sslrootcert=/etc/a@b", "postgresql://h:5?sslrootcert=/etc/a@b"),
        ("postgresql://u:hun?ter2/x@h", "postgresql://(an unreadable URL)"),  # 'hun' is no port
        ("postgresql://h?sslpassword=hunter2@b/c", "postgresql://h?@b/c"),  # libpq's user 'h?sslpassword=…'
    ],
)
def test_a_url_without_a_path_is_named_by_its_host_without_its_secrets(url: str, label: str) -> None:
    assert journal_label(url) == label


PASSWORDS = ["hunter2", "hun?ter2", "hun#ter2", "hun@ter2", "hunter2:x"]
PATHS = ["", "/db", "/"]
QUERIES = ["", "?sslcert=/c/a@b", "?options=-c%20x%3Da@b&password=hunter2", "?application_name=me@box"]


@pytest.mark.parametrize(("password", "path", "query"), list(itertools.product(PASSWORDS, PATHS, QUERIES)))
def test_a_label_reaches_the_server_libpq_would_and_shows_no_password(password: str, path: str, query: str) -> None:
    """Pasted back (the password added again), a label reaches the host, port, database and user the URL did."""
    url = f"postgresql://ann:{password}@db.example:5432{path}{query}"
    label = journal_label(url)
    assert SECRET not in label and "ter2" not in label, label
    if "@" in password:
        return  # a stray '@': libpq reads the password's end as the host; the label drops it whole instead
    secrets = ("password", "sslpassword")
    read: dict[str, Any] = {k: v for k, v in conninfo_to_dict(url).items() if k not in secrets}
    assert read == conninfo_to_dict(label), (url, label)
    assert read["host"] == "db.example"


def test_a_query_that_libpq_would_read_as_a_user_name_is_refused_saying_how_to_write_it() -> None:
    """``postgresql://h?options=a@b`` connected to host 'b' as user 'h?options=a': a journal elsewhere, or an
    error naming a host the person never wrote. Now it is refused with the fix, before any connection."""
    with pytest.raises(JournalError) as refused:
        Journal("postgresql://db.example?options=-csearch_path%3Dx@y&password=hunter2")
    message = str(refused.value)
    assert "put a '/' before the '?'" in message.lower() and "%40" in message, message
    assert SECRET not in message


def test_the_same_query_after_a_slash_reaches_its_host(pg_url: str) -> None:
    """The fix the refusal suggests works: with a '/' before the '?', an '@' in the query is just a value."""
    host_and_port, query = pg_url.split("://", 1)[1].split("/", 1)[0], pg_url.split("?", 1)[1]
    url = f"postgresql://{host_and_port}/?dbname=postgres&{query}&application_name=me@box"
    with Journal(url) as journal:
        assert journal.where == journal_label(url) and "me@box" in journal.where
        assert journal.read() == []


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql://w@h/d\udcffb", "holds a byte that is not UTF-8"),  # from an environment variable, as it came
        ("postgresql://w:p\udcff@h/db", "holds a byte that is not UTF-8"),
        ("postgresql://w@h/db\x00?sslmode=verify-full", "holds a NUL character"),  # libpq ignored what followed
    ],
)
def test_a_url_libpq_cannot_take_as_written_is_refused_saying_why(url: str, said: str) -> None:
    """A byte that is not UTF-8 raised UnicodeEncodeError (a traceback); a NUL made libpq drop the rest silently."""
    with pytest.raises(JournalError, match=said) as refused:
        Journal(url)
    message = str(refused.value)
    assert message.isprintable() and "\\udcff" not in message and "p\udcff" not in message, message


def test_a_label_cannot_rewrite_the_line_it_is_printed_on() -> None:
    """A right-to-left override or a newline in a URL, printed as is, reorders or splits the line naming it."""
    label = journal_label("postgresql://w@h/db?application_name=\u202eevil\n&password=hunter2")
    assert label == "postgresql://w@h/db?application_name=%E2%80%AEevil%0A"
    assert conninfo_to_dict(label)["application_name"] == "\u202eevil\n", "pasted back, the same value"
