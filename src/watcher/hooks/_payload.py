"""Reading a hook payload: one JSON object on stdin, read as leniently as is safe."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["read_payload"]


def read_payload(raw: bytes | str) -> Any:
    """A hook payload's JSON, read as leniently as is safe: what the guard can read, it judges.

    The CLIs send one UTF-8 object; a payload from elsewhere (a wrapper script, a test harness)
    may start with a byte-order mark, be UTF-16 or UTF-32, or have a newline or a second object
    after the first: the first object is read. A ``tool_input`` sent as a JSON string holding an
    object is read as that object. Bytes that are not text become U+FFFD (a file name in Latin-1
    must not cost the guard). Raises ``ValueError`` for what is not JSON at all.
    """
    if isinstance(raw, bytes):
        if raw[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
            raw = raw.decode("utf-32", "replace")
        elif raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raw = raw.decode("utf-16", "replace")
        else:
            raw = raw.decode("utf-8", "replace")
    text = raw.removeprefix("\ufeff").strip()
    if not text:
        return {}
    data, _ = json.JSONDecoder().raw_decode(text)
    if isinstance(data, dict) and isinstance(data.get("tool_input"), str):
        try:
            inner = json.loads(data["tool_input"])
        except ValueError:
            inner = None
        if isinstance(inner, dict):
            data["tool_input"] = inner
    return data
