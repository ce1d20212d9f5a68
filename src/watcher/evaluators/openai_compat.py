"""The OpenAI-compatible evaluator: a watcher judging with a model behind LM Studio, Ollama or vLLM.

A watcher can run on a second model loaded in the same local server: ``base_url`` and
``model`` (its ``--watcher-base-url`` and ``--watcher-model``) are all it needs. Local servers
take any key, so none is required when a ``base_url`` is given. The static prompt is the system
message and the activity the user message, so servers with automatic prefix caching reuse it;
cached prompt tokens they report are recorded as cache reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import openai

from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.evaluation import EvaluationResult, Evaluator, Usage
from watcher.core.protocol import EvaluationPrompt
from watcher.evaluators._keys import check_limits, checked_base_url, checked_key, checked_model, known_secrets
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
from watcher.settings import Settings

__all__ = ["EvaluationError", "OpenAICompatEvaluator"]

_FINISH_TO_STOP = {"length": "max_tokens", "content_filter": "refusal"}


class OpenAICompatEvaluator(LLMEvaluator):
    """Evaluates with a chat-completions model at ``base_url`` (or ``WATCHER_OPENAI_BASE_URL``).

    ``model`` defaults to ``WATCHER_OPENAI_MODEL``; one of them is required. The key is
    ``api_key``, else ``OPENAI_API_KEY``, else ``"not-needed"`` when a base URL is set. What is
    not given comes from ``settings`` (default: read from the environment now).
    """

    provider: ClassVar[str] = "openai"
    api: ClassVar[str] = "OpenAI chat-completions API"
    sdk: ClassVar[ModuleType] = openai
    key_variable: ClassVar[str] = "OPENAI_API_KEY"
    model_variable: ClassVar[str] = "WATCHER_OPENAI_MODEL"

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
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
        chosen = model or settings.openai_model
        if not chosen:
            raise ConfigurationError(
                "the openai evaluator needs a model name: pass --model (--watcher-model with watcher bench; model= in "
                "Python) "
                "or run `export WATCHER_OPENAI_MODEL=<model id loaded in your server>`"
            )
        chosen = checked_model(chosen, self.model_variable)
        base_url = base_url or settings.openai_base_url
        base_url = checked_base_url(base_url) if base_url else None
        if api_key:
            key: str | None = checked_key(api_key, "the openai evaluator's api_key")
        elif settings.openai_key:
            key = checked_key(settings.openai_key.reveal(), "OPENAI_API_KEY")
        else:
            key = "not-needed" if base_url else None
        if not key:
            raise MissingCredentialsError(
                "the openai evaluator needs OPENAI_API_KEY for api.openai.com; run `export OPENAI_API_KEY=...`, "
                "or give a local server's base URL (e.g. --watcher-base-url http://localhost:1234/v1), which needs no key"
            )
        client = openai.AsyncOpenAI(
            api_key=key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client(openai, longest_wait=timeout, max_body_bytes=MAX_RESPONSE_BYTES),
        )
        super().__init__(
            model=chosen,
            client=client,
            where=str(client.base_url),
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
        """None when ``GET /v1/models`` lists ``model`` (Ollama's ``:latest`` tag aside) or lists nothing.

        A model the list lacks is asked for by name (an alias may be served unlisted). A key
        that may not list models (403: an OpenAI key restricted to chat) cannot say: None. A base
        URL without ``/v1`` whose server answers with it is refused (every evaluation would get 404).
        """
        try:
            page = await client.models.list()
        except openai.PermissionDeniedError:
            return None
        except openai.NotFoundError:
            base = str(self.client.base_url).rstrip("/")
            if not base.endswith("/v1"):
                await self.refuse_if_served_at(
                    client, f"{base}/v1", "an OpenAI-compatible base URL usually ends in /v1"
                )
            raise
        listed = [str(m.id) for m in page.data]
        names = {self.model, f"{self.model}:latest", self.model.removesuffix(":latest")}
        if not listed or names & set(listed):
            return None
        try:
            await client.models.retrieve(self.model)
        except openai.NotFoundError:
            return listed
        return None

    def body(self, prompt: EvaluationPrompt) -> dict[str, Any]:
        """The chat-completions arguments for ``prompt``: static system message, activity as the user message."""
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [
                {"role": "system", "content": prompt.static},
                {"role": "user", "content": prompt.activity},
            ],
        }

    async def _send(self, body: dict[str, Any]) -> Any:
        return await self.client.chat.completions.create(**body)

    def _result(self, body: dict[str, Any], answer: Any) -> EvaluationResult:
        if not answer.choices:
            raise EvaluationError(f"{self.name}: {self.where} answered with no choices")
        choice = answer.choices[0]
        raw = _text(choice.message.content)
        if raw is None:
            raise EvaluationError(
                f"{self.name}: {self.where} answered with something that is not an answer of the {self.api} (its "
                f"message content is {type(choice.message.content).__name__}); check that the base URL serves the {self.api}"
            )
        usage = Usage()
        if answer.usage is not None:
            details = answer.usage.prompt_tokens_details
            cached = tokens(getattr(details, "cached_tokens", 0))
            usage = Usage(  # a local server may leave counts out: they are unknown, not an error
                input_tokens=max(tokens(answer.usage.prompt_tokens) - cached, 0),
                output_tokens=tokens(answer.usage.completion_tokens),
                cache_read_tokens=cached,
            )
        model = answered_model(answer.model, self.model)
        return EvaluationResult(
            raw=raw,
            decision=checked_decision(raw, stop_reason=_FINISH_TO_STOP.get(choice.finish_reason or "")),
            usage=usage,
            cost_usd=cost_usd(model, usage),
            model=model,
            prompt="\n\n".join(m["content"] for m in body["messages"]),
        )


def _text(content: Any) -> str | None:
    """A message's text: a string, or (some servers, e.g. Mistral's) a list of parts whose text parts are joined.

    None when the content is neither (a number, an object): not a chat answer.
    """
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    if content is None or isinstance(content, str):
        return content or ""
    return None
