"""Known secret values scrubbed from everything a spawned CLI says, before anything reads it.

Pattern-based redaction (``watcher.core.redact``) catches keys it recognises; a spawn also knows
the exact values it handed the CLI (the manifest's secrets, its API key), so every stdout line
and every stderr chunk is scrubbed of those values first: the stream log, the observations the
watchers see and journal, and the report never hold them. Values shorter than 6 characters are
not scrubbed (they would mangle ordinary text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from watcher.core.redact import mask

__all__ = ["Scrubber", "secret_values"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
_MIN = 6


def secret_values(env: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """The values of ``names`` and of every variable whose name says it holds a secret."""
    wanted = set(names)
    return [v for k, v in env.items() if (k in wanted or _SECRET_NAME.search(k)) and len(v) >= _MIN]


class Scrubber:
    """Replaces each known value with its mask (longest first, so no value hides inside another)."""

    def __init__(self, values: Iterable[str]) -> None:
        self._values = sorted({v for v in values if len(v) >= _MIN}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, mask(value))
        return text

    def bytes(self, data: bytes) -> bytes:
        return self(data.decode("utf-8", "replace")).encode() if self._values else data
