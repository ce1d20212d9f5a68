"""Whether a user message is the harness talking rather than a person: its own nudges.

Agent harnesses answer some replies by themselves, as user-role messages: an empty reply or one
without a tool call gets "Your last response did not include a function call..." (OpenHands) or
"[ERROR] You did not use a tool in your previous response!" (Cline, Roo Code), a detected loop gets
"System: Potential loop detected..." (Gemini CLI), and watcher's own injections come back as
``[SUPERVISOR]: ...`` or ``<system-nudge ...>``. Such a message is not a person stepping in: it does
not end a run of repeated replies, and it does not make the stuck role count a flagged loop afresh.
A person's guidance (``Supervisor:Guidance: ...``) is a person's message. A nudge about a reply
without content or a tool call stands for that empty reply when the transcript does not show it
(harness logs often keep no record of an empty model response).
"""

from __future__ import annotations

import re

__all__ = ["empty_reply_nudge", "harness_nudge"]

# watcher's own injected formats (``watcher.agents._delivery``) and system-tagged messages
_TAGGED = re.compile(
    r"\s*(?:\[SUPERVISOR\]:|\[PEER [^\]\n]*\]:|<system-nudge\b|<sync-message\b|<system-reminder>|\[SYSTEM\]|System:\s)",
    re.IGNORECASE,
)
# what harnesses say about the agent's last reply (empty, or without a tool call)...
_EMPTY = re.compile(
    r"\b(?:your|the)\s+(?:last|previous|prior)\s+(?:response|reply|message|turn|answer|output)\b"
    r"[^\n]{0,80}?\b(?:tool|function call|empty|no content)"
    r"|\bdid(?:\s+not|n't)\s+(?:use|include|call|contain|make)\s+(?:a|any)\s+(?:tool|function)"
    r"|\b(?:retry|respond|proceed|continue)\s+with\s+a\s+tool\b|\buse\s+a\s+tool\s+to\s+(?:proceed|continue)\b",
    re.IGNORECASE,
)
# ...or about a loop they noticed
_LOOP = re.compile(r"\b(?:potential|possible)\s+loop\b|\bloop\s+(?:was\s+)?detected\b", re.IGNORECASE)
_LONGEST = 2000  # a nudge is short; a person's long message is looked at no further than this


def harness_nudge(text: str) -> bool:
    """Whether ``text``, a user message, reads as the harness's (or a watcher's) own nudge."""
    head = text[:_LONGEST]
    return _TAGGED.match(head) is not None or _EMPTY.search(head) is not None or _LOOP.search(head) is not None


def empty_reply_nudge(text: str) -> bool:
    """Whether ``text``, a user message, is the harness's answer to a reply without content or a tool call."""
    return _EMPTY.search(text[:_LONGEST]) is not None
