"""``LLMEvaluator``: the one base of the LLM evaluators (Anthropic Messages, OpenAI-compatible chat).

A subclass resolves its model, key and server, builds its SDK client, and says how a request
body is built from a redacted prompt, how the SDK is called and how its answer becomes an
``EvaluationResult``. The base keeps the shared settings, the name (``provider:model``), the call
(``evaluate``; ``preview`` shows what it would send, without calling) with its error translation
(an SDK failure becomes an ``EvaluationError`` that says what failed and where; the engine
journals it and continues) and the client's lifetime. A request whose subject formats its own
prompt (a role with a prompt of its own, such as the fleet's ``health``) is sent that prompt.
"""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Literal

from watcher.core.errors import ConfigurationError, EvaluationError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult, Evaluator
from watcher.core.protocol import EvaluationPrompt
from watcher.core.redact import redact, redact_known, redact_url
from watcher.core.shortening import Shortening
from watcher.evaluators._backstop import backstopped, failed
from watcher.evaluators._llm import (
    DEFAULT_PROMPT_BUDGET,
    DEFAULT_RECENT,
    MAX_ANSWER_CHARS,
    Context,
    ResponseTooLarge,
    describe_failure,
    estimate_tokens,
    minimal_context,
    plain,
    surely_fits,
)
from watcher.evaluators._worktree import worktree_lookup

Counter = Literal["provider", "estimate"]

__all__ = ["LLMEvaluator"]


