"""Calls, for the taint engine: followed into the file's own functions, else put to the spec.

A call to a function, method or class defined in the same file is followed: its body runs with
the argument values bound to its parameters, and its returns are the call's value; a constructor
runs ``__init__`` and yields the object with the attributes it stored; a method is found through
the class of its receiver (``self``, or an object the file constructed). Any other call goes to the
spec (sources, sanitisers, sinks); a mutating method (``append``, ``pop``, …) updates its receiver;
what nobody vouches for returns the arguments' data plus an ``"unknown"`` origin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.roles.taint import fold
from watcher.roles.taint.assignments import Assignments
from watcher.roles.taint.containers import mutate
from watcher.roles.taint.frame import Frame, Here
from watcher.roles.taint.spec import Call, Function
from watcher.roles.taint.values import FUNCTION, NO_CONST, Origin, Value, merge, union

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["Calls"]


class Calls(Assignments):
    """The call half of the engine's expressions."""

    def call(self, node: SgNode, frame: Frame) -> Value:
        g = self.g
        fn_node = g.field(node, "function")
        args: list[Value] = []
        arg_nodes: list[SgNode] = []
        kwargs: dict[str, Value] = {}
        kwarg_nodes: dict[str, SgNode] = {}
        arguments = g.field(node, "arguments")
        listed = [arguments] if arguments is not None and arguments.kind() in g.comprehensions else (
            arguments.named_children() if arguments is not None else []
        )  # fmt: skip
        closures: list[tuple[int, SgNode]] = []
        for a in listed:
            if a.kind() in g.ignored:
                continue
            if a.kind() in g.closures:  # run once the call is known: its parameters may come from it
                closures.append((len(args), a))
                arg_nodes.append(a)
                args.append(FUNCTION)
                continue
            if a.kind() in g.keyword_arguments:
                name, value_node = g.field(a, "name"), g.field(a, "value")
                if name is not None and value_node is not None:
                    kwargs[name.text()] = self.expr(value_node, frame)
                    kwarg_nodes[name.text()] = value_node
                continue
            arg_nodes.append(a)
            args.append(self.expr(a, frame) if a.kind() not in g.spreads else self.expr(a, frame).flat())
        receiver: Value | None = None
        obj_node = g.field(fn_node, "object") if fn_node is not None and fn_node.kind() in g.attributes else None
        if obj_node is not None:
            receiver = self.expr(obj_node, frame)
        dotted = self.name_of(fn_node, frame)
        method = dotted.rsplit(".", 1)[-1]
        site = Here(self, node, frame)
        if dotted in self.spec.exits:
            frame.live = False
        followed = self._follow(fn_node, obj_node, receiver, args, kwargs, frame)
        if followed is not None:
            return followed
        described = Call(dotted, method, receiver, tuple(args), kwargs, tuple(arg_nodes), kwarg_nodes, site)
        result = self.spec.call(described)
        for index, closure in closures:
            self.closure(closure, frame, self.spec.callback(described, index))
        mutation = self.spec.mutators.get(method) if obj_node is not None and receiver is not None else None
        if mutation is not None and receiver is not None and obj_node is not None and "module" not in receiver.tags:
            updated, returned = mutate(mutation, receiver, args)
            if obj_node.kind() in g.identifiers:
                frame.env[obj_node.text()] = updated
            elif obj_node.kind() in g.attributes | g.subscripts:
                self.assign(obj_node, updated, frame)
            if result is None:
                result = returned
        if result is not None:
            return result
        if receiver is not None and "module" not in receiver.tags:
            const = fold.method(receiver.const, method, [a.const for a in args])
            if const is not NO_CONST:
                return Value(const=const)
            return union([receiver.flat(), *args, *kwargs.values()])
        if fn_node is not None and fn_node.kind() in g.identifiers and dotted in self.spec.builtins:
            return union([*args, *kwargs.values()])
        opaque = Value(origins=frozenset({Origin("unknown", f"{dotted or 'a call'}()", site.line)}))
        return union([opaque, *args, *kwargs.values()])

    def _follow(
        self,
        fn_node: SgNode | None,
        obj_node: SgNode | None,
        receiver: Value | None,
        args: list[Value],
        kwargs: dict[str, Value],
        frame: Frame,
    ) -> Value | None:
        """The value of a call to a function, method or class of this file; None for any other call."""
        if fn_node is None:
            return None
        target: Function | None = None
        constructor = ""
        if fn_node.kind() in self.g.identifiers:
            name = fn_node.text()
            local = frame.env.get(name)
            if local is not None and not local.tags & {"module", "function"} and name not in self.globals:
                return None
            if name in self.functions:
                target = self.functions[name][-1]
            elif name in self.classes:
                constructor = name
                target = next((m for m in self.methods.get(self.spec.constructor, []) if m.owner == name), None)
        elif obj_node is not None and receiver is not None:
            method = self.g.field(fn_node, "attribute")
            owners = {t.split(":", 1)[1] for t in receiver.tags if t.startswith("instance:")}
            if obj_node.kind() in self.g.identifiers and obj_node.text() in self.classes:
                owners.add(obj_node.text())
            if method is not None and owners:
                target = next((m for m in self.methods.get(method.text(), []) if m.owner in owners), None)
        if target is None and not constructor:
            return None
        instance = Value(parts={}, tags=frozenset({f"instance:{constructor}"})) if constructor else receiver
        if target is None:
            return instance
        done = self.follow(target, args, kwargs, instance)
        if done is None:
            return union([*args, *kwargs.values()]) if not constructor else instance
        if constructor:
            holder = self.g.self_name or (target.parameters[0] if target.parameters else "")
            final = done.env.get(holder) if holder else None
            return final if final is not None else instance
        out: Value | None = None
        for value in done.returns:
            out = value if out is None else merge(out, value)
        return out if out is not None else Value(const=None)
