"""Turning any event payload into a journal row that can be stored as is, and saying what changed.

Most payloads are small and clean: one ``orjson`` call encodes them. The rest take a slower path
that never fails: a string too long for the journal keeps its head and tail, a lone surrogate
(from a JSON escape like ``"\\ud800"``) becomes U+FFFD, and a value nested deeper than the journal
keeps is cut at that depth. The payload then carries ``journal_note``, so a reader knows what it
sees is not the whole observation. Clipping happens before redaction, which bounds its work.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from watcher.core.redact import may_hold_secret, redact, redact_value

__all__ = ["MAX_DEPTH", "MAX_PAYLOAD", "MAX_STRING", "encode_payload", "storable_text", "stored_session"]

MAX_PAYLOAD = 1_000_000  # characters of JSON; above it, long strings are clipped
MAX_STRING = 64_000  # what a clipped string keeps: the first 3/4 and the last 1/4
MAX_DEPTH = 100  # orjson refuses 255; the journal keeps far less than that, and says so


def _dumps(data: Any) -> str:
    return orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def storable_text(value: str) -> str:
    """``value`` with each lone surrogate and NUL replaced by U+FFFD: what both stores hold as text.

    A name read from a path or an argument holding a byte that is not UTF-8 (``\\udcff``), or a
    NUL (PostgreSQL's text refuses it), would otherwise fail its whole batch, and stop the
    journal's writer with every event after it.
    """
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


@functools.lru_cache(maxsize=1 << 16)
def stored_session(name: str) -> str:
    """``name`` as the journal's ``session`` columns hold it: redacted, as everything the journal stores.

    ``redact`` is deterministic and idempotent, so one session is always stored under one name, and
    a name read back from the journal maps to itself. A name that redaction changed also gets a
    short digest of the whole name (``…[REDACTED]~1a2b3c4d``): two sessions whose names differ only
    in their key stay two sessions, and every process and host computes the same stored name. The
    digest is 32 bits of a hash; it tells names apart, it cannot give back a key. Cached: a poller
    asks about the same names every cycle, and a name with a ``sk-`` in it (``task-1``) takes the
    slow path of ``redact``.
    """
    text = storable_text(name)
    shown = redact(text)
    if shown == text:
        return text
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=4, person=b"watcher-session").hexdigest()
    return f"{shown}~{digest}"


def encode_payload(data: Mapping[str, Any]) -> str:
    """``data`` as JSON text for the ``payload`` column: storable, bounded, secrets redacted."""
    try:
        text = _dumps(data)
    except (TypeError, orjson.JSONEncodeError):
        text = None
    if text is not None and len(text) <= MAX_PAYLOAD:
        return _dumps(redact_value(data)) if may_hold_secret(text) else text
    notes: list[str] = []
    clean = _storable(data, clip=text is None or len(text) > MAX_PAYLOAD, notes=notes)
    if notes:
        clean["journal_note"] = "; ".join(dict.fromkeys(notes))
    text = _dumps(clean)
    return _dumps(redact_value(clean)) if may_hold_secret(text) else text


def _storable(data: Mapping[str, Any], *, clip: bool, notes: list[str]) -> dict[str, Any]:
    """A copy of ``data`` (iteratively: any depth) that orjson can encode within the bounds."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(data, root, 0, 0)]
    while stack:
        value, parent, key, depth = stack.pop()
        if isinstance(value, str):
            parent[key] = _clean_string(value, clip=clip, notes=notes)
        elif isinstance(value, Mapping | list | tuple) and depth >= MAX_DEPTH:
            parent[key] = f"…[nested deeper than {MAX_DEPTH} levels: not stored]"
            notes.append(f"values nested deeper than {MAX_DEPTH} levels were cut")
        elif isinstance(value, Mapping):
            copy: dict[str, Any] = {}
            parent[key] = copy
            for k, v in value.items():
                name = _clean_string(k if isinstance(k, str) else str(k), clip=False, notes=notes)
                copy[name] = None
                stack.append((v, copy, name, depth + 1))
        elif isinstance(value, list | tuple):
            items: list[Any] = [None] * len(value)
            parent[key] = items
            stack.extend((v, items, i, depth + 1) for i, v in enumerate(value))
        elif value is None or isinstance(value, bool | int | float):
            parent[key] = value if not isinstance(value, int) or abs(value) < 2**63 else str(value)
        else:
            parent[key] = _clean_string(str(value), clip=clip, notes=notes)
    result: dict[str, Any] = root[0]
    return result


def _clean_string(text: str, *, clip: bool, notes: list[str]) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: keep everything else, mark the hole
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        notes.append("lone surrogates were replaced by U+FFFD")
    if clip and len(text) > MAX_STRING:
        head, tail = MAX_STRING * 3 // 4, MAX_STRING // 4
        cut = len(text) - head - tail
        text = f"{text[:head]}…[{cut:,} characters clipped by the journal]…{text[-tail:]}"
        notes.append(f"strings longer than {MAX_STRING:,} characters were clipped")
    return text
