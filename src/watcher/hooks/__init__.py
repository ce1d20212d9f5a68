"""Supervising the Claude Code and Codex sessions people already run, through the CLIs' own hooks.

``watcher hooks install`` writes hook entries into the CLI's settings; the CLI then runs
``watcher-hook EVENT`` on every tool call and turn end. The hook forwards the payload to the
per-user daemon (``watcher serve``), which keeps each session's watchers alive between calls, or
judges it in-process when no daemon answers, and prints the answer in the CLI's wire format:
deny a dangerous call, add context the model reads, or keep a turn going. Any failure answers
nothing: the hook fails open, so a broken watcher never blocks someone's work.

Modules: ``_wire`` (payloads and answers), ``_session`` (a hooked session, the hook's options),
``_desk`` (observe, evaluate, answer), ``_resume`` (a session read back from the journal),
``_serve_one`` (one call judged in-process), ``_daemon`` (the Unix-socket server), ``client`` (the
thin hook command), ``_settings`` (install, uninstall; ``_exclude`` keeps a local install out of git), ``_status`` (``watcher hooks status``).

The names below are imported on first use: ``watcher-hook`` imports ``watcher.hooks.client``,
and that must not load the desk and its watchers on its way to the daemon.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would cost every hook call
if TYPE_CHECKING:
    from watcher.hooks._desk import Desk
    from watcher.hooks._session import HookConfig, HookedSession
    from watcher.hooks._wire import Answer, HookCall

__all__ = ["Answer", "Desk", "HookCall", "HookConfig", "HookedSession"]

_HOME = {"Desk": "_desk", "HookConfig": "_session", "HookedSession": "_session", "Answer": "_wire", "HookCall": "_wire"}


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'watcher.hooks' has no attribute {name!r}")
    import importlib  # here: importlib loads warnings, which the hook client never needs

    return getattr(importlib.import_module(f"watcher.hooks.{_HOME[name]}"), name)
