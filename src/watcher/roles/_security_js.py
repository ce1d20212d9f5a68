"""SQL injection in JavaScript/TypeScript: queries built by template-literal interpolation or by
string concatenation, with the parameterised query as a suggested fix where it is mechanical.

A query is a string that reads as SQL (``SELECT … FROM``, ``INSERT INTO``, ``UPDATE … SET``,
``DELETE FROM``) and splices in values. The fix turns each spliced value into a placeholder
(``?``, or ``$1, $2`` for node-postgres) and passes the values as the query's parameter array.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from watcher.roles._security_model import Finding, line_of
from watcher.roles._security_python import AUTH_WORDS
from watcher.roles._security_sql import mentions_credentials

__all__ = ["sql_findings"]

_SQL_ANY = re.compile(r"(?is)\b(?:select\b.+?\bfrom|insert\s+into|update\b.+?\bset|delete\s+from)\b")
_SQL_UPPER = re.compile(r"(?s)\b(?:SELECT\b.+?\bFROM|INSERT\s+INTO|UPDATE\b.+?\bSET|DELETE\s+FROM)\b")
_SQL_CLAUSE = re.compile(r"(?is)\bwhere\b.*[=<>]|\bvalues\s*\(|\bset\s+\w+\s*=|\blimit\s+\d|\bjoin\b.*\bon\b")
_TEMPLATE = re.compile(r"`(?:[^`\\]|\\.)*`", re.S)
_HOLE = re.compile(r"\$\{([^{}]*)\}")
_LITERAL = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""")
_CONCAT = re.compile(r"""['"]\s*\+\s*[\w$(]|[\w$)\]]\s*\+\s*['"]""")
_ASSIGN = re.compile(r"(?:(?:const|let|var)\s+)?([A-Za-z_$][\w$]*)\s*=\s*$")
_INLINE = re.compile(r"([\w$.]+\.(?:query|execute|raw|run|all|get|exec))\(\s*$")
_FUNC = re.compile(
    r"function\s+([A-Za-z_$][\w$]*)|([A-Za-z_$][\w$]*)\s*[=:]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)|^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{",
    re.M,
)
_SIMPLE_EXPR = re.compile(r"[\w$.\[\]'\"()]+")


@dataclass(frozen=True, slots=True)
class _Query:
    start: int  # offsets of the query expression in the text
    end: int
    parts: list[str | None]  # literal text, or None for a spliced value
    values: list[str]


def _is_sql(text: str) -> bool:
    """SQL in capitals, or lower-case SQL with a clause English prose does not have."""
    return bool(_SQL_UPPER.search(text) or (_SQL_ANY.search(text) and _SQL_CLAUSE.search(text)))


def sql_findings(text: str, *, path: str = "") -> list[Finding]:
    """Queries in ``text`` that splice values into SQL; critical in authentication code."""
    found = []
    for query in [*_templates(text), *_concatenations(text)]:
        # authentication code: the query itself involves credentials, not merely the file
        literal = " ".join(p for p in query.parts if p is not None)
        auth = mentions_credentials(literal + " " + " ".join(query.values)) and bool(
            AUTH_WORDS.search(text) or AUTH_WORDS.search(path)
        )
        found.append(_finding(text, query, auth))
    return found


def _templates(text: str) -> list[_Query]:
    out = []
    for match in _TEMPLATE.finditer(text):
        body = match.group(0)[1:-1]
        if "${" not in body or not _is_sql(body):
            continue
        parts: list[str | None] = []
        values: list[str] = []
        last = 0
        for hole in _HOLE.finditer(body):
            parts += [body[last : hole.start()], None]
            values.append(hole.group(1).strip())
            last = hole.end()
        parts.append(body[last:])
        out.append(_Query(match.start(), match.end(), parts, values))
    return out


def _concatenations(text: str) -> list[_Query]:
    out = []
    for match in re.finditer(r"[^;{}\n]*(?:\n[^;{}\n]*){0,6}", text):
        statement = match.group(0)
        if "+" not in statement or not _CONCAT.search(statement):
            continue
        literals = _LITERAL.findall(statement)
        if not _is_sql(" ".join(lit[1:-1] for lit in literals) + " x"):
            continue
        first = _LITERAL.search(statement)
        assert first is not None
        # the expression runs from the first SQL literal to the end of the statement or call
        start = match.start() + first.start()
        expr = text[start : match.end()].rstrip().rstrip(";").rstrip()
        if expr.endswith(")") and expr.count(")") > expr.count("("):
            expr = expr[:-1].rstrip()
        parts, values = _split_concat(expr)
        out.append(_Query(start, start + len(expr), parts, values))
    return out


