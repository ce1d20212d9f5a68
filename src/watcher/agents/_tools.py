"""Python callables as agent tools: a JSON schema from the signature, a call that never raises.

The schema comes from the parameters' annotations (``str`` → string, ``int`` → integer,
``list[str]`` → array of strings, ``Literal[...]`` → enum, ``X | None`` → optional), the
description from the docstring's first paragraph, and each parameter's description from a
Google-style ``Args:`` section. Pass ``schema=`` to ``tool`` to write it by hand instead.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from watcher.core.errors import ConfigurationError

__all__ = ["Tool", "ToolOutcome", "as_tool", "tool"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    dict: {"type": "object"},
    list: {"type": "array"},
    Any: {},
}


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a tool call gave back to the agent: its text and whether it failed."""

    output: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the agent may call: its wire definition and the Python function behind it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    fn: Callable[..., Any]

    def definition(self) -> dict[str, Any]:
        """The ``tools[]`` entry of a Messages API request."""
        return {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}

    async def call(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run the function (sync ones in a worker thread); exceptions become an error result."""
        try:
            if inspect.iscoroutinefunction(self.fn):
                value = await self.fn(**arguments)
            else:
                value = await asyncio.to_thread(self.fn, **arguments)
                if inspect.isawaitable(value):
                    value = await value
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the agent sees the failure and can recover; the run goes on
            return ToolOutcome(f"{type(exc).__name__}: {exc}", is_error=True)
        return ToolOutcome(_text(value))


def _text(value: Any) -> str:
    if value is None or value == "":
        return "(no output)"
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _schema_of(annotation: Any) -> dict[str, Any]:
    if annotation in _SIMPLE:
        return dict(_SIMPLE[annotation])
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return _schema_of(rest[0]) if len(rest) == 1 else {"anyOf": [_schema_of(a) for a in rest]}
    if origin in (list, tuple, set, frozenset, typing.Sequence) or origin is getattr(typing, "Iterable", None):
        return {"type": "array", "items": _schema_of(args[0])} if args else {"type": "array"}
    if origin in (dict, Mapping):
        return {"type": "object"}
    return {}


def _arg_docs(doc: str) -> tuple[str, dict[str, str]]:
    """The docstring's first paragraph, and ``name: description`` lines of its ``Args:`` section."""
    paragraphs = inspect.cleandoc(doc).split("\n\n") if doc else [""]
    summary = " ".join(paragraphs[0].split())
    described: dict[str, str] = {}
    section = re.search(r"^(?:Args|Arguments|Parameters):\s*\n((?:[ \t]+.*\n?)+)", inspect.cleandoc(doc or ""), re.M)
    if section:
        for match in re.finditer(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.+)$", section.group(1), re.M):
            described[match.group(1)] = match.group(2).strip()
    return summary, described


def _schema_from_signature(fn: Callable[..., Any], described: Mapping[str, str]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable forward references: fall back to untyped parameters
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = _schema_of(hints.get(param.name, Any))
        if param.name in described:
            prop["description"] = described[param.name]
        if param.default is param.empty:
            required.append(param.name)
        elif param.default is not None and isinstance(param.default, str | int | float | bool):
            prop["default"] = param.default
        properties[param.name] = prop
    return {"type": "object", "properties": properties, "required": required}


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    schema: Mapping[str, Any] | None = None,
) -> Any:
    """Make a ``Tool`` of ``fn``; usable as ``tool(fn)``, ``@tool`` or ``@tool(name="Write")``."""

    def build(func: Callable[..., Any]) -> Tool:
        summary, described = _arg_docs(func.__doc__ or "")
        tool_name: str = name or str(getattr(func, "__name__", ""))
        if not _NAME.match(tool_name):
            raise ConfigurationError(f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-'; pass name=")
        input_schema = dict(schema) if schema is not None else _schema_from_signature(func, described)
        described_as: str = description or summary or tool_name
        return Tool(tool_name, described_as, input_schema, func)

    return build(fn) if fn is not None else build


def as_tool(obj: Tool | Callable[..., Any]) -> Tool:
    """A ``Tool`` from a ``Tool`` or a plain callable."""
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        built: Tool = tool(obj)
        return built
    raise ConfigurationError(f"{obj!r} is not a tool: pass a function or watcher.agents.tool(fn, ...)")
