"""The Anthropic evaluator: a watcher that judges with Claude through the official async SDK.

The evaluation prompt is split where it is stable: the static part (identity, authority, brief,
instructions) is the system prompt, marked ``cache_control: ephemeral``, so consecutive
evaluations of one watcher share a byte-identical, cached prefix; the activity (recent
observations inside a fresh random fence) is the user turn. Everything sent is redacted first.
Tokens, cache reads and writes and a cost estimate are returned with the decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import anthropic

from watcher.core.evaluation import EvaluationResult, Evaluator, Usage
from watcher.core.protocol import EvaluationPrompt
from watcher.evaluators._keys import anthropic_key, check_limits, checked_base_url, checked_model, known_secrets
from watcher.evaluators._llm import (
    DEFAULT_PROMPT_BUDGET,
    DEFAULT_RECENT,
    MAX_RESPONSE_BYTES,
    Context,
    EvaluationError,
    answered_model,
    checked_decision,
    cost_usd,
    http_client,
    tokens,
)
from watcher.evaluators._llm_base import Counter, LLMEvaluator
from watcher.settings import DEFAULT_WATCHER_MODEL, Settings

__all__ = ["DEFAULT_ANTHROPIC_MODEL", "AnthropicEvaluator", "EvaluationError"]

DEFAULT_ANTHROPIC_MODEL = DEFAULT_WATCHER_MODEL
_BASE_URL_HINT = "the Anthropic SDK adds /v1/messages itself, so the base URL has no /v1"


class AnthropicEvaluator(LLMEvaluator):
    """Evaluates with an Anthropic model (default ``claude-haiku-4-5``, or ``WATCHER_ANTHROPIC_MODEL``).

    ``base_url`` points at another Messages-API server (a local gateway, a stub). What is not
    given comes from ``settings`` (default: read from the environment now).
    """

    provider: ClassVar[str] = "anthropic"
    api: ClassVar[str] = "Anthropic Messages API"
    counts: ClassVar[bool] = True  # ``messages.count_tokens``
    sdk: ClassVar[ModuleType] = anthropic
    key_variable: ClassVar[str] = "ANTHROPIC_API_KEY"
    model_variable: ClassVar[str] = "WATCHER_ANTHROPIC_MODEL"

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 1024,
        timeout: float = 30.0,
        max_retries: int = 1,
        recent: int = DEFAULT_RECENT,
        context: Context = "minimal",
        prompt_budget: int | None = DEFAULT_PROMPT_BUDGET,
        counter: Counter = "provider",
        worktree: Path | None = None,
        settings: Settings | None = None,
        backstop: Evaluator | None = None,
    ) -> None:
        settings = settings or Settings.from_env()
        check_limits(
            timeout=timeout,
            max_tokens=max_tokens,
            max_retries=max_retries,
            recent=recent,
            prompt_budget=prompt_budget,
            context=context,
        )
        chosen = checked_model(model or settings.anthropic_model, self.model_variable)
        base_url = base_url or settings.anthropic_base_url
        base_url = checked_base_url(base_url) if base_url else None
        key = anthropic_key(api_key, settings)
        client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client(anthropic, longest_wait=timeout, max_body_bytes=MAX_RESPONSE_BYTES),
        )
        super().__init__(
            model=chosen,
            client=client,
            where=base_url or str(client.base_url),
            max_tokens=max_tokens,
            timeout=timeout,
            max_retries=max_retries,
            recent=recent,
            context=context,
            prompt_budget=prompt_budget,
            counter=counter,
            worktree=worktree,
            secrets=known_secrets(settings.environ, key),
            backstop=backstop,
        )

    async def check_model(self, client: Any) -> Sequence[str] | None:
        """The Models API's word on ``model`` (aliases included); after a 404, the models it lists.

        A gateway without the Models API answers the list with 404 too, which the caller takes
        as a server that cannot say; a base URL ending in ``/v1`` whose server answers without it
        is refused (the SDK adds ``/v1/messages`` itself: every evaluation would get 404).
        """
        try:
            await client.models.retrieve(self.model)
            return None
        except anthropic.NotFoundError:
            pass
        try:
            page = await client.models.list(limit=1000)
        except anthropic.NotFoundError:
            base = str(self.client.base_url).rstrip("/")
            if base.endswith("/v1"):
                await self.refuse_if_served_at(client, base.removesuffix("/v1"), _BASE_URL_HINT)
            raise
        listed = [str(m.id) for m in page.data]
        return None if self.model in listed else listed

    def body(self, prompt: EvaluationPrompt) -> dict[str, Any]:
        """The Messages-API arguments for ``prompt``: cached static system prompt, activity as the user turn."""
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": [{"type": "text", "text": prompt.static, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": prompt.activity}],
        }

    async def _count(self, body: dict[str, Any]) -> int:
        counted = await self.client.messages.count_tokens(
            model=body["model"], system=body["system"], messages=body["messages"]
        )
        return int(counted.input_tokens)

    async def _send(self, body: dict[str, Any]) -> Any:
        return await self.client.messages.create(**body)

    def _result(self, body: dict[str, Any], answer: Any) -> EvaluationResult:
        raw = "".join(block.text for block in answer.content if block.type == "text")
        u = answer.usage
        usage = Usage(
            input_tokens=tokens(u.input_tokens),
            output_tokens=tokens(u.output_tokens),
            cache_read_tokens=tokens(u.cache_read_input_tokens),
            cache_write_tokens=tokens(u.cache_creation_input_tokens),
        )
        model = answered_model(answer.model, self.model)
        return EvaluationResult(
            raw=raw,
            decision=checked_decision(raw, stop_reason=answer.stop_reason),
            usage=usage,
            cost_usd=cost_usd(model, usage),
            model=model,
            prompt=f"{body['system'][0]['text']}\n\n{body['messages'][0]['content']}",
        )
