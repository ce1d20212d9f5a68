"""Whether a string reads as SQL: any statement (queries, DDL, grants, users), in any letter case.

Shared by the Python and JavaScript rules, which decide on their own whether values are spliced
into it. Capitals are read as SQL readily; lower case needs the statement's shape (``select …
from`` with a clause, ``insert into``, ``create user``, ``grant … to``), because English prose has
``select`` and ``update`` too ("select a file from the list" is not a query).
"""

from __future__ import annotations

import re

__all__ = ["is_sql", "mentions_credentials"]

_OBJECTS = r"(?:temporary\s+|temp\s+|unique\s+|or\s+replace\s+)*(?:table|user|role|database|schema|index|view|login|sequence|trigger|function|procedure)"
_STATEMENT = (
    r"\bselect\b[\s\S]+?\bfrom\s+[\w.\"`\[]",
    r"\binsert\s+(?:or\s+\w+\s+)?into\s",
    r"\bupdate\s+[\w.\"`\[]+\s+set\s",
    r"\bdelete\s+from\s",
    rf"\bcreate\s+{_OBJECTS}\b",
    rf"\b(?:drop|alter|truncate)\s+{_OBJECTS}\b",
    r"\bgrant\s+[\w\s,]+?\s+(?:on|to)\s",
    r"\brevoke\s+[\w\s,]+?\s+(?:on|from)\s",
    r"\breplace\s+into\s",
    r"\bmerge\s+into\s",
    r"\bset\s+password\s",
)
_SQL_ANY = re.compile("|".join(_STATEMENT), re.I)
_SQL_UPPER = re.compile(
    r"\b(?:SELECT\b[\s\S]+?\bFROM|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|CREATE\s+[A-Z ]*?(?:TABLE|USER|ROLE|DATABASE|INDEX|VIEW|LOGIN)|"
    r"(?:DROP|ALTER|TRUNCATE)\s+(?:TABLE|USER|ROLE|DATABASE|INDEX|VIEW)|GRANT\s+[A-Z ,]+?\s+(?:ON|TO)|REVOKE\s)\b"
)
# lower-case statements a sentence seldom has: select needs a clause after from
_CLAUSE = re.compile(
    r"(?is)\bwhere\b|\bvalues\s*\(|\bset\s+\w+\s*=|\blimit\s+\d|\bjoin\b|\border\s+by\b|\bgroup\s+by\b"
)
_CREDENTIALS = re.compile(r"(?i)\b(?:passw(?:or)?d|passwd|pwd|pass|password_hash|secret|token|api_?key)\b")


def is_sql(text: str) -> bool:
    """Whether ``text`` (the literal parts of a string, values left out) reads as a SQL statement."""
    if _SQL_UPPER.search(text):
        return True
    match = _SQL_ANY.search(text)
    if match is None:
        return False
    if match.group(0).lower().startswith("select"):
        return bool(_CLAUSE.search(text, match.start()))
    return True


def mentions_credentials(text: str) -> bool:
    """Whether a query's own text involves credentials (a password column, a token)."""
    return bool(_CREDENTIALS.search(text))
