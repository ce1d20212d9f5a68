"""The world generator: chains are solvable, distractors never lie about the final token, seeds reproduce."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from watcher.bench.world import generate_world, parse_pointer, solve
from watcher.core.errors import ConfigurationError


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10_000), task=st.integers(0, 500), length=st.integers(1, 16), distractors=st.integers(0, 6))
def test_every_chain_is_solvable_from_contents_and_listings(
    seed: int, task: int, length: int, distractors: int
) -> None:
    world = generate_world(seed, task, length, distractors)
    reads, token = solve(world)
    assert reads == list(world.chain)
    assert token == world.token
    assert len(set(world.chain)) == length


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 16), distractors=st.integers(0, 6))
def test_distractors_never_lie_about_the_final_token(seed: int, length: int, distractors: int) -> None:
    world = generate_world(seed, 0, length, distractors)
    chain = set(world.chain)
    for path, content in world.files.items():
        if path in chain:
            continue
        pointer = parse_pointer(content)
        assert "FINAL TOKEN" not in content and world.token not in content, path
        assert pointer is None or pointer.kind != "final", path
        if pointer is not None and pointer.kind == "direct":
            assert pointer.value not in chain, f"{path} points back into the chain"
    # only the last chain file carries the token
    assert [p for p in world.chain if "FINAL TOKEN" in world.files[p]] == [world.chain[-1]]


def test_distractors_are_there_when_asked_for() -> None:
    world = generate_world(3, 1, 8, 3)
    assert len(world.files) - len(world.chain) >= 8
    assert any("[ARCHIVED]" in c for c in world.files.values())
    assert len(generate_world(3, 1, 8, 0).files) == 8


def test_some_pointers_are_indirect() -> None:
    kinds = {
        parse_pointer(w.files[p]).kind  # type: ignore[union-attr]
        for w in (generate_world(s, 0, 10, 3) for s in range(20))
        for p in w.chain
    }
    assert kinds == {"direct", "indirect", "final"}


def test_seeds_reproduce_and_differ() -> None:
    assert generate_world(7, 2, 6, 3) == generate_world(7, 2, 6, 3)
    assert generate_world(7, 2, 6, 3).files != generate_world(8, 2, 6, 3).files
    assert generate_world(7, 2, 6, 3).files != generate_world(7, 3, 6, 3).files


def test_a_chain_needs_a_file() -> None:
    with pytest.raises(ConfigurationError, match="--chain-length"):
        generate_world(0, 0, 0, 3)
