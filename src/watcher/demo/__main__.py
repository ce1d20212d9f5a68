"""``make demo``: replay the example sessions through the offline watchers and show what they did."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from watcher.agents.replay import replay
from watcher.cli._replay import DEFAULT_REPLAY_ROLES
from watcher.core.protocol import describe_observation
from watcher.evaluators.registry import make_evaluator
from watcher.roles import spec_for_role
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer
from watcher.transcripts import read_transcript

__all__ = ["main"]

DATA = Path(__file__).resolve().parents[3] / "example_notebooks" / "data"

SESSIONS = (
    (
        "agent_writes_vulnerable_code.jsonl",
        "An agent writes a login() with an injectable query, a hard-coded key, and pipes a download into a shell",
    ),
    ("agent_stuck_in_loop.jsonl", "An agent re-runs the same failing test over and over"),
    ("notebook_error_loop.jsonl", "A notebook cell keeps raising the same KeyError"),
)


async def _show(path: Path, title: str) -> None:
    observations = read_transcript(path)
    watchers = [(spec_for_role(role), make_evaluator("rules", role)) for role in DEFAULT_REPLAY_ROLES]
    result = await replay(observations, watchers, session=path.stem)
    print(
        f"\n=== {title}\n    ({path.name}: {len(observations)} observations, watchers: {', '.join(DEFAULT_REPLAY_ROLES)}, offline rules)"
    )
    for index, obs in enumerate(observations):
        line = " ⏎ ".join(describe_observation(obs).splitlines()[:2])
        print(f"  {index:>3} {line[:100]}")
        for event in (e for e in result.evaluations if e.index == index and e.interjection):
            i = event.interjection
            assert i is not None
            where = f" @ {', '.join(loc.render() for loc in i.locations)}" if i.locations else ""
            urgency = "URGENT " if i.urgent else ""
            print(f"      >> {event.watcher} interjects ({urgency}{i.severity}, {i.action}{where}):")
            for text_line in i.content.splitlines():
                print(f"         {text_line}")
    print(
        f"    -> {len(result.evaluations)} evaluations, {result.interjections} interjections, {result.delivered} delivered"
    )


def _scripted_model() -> Reply:
    """A stand-in for Claude that answers the evaluation protocol: it is a script, not a model."""
    said: set[str] = set()

    def answer(request: RecordedRequest) -> Reply:
        activity = json.dumps((request.body or {}).get("messages", []))
        if "${username}" in activity and "login" not in said:
            said.add("login")
            return Reply.text(
                "The agent wrote an injectable query.\n[INTERJECT]\nurgent: true\nseverity: critical\n"
                "location: auth.js:4-5\ncontent: login() splices username and password into the SQL: "
                "anyone can log in with ' OR '1'='1. Use placeholders and pass the values separately.\n[/INTERJECT]"
            )
        return Reply.text("[CONTINUE]\nNothing new of concern.\n[/CONTINUE]")

    return Reply.dynamic(answer)


async def _show_llm(path: Path) -> None:
    observations = read_transcript(path)
    model = _scripted_model()  # one script, reused for every request
    with StubAnthropicServer(*[model] * len(observations)) as stub:
        evaluator = make_evaluator("anthropic", "security", base_url=stub.base_url, api_key="scripted-demo-key")
        result = await replay(observations, [(spec_for_role("security"), evaluator)], session=path.stem)
        await _close(evaluator)
        sent = len(stub.requests)  # what the real SDK sent, as the stub recorded it
    print(
        f"\n=== The same agent session judged by an LLM watcher over the Anthropic Messages API\n"
        f"    (SCRIPTED: a local stub server answers the real anthropic SDK; set ANTHROPIC_API_KEY and run\n"
        f"     `watcher replay {path.relative_to(DATA.parents[1])} --evaluator anthropic` for Claude itself)"
    )
    for event in result.evaluations:
        i = event.interjection
        verdict = f"INTERJECT ({'urgent ' if i.urgent else ''}{i.severity}): {i.content}" if i else "continue"
        print(
            f"  #{event.index:>2} {verdict[:110]}\n"
            f"      tokens in {event.input_tokens}, out {event.output_tokens}, cache read {event.cache_read_tokens}, "
            f"cache write {event.cache_write_tokens}; ${event.cost_usd:.5f}"
        )
    print(f"    -> {sent} requests sent through the anthropic SDK; the cached prefix was written once, then read")


async def _close(evaluator: object) -> None:
    close = getattr(evaluator, "aclose", None)
    if close is not None:
        await close()


def main() -> int:
    """Replay every example session, then one through a scripted LLM watcher."""
    print("watcher demo: offline watchers replaying recorded sessions (no API key needed)")
    for name, title in SESSIONS:
        asyncio.run(_show(DATA / name, title))
    asyncio.run(_show_llm(DATA / SESSIONS[0][0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
