"""Offline roles for the rules evaluator. Each is a ``watcher.core.rules.Role`` subclass.

Add a role by writing its module and listing its class in ``_ROLE_MODULES`` below; ``watcher
roles`` and every ``--watcher`` / ``%watch`` option pick it up from here.
"""

from __future__ import annotations

import importlib

from dataclasses import replace

from watcher.core.errors import ConfigurationError
from watcher.core.rules import Role
from watcher.core.spec import Authority, Mode, WatcherSpec

__all__ = ["ROLE_NAMES", "make_role", "role_class", "spec_for_role"]

# role name -> "module:Class", imported on first use so a role's engine loads only when needed
_ROLE_MODULES: dict[str, str] = {
    "errors": "watcher.roles.errors:ErrorsRole",
    "security": "watcher.roles.security:SecurityRole",
}
ROLE_NAMES: tuple[str, ...] = tuple(_ROLE_MODULES)


def role_class(name: str) -> type[Role]:
    """The role class called ``name``."""
    target = _ROLE_MODULES.get(name)
    if target is None:
        raise ConfigurationError(f"unknown role {name!r}; `watcher roles` lists them: {', '.join(_ROLE_MODULES)}")
    module, _, cls = target.partition(":")
    found: type[Role] = getattr(importlib.import_module(module), cls)
    return found


def make_role(name: str) -> Role:
    """A fresh instance of the role called ``name`` (one per watcher: roles keep state)."""
    return role_class(name)()


def spec_for_role(
    role: str,
    *,
    name: str | None = None,
    brief: str | None = None,
    mode: Mode = "autonomous",
    authority: Authority | None = None,
    **caps_or_triggers: object,
) -> WatcherSpec:
    """A watcher spec for ``role`` with the role's own brief, authority and triggers as defaults."""
    cls = role_class(role)
    spec = WatcherSpec(
        name=name or role,
        role=role,
        description=cls.description,
        authority=authority or cls.authority,
        brief=brief if brief is not None else cls.brief,
        triggers=cls.triggers,
        mode=mode,
    )
    caps = {k: v for k, v in caps_or_triggers.items() if k in ("max_interjections_per_turn", "cooldown_s", "buffer_size", "timeout_s")}
    unknown = set(caps_or_triggers) - set(caps)
    if unknown:
        raise ConfigurationError(f"unknown watcher options {sorted(unknown)} for role {role!r}")
    return replace(spec, caps=replace(spec.caps, **caps)) if caps else spec
