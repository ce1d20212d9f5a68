"""``make demo``: replay the example sessions through the offline watchers and show what they did."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from watcher.agents.replay import replay
from watcher.agents.transcripts import read_transcript
from watcher.cli import DEFAULT_REPLAY_ROLES
from watcher.core.protocol import describe_observation
from watcher.evaluators.registry import make_evaluator
from watcher.roles import spec_for_role

__all__ = ["main"]

DATA = Path(__file__).resolve().parents[2] / "example_notebooks" / "data"

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
    said = {e.index: e for e in result.evaluations if e.interjection}
    for index, obs in enumerate(observations):
        line = describe_observation(obs).splitlines()[0]
        print(f"  {index:>3} {line[:100]}")
        for event in (e for e in result.evaluations if e.index == index and e.interjection):
            i = event.interjection
            assert i is not None
            where = f" @ {', '.join(loc.render() for loc in i.locations)}" if i.locations else ""
            urgency = "URGENT " if i.urgent else ""
            print(f"      >> {event.watcher} interjects ({urgency}{i.severity}, {i.action}{where}):")
            for text_line in i.content.splitlines():
                print(f"         {text_line}")
    print(f"    -> {len(result.evaluations)} evaluations, {len(said)} with interjections, {result.delivered} delivered")


def main() -> int:
    """Replay every example session."""
    print("watcher demo: offline watchers replaying recorded sessions (no API key needed)")
    for name, title in SESSIONS:
        asyncio.run(_show(DATA / name, title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
