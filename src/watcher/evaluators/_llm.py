"""What the LLM evaluators share: minimal context, the price table, answer checks, error translation.

Minimal context: an evaluation sends the recent observations and a short digest
of the older ones, not the whole history (``context="full"`` sends everything). The price table
turns reported tokens into a cost estimate. Failures are translated into ``EvaluationError`` with
a message that says what failed and where; the engine turns any raise into a *continue* with the
error journaled, so a watcher never blocks its parent (fail closed).
"""

from __future__ import annotations

import re
import ssl
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from types import ModuleType
from typing import Any, Literal

from watcher.core.answers import parse_decision
from watcher.core.edits import Files
from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Continue, Decision, Interject
from watcher.core.observations import CellError, CellExecuted, HarnessError, Observation, ToolCall, ToolResult
from watcher.core.pricing import cost_usd
from watcher.core.redact import redact, redact_url, redact_value
from watcher.evaluators._transport import MAX_RESPONSE_BYTES, ResponseTooLarge, http_client, retry_after

__all__ = [
    "DEFAULT_PROMPT_BUDGET",
    "DEFAULT_RECENT",
    "MAX_ANSWER_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_RESPONSE_BYTES",
    "Context",
    "EvaluationError",
    "ResponseTooLarge",
    "answered_model",
    "bounded",
    "checked_decision",
    "cost_usd",
    "describe_failure",
    "digest",
    "estimate_tokens",
    "http_client",
    "minimal_context",
    "plain",
    "redacted",
    "retry_after",
    "surely_fits",
    "tokens",
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
# what a local reasoning model (DeepSeek-R1, Qwen3 under Ollama or LM Studio) thinks before it answers;
# an unclosed one runs to the end (the answer was cut off while it was still thinking). Only a section
# that opens the answer is thinking, and it runs to its last closing tag: observed content the model
# quotes (a "<think>" in its interjection, a "</think>" in its thoughts) must not hide the answer, nor
# end the thoughts early so that a block drafted in them decides
_THINKING = re.compile(r"\A\s*<(think|thinking)>(?:.*</\1>|.*)", re.IGNORECASE | re.DOTALL)
MAX_ANSWER_CHARS = 64_000  # what is read of an answer: a server that ignores max_tokens cannot flood the parser
MAX_CONTENT_CHARS = 8_000  # what an interjection may say to the parent, whose context it enters


def checked_decision(raw: str, *, stop_reason: str | None = None) -> Decision:
    """Parse the model's answer; an answer with no protocol block continues with an error (fail closed).

    A reasoning model's ``<think>`` section is not read: only its answer decides. An answer longer
    than ``MAX_ANSWER_CHARS`` is not read (no ``max_tokens`` allows it: the server
    ignored it), and an interjection's content is clipped to ``MAX_CONTENT_CHARS``, so a server
    cannot flood the session it watches.
    """
    if stop_reason == "refusal":
        return Continue(error="the model refused to evaluate (stop_reason: refusal)")
    if len(raw) > MAX_ANSWER_CHARS:
        return Continue(
            error=f"the answer is {len(raw):,} characters long, over the {MAX_ANSWER_CHARS:,} a watcher reads; "
            "the server did not keep to max_tokens"
        )
    raw = _THINKING.sub("", raw, count=1)  # a reasoning model's thoughts may mention a block it then decides against
    decision = parse_decision(raw)
    if isinstance(decision, Interject):
        return bounded(decision)
    if isinstance(decision, Continue) and not decision.error and not _CLOSED_BLOCK.search(raw):
        shown = plain(raw)[:120] or "(empty)"
        why = (
            "it hit max_tokens before closing a block"
            if stop_reason == "max_tokens"
            else "no [INTERJECT] or [CONTINUE] block"
        )
        return Continue(error=f"unparseable answer ({why}): {redact(shown)!r}")
    return decision


def bounded(decision: Decision) -> Decision:
    """``decision`` with an interjection's content clipped to ``MAX_CONTENT_CHARS``: it enters the parent's context."""
    if not isinstance(decision, Interject) or len(decision.interjection.content) <= MAX_CONTENT_CHARS:
        return decision
    content = decision.interjection.content
    clipped = f"{content[:MAX_CONTENT_CHARS]}… [{len(content) - MAX_CONTENT_CHARS} more characters left out]"
    return replace(decision, interjection=replace(decision.interjection, content=clipped))


def describe_failure(sdk: ModuleType, exc: BaseException, *, who: str, where: str, timeout: float, retries: int) -> str:
    """A message for an SDK exception (``anthropic`` and ``openai`` share their exception tree), secrets redacted.

    The message is journaled and printed, and the SDK's own text may name the URL it called; what
    the server said is shown as plain text (``plain``).
    """
    return redact(plain(_failure(sdk, exc, who=who, where=redact_url(where), timeout=timeout, retries=retries)))


def tokens(value: object) -> int:
    """A token count as a server reported it, when it is one: a whole number from 0; anything else is 0.

    The SDKs do not validate answers: a broken or hostile server's ``-5``, ``"many"`` or ``1.5``
    would reach the journal and the cost totals, and the engine drops a result whose usage is not
    counts, its interjection with it.
    """
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def answered_model(value: object, asked: str) -> str:
    """The model an answer names, when it names one; else the model asked for."""
    return value if isinstance(value, str) and value.strip() else asked


def plain(text: str) -> str:
    """``text`` on one line with no control character: what a server or a model wrote, fit to print.

    An error body or an answer may hold terminal escapes (``ESC[2J`` clears the screen, ``ESC]8``
    makes a link) that would act on the terminal of whoever reads the journal or the CLI's table.
    """
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _failure(sdk: ModuleType, exc: BaseException, *, who: str, where: str, timeout: float, retries: int) -> str:
    attempts = f"after {retries + 1} attempt{'s' if retries else ''}"
    if isinstance(exc, sdk.APITimeoutError):
        return f"{who}: no answer from {where} within {timeout:g}s ({attempts}); the watcher continued"
    if isinstance(exc, sdk.APIConnectionError):
        return _connection_failure(exc, who=who, where=where, attempts=attempts)
    if isinstance(exc, sdk.AuthenticationError):
        return f"{who}: {where} rejected the API key (HTTP 401); check the key in your environment"
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        if 300 <= status < 400:
            return _redirected(exc, who=who, where=where)
        if status == 404 and "model" in _error_message(exc).lower():  # the path is right: the model is not
            return (
                f"{who}: the server does not know this model (HTTP 404): {_error_message(exc)}; check the model id "
                "(--model, or the provider's MODEL variable)"
            )
        if status == 404:
            return (
                f"{who}: {_called(exc) or where} does not exist on the server (HTTP 404): {_error_message(exc)}; "
                f"check the base URL ({_BASE_URL_HINTS.get(sdk.__name__, 'it is the part before the API path')})"
            )
        label = {429: "rate limited", 529: "overloaded", 503: "unavailable", 403: "refused"}.get(status, "failed")
        tried = f" {attempts}" if status in (408, 409, 429) or status >= 500 else ""  # what the SDK retries
        hint = "; the key may not have access to this model or endpoint" if status == 403 else ""
        response = getattr(exc, "response", None)
        if response is not None and response.headers.get("x-should-retry") == "false":
            tried = ""  # the server said not to retry: one attempt, whatever max_retries
        wait = retry_after(response.headers) if response is not None else None
        if wait is not None and wait > timeout:  # http_client stopped the SDK from waiting that long
            tried = ""
            hint = f"; the server asks to wait {wait:g}s, longer than the watcher waits ({timeout:g}s), so it did not retry"
        return f"{who}: {label} (HTTP {status}){tried}: {_error_message(exc)}{hint}"
    return f"{who}: {type(exc).__name__}: {exc}"


def _redirected(exc: Any, *, who: str, where: str) -> str:
    """A redirect is not followed: it would carry the key (``x-api-key``) and the prompt to the host it names."""
    location = exc.response.headers.get("location") or ""
    target = f"to {redact_url(location)!r} " if location else ""
    return (
        f"{who}: {where} redirected {target}(HTTP {exc.status_code}); a watcher does not follow redirects, which "
        "would send its key and prompt to another address: give the address the API is served at as the base URL"
    )


_BASE_URL_HINTS = {
    "anthropic": "the Anthropic SDK adds /v1/messages itself, so the base URL has no /v1",
    "openai": "an OpenAI-compatible base URL usually ends in /v1",
}


def _called(exc: BaseException) -> str:
    """The URL the failed request went to, or ""."""
    request = getattr(exc, "request", None)
    return redact_url(str(request.url)) if request is not None and getattr(request, "url", None) else ""


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc``'s causes, nearest first (``__cause__``, else ``__context__``), without cycles."""
    chain: list[BaseException] = []
    current = exc.__cause__ or exc.__context__
    while current is not None and current not in chain and len(chain) < 16:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _connection_failure(exc: BaseException, *, who: str, where: str, attempts: str) -> str:
    """Why a request got no HTTP answer: the server is down, or it answered something that is not HTTP.

    The transport's exception says which (its class names the case); its text is shown only where
    it cannot quote the request's headers, which hold the key.
    """
    causes = _causes(exc)
    names = {type(c).__name__ for c in causes}
    tls = next((c for c in causes if isinstance(c, ssl.SSLError)), None)
    first = " ".join(str(causes[0]).split())[:200] if causes else str(exc)
    if tls is not None:
        reason = str(tls.reason or tls)
        if "CERTIFICATE" in reason.upper():
            hint = "its certificate is not one this machine trusts (self-signed, or signed by a private CA)"
        elif reason.upper() in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST"):
            hint = "the server speaks plain HTTP: give its address with http://"
        else:
            hint = "is it an http:// server given as https://, or one whose certificate this machine does not trust?"
        return f"{who}: TLS with {where} failed ({attempts}): {reason}; {hint}"
    if "LocalProtocolError" in names:  # h11 refused to send the request: a header value is illegal
        return (
            f"{who}: the request to {where} could not be sent: a header is not valid HTTP (an API key with a "
            "space or a line break in it?); check the key in your environment"
        )
    if "UnsupportedProtocol" in names:
        return f"{who}: {where} is not an http:// or https:// URL; give the server's URL, e.g. http://127.0.0.1:1234/v1"
    if names & {"RemoteProtocolError", "ReadError", "WriteError"}:
        return (
            f"{who}: the connection to {where} broke before a complete answer ({attempts}): {first}; "
            "is the base URL an HTTP server of this API?"
        )
    return f"{who}: could not reach {where} ({attempts}): {first}; is the server running and the base URL right?"


def _error_message(exc: BaseException) -> str:
    """The server's own words: the error body's message, else the start of the body, else the SDK's text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return redact(str(inner["message"]))[:300]
    text = body if isinstance(body, str) else ""
    if body is None:  # not JSON (an HTML error page, a proxy's text): the SDK may say only "Error code: N"
        try:
            text = str(getattr(exc, "response", None).text)  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - a streamed or closed response has no text to show
            text = ""
    text = " ".join(text.split())
    return redact(text)[:160] if text else redact(str(exc))[:300]
