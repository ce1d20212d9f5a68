"""``agent(...)``: the friendly way to start a supervised agent run.

It turns names into things — role names into watchers, functions into tools, a path into a
journal, an environment key into an ``AsyncAnthropic`` client — builds the ``AgentRun`` and, when
an event loop is running (a notebook cell, an async test), starts it at once so the caller can
``await run`` later and talk to it meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from watcher.agents._run_config import DEFAULT_MODEL, Boundary, RunConfig
from watcher.agents._sinks import Sink
from watcher.agents._tools import Tool, as_tool
from watcher.agents.run import AgentRun
from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.evaluation import Evaluator
from watcher.core.spec import WatcherSpec
from watcher.evaluators._llm import http_client
from watcher.evaluators.preflight import check_reachable
from watcher.evaluators.registry import make_evaluator
from watcher.roles import spec_for_role
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal, default_journal_path
from watcher.settings import Settings

__all__ = ["RunHost", "WatcherLike", "agent", "make_client", "set_host"]

WatcherLike = str | WatcherSpec | tuple[WatcherSpec, Evaluator]
LONGEST_RETRY_WAIT_S = 60.0  # the longest retry-after an agent run's model calls wait out


class RunHost(Protocol):
    """Where runs start when the caller names no runtime and no loop: a notebook's kernel extension."""

    def agent(self, prompt: str, **options: Any) -> AgentRun:
        """Start ``agent(prompt, **options)`` on the host's runtime, with its watchers and output."""
        ...


_host: RunHost | None = None


def set_host(host: RunHost | None) -> None:
    """Make ``host`` (None: no host) start the runs that name no runtime; ``%load_ext watcher`` calls it."""
    global _host
    _host = host


def make_client(
    *, base_url: str | None = None, api_key: str | None = None, max_retries: int = 2, settings: Settings | None = None
) -> Any:
    """An ``anthropic.AsyncAnthropic`` for ``base_url`` with the key from ``api_key`` or the settings.

    ``settings`` default: the environment, read now (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, ...).
    """
    try:
        import anthropic
    except ImportError as exc:
        raise ConfigurationError("agent runs need the Anthropic SDK: pip install 'watcher-agents[llm]'") from exc
    settings = settings or Settings.from_env()
    key = api_key or (settings.anthropic_key.reveal() if settings.anthropic_key else None)
    if not key and base_url:
        key = "not-needed"  # a local server or gateway named by its URL (a stub, a proxy) takes any key
    if not key:
        raise MissingCredentialsError(
            "an agent run calls the Anthropic Messages API and no key was found: set ANTHROPIC_API_KEY, "
            "or pass api_key= or client=. Offline, point base_url= at watcher.testing.StubAnthropicServer."
        )
    return anthropic.AsyncAnthropic(
        api_key=key,
        base_url=base_url or settings.anthropic_base_url,
        max_retries=max_retries,
        # a rate limit asking for longer than a minute fails the step, saying so, instead of holding
        # the run (and the notebook waiting on it) for as long as the server asks: up to 50 days
        http_client=http_client(anthropic, longest_wait=LONGEST_RETRY_WAIT_S),
    )


def _watchers(
    items: Sequence[WatcherLike], evaluator: str, options: Mapping[str, Any], settings: Settings
) -> tuple[list[tuple[WatcherSpec, Evaluator]], list[Evaluator]]:
    """(spec, evaluator) pairs, and the evaluators built here (the run closes those when it ends)."""
    out: list[tuple[WatcherSpec, Evaluator]] = []
    built: list[Evaluator] = []
    for item in items:
        if isinstance(item, str | WatcherSpec):
            spec = spec_for_role(item) if isinstance(item, str) else item
            built.append(make_evaluator(evaluator, spec.role, **{"settings": settings, **options}))
            out.append((spec, built[-1]))
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], WatcherSpec):
            out.append((item[0], item[1]))
        else:
            raise ConfigurationError(
                f"watchers= takes role names, WatcherSpecs or (spec, evaluator) pairs; got {item!r}"
            )
    names = [spec.name for spec, _ in out]
    if len(set(names)) != len(names):
        raise ConfigurationError(
            f"two watchers share a name in {names}; give them distinct names (spec_for_role(..., name=))"
        )
    return out, built


def _journal(
    journal: Journal | str | os.PathLike[str] | bool | None, settings: Settings
) -> tuple[Journal | None, bool]:
    """(journal, opened here) from what ``journal=`` was given."""
    if journal is None or journal is False:
        return None, False
    if isinstance(journal, Journal):
        return journal, False
    if journal is True:
        return Journal(default_journal_path(settings=settings)), True
    return Journal(journal), True


