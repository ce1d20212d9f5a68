"""Entry point of ``watcher-lsp`` (and ``python -m watcher.lsp_bridge``).

stdio by default, as editors expect (``--stdio``, which clients such as vscode-languageclient add,
says so explicitly); ``--tcp`` listens on ``--host``/``--port`` instead. Logs go to stderr: in
stdio mode stdout carries nothing but protocol messages.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from watcher._version import __version__

    parser = argparse.ArgumentParser(
        prog="watcher-lsp",
        description="Language server showing watcher interjections as diagnostics (stdio unless --tcp). It "
        "follows the project's journal: WATCHER_JOURNAL (a file or a postgresql:// URL) if set, else "
        ".watcher/journal.sqlite3 at the project root of each folder the editor opens.",
    )
    parser.add_argument("--version", action="version", version=f"watcher-lsp {__version__}")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak the protocol on stdin/stdout (the default)")
    transport.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=2087, help="TCP port (default: 2087)")
    parser.add_argument(
        "--poll",
        type=_period,
        default=0.05,
        metavar="SECONDS",
        help="how often to look at the journals while they change (default: 0.05; idle, up to every 0.2)",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level"
    )
    return parser


def _port(text: str) -> int:
    """A TCP port number, 0 to 65535 (0: any free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port number; give one from 0 to 65535 (0: any free port)"
        ) from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number; give one from 0 to 65535 (0: any free port)")
    return port


def _period(text: str) -> float:
    """A poll period in seconds: finite and at least 0.01 (0 or less would poll the journal in a busy loop)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds, such as 0.05") from None
    if not math.isfinite(seconds) or seconds < 0.01:
        raise argparse.ArgumentTypeError(f"{text} is not a poll period; give 0.01 seconds or more, such as 0.05")
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    """Run the language server until the client disconnects; the process's exit code."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level, format="watcher-lsp %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLevelName(args.log_level)))
    try:
        from watcher.lsp_bridge.server import create_server
    except ImportError as exc:  # pygls is an optional dependency
        print(f"watcher-lsp: {exc}; install it with: pip install 'watcher-agents[lsp]'", file=sys.stderr)
        return 2
    from watcher.core.errors import ConfigurationError
    from watcher.settings import Settings

    try:
        settings = Settings.from_env()  # read once, as the server starts
    except ConfigurationError as exc:
        print(f"watcher-lsp: {exc}", file=sys.stderr)
        return 2
    server = create_server(interval=args.poll, settings=settings)
    if args.tcp:
        try:
            server.start_tcp(args.host, args.port)
        except OSError as exc:  # the port is taken, the host unknown, or not ours to bind
            print(
                f"watcher-lsp: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; "
                "choose another --port or --host",
                file=sys.stderr,
            )
            return 1
    else:
        server.start_io()
    return server.exit_code  # 1 when the client sent ``exit`` without ``shutdown`` first (the LSP rule)


if __name__ == "__main__":
    sys.exit(main())
