"""What the LLM evaluators share: minimal context, the price table, answer checks, error translation.

Minimal context: an evaluation sends the recent observations and a short digest
of the older ones, not the whole history (``context="full"`` sends everything). The price table
turns reported tokens into a cost estimate. Failures are translated into ``EvaluationError`` with
a message that says what failed and where; the engine turns any raise into a *continue* with the
error journaled, so a watcher never blocks its parent (fail closed).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from types import ModuleType
from typing import Any, Literal

from watcher.core.answers import parse_decision
from watcher.core.edits import Files
from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Continue, Decision
from watcher.core.observations import CellError, CellExecuted, HarnessError, Observation, ToolCall, ToolResult
from watcher.core.pricing import cost_usd
from watcher.core.redact import redact, redact_url, redact_value

__all__ = [
    "DEFAULT_PROMPT_BUDGET",
    "DEFAULT_RECENT",
    "Context",
    "EvaluationError",
    "checked_decision",
    "cost_usd",
    "describe_failure",
    "digest",
    "estimate_tokens",
    "minimal_context",
    "redacted",
    "surely_fits",
]

Context = Literal["minimal", "full"]
DEFAULT_RECENT = 20
DEFAULT_PROMPT_BUDGET = 12_000  # tokens one evaluation's prompt may take (system and messages)
FRAMING_TOKENS = 64  # what a request's roles and message framing may add to its texts' tokens


def digest(observations: Sequence[Observation], *, limit: int = 400) -> str:
    """A one-paragraph summary of older observations: counts, tools used, errors, the last error."""
    if not observations:
        return ""
    kinds = Counter(o.kind for o in observations)
    tools = Counter(o.name for o in observations if isinstance(o, ToolCall))
    errors: list[str] = []
    for obs in observations:
        if isinstance(obs, ToolResult) and obs.is_error:
            errors.append(obs.output)
        elif isinstance(obs, HarnessError):
            errors.append(obs.text)
        elif isinstance(obs, CellExecuted) and obs.error is not None:
            errors.append(f"{obs.error.ename}: {obs.error.evalue}")
    parts = [
        f"{len(observations)} earlier observations (" + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")"
    ]
    if tools:
        parts.append("tools used: " + ", ".join(f"{name}x{n}" for name, n in tools.most_common(8)))
    if errors:
        last = " ".join(errors[-1].split())[:160]
        parts.append(f"{len(errors)} errors, the last: {last}")
    text = "; ".join(parts)
    return redact(text if len(text) <= limit else text[: limit - 1] + "…")


def redacted(obs: Observation) -> Observation:
    """A copy of ``obs`` with secrets masked in every text field and tool input.

    Redacting fields before the prompt is formatted matters: the prompt shows tool inputs as
    JSON, where quotes are escaped and an assignment such as ``password = "..."`` no longer
    looks like one.
    """
    changes: dict[str, Any] = {}
    for f in fields(obs):
        value = getattr(obs, f.name)
        if f.name == "extra":
            continue
        if isinstance(value, str):
            changes[f.name] = redact(value)
        elif isinstance(value, Mapping):
            changes[f.name] = redact_value(dict(value))
        elif isinstance(value, CellError):
            changes[f.name] = replace(value, evalue=redact(value.evalue))
    return replace(obs, **changes)


def minimal_context(
    request: EvaluationRequest, *, recent: int = DEFAULT_RECENT, context: Context = "minimal"
) -> EvaluationRequest:
    """``request`` redacted and cut to its last ``recent`` observations plus a digest of the rest (minimal context)."""
    observations = tuple(redacted(o) for o in request.observations)
    if context == "full" or len(observations) <= recent:
        return replace(request, observations=observations, digest=redact(request.digest))
    cut = len(observations) - recent
    older = digest(observations[:cut])
    summary = f"{redact(request.digest)}; {older}" if request.digest else older
    files = Files(request.files)
    for obs in observations[:cut]:
        files.learn(obs)  # an edit shown now is still numbered as its file reads
    return replace(request, observations=observations[cut:], digest=summary, files=files.known)


def estimate_tokens(text: str) -> int:
    """A token estimate for servers with no counter: a token for every three bytes of UTF-8."""
    return -(-len(text.encode()) // 3)


def surely_fits(text: str, budget: int) -> bool:
    """True when ``text`` fits ``budget`` tokens on any byte-level tokenizer (a token holds at least a byte)."""
    return len(text.encode()) + FRAMING_TOKENS <= budget


_CLOSED_BLOCK = re.compile(r"\[\s*/\s*(?:INTERJECT|CONTINUE)\s*\]", re.IGNORECASE)


def checked_decision(raw: str, *, stop_reason: str | None = None) -> Decision:
    """Parse the model's answer; an answer with no protocol block continues with an error (fail closed)."""
    if stop_reason == "refusal":
        return Continue(error="the model refused to evaluate (stop_reason: refusal)")
    decision = parse_decision(raw)
    if isinstance(decision, Continue) and not decision.error and not _CLOSED_BLOCK.search(raw):
        shown = " ".join(raw.split())[:120] or "(empty)"
        why = (
            "it hit max_tokens before closing a block"
            if stop_reason == "max_tokens"
            else "no [INTERJECT] or [CONTINUE] block"
        )
        return Continue(error=f"unparseable answer ({why}): {redact(shown)!r}")
    return decision


def describe_failure(sdk: ModuleType, exc: BaseException, *, who: str, where: str, timeout: float, retries: int) -> str:
    """A message for an SDK exception (``anthropic`` and ``openai`` share their exception tree), secrets redacted.

    The message is journaled and printed, and the SDK's own text may name the URL it called.
    """
    return redact(_failure(sdk, exc, who=who, where=redact_url(where), timeout=timeout, retries=retries))


def _failure(sdk: ModuleType, exc: BaseException, *, who: str, where: str, timeout: float, retries: int) -> str:
    attempts = f"after {retries + 1} attempt{'s' if retries else ''}"
    if isinstance(exc, sdk.APITimeoutError):
        return f"{who}: no answer from {where} within {timeout:g}s ({attempts}); the watcher continued"
    if isinstance(exc, sdk.APIConnectionError):
        return f"{who}: could not reach {where} ({attempts}): {exc}; is the server running and the base URL right?"
    if isinstance(exc, sdk.AuthenticationError):
        return f"{who}: {where} rejected the API key (HTTP 401); check the key in your environment"
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        label = {429: "rate limited", 529: "overloaded", 503: "unavailable"}.get(status, "failed")
        return f"{who}: {label} (HTTP {status}) {attempts}: {_error_message(exc)}"
    return f"{who}: {type(exc).__name__}: {exc}"


def _error_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return redact(str(inner["message"]))[:300]
    return redact(str(exc))[:300]