class LLMEvaluator(ABC):
    """An evaluator that asks a language model through its official async SDK.

    ``recent`` is how many observations are sent verbatim (older ones become a digest) unless
    ``context="full"``; ``max_retries`` stays low because a watcher that waits is worse than one
    that skips a turn. ``prompt_budget`` bounds the tokens of one evaluation's prompt (None: no
    bound): an evaluation too long for it is shortened (see ``Shortening``), counted with the
    provider's counter where the SDK has one (``counter="provider"``), else estimated.
    ``worktree`` is where the parent's files are read when an edit's file was not shown.
    ``secrets`` are values masked in every prompt whatever their shape: the evaluator's own key, the
    environment's secret-named variables. ``backstop`` (the role's offline rules) judges an
    evaluation whose call failed; without one such an evaluation raises and the engine continues.
    """

    counts: ClassVar[bool] = False  # whether the SDK has a token counter

    provider: ClassVar[str]
    api: ClassVar[str]  # the wire API, as messages name it: "Anthropic Messages API", ...
    sdk: ClassVar[ModuleType]  # ``anthropic`` or ``openai``: they share their exception tree
    key_variable: ClassVar[str]  # where the key is set: messages about a refused key name it
    model_variable: ClassVar[str]  # where the model is set: messages about an unknown model name it

    def __init__(
        self,
        *,
        model: str,
        client: Any,
        where: str,
        max_tokens: int,
        timeout: float,
        max_retries: int,
        recent: int = DEFAULT_RECENT,
        context: Context = "minimal",
        prompt_budget: int | None = DEFAULT_PROMPT_BUDGET,
        counter: Counter = "provider",
        worktree: Path | None = None,
        secrets: tuple[str, ...] = (),
        backstop: Evaluator | None = None,
    ) -> None:
        self.model = model
        self.backstop = backstop  # judges an evaluation the model failed (``_backstop``); None: it fails closed
        self.secrets = secrets  # values masked in every prompt whatever their shape (``known_secrets``)
        self.client = client
        self.where = redact_url(where)  # shown in every message; a key in the URL's userinfo must not be
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.recent = recent
        self.context: Context = context
        self.prompt_budget = prompt_budget
        self.counter: Counter = counter if self.counts else "estimate"
        self.worktree = worktree
        self.name = f"{self.provider}:{model}"

    def shortening(self, request: EvaluationRequest) -> Shortening:
        """Every shortening of the evaluation prompt for ``request`` (minimal context, secrets redacted)."""
        lookup = worktree_lookup(self.worktree) if self.worktree is not None else None
        return minimal_context(request, recent=self.recent, context=self.context).shortening(lookup=lookup)

    async def request_body(self, request: EvaluationRequest) -> dict[str, Any]:
        """The SDK call's arguments for ``request``: the fullest prompt that fits the budget.

        The observations are redacted and rendered in a worker thread: a tool's output of tens of
        megabytes takes seconds, and the event loop it would hold runs the watched session too.
        """
        return await self.fit(await asyncio.to_thread(self.shortening, request))

    async def fit(self, shortening: Shortening) -> dict[str, Any]:
        """The body of the first shortening step whose prompt fits ``prompt_budget`` tokens.

        A step is measured only when it might not fit: the counter is asked, and its answer
        (tokens per character) guides a binary search to the next step worth measuring.
        """
        step, body = 0, self.body(self._redacted(shortening.at(0)))
        budget = self.prompt_budget
        if budget is None:
            return body
        while True:
            text = _texts(body)
            if surely_fits(text, budget):
                return body
            tokens = await self.count_tokens(body)
            if tokens <= budget:
                return body
            if step >= shortening.steps:
                raise EvaluationError(
                    f"{self.name}: the evaluation prompt takes {tokens} tokens even at its shortest, over the "
                    f"prompt budget of {budget}; raise prompt_budget or shorten the watcher's brief"
                )
            target = len(text) * budget / tokens  # characters that would fit at this density
            low, high = step + 1, shortening.steps
            while low < high:
                middle = (low + high) // 2
                if len(_texts(self.body(shortening.at(middle)))) <= target:
                    high = middle
                else:
                    low = middle + 1
            step, body = low, self.body(self._redacted(shortening.at(low)))

    async def count_tokens(self, body: dict[str, Any]) -> int:
        """The prompt tokens of ``body``: the provider's count, else an estimate (``estimate_tokens``)."""
        if self.counter == "provider":
            try:
                return await self._count(body)
            except (self.sdk.APIError, *_NOT_AN_ANSWER):
                self.counter = "estimate"  # the server has no counter (a gateway, a local server): estimate from now on
        return _estimate(body)

    async def _count(self, body: dict[str, Any]) -> int:
        """The provider's token count of ``body``; a provider whose SDK has no counter (``counts`` False) estimates."""
        return _estimate(body)

    @abstractmethod
    async def check_model(self, client: Any) -> Sequence[str] | None:
        """Ask the server, through ``client`` (a copy of this evaluator's), whether it serves ``self.model``.

        None when it does, or cannot say; else the models it has. The SDK's errors (a refused
        key, no models endpoint) are raised to the caller, ``preflight.prove``, which reads them.
        """

    async def refuse_if_served_at(self, client: Any, other: str, why: str) -> None:
        """Raise a ``ConfigurationError`` when the models list answers at ``other``, where this base URL got 404.

        For the base URL's classic slips (an Anthropic one with ``/v1``, an OpenAI-compatible one
        without): only a server shown to serve the API at the other address is refused.
        """
        try:
            await client.with_options(base_url=other).models.list()
        except Exception:  # noqa: BLE001 - not served there either: the server just has no models endpoint
            return
        raise ConfigurationError(
            f"{self.where} does not serve the {self.api} (HTTP 404), but {redact_url(other)} does: give that as the "
            f"base URL ({why})"
        )

    @abstractmethod
    def body(self, prompt: EvaluationPrompt) -> dict[str, Any]:
        """The SDK call's arguments for an already redacted ``prompt``."""

    @abstractmethod
    async def _send(self, body: dict[str, Any]) -> Any:
        """Call the SDK with ``body``; its exceptions are translated by ``evaluate``."""

    @abstractmethod
    def _result(self, body: dict[str, Any], answer: Any) -> EvaluationResult:
        """The evaluation result from the SDK's answer."""

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        """Ask the model about ``request``; when that fails, the ``backstop`` judges it, else ``EvaluationError``.

        A failure is a call that raised, timed out, or whose answer decides nothing (no protocol
        block, a refusal): the backstop's decision then carries the failure as its ``error``.
        """
        if self.backstop is None:
            return await self.ask(request)
        try:
            result = await self.ask(request)
        except Exception as exc:  # noqa: BLE001 - any failure of the model is judged by the rules instead
            failure = redact_known(redact(f"{type(exc).__name__}: {exc}"), self.secrets)
            return await backstopped(self.backstop, request, failure)
        unusable = failed(result)
        return result if unusable is None else await backstopped(self.backstop, request, unusable, result)

    async def ask(self, request: EvaluationRequest) -> EvaluationResult:
        """Ask the model about ``request``; raises ``EvaluationError`` when the call fails.

        The call ends a moment before the watcher's budget (``caps.timeout_s``) does, so a server that
        accepts and never answers is named here rather than at the engine's deadline, which can only
        say that the evaluation timed out. Each attempt keeps the whole ``timeout``: a slow model is
        not cut shorter than before.
        """
        budget = request.spec.caps.timeout_s
        deadline = budget - max(1.0, 0.05 * budget)
        if not deadline > 0 or math.isinf(deadline):  # too short a budget to say anything first, or none at all
            return await self._evaluate(request)
        try:
            async with asyncio.timeout(deadline):
                return await self._evaluate(request)
        except TimeoutError:
            raise EvaluationError(
                f"{self.name}: no answer from {self.where} within {deadline:g}s, the watcher's budget "
                f"(caps.timeout_s {budget:g}s) less a margin; the watcher continued"
            ) from None

    async def _evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        try:
            body = await self.request_body(request)
        except self.sdk.APIError as exc:
            raise EvaluationError(self._failure(exc)) from exc
        except ResponseTooLarge as exc:  # the token counter's answer
            raise EvaluationError(f"{self.name}: {exc}; the watcher continued") from exc
        return await self._call(body)

    async def preview(self, request: EvaluationRequest) -> tuple[dict[str, Any], int]:
        """What ``evaluate`` would send for ``request``, without calling the model: the body and its prompt tokens.

        The tokens are the provider's count when ``counter`` is ``"provider"``, else the estimate;
        ``watcher replay --show-prompt`` shows both.
        """
        body = await self.request_body(request)
        return body, await self.count_tokens(body)

    def _redacted(self, prompt: EvaluationPrompt) -> EvaluationPrompt:
        """Both parts of ``prompt`` redacted, by shape and by the known values: nothing secret leaves."""
        return replace(
            prompt,
            static=redact_known(redact(prompt.static), self.secrets),
            activity=redact_known(redact(prompt.activity), self.secrets),
        )

    def _failure(self, exc: BaseException) -> str:
        """The message of an SDK failure; the server's words may quote the key, whatever its shape."""
        message = describe_failure(
            self.sdk, exc, who=self.name, where=self.where, timeout=self.timeout, retries=self.max_retries
        )
        return redact_known(message, self.secrets)

    async def _call(self, body: dict[str, Any]) -> EvaluationResult:
        try:
            answer = await self._send(body)
            result = self._result(body, answer)
        except EvaluationError:
            raise
        except ResponseTooLarge as exc:  # a hostile or broken server's endless body: read no further
            raise EvaluationError(f"{self.name}: {exc}; the watcher continued") from exc
        except self.sdk.APIError as exc:
            raise EvaluationError(self._failure(exc)) from exc
        except _NOT_AN_ANSWER as exc:  # the SDK read a body that is not its API's answer (HTML, {}, a list)
            raise EvaluationError(self._not_an_answer(exc)) from exc
        if len(result.raw) > MAX_ANSWER_CHARS:  # kept whole, a server ignoring max_tokens fills memory and logs
            return replace(
                result, raw=f"{result.raw[:MAX_ANSWER_CHARS]}… [{len(result.raw) - MAX_ANSWER_CHARS} more characters]"
            )
        return result

    def _not_an_answer(self, exc: BaseException) -> str:
        """Why an answer that is not the API's cannot be read, and what to check."""
        what = redact_known(redact(plain(f"{type(exc).__name__}: {exc}")), self.secrets)[:200]
        return (
            f"{self.name}: {self.where} answered with something that is not an answer of the {self.api} ({what}); "
            f"check that the base URL serves the {self.api}"
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()


# what reading a body that is not the API's answer raises (JSON errors and pydantic's are ValueErrors)
_NOT_AN_ANSWER = (ValueError, TypeError, AttributeError, KeyError, IndexError)


def _parts(body: dict[str, Any]) -> list[str]:
    """The texts of a request body: system blocks (Anthropic) and message contents."""
    system = body.get("system") or []
    texts = [system] if isinstance(system, str) else [block["text"] for block in system]
    return texts + [m["content"] for m in body.get("messages", []) if isinstance(m.get("content"), str)]


def _texts(body: dict[str, Any]) -> str:
    return "\n".join(_parts(body))


def _estimate(body: dict[str, Any]) -> int:
    """The prompt tokens of ``body`` estimated from its text parts, with a few tokens of framing each."""
    parts = _parts(body)
    return sum(estimate_tokens(text) for text in parts) + 4 * len(parts)
