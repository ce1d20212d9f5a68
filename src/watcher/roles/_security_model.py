"""What the security scanners report: a ``Finding`` in a piece of watched text.

Each scanner (bandit for Python, detect-secrets and key patterns, shell rules, SQL in JS/TS)
returns findings with lines counted within the text it was given; the role turns them into one
interjection with locations. A finding never holds a secret in clear: ``explanation`` and
``fingerprint`` carry only masked or hashed forms.
"""

from __future__ import annotations

from dataclasses import dataclass

from watcher.core.interjection import Severity

__all__ = ["RANK", "Finding", "line_of"]

RANK: dict[Severity, int] = {"critical": 0, "warning": 1, "hint": 2}


@dataclass(frozen=True, slots=True)
class Finding:
    """One security problem: rule id, a short title, severity, the risk and the fix, and its lines.

    ``replacement`` is a mechanical fix for lines ``start_line``..``end_line`` when there is one.
    ``fingerprint`` identifies the finding across evaluations so it is reported once.
    """

    rule: str
    title: str
    severity: Severity
    explanation: str
    start_line: int = 1
    end_line: int | None = None
    replacement: str | None = None
    fingerprint: str = ""

    @property
    def urgent(self) -> bool:
        """Critical findings interrupt the parent now."""
        return self.severity == "critical"

    @property
    def last_line(self) -> int:
        """The last line of the range."""
        return self.end_line if self.end_line is not None else self.start_line


def line_of(text: str, offset: int) -> int:
    """The 1-based line of character ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1
