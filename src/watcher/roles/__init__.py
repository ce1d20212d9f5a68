"""Offline roles for the rules evaluator. Each is a ``watcher.core.rules.Role`` subclass.

Add a role by writing its module and listing its class in ``_ROLE_MODULES`` below; ``watcher
roles`` and every ``--watcher`` / ``%watch`` option pick it up from here. The ``health`` role
(``watcher.roles.health``) is not listed: it judges a fleet task's measured health, which only a
fleet's watcher loop measures (``watcher.fleet``), not a session's observations.
"""

from __future__ import annotations

import difflib
import importlib

from watcher.core.errors import ConfigurationError
from watcher.core.rules import Role
from watcher.core.spec import Authority, Caps, Mode, WatcherSpec

__all__ = ["ROLE_NAMES", "make_role", "role_class", "spec_for_role"]

# role name -> "module:Class", imported on first use so a role's engine loads only when needed
_ROLE_MODULES: dict[str, str] = {
    "errors": "watcher.roles.errors:ErrorsRole",
    "security": "watcher.roles.security:SecurityRole",
    "stuck": "watcher.roles.stuck:StuckRole",
}
ROLE_NAMES: tuple[str, ...] = tuple(_ROLE_MODULES)


def role_class(name: str) -> type[Role]:
    """The role class called ``name``."""
    target = _ROLE_MODULES.get(name)
    if target is None:
        near = difflib.get_close_matches(name, list(_ROLE_MODULES), n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ConfigurationError(f"unknown role {name!r}{hint}; `watcher roles` lists them: {', '.join(_ROLE_MODULES)}")
    module, _, cls = target.partition(":")
    found: type[Role] = getattr(importlib.import_module(module), cls)
    return found


def make_role(name: str, **options: object) -> Role:
    """A fresh instance of the role called ``name`` (one per watcher: roles keep state).

    ``options`` go to the role's constructor (thresholds and the like); an option the role does
    not take is a ``ConfigurationError`` that names it.
    """
    cls = role_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise ConfigurationError(f"role {name!r} does not take the options {sorted(options)}: {exc}") from exc


def spec_for_role(
    role: str,
    *,
    name: str | None = None,
    brief: str | None = None,
    mode: Mode = "autonomous",
    authority: Authority | None = None,
    caps: Caps | None = None,
) -> WatcherSpec:
    """A watcher spec for ``role`` with the role's own brief, authority and triggers as defaults."""
    cls = role_class(role)
    return WatcherSpec(
        name=name or role,
        role=role,
        description=cls.description,
        authority=authority or cls.authority,
        brief=brief if brief is not None else cls.brief,
        triggers=cls.triggers,
        mode=mode,
        caps=caps or Caps(),
    )
