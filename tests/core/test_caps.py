"""A watcher's caps are checked when they are made: a value no evaluation could keep to is refused by name."""

from __future__ import annotations

import math

import pytest

from watcher.core.errors import ConfigurationError
from watcher.core.spec import Caps


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": -1.0}, "timeout_s"),
        ({"timeout_s": math.nan}, "timeout_s"),
        ({"timeout_s": math.inf}, "timeout_s"),
        ({"cooldown_s": -0.5}, "cooldown_s"),
        ({"cooldown_s": math.nan}, "cooldown_s"),
        ({"buffer_size": 0}, "buffer_size"),
        ({"max_interjections_per_turn": True}, "max_interjections_per_turn"),
        ({"max_interjections_per_turn": 1.5}, "max_interjections_per_turn"),
    ],
)
def test_a_cap_no_evaluation_could_keep_is_refused_by_name(given: dict[str, float], named: str) -> None:
    with pytest.raises(ConfigurationError, match=f"a watcher's {named} must be"):
        Caps(**given)  # type: ignore[arg-type]


def test_the_defaults_and_small_real_values_are_kept() -> None:
    assert Caps().timeout_s == 60.0
    assert Caps(timeout_s=0.05, cooldown_s=0, buffer_size=1, max_interjections_per_turn=1).timeout_s == 0.05
