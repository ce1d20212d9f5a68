"""Commit order on a PostgreSQL journal: the position a reader reads on from.

Ids are taken at insert but rows become visible at commit, in another order, so ``id > cursor``
skips rows committed late. A reader reads by ``(tx, id)``, where ``tx`` is the writing
transaction's id, and only below the oldest transaction still running (``VISIBLE``): everything
it has not seen then lies ahead of its cursor. A position packs the pair into one int.
"""

from __future__ import annotations

__all__ = ["VISIBLE", "position", "split"]

VISIBLE = "tx < pg_snapshot_xmin(pg_current_snapshot())"
"""The rows every reader can see for good: those of transactions older than the oldest still running."""


def position(tx: int | str, id_: int) -> int:
    """The opaque cursor of a row: its transaction id and row id, ordered as the pair is."""
    return int(tx) << 64 | int(id_)


def split(pos: int) -> tuple[str, int]:
    """A position back into (tx as text, for ``::xid8``, and row id)."""
    return str(pos >> 64), pos & (2**64 - 1)
