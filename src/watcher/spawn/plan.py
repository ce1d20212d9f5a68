"""Evaluate: the sandbox manifest from the rules, or from an LLM planner when one is configured.

The planner (``anthropic`` or ``openai``, the same SDKs and environment variables as the LLM
evaluators) is asked for one JSON object in the manifest's shape; the answer is validated by
``SandboxManifest.from_dict``. The task is redacted before it is sent. The answer is untrusted:
``Task`` stays denied, and commands the security role would object to are dropped. Any failure
(no SDK, no key, a timeout, an answer that is not a valid manifest) falls back to the rules and
says why in ``Plan.note``.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.redact import redact
from watcher.settings import DEFAULT_OPENAI_PLANNER_MODEL, Settings
from watcher.spawn._adapter import Denial
from watcher.spawn.manifest import DEFAULT_DENIED_TOOLS, SandboxManifest, infer_manifest
from watcher.spawn.recover import Fix, objection

__all__ = ["PLANNERS", "Plan", "plan_manifest"]

PLANNERS = ("anthropic", "openai")
_OBJECT = re.compile(r"\{.*\}", re.S)

PROMPT = """You plan the sandbox of a coding agent that will work on one task in a git worktree.
Answer with one JSON object and nothing else, with these fields:
- readable_paths, writable_paths: glob patterns relative to the repository ("**" for everything)
- allowed_tools: from Read, Write, Edit, Glob, Grep, Bash
- denied_tools: tools the agent must not use (always include "Task")
- allowed_commands: shell command patterns such as "git commit *" or "npm test" (Bash runs only these)
- environment: an object of variable names to values the agent needs (no secrets)
- secrets: names of environment variables holding secrets the task needs (names only)
- complexity: "low", "medium" or "high" (sets the timeouts)
Grant the least the task needs."""


@dataclass(frozen=True, slots=True)
class Plan:
    """The manifest, where it came from (``rules`` or the planner's name), and any note."""

    manifest: SandboxManifest
    source: str
    note: str = ""


async def plan_manifest(
    task: str,
    planner: str | None = None,
    *,
    model: str | None = None,
    timeout_s: float = 60,
    settings: Settings | None = None,
) -> Plan:
    """The manifest for ``task``: by ``planner`` when given (falling back to the rules), else by the rules.

    The planner's key, server and default model come from ``settings`` (default: the environment, read now).
    """
    if planner is None:
        return Plan(infer_manifest(task), "rules")
    if planner not in PLANNERS:
        raise ConfigurationError(f"unknown planner {planner!r}; choose one of {', '.join(PLANNERS)}")
    try:
        async with asyncio.timeout(timeout_s):
            ask = _ask_anthropic if planner == "anthropic" else _ask_openai
            answer = await ask(redact(task), model, settings or Settings.from_env())
        found = _OBJECT.search(answer)
        if found is None:
            raise ValueError("the answer holds no JSON object")
        manifest = SandboxManifest.from_dict(json.loads(found.group(0)))
    except Exception as exc:  # noqa: BLE001 - any planner failure falls back to the rules, saying why
        reason = f"{type(exc).__name__}: {exc}"
        return Plan(
            infer_manifest(task), "rules", f"the {planner} planner failed ({reason[:300]}); the rules planned instead"
        )
    return _tamed(manifest, planner)


def _tamed(manifest: SandboxManifest, planner: str) -> Plan:
    """The planner's manifest without what the security role would refuse, and with Task denied."""
    # a pattern's wildcard may stand for anything, a path outside the worktree included
    dropped = [
        c
        for c in manifest.allowed_commands
        if objection(Fix(commands=(c,)), Denial("Bash", {"command": c.replace("*", "/outside")}), Path.cwd())
    ]
    if "Bash" in manifest.allowed_commands or "*" in manifest.allowed_commands:
        dropped.append("*")
    commands = tuple(c for c in manifest.allowed_commands if c not in dropped and c != "*")
    denied = tuple(dict.fromkeys([*manifest.denied_tools, *DEFAULT_DENIED_TOOLS]))
    note = f"dropped commands the security role objects to: {', '.join(dropped)}" if dropped else ""
    return Plan(replace(manifest, allowed_commands=commands, denied_tools=denied), planner, note)


async def _ask_anthropic(task: str, model: str | None, settings: Settings) -> str:
    import anthropic

    if settings.anthropic_key is None:
        raise MissingCredentialsError(
            "the anthropic planner needs ANTHROPIC_API_KEY; run `export ANTHROPIC_API_KEY=...`"
        )
    client = anthropic.AsyncAnthropic(
        api_key=settings.anthropic_key.reveal(), base_url=settings.anthropic_base_url, max_retries=1
    )
    try:
        message = await client.messages.create(
            model=model or settings.anthropic_model,
            max_tokens=1024,
            system=PROMPT,
            messages=[{"role": "user", "content": f"Task:\n{task}"}],
        )
    finally:
        await client.close()
    return "".join(getattr(block, "text", "") for block in message.content)


async def _ask_openai(task: str, model: str | None, settings: Settings) -> str:
    import openai

    key = settings.openai_key.reveal() if settings.openai_key else "local"  # a local server takes any key
    client = openai.AsyncOpenAI(base_url=settings.openai_base_url, api_key=key, max_retries=1)
    try:
        answer: Any = await client.chat.completions.create(
            model=model or settings.openai_model or DEFAULT_OPENAI_PLANNER_MODEL,
            messages=[{"role": "system", "content": PROMPT}, {"role": "user", "content": f"Task:\n{task}"}],
        )
    finally:
        await client.close()
    return str(answer.choices[0].message.content or "")
