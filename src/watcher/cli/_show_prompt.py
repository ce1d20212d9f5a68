"""``watcher replay --show-prompt N``: the exact request evaluation N would send, without calling the model.

The replay runs as usual, with one watcher whose evaluator answers *continue* without calling
anyone; at its Nth evaluation it builds the request body the LLM evaluator would send (minimal
context, redaction, the prompt budget) and keeps it. No key is needed: without one the prompt
budget is measured with the estimate rather than the provider's counter, and the output says so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from watcher.core.answers import render_decision
from watcher.core.errors import ConfigurationError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult
from watcher.core.interjection import Continue
from watcher.core.terminal import for_terminal, json_for_terminal
from watcher.settings import Settings

if TYPE_CHECKING:
    from watcher.evaluators.anthropic import AnthropicEvaluator
    from watcher.evaluators.openai_compat import OpenAICompatEvaluator

    LLMEvaluator = AnthropicEvaluator | OpenAICompatEvaluator

__all__ = ["PromptCapture", "prompt_evaluator", "show"]

_NO_KEY = "no-key-the-prompt-is-only-shown"


def prompt_evaluator(
    name: str, settings: Settings, *, model: str | None, base_url: str | None, **options: Any
) -> LLMEvaluator:
    """The LLM evaluator ``name`` as it would run, built without needing a key (it will not be called)."""
    if name == "anthropic":
        from watcher.evaluators.anthropic import AnthropicEvaluator

        has_key = settings.anthropic_key is not None
        return AnthropicEvaluator(
            model=model,
            base_url=base_url,
            api_key=None if has_key else _NO_KEY,  # the settings' key is checked and named as its variable
            counter="provider" if has_key else "estimate",
            max_retries=0,
            settings=settings,
            **options,
        )
    if name == "openai":
        from watcher.evaluators.openai_compat import OpenAICompatEvaluator

        chosen = model or settings.openai_model or "MODEL"
        key = None if settings.openai_key else _NO_KEY  # the settings' key is checked and named as its variable
        return OpenAICompatEvaluator(model=chosen, base_url=base_url, api_key=key, settings=settings, **options)
    raise ConfigurationError(
        f"--show-prompt shows what an LLM evaluator sends; give --evaluator anthropic or openai, not {name!r}"
    )


class PromptCapture:
    """An evaluator that answers *continue* and keeps the request body of evaluation ``wanted`` (1-based)."""

    def __init__(self, llm: LLMEvaluator, wanted: int) -> None:
        self.llm = llm
        self.wanted = wanted
        self.name = llm.name
        self.seen = 0
        self.body: dict[str, Any] | None = None
        self.request: EvaluationRequest | None = None
        self.tokens = 0
        self.failure: Exception | None = None  # why the wanted request could not be built

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        self.seen += 1
        if self.seen == self.wanted:
            self.request = request
            try:
                self.body, self.tokens = await self.llm.preview(request)
            except Exception as exc:  # the engine records it as a failed evaluation; show() says why
                self.failure = exc
                raise
        decision = Continue(note="(prompt shown only; the model was not called)")
        return EvaluationResult(render_decision(decision), decision)


def show(capture: PromptCapture, *, as_json: bool) -> str:
    """The captured request: its JSON body (``as_json``), else a header and each part as text.

    Either is fit for a terminal: the observed text the prompt quotes may hold control sequences,
    which the JSON escapes (``\\u001b``, read back exactly) and the text shows as code points.
    """
    if capture.failure is not None:
        raise ConfigurationError(
            f"--show-prompt {capture.wanted}: evaluation {capture.wanted} of this watcher could not build its "
            f"request ({capture.failure})"
        )
    if capture.body is None or capture.request is None:
        raise ConfigurationError(
            f"--show-prompt {capture.wanted}: the replay made {capture.seen} evaluation"
            f"{'s' if capture.seen != 1 else ''} of this watcher; choose N from 1 to {capture.seen}"
        )
    body = capture.body
    if as_json:
        return json_for_terminal(json.dumps(body, ensure_ascii=False, indent=2))
    request = capture.request
    how = "counted by the provider" if capture.llm.counter == "provider" else "estimated"
    budget = capture.llm.prompt_budget
    lines = [
        f"# evaluation {capture.wanted} of watcher {request.spec.name!r}: observation {request.index} "
        f"({request.breakpoint}), {capture.llm.name}",
        f"# {capture.tokens} prompt tokens ({how}); budget {budget if budget is not None else 'none'}",
    ]
    system = body.get("system")
    if system is not None:
        cached = " (cache_control: ephemeral)" if any(b.get("cache_control") for b in system) else ""
        lines += [f"=== system{cached} ===", "\n".join(block["text"] for block in system)]
    for message in body["messages"]:
        lines += [f"=== {message['role']} ===", message["content"]]
    return for_terminal("\n".join(lines))