def agent(
    prompt: str,
    *,
    tools: Sequence[Tool | Callable[..., Any]] = (),
    watchers: Sequence[WatcherLike] = (),
    model: str = DEFAULT_MODEL,
    system: str = "",
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    max_retries: int = 2,
    runtime: Runtime | None = None,
    journal: Journal | str | os.PathLike[str] | bool | None = None,
    max_steps: int = 25,
    max_tokens: int = 4096,
    max_corrections_per_step: int = 3,
    checkpoint_s: float = 30.0,
    evaluator: str = "rules",
    evaluator_options: Mapping[str, Any] | None = None,
    output: Sink | Sequence[Sink] | None = None,
    name: str | None = None,
    cache: bool = True,
    loop: asyncio.AbstractEventLoop | None = None,
    at_boundary: Callable[[Boundary], Awaitable[None]] | None = None,
    settings: Settings | None = None,
) -> AgentRun:
    """Start a supervised agent run; ``result = await run`` waits for it.

    ``watchers`` takes role names (``"security"``, built with ``evaluator``, default the offline
    ``rules``), ``WatcherSpec``s, or ``(spec, evaluator)`` pairs. ``output`` receives every
    ``RunEvent`` (text deltas, tool calls and results, interjections, the final status).
    ``runtime`` shares an existing runtime (a notebook's); otherwise the run makes its own, with
    ``journal`` (a ``Journal``, a path, or True for the project's default journal). With a
    journal, commands written by other processes (accept, dismiss, inject) are applied.
    ``checkpoint_s`` bounds how long each boundary waits for the watchers' verdicts (0: never
    wait). ``loop`` runs the agent on another thread's event loop. ``at_boundary`` is awaited at
    each iteration boundary with the run's ``Boundary`` (steps and tokens so far), before the next
    request takes what the inbox holds. ``settings`` (default: the environment, read now) give the
    key, the server and the default journal for what is not passed.

    In a notebook with ``%load_ext watcher`` (and no ``runtime``/``loop`` given) the run also gets
    the notebook's watchers, runs on the extension's runtime thread, and streams into the cell.
    """
    if _host is not None and runtime is None and loop is None:
        return _host.agent(
            prompt,
            tools=tools,
            watchers=watchers,
            model=model,
            system=system,
            client=client,
            base_url=base_url,
            api_key=api_key,
            max_retries=max_retries,
            journal=journal,
            max_steps=max_steps,
            max_tokens=max_tokens,
            max_corrections_per_step=max_corrections_per_step,
            checkpoint_s=checkpoint_s,
            evaluator=evaluator,
            evaluator_options=evaluator_options,
            output=output,
            name=name,
            cache=cache,
            at_boundary=at_boundary,
            settings=settings,
        )
    if runtime is not None and journal not in (None, False) and journal is not runtime.journal:
        raise ConfigurationError("pass journal= or runtime=, not both: a shared runtime already has its journal")
    settings = settings or Settings.from_env()
    built_watchers, built_evaluators = _watchers(watchers, evaluator, evaluator_options or {}, settings)
    for built in built_evaluators:  # an LLM watcher whose server, key or model will not work: said now,
        check_reachable(built)  # before the run's first (paid) request, not as an error at every step
    owns_client = client is None
    if client is None:
        client = make_client(base_url=base_url, api_key=api_key, max_retries=max_retries, settings=settings)
    built_tools = [as_tool(t) for t in tools]
    built_journal, owns_journal = (runtime.journal, False) if runtime is not None else _journal(journal, settings)
    config = RunConfig(
        name=name or f"agent-{uuid.uuid4().hex[:6]}",
        prompt=prompt,
        model=model,
        system=system,
        tools=MappingProxyType({t.name: t for t in built_tools}),
        max_steps=max_steps,
        max_tokens=max_tokens,
        max_corrections_per_step=max_corrections_per_step,
        checkpoint_s=checkpoint_s,
        cache=cache,
        at_boundary=at_boundary,
    )
    run = AgentRun(
        config, client=client, watchers=built_watchers, runtime=runtime, journal=built_journal, output=output, loop=loop
    )
    # released in reverse order once the run ends, after its runtime closed: evaluators, journal, client
    if owns_client:
        run.release_at_end(client.close)
    if owns_journal and built_journal is not None:
        opened = built_journal
        run.release_at_end(lambda: asyncio.to_thread(opened.close))
    for built in built_evaluators:
        closing = getattr(built, "aclose", None)
        if closing is not None:
            run.release_at_end(closing)
    try:
        asyncio.get_running_loop()
        running = True
    except RuntimeError:
        running = False
    if running or loop is not None:
        run.start()
    return run