def _split_concat(expr: str) -> tuple[list[str | None], list[str]]:
    pieces, depth, quote, current = [], 0, "", ""
    for ch in expr:
        if quote:
            quote = "" if ch == quote and not current.endswith("\\") else quote
        elif ch in "'\"`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "+" and depth == 0:
            pieces.append(current.strip())
            current = ""
            continue
        current += ch
    pieces.append(current.strip())
    parts: list[str | None] = []
    values: list[str] = []
    for piece in pieces:
        if _LITERAL.fullmatch(piece):
            parts.append(piece[1:-1])
        else:
            parts.append(None)
            values.append(piece)
    return parts, values


def _finding(text: str, query: _Query, auth: bool) -> Finding:
    start_line, end_line = line_of(text, query.start), line_of(text, query.end)
    func = _enclosing_function(text, query.start)
    names = ", ".join(f"`{v}`" for v in query.values[:4]) or "values"
    where = f" in {func}()" if func else ""
    title = f"SQL injection{where}" + (" (authentication code)" if auth else "")
    risk = (
        "input such as `' OR '1'='1' --` rewrites the query, so anyone can log in without the password"
        if auth
        else "input containing quotes rewrites the query (data theft or loss)"
    )
    explanation = (
        f"The SQL query{where} is built by splicing {names} into the string: {risk}. "
        "Use a parameterised query: placeholders in the SQL and the values passed separately."
    )
    fix = _fix(text, query)
    end = end_line
    replacement = None
    if fix is not None:
        end, replacement = fix
    return Finding(
        rule="sql-injection-js",
        title=title,
        severity="critical" if auth else "warning",
        explanation=explanation,
        start_line=start_line,
        end_line=max(end, end_line),
        replacement=replacement,
        fingerprint="sql-js:" + " ".join(text[query.start : query.end].split()),
    )


def _enclosing_function(text: str, offset: int) -> str | None:
    names = [next(g for g in m.groups() if g) for m in _FUNC.finditer(text, 0, offset)]
    return names[-1] if names else None


def _fix(text: str, query: _Query) -> tuple[int, str] | None:
    """(last line, replacement for the query's lines through the call that runs it), or None."""
    if any(v is None or not _SIMPLE_EXPR.fullmatch(v) for v in query.values) or not query.values:
        return None
    pg = bool(re.search(r"""require\(\s*['"]pg['"]\s*\)|from\s+['"]pg['"]""", text))
    sql = "".join("\x00" if p is None else p for p in query.parts)
    sql = re.sub(r"""(['"])\x00\1""", "\x00", sql)
    if re.search(r"%\x00|\x00%", sql) or "\n" in sql:
        return None
    for n in range(1, len(query.values) + 1):
        sql = sql.replace("\x00", f"${n}" if pg else "?", 1)
    literal = next((f"{q}{sql}{q}" for q in ("'", '"') if q not in sql and "\\" not in sql), None)
    if literal is None:
        return None
    params = f"[{', '.join(query.values)}]"
    line_start = text.rfind("\n", 0, query.start) + 1
    prefix = text[line_start : query.start]
    inline = _INLINE.search(prefix)
    if inline is not None:  # db.query(`...${x}...`)
        line_end = text.find("\n", query.end)
        line_end = len(text) if line_end < 0 else line_end
        rest = text[query.end : line_end]
        if not rest.lstrip().startswith((")", ",")):
            return None
        return line_of(text, query.end), prefix + literal + ", " + params + rest
    assign = _ASSIGN.search(prefix)
    if assign is None:
        return None
    var = assign.group(1)
    call = re.compile(rf"([\w$.]+\.(?:query|execute|raw|run|all|get|exec))\(\s*{re.escape(var)}\s*([,)])")
    after = text[query.end :]
    window_end = query.end + sum(len(x) + 1 for x in after.split("\n")[:4])
    found = call.search(text, query.end, window_end)
    if found is None:
        return None
    call_line_end = text.find("\n", found.end())
    call_line_end = len(text) if call_line_end < 0 else call_line_end
    tail = text[query.end : found.start()] + f"{found.group(1)}({var}, {params}" + found.group(2)
    rewritten = prefix + literal + tail + text[found.end() : call_line_end]
    return line_of(text, found.start()), rewritten
