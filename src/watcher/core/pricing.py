"""What model calls cost: dollars per million tokens by model family, and the estimate for a usage.

Used for LLM evaluations and for the tokens a fleet's tasks spend (``watcher fleet status``).
"""

from __future__ import annotations

from watcher.core.evaluation import Usage

__all__ = ["PRICES", "cost_usd"]


# $ per million tokens: (input, output, 5-minute cache write, cache read), matched by model-name
# substring, most specific first. Sources: research/anchors-llm-clients.md §5 (Anthropic pricing
# page and model overviews); cache write is 1.25x input and cache read 0.1x input where the page
# gives no figure. Models not listed (local servers) cost 0.
PRICES: tuple[tuple[str, tuple[float, float, float, float]], ...] = (
    ("haiku-5", (0.10, 0.50, 0.125, 0.01)),
    ("haiku-4", (1.0, 5.0, 1.25, 0.10)),
    ("haiku-3-5", (0.80, 4.0, 1.0, 0.08)),
    ("sonnet-5", (2.0, 10.0, 2.5, 0.10)),
    ("sonnet-4", (3.0, 15.0, 3.75, 0.30)),
    ("opus-5", (4.0, 20.0, 5.0, 0.20)),
    ("opus-4-5", (5.0, 25.0, 6.25, 0.50)),
    ("opus-4-6", (5.0, 25.0, 6.25, 0.50)),
    ("opus-4", (15.0, 75.0, 18.75, 1.50)),
    ("fable-5", (10.0, 50.0, 12.5, 0.25)),
)


def cost_usd(model: str, usage: Usage) -> float:
    """The estimated cost of ``usage`` on ``model`` in dollars (0 for models not in ``PRICES``)."""
    name = model.lower()
    for family, (inp, out, write, read) in PRICES:
        if family in name:
            total = (
                usage.input_tokens * inp
                + usage.output_tokens * out
                + usage.cache_write_tokens * write
                + usage.cache_read_tokens * read
            )
            return total / 1_000_000
    return 0.0
