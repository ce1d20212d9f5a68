"""Every exception watcher raises on purpose.

    WatcherError
    ├── TranscriptError        a transcript line could not be read (names the file and line)
    ├── ConfigurationError     a watcher, role or evaluator was configured wrongly
    │   └── MissingCredentialsError   an LLM evaluator has no API key
    ├── EvaluationError        an LLM evaluation failed (the engine records it and continues)
    ├── JournalError           the journal could not be opened or written
    ├── CorrectionCapReached   an agent run refused a correction: its cap per step is reached
    ├── SessionEndedError      something was delivered to a parent session that has ended
    └── SpawnError             a spawn step failed: git, the agent CLI, or the forge

A message says what failed, on what, and what to do about it.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "CorrectionCapReached",
    "EvaluationError",
    "JournalError",
    "MissingCredentialsError",
    "SessionEndedError",
    "SpawnError",
    "TranscriptError",
    "WatcherError",
]


class WatcherError(Exception):
    """Root of every error watcher raises on purpose."""


class TranscriptError(WatcherError):
    """A transcript could not be read; the message names the file and the line."""

    def __init__(self, message: str, *, source: str = "<transcript>", line: int | None = None) -> None:
        self.reason = message
        self.source = source
        self.line = line
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {message}")


class ConfigurationError(WatcherError):
    """A watcher, role or evaluator was configured wrongly."""


class MissingCredentialsError(ConfigurationError):
    """An LLM evaluator was asked for but its API key is not in the environment."""


class EvaluationError(WatcherError):
    """An LLM evaluation failed (timeout, rate limit, overload, connection, rejected key).

    The engine records it as the evaluation's error and continues: evaluators fail closed.
    """


class JournalError(WatcherError):
    """The journal could not be opened, read or written."""


class SessionEndedError(WatcherError):
    """An interjection was delivered to a parent session that has already ended."""


class CorrectionCapReached(WatcherError):
    """A watcher's interjection was refused: the run already answered its cap of corrections in a row.

    Seed 003's cap per step; the engine journals the delivery as failed, with this message.
    """


class SpawnError(WatcherError):
    """A spawn step failed: a git command, starting the agent CLI, pushing, or opening the pull request.

    The message names the step, what it ran on, and the tool's own error.
    """
