"""Containers as the engine sees them: a store under a key or index, and the methods that change them.

``with_part`` is ``container[key] = value`` (a key not known taints every member); ``mutate`` is
what a mutating method (``append``, ``pop``, ``insert``, ``update``, a keyed ``set``, …) does to
its receiver, and what it returns — so ``items.pop(0)`` shifts which element holds the input.
"""

from __future__ import annotations

from typing import Any

from watcher.roles.taint.values import ANY_KEY, NO_CONST, Value, merge, union

__all__ = ["hashable", "mutate", "with_part"]


def with_part(container: Value, key: Any, value: Value) -> Value:
    """``container`` after ``container[key] = value`` (``NO_CONST``: a key not known)."""
    if key is NO_CONST:
        parts = {k: merge(v, value) for k, v in (container.parts or {}).items()}
        parts[ANY_KEY] = merge(parts[ANY_KEY], value) if ANY_KEY in parts else value
        seq = tuple(merge(v, value) for v in container.seq) if container.seq is not None else None
        return Value(origins=container.origins, parts=parts, tags=container.tags, seq=seq)
    if container.seq is not None and isinstance(key, int) and -len(container.seq) <= key < len(container.seq):
        items = list(container.seq)
        items[key] = value
        return Value(origins=container.origins, parts=container.parts, tags=container.tags, seq=tuple(items))
    parts = dict(container.parts or {})
    parts[key] = value
    return Value(origins=container.origins, parts=parts, tags=container.tags, seq=container.seq)


def mutate(kind: str, receiver: Value, args: list[Value]) -> tuple[Value, Value | None]:
    """A container after a mutating method (``append``, ``pop``, …), and what the method returned."""
    seq = receiver.seq
    first = args[0] if args else Value()
    if kind == "append":
        if seq is not None:
            return Value(origins=receiver.origins, tags=receiver.tags, seq=(*seq, first)), Value(const=None)
        return with_part(receiver, NO_CONST, first), Value(const=None)
    if kind == "prepend":
        if seq is not None:
            return Value(origins=receiver.origins, tags=receiver.tags, seq=(first, *seq)), Value(const=len(seq) + 1)
        return with_part(receiver, NO_CONST, first), None
    if kind == "insert" and len(args) >= 2:
        if seq is not None and isinstance(first.const, int):
            items = list(seq)
            items.insert(first.const, args[1])
            return Value(origins=receiver.origins, tags=receiver.tags, seq=tuple(items)), Value(const=None)
        return with_part(receiver, NO_CONST, args[1]), Value(const=None)
    if kind in ("pop", "shift"):
        index = 0 if kind == "shift" else (first.const if args else -1)
        if seq is not None and isinstance(index, int) and -len(seq) <= index < len(seq):
            items = list(seq)
            taken = items.pop(index)
            return Value(origins=receiver.origins, tags=receiver.tags, seq=tuple(items)), taken
        if receiver.parts is not None and args and first.constant and hashable(first.const):
            parts = dict(receiver.parts)
            taken = parts.pop(first.const, Value(origins=receiver.origins))
            return Value(origins=receiver.origins, parts=parts, tags=receiver.tags), taken
        return receiver, Value(origins=receiver.all_origins())
    if kind == "remove" and seq is not None and first.constant:
        items = [v for v in seq if not (v.constant and v.const == first.const)]
        if len(items) == len(seq) - 1:
            return Value(origins=receiver.origins, tags=receiver.tags, seq=tuple(items)), Value(const=None)
        return receiver, Value(const=None)
    if kind == "update" and receiver.parts is not None and first.parts is not None:
        parts = {**receiver.parts, **first.parts}
        return Value(origins=receiver.origins | first.origins, parts=parts, tags=receiver.tags), Value(const=None)
    if kind in ("extend", "update", "absorb"):
        extra = union(args)
        return (
            Value(
                origins=receiver.origins | extra.origins,
                parts=receiver.parts,
                tags=receiver.tags | extra.tags,
            )
            if receiver.seq is None
            else Value(origins=receiver.all_origins() | extra.origins, tags=receiver.tags | extra.tags),
            Value(const=None),
        )
    if kind == "put" and len(args) >= 2:  # cfg.set(section, key, value), cache.put(key, value)
        keys = [a.const for a in args[:-1]]
        if any(k is NO_CONST or not hashable(k) for k in keys):
            return with_part(receiver, NO_CONST, args[-1]), Value(const=None)
        return with_part(receiver, keys[0] if len(keys) == 1 else tuple(keys), args[-1]), Value(const=None)
    if kind == "clear":
        return Value(tags=receiver.tags, seq=() if seq is not None else None, parts={} if seq is None else None), None
    return receiver, None


def hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
