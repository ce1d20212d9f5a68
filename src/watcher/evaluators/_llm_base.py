"""``LLMEvaluator``: the one base of the LLM evaluators (Anthropic Messages, OpenAI-compatible chat).

A subclass resolves its model, key and server, builds its SDK client, and says how a request
body is built from a redacted prompt, how the SDK is called and how its answer becomes an
``EvaluationResult``. The base keeps the shared settings, the name (``provider:model``), the call
(``evaluate`` for a watcher's request, ``ask`` for a prompt formatted elsewhere, such as the
fleet's health prompt) with its error translation (an SDK failure becomes an ``EvaluationError``
that says what failed and where; the engine journals it and continues) and the client's lifetime.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from types import ModuleType
from typing import Any, ClassVar

from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult
from watcher.core.protocol import EvaluationPrompt
from watcher.core.redact import redact
from watcher.evaluators._llm import DEFAULT_RECENT, Context, describe_failure, minimal_context

__all__ = ["LLMEvaluator"]


class LLMEvaluator(ABC):
    """An evaluator that asks a language model through its official async SDK.

    ``recent`` is how many observations are sent verbatim (older ones become a digest) unless
    ``context="full"``; ``max_retries`` stays low because a watcher that waits is worse than one
    that skips a turn.
    """

    provider: ClassVar[str]
    sdk: ClassVar[ModuleType]  # ``anthropic`` or ``openai``: they share their exception tree

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
    ) -> None:
        self.model = model
        self.client = client
        self.where = where
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.recent = recent
        self.context: Context = context
        self.name = f"{self.provider}:{model}"

    def prompt(self, request: EvaluationRequest) -> EvaluationPrompt:
        """The evaluation prompt for ``request``, both parts redacted (nothing secret leaves)."""
        prompt = minimal_context(request, recent=self.recent, context=self.context).prompt()
        return replace(prompt, static=redact(prompt.static), activity=redact(prompt.activity))

    def request_body(self, request: EvaluationRequest) -> dict[str, Any]:
        """The SDK call's arguments for ``request``."""
        return self.body(self.prompt(request))

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
        """Ask the model about ``request``; raises ``EvaluationError`` when the call fails."""
        return await self._call(self.request_body(request))

    async def ask(self, prompt: EvaluationPrompt) -> EvaluationResult:
        """Ask the model with a prompt formatted elsewhere (redacted here); raises ``EvaluationError`` on failure."""
        return await self._call(
            self.body(replace(prompt, static=redact(prompt.static), activity=redact(prompt.activity)))
        )

    async def _call(self, body: dict[str, Any]) -> EvaluationResult:
        try:
            answer = await self._send(body)
        except self.sdk.APIError as exc:
            raise EvaluationError(
                describe_failure(
                    self.sdk, exc, who=self.name, where=self.where, timeout=self.timeout, retries=self.max_retries
                )
            ) from exc
        return self._result(body, answer)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()
