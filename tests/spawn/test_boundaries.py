"""What each CLI adapter reads of its stream for a fleet: the tokens of each model response, and its iteration boundaries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from watcher.spawn import adapter_for

CASES = json.loads((Path(__file__).parent / "data" / "boundary_cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_usage_and_boundaries_per_record(case: dict[str, Any]) -> None:
    adapter = adapter_for(case["agent"])
    usage = [adapter.usage(r) for r in case["records"]]
    boundary = [adapter.boundary(r) for r in case["records"]]
    assert [list(u) if u else None for u in usage] == case["usage"]
    assert boundary == case["boundary"]
