"""watcher's loggers: every record is redacted before any handler sees it.

A log line can carry what an error message quoted — an SDK's exception with the request URL (a
key in its query), a command line, a tool's output — and handlers (the terminal, a file, a
notebook's stderr) are the application's, not ours. So each of watcher's loggers carries a filter
that redacts the formatted message and the traceback text with ``watcher.core.redact`` before the
record propagates. Modules take their logger from ``logger(name)``, never ``logging.getLogger``
(a test holds the source to that).
"""

from __future__ import annotations

import logging

from watcher.core.redact import redact
from watcher.core.terminal import for_terminal

__all__ = ["RedactingFilter", "logger"]


class RedactingFilter(logging.Filter):
    """Replace a record's message and traceback text by their redacted forms; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed call is logging's to report, not ours to break
            return True
        record.msg, record.args = for_terminal(redact(message)), None  # a log is read in a terminal too
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def logger(name: str) -> logging.Logger:
    """The logger ``name`` with the redacting filter attached (once)."""
    log = logging.getLogger(name)
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)
    return log
