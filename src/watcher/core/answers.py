"""A watcher's answer in the evaluation protocol: parsed into a decision, or rendered from one.

Only what follows the prompt's last ``=== END OBSERVATIONS ===`` is read, the first
``[INTERJECT]`` or ``[CONTINUE]`` block wins, and anything malformed continues: the parser never
raises, so a confused model cannot break the watcher or the session it watches.
"""

from __future__ import annotations

import re
import textwrap

from watcher.core.interjection import ACTIONS, SEVERITIES, Continue, Decision, Interject, Interjection, Location
from watcher.core.protocol import END_OBSERVATIONS, PLACEHOLDER, neutralise

__all__ = ["parse_decision", "parse_interjection", "render_decision"]

_OPEN = re.compile(r"\[\s*(INTERJECT|CONTINUE)\s*\]", re.IGNORECASE)
_CLOSE = {
    "INTERJECT": re.compile(r"\[\s*/\s*INTERJECT\s*\]", re.IGNORECASE),
    "CONTINUE": re.compile(r"\[\s*/\s*CONTINUE\s*\]", re.IGNORECASE),
}
_FIELD = re.compile(r"^\s*(urgent|severity|action|location|content)\s*:\s?(.*)$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)[\w-]*\s*$")
_LOCATION = re.compile(r"^(?P<target>.+?)(?::(?P<start>\d+)(?:\s*-\s*(?P<end>\d+))?)?$")


def _answer_part(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    _, found, after = text.rpartition(END_OBSERVATIONS)
    return after if found else text


def _block(text: str) -> tuple[str, str] | None:
    """The first protocol block of ``text``: (``INTERJECT`` | ``CONTINUE``, body), or None."""
    opening = _OPEN.search(text)
    if opening is None:
        return None
    tag = opening.group(1).upper()
    closing = _CLOSE[tag].search(text, opening.end())
    if closing is None:
        return None
    return tag, text[opening.end() : closing.start()]


def _location(value: str) -> Location | None:
    match = _LOCATION.match(value.strip().strip("`"))
    if match is None:
        return None
    target = match.group("target").strip()
    start = int(match.group("start") or 1)
    end = int(match.group("end")) if match.group("end") else None
    if not target or start < 1 or (end is not None and end < start):
        return None
    if target.lower().startswith("cell:"):
        return Location(cell_id=target[5:], start_line=start, end_line=end)
    return Location(path=target, start_line=start, end_line=end)


def _unfenced(lines: list[str]) -> list[str]:
    """Drop blank edges and a code fence wrapped around the block's fields (not one in the content)."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    opened = bool(lines) and _FENCE.match(lines[0]) is not None
    if opened:
        lines = lines[1:]
    fences = sum(1 for line in lines if _FENCE.match(line))
    if lines and _FENCE.match(lines[-1]) and (opened or fences % 2 == 1):
        lines = lines[:-1]
    return lines


def _interjection(body: str) -> Interjection | None:
    lines = _unfenced(body.split("\n"))
    urgent = False
    severity: str | None = None
    action: str | None = None
    locations: list[Location] = []
    for index, line in enumerate(lines):
        field = _FIELD.match(line)
        if field is None:
            continue  # prose before content: is not a field
        key, value = field.group(1).lower(), field.group(2).strip()
        if key == "content":
            first = field.group(2)
            rest = textwrap.dedent("\n".join(lines[index + 1 :]))
            content = f"{first.strip()}\n{rest}".strip() if rest.strip() else first.strip()
            if not content or content.strip(" <>.").lower() == PLACEHOLDER.lower():
                return None
            chosen_severity = severity if severity in SEVERITIES else ("critical" if urgent else "warning")
            return Interjection(
                content=content,
                urgent=urgent,
                severity=chosen_severity,
                action=action if action in ACTIONS else "guidance",
                locations=tuple(locations),
            )
        if key == "urgent":
            urgent = value.lower().strip("`*\"' ") in ("true", "yes", "1")
        elif key == "severity":
            severity = value.lower().strip("`*\"' ")
        elif key == "action":
            action = value.lower().strip("`*\"' ")
        elif key == "location":
            loc = _location(value)
            if loc is not None:
                locations.append(loc)
    return None  # no content: field: malformed, fail safe


def parse_decision(text: str) -> Decision:
    """Parse a watcher's answer into a decision; anything that is not a valid interjection continues.

    Never raises. A ``[CONTINUE]`` block's body becomes the note.
    """
    try:
        block = _block(_answer_part(text))
        if block is None:
            return Continue(note="")
        tag, body = block
        if tag == "CONTINUE":
            return Continue(note=body.strip())
        found = _interjection(body)
        return Interject(found) if found is not None else Continue(note="")
    except Exception as exc:  # noqa: BLE001 - the parser must never break a watcher; fail safe
        return Continue(note="", error=f"parser error: {exc!r}")


def parse_interjection(text: str) -> Interjection | None:
    """The interjection in a watcher's answer, or None (continue, malformed, empty, placeholder).

    Handles the protocol's edge cases: only what follows the last ``=== END OBSERVATIONS ===`` counts;
    the first block wins; a missing close tag or ``content:`` field, empty content and the
    template's placeholder are not interjections. Reads ``urgent:``, ``severity:``, ``action:``
    and ``location:`` field lines before ``content:``; accepts CRLF, indentation and code fences.
    """
    decision = parse_decision(text)
    return decision.interjection


def render_decision(decision: Decision) -> str:
    """The protocol text for a decision (what a rule evaluator "answers")."""
    if isinstance(decision, Continue):
        return f"[CONTINUE]\n{decision.note}\n[/CONTINUE]"
    i = decision.interjection
    lines = [
        "[INTERJECT]",
        f"urgent: {'true' if i.urgent else 'false'}",
        f"severity: {i.severity}",
        f"action: {i.action}",
    ]
    lines += [f"location: {loc.render()}" for loc in i.locations]
    lines += [f"content: {neutralise(i.content)}", "[/INTERJECT]"]
    return "\n".join(lines)
