"""The daemon's upkeep: what a first call would load is loaded at start, and garbage is collected
between calls, never in the middle of one.

A warm hook call costs a socket round trip and the watchers' judgement; two things would make a
call pay for more. The first call of a fresh daemon would import the security engines (bandit's
test set, tree-sitter's grammars, detect-secrets' plugins) and read the guard's packs: ``warm``
does it as soon as the daemon listens, on a thread, so the session's first call seldom waits for
it. And every call builds thousands of short-lived objects (syntax trees, taint values), so
Python's collector would stop some calls to scan them, and now and then the whole heap: tens of
milliseconds on a call the CLI is waiting for. The ``Collector`` instead freezes what was loaded
at start (modules and engines are never garbage), collects the young objects once an answer has
left, and the whole heap when no call has come for a while, or every ``FULL_EVERY`` calls, so a
daemon that is never idle still frees what it no longer uses.
"""

from __future__ import annotations

import gc

from watcher.core.observations import ToolCall

__all__ = ["Collector", "warm"]

FULL_EVERY = 500  # calls between two collections of the whole heap when the daemon is never idle
IDLE_S = 1.0  # no call for this long: the whole heap is collected
YOUNG_LIMIT = 200_000  # objects allocated since the last collection: collect even while calls overlap

_SAMPLES = (
    ToolCall(
        name="Write", input={"file_path": "warm.py", "content": "import os\n\ndef f(x):\n    return os.path.join(x)\n"}
    ),
    ToolCall(name="Write", input={"file_path": "warm.js", "content": "const q = 'SELECT 1';\nconsole.log(q);\n"}),
    ToolCall(name="Bash", input={"command": "ls -la"}),
)


def warm() -> None:
    """Load and exercise what a first hook call would: the roles, the security engines, the guard."""
    from watcher.guard import judge
    from watcher.hooks._session import DEFAULT_ROLES
    from watcher.roles import spec_for_role
    from watcher.roles.security import SecurityRole

    for role in DEFAULT_ROLES:
        spec_for_role(role)
    SecurityRole().evaluate(_SAMPLES, len(_SAMPLES))
    for call in _SAMPLES:
        judge(call.name, call.input, cwd=".")


class Collector:
    """Garbage collection on the daemon's schedule (see the module docstring); inert until ``start``."""

    def __init__(self) -> None:
        self.active = False
        self.since_full = 0  # calls answered since the whole heap was last collected

    def start(self) -> None:
        """Freeze what is loaded now and take the collector off the automatic schedule."""
        gc.collect()
        gc.freeze()
        gc.disable()
        self.active = True

    def stop(self) -> None:
        """Back to Python's own schedule (a daemon run in a test's process leaves it as it was)."""
        if self.active:
            self.active = False
            gc.unfreeze()
            gc.enable()

    def answered(self, busy: bool) -> None:
        """A call's answer has left: collect what it left behind, unless another call is being judged."""
        if not self.active:
            return
        self.since_full += 1
        if busy and gc.get_count()[0] < YOUNG_LIMIT:
            return
        if self.since_full >= FULL_EVERY:
            self.full()
        else:
            gc.collect(1)

    def idle(self, quiet_s: float) -> None:
        """No call for ``quiet_s`` seconds: collect the whole heap once, if calls came since the last time."""
        if self.active and self.since_full and quiet_s >= IDLE_S:
            self.full()

    def full(self) -> None:
        gc.collect()
        self.since_full = 0
