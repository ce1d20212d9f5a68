"""The IPython extension: ``%load_ext watcher`` puts watchers on a notebook's cells.

Loading starts the runtime thread (one asyncio loop hosting the ``Runtime``, journaling to the
default journal or ``$WATCHER_JOURNAL``), registers the cell hooks and the magics, and makes the
kernel the notebook host (``watcher.fleet(...)`` then runs there and shows its dashboard).
Unloading removes all of them, closes the fleets started here and stops the thread; loading again starts afresh. ``current()`` is the
extension of this kernel, or None.
"""

from __future__ import annotations

import atexit
import sys

from IPython.core.interactiveshell import InteractiveShell

from watcher.agents import set_host
from watcher.core.errors import ConfigurationError, JournalError
from watcher.kernel_ext.extension import KernelExtension
from watcher.kernel_ext.fleets import NotebookFleets
from watcher.kernel_ext.magics import MAGIC_NAMES, WatcherMagics
from watcher.runtime.host import set_notebook_host
from watcher.settings import Settings

__all__ = ["KernelExtension", "current", "load_ipython_extension", "unload_ipython_extension"]

_extension: KernelExtension | None = None
_fleets: NotebookFleets | None = None


def current() -> KernelExtension | None:
    """The extension loaded in this process, if any."""
    return _extension


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext watcher``: start the runtime thread, register hooks and magics (once)."""
    global _extension, _fleets
    if _extension is not None and _extension.shell is ipython:
        return
    if _extension is not None:
        unload_ipython_extension(_extension.shell)
    try:
        ext = KernelExtension(ipython, settings=Settings.from_env())
    except (JournalError, ConfigurationError) as exc:  # a damaged journal, a bad variable: say what to do
        print(f"watcher: cannot load the extension: {exc}", file=sys.stderr)
        return
    ext.register()
    set_host(ext)  # ``watcher.agent(...)`` in this kernel runs on the extension's runtime
    ipython.register_magics(WatcherMagics(ipython, ext))
    _fleets = NotebookFleets(ext.thread)
    set_notebook_host(_fleets)  # ``watcher.fleet(...)`` in this kernel runs on the runtime thread, shown live
    atexit.register(ext.close)
    atexit.register(_fleets.close)  # atexit runs last-registered first: the fleets close before the thread stops
    _extension = ext


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """``%unload_ext watcher``: remove hooks and magics, end the session, stop the thread."""
    global _extension, _fleets
    ext, _extension = _extension, None
    fleets, _fleets = _fleets, None
    if ext is None:
        return
    atexit.unregister(ext.close)
    set_host(None)
    if fleets is not None:
        atexit.unregister(fleets.close)
        set_notebook_host(None)
        fleets.close()
    magics = ipython.magics_manager.magics
    for kind, names in MAGIC_NAMES.items():
        for name in names:
            magics[kind].pop(name, None)
    ipython.magics_manager.registry.pop(WatcherMagics.__name__, None)
    ext.close()
