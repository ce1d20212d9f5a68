"""A regular expression compiled when first used: the hook starts a process per call when no
daemon runs, and most of the guard's patterns serve calls it will not see (MCP tools, inline
code, databases), so each is compiled by the call that needs it, not by every import."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["lazy"]


class _Lazy:
    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # search, match, sub, finditer, …: the compiled pattern's
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done on first use."""
    return _Lazy(pattern, flags)  # type: ignore[return-value]  # it answers as the pattern does
