"""Every exception watcher raises on purpose.

    WatcherError
    ├── TranscriptError        a transcript line could not be read (names the file and line)
    ├── ConfigurationError     a watcher, role or evaluator was configured wrongly
    │   ├── MissingCredentialsError   an LLM evaluator has no API key
    │   ├── UnreachableServerError    an LLM evaluator's server does not answer (checked before a run)
    │   ├── DuplicateNameError        a session or watcher name is already taken
    │   └── InvalidLocationError      a location or an origin does not name what it must
    ├── EvaluationError        an LLM evaluation failed (the engine records it and continues)
    ├── JournalError           the journal could not be opened or written
    │   ├── JournalLocationError      a journal location is neither a file path nor a postgresql:// URL
    │   └── MalformedEventError       a journal row is not an event this version can read
    ├── CorrectionCapReached   an agent run refused a correction: its cap per step is reached
    ├── EmptyInterjectionError an interjection with nothing to say was handed to a parent
    ├── NotPendingError        a person acted on an interjection that is not waiting for them
    ├── UnknownWatcherError    a watcher was named that is not attached
    ├── NoActiveRunError       an agent run was asked for where none is running
    ├── InvalidCommandError    a command (an editor's, a fleet's) named what it cannot act on
    ├── HookInputError         a hook call's arguments or payload cannot be read
    ├── RuntimeThreadError     the runtime thread could not start, or was called from itself
    ├── SessionEndedError      something was delivered to a parent session that has ended
    ├── AgentModelError        a benchmark's agent model failed or could not be reached (the task ends as failed)
    └── SpawnError             a spawn step failed: git, the agent CLI, or the forge

A message says what failed, on what, and what to do about it. Classes that refine a built-in
(``LookupError``, ``ValueError``, ``RuntimeError``) also derive from it, so callers that catch
the built-in keep working.
"""

from __future__ import annotations

__all__ = [
    "AgentModelError",
    "ConfigurationError",
    "CorrectionCapReached",
    "DuplicateNameError",
    "EmptyInterjectionError",
    "EvaluationError",
    "HookInputError",
    "InvalidCommandError",
    "InvalidLocationError",
    "JournalError",
    "JournalLocationError",
    "MalformedEventError",
    "MissingCredentialsError",
    "NoActiveRunError",
    "NotPendingError",
    "RuntimeThreadError",
    "SessionEndedError",
    "SpawnError",
    "TranscriptError",
    "UnknownWatcherError",
    "UnreachableServerError",
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


class UnreachableServerError(ConfigurationError):
    """An LLM evaluator's server did not answer when checked before a run (the CLI exits 1: a failed run)."""


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

    The cap on corrective turns per step; the engine journals the delivery as failed, with this message.
    """


class NotPendingError(WatcherError, LookupError):
    """A person accepted or dismissed an interjection that is not pending (already settled, or unknown)."""


class EmptyInterjectionError(WatcherError, ValueError):
    """An interjection with no content was handed to a parent (only a pause or an abort may be empty)."""


class DuplicateNameError(ConfigurationError, ValueError):
    """A session or a watcher was given a name that is already taken where names must be unique."""


class InvalidLocationError(ConfigurationError, ValueError):
    """A ``Location`` or an ``Origin`` does not name exactly what it must (a path or a cell, a watcher or a person)."""


class JournalLocationError(JournalError, ValueError):
    """A journal location (a flag, ``$WATCHER_JOURNAL``) is empty or has a scheme that is not PostgreSQL's.

    A ``ValueError`` too, so an argparse ``type=`` that raises it makes a usage error, not a traceback.
    """


class MalformedEventError(JournalError, ValueError):
    """A journal row could not be read back as an event (unknown kind, missing field, bad value)."""


class UnknownWatcherError(WatcherError, LookupError):
    """A watcher was named that is not attached where it was looked for."""


class NoActiveRunError(WatcherError, LookupError):
    """Something was meant for an agent run, but none is running (or the run has not started)."""


class InvalidCommandError(WatcherError, ValueError):
    """A command named what it cannot act on: an editor's ``watcher.*`` arguments, a fleet task that is not there."""


class RuntimeThreadError(WatcherError, RuntimeError):
    """The notebook's runtime thread did not start, or was asked to wait on itself."""


class AgentModelError(WatcherError):
    """The agent model of a benchmark task failed or could not be reached; the task is recorded as failed."""


class HookInputError(WatcherError, ValueError):
    """A CLI's hook call could not be read: unknown options, or a payload that is not a JSON object."""


class SpawnError(WatcherError):
    """A spawn step failed: a git command, starting the agent CLI, pushing, or opening the pull request.

    The message names the step, what it ran on, and the tool's own error.
    """
