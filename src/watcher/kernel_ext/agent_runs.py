"""Agent runs started in a notebook: ``run = watcher.agent(...)``, then ``await run``.

With the extension loaded, a run shares the notebook's runtime and runs on the runtime thread's
loop, so it goes on in the background while cells run (``await run`` in a later cell waits for
it, without ``nest_asyncio``). It gets the notebook's watchers (their panels show its
observations and its pending interjections, whose Inject button delivers into the run), and its
output streams into the cell that started it through a ``RunOutput`` widget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from IPython.display import display

from watcher.agents import AgentRun, agent
from watcher.core.evaluation import Evaluator
from watcher.core.spec import WatcherSpec
from watcher.runtime.hub import Runtime
from watcher.widgets.run_output import RunOutput

__all__ = ["notebook_agent"]


def _watcher_name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    spec = item[0] if isinstance(item, tuple) else item
    return getattr(spec, "name", None)


def notebook_agent(
    prompt: str,
    *,
    inherited: Sequence[tuple[WatcherSpec, Callable[[], Evaluator]]],
    runtime: Runtime,
    loop: asyncio.AbstractEventLoop,
    **options: Any,
) -> AgentRun:
    """Start an agent run on the notebook's runtime and loop, with the notebook's watchers attached.

    ``inherited`` are the notebook's watchers (each with a factory of a fresh evaluator); one the
    caller names in ``watchers=`` takes the place of the notebook's of the same name.
    """
    own: Sequence[Any] = options.pop("watchers", ())
    taken = {_watcher_name(item) for item in own}
    watchers = [*((spec, make()) for spec, make in inherited if spec.name not in taken), *own]
    output = RunOutput(title=prompt[:60])
    sinks = options.pop("output", None)
    extra = [] if sinks is None else [sinks] if callable(sinks) else list(sinks)
    run = agent(prompt, watchers=watchers, output=[output, *extra], runtime=runtime, loop=loop, **options)
    display(output.widget)  # type: ignore[no-untyped-call]
    return run
