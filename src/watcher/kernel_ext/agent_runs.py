"""Agent runs started in a notebook: ``run = watcher.agent(...)``, then ``await run``.

With the extension loaded, a run shares the notebook's runtime and runs on the runtime thread's
loop, so it goes on in the background while cells run (``await run`` in a later cell waits for
it, without ``nest_asyncio``). It gets the notebook's watchers (their panels show its
observations and its pending interjections, whose Inject button delivers into the run), and its
output streams into the cell that started it through a ``RunOutput`` widget.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from IPython.display import display

from watcher.kernel_ext.extension import KernelExtension
from watcher.widgets.run_output import RunOutput

__all__ = ["notebook_agent"]


def _watcher_name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    spec = item[0] if isinstance(item, tuple) else item
    return getattr(spec, "name", None)


def notebook_agent(ext: KernelExtension, prompt: str, **options: Any) -> Any:
    """Start an agent run on the notebook's runtime thread with the notebook's watchers attached."""
    agents = importlib.import_module("watcher.agents")
    own: Sequence[Any] = options.pop("watchers", ())
    taken = {_watcher_name(item) for item in own}
    inherited = [
        (a.spec, a.make_evaluator()) for a in list(ext.attached.values()) if not a.one_cell and a.spec.name not in taken
    ]
    output = RunOutput(title=prompt[:60])
    sinks = options.pop("output", None)
    extra = [] if sinks is None else [sinks] if callable(sinks) else list(sinks)
    options.setdefault("runtime", ext.runtime)
    options.setdefault("loop", ext.thread.loop)
    run = agents.agent(prompt, watchers=[*inherited, *own], output=[output, *extra], **options)
    ext.agent_sessions.append(run)
    display(output.widget)  # type: ignore[no-untyped-call]
    return run
