"""The files a long command writes (``--out`` rows, a ``--plot``), checked before it starts.

``watcher eval`` and ``watcher bench`` run for minutes and may spend a model's tokens; a path they
could only fail on at the end (a folder, a missing folder, a place it cannot write, a format
matplotlib cannot draw) is refused first, with the flag and what to give instead.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from watcher.core.errors import ConfigurationError

__all__ = ["check_out", "check_plot"]


def check_out(path: Path, *, example: str) -> None:
    """Refuse an ``--out`` that is a folder or in a missing folder; ``example`` names a file to suggest."""
    _check_file("--out", path, example)


def check_plot(path: Path, *, example: str) -> None:
    """Refuse a ``--plot`` that is a folder, in a missing folder, or a format matplotlib cannot write.

    A name without a suffix is refused too: matplotlib would add ``.png`` to it, and the file
    written would not be the one the command names.
    """
    _check_file("--plot", path, example)
    if importlib.util.find_spec("matplotlib") is None:
        raise ConfigurationError("the plot needs matplotlib: pip install 'watcher-agents[jupyter]', or pass --no-plot")
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().removeprefix(".")
    if suffix not in formats:
        what = f"a .{suffix} file" if suffix else "a file without a suffix"
        raise ConfigurationError(
            f"--plot {path}: matplotlib cannot draw {what}; end the name in .png, .svg or .pdf "
            f"(it knows {', '.join(sorted(formats))}), or pass --no-plot"
        )


def _check_file(flag: str, path: Path, example: str) -> None:
    if path.is_dir():
        raise ConfigurationError(f"{flag} {path} is a folder; give a file, such as {path / example}")
    if not path.resolve().parent.is_dir():
        raise ConfigurationError(
            f"{flag} {path}: the folder {path.parent} does not exist; create it or choose another path"
        )
    _check_writable(flag, path)


def _check_writable(flag: str, path: Path) -> None:
    """Open ``path`` for appending, as the command will (a file this creates is removed again).

    A read-only folder or mount, a file without write permission, a full disk's refusal to create,
    a special filesystem (``/proc``) each fail here, before the run, with the system's reason.
    """
    existed = path.exists()
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise ConfigurationError(
            f"{flag} {path}: cannot write there ({exc.strerror or exc}); choose another path"
        ) from None
    if not existed:
        path.unlink(missing_ok=True)
