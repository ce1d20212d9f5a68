"""Whether a user message is the harness talking rather than a person: its own nudges.

Agent harnesses answer some replies by themselves, as user-role messages: an empty reply or one
without a tool call gets "Your last response did not include a function call..." (OpenHands) or
"[ERROR] You did not use a tool in your previous response!" (Cline, Roo Code), a detected loop gets
"System: Potential loop detected..." (Gemini CLI), and watcher's own injections come back as
``[SUPERVISOR]: ...`` or ``<system-nudge ...>``. Such a message is not a person stepping in: it does
not end a run of repeated replies, and it does not make the stuck role count a flagged loop afresh.
A person's guidance (``Supervisor:Guidance: ...``) is a person's message.
"""

from __future__ import annotations

import re

__all__ = ["harness_nudge"]

# watcher's own injected formats (``watcher.agents._delivery``) and system-tagged messages
_TAGGED = re.compile(
    r"\s*(?:\[SUPERVISOR\]:|\[PEER [^\]\n]*\]:|<system-nudge\b|<sync-message\b|<system-reminder>|\[SYSTEM\]|System:\s)",
    re.IGNORECASE,
)
# what harnesses say about the agent's last reply, or about a loop they noticed
_CORRECTIVE = re.compile(
    r"\b(?:your|the)\s+(?:last|previous|prior)\s+(?:response|reply|message|turn|answer|output)\b"
    r"[^\n]{0,80}?\b(?:tool|function call|empty|no content|format)"
    r"|\bdid(?:\s+not|n't)\s+(?:use|include|call|contain|make)\s+(?:a|any)\s+(?:tool|function)"
    r"|\b(?:retry|respond|proceed|continue)\s+with\s+a\s+tool\b|\buse\s+a\s+tool\s+to\s+(?:proceed|continue)\b"
    r"|\b(?:potential|possible)\s+loop\b|\bloop\s+(?:was\s+)?detected\b",
    re.IGNORECASE,
)
_LONGEST = 2000  # a nudge is short; a person's long message is looked at no further than this


def harness_nudge(text: str) -> bool:
    """Whether ``text``, a user message, reads as the harness's (or a watcher's) own nudge."""
    head = text[:_LONGEST]
    return _TAGGED.match(head) is not None or _CORRECTIVE.search(head) is not None
