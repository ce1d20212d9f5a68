"""The public surface is deliberate: ``__all__`` lists (kept sorted by ruff's RUF022), locked here."""

from __future__ import annotations

import importlib

import pytest

import watcher

PUBLIC = {
    "watcher": [
        "Interjection",
        "Location",
        "WatcherError",
        "format_evaluation_prompt",
        "history",
        "parse_interjection",
    ],
}


def test_root_exports() -> None:
    assert len(set(watcher.__all__)) == len(watcher.__all__)
    assert set(PUBLIC["watcher"]) <= set(watcher.__all__)
    for name in watcher.__all__:
        assert getattr(watcher, name) is not None


@pytest.mark.parametrize(
    "module",
    [
        "watcher.runtime",
        "watcher.evaluators",
        "watcher.agents",
        "watcher.bench",
        "watcher.core.errors",
        "watcher.core.protocol",
        "watcher.core.interjection",
    ],
)
def test_subpackage_all_is_sorted_and_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    assert len(set(mod.__all__)) == len(mod.__all__)
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.{name}"


def test_parse_interjection_is_the_protocol_parser() -> None:
    found = watcher.parse_interjection("[INTERJECT]\nurgent: true\ncontent: hi\n[/INTERJECT]")
    assert found is not None and found.urgent is True and found.content == "hi"


def test_core_imports_no_framework() -> None:
    import subprocess
    import sys

    code = "import sys, watcher.core.protocol, watcher.core.rules, watcher.core.evaluation, watcher.core.redact; bad = {'IPython','ipywidgets','pygls','anthropic','openai','sqlite3','asyncio','polars'} & set(sys.modules); print(sorted(bad))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
