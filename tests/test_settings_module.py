"""``Settings.from_env``: every variable, its fallbacks and defaults, and a clear error for a bad value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from watcher.core.errors import ConfigurationError
from watcher.settings import Secret, Settings

CASES = json.loads((Path(__file__).parent / "vectors" / "settings_cases.json").read_text())


def _plain(value: Any) -> Any:
    """A setting as the vectors write it: secrets revealed, paths as text."""
    if isinstance(value, Secret):
        return value.reveal()
    if isinstance(value, Path):
        return str(value)
    return value


@pytest.mark.parametrize("case", CASES["good"], ids=[c["why"] for c in CASES["good"]])
def test_each_variable_becomes_its_setting(case: dict[str, Any]) -> None:
    settings = Settings.from_env(case["env"])
    got = {name: _plain(getattr(settings, name)) for name in case["want"]}
    assert got == case["want"]
    assert dict(settings.environ) == case["env"]  # the whole environment, for child processes


@pytest.mark.parametrize("case", CASES["bad"], ids=[f"{c['names']}={c['env'][c['names']]}" for c in CASES["bad"]])
def test_a_bad_value_is_refused_naming_the_variable_and_the_fix(case: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env(case["env"])
    message = str(caught.value)
    assert message.startswith(f"{case['names']}=")
    assert "unset it" in message and "export" in message
    if "secret" in case:  # a key pasted into the wrong variable is not echoed back
        assert case["secret"] not in message


def test_without_check_urls_a_bad_url_variable_stops_nothing() -> None:
    env = {"WATCHER_OPENAI_BASE_URL": "sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq", "OPENAI_API_KEY": "k"}
    settings = Settings.from_env(env, check_urls=False)  # for a command that talks to no server
    assert settings.openai_base_url == env["WATCHER_OPENAI_BASE_URL"]
    assert settings.openai_key == Secret("k")
    assert "Qx7vT2mKp9" not in repr(settings)
    with pytest.raises(ConfigurationError, match="WATCHER_OPENAI_BASE_URL"):
        Settings.from_env(env)


def test_a_url_variable_a_flag_overrides_stops_nothing_and_the_others_are_still_checked() -> None:
    env = {"WATCHER_OPENAI_BASE_URL": "ftp://x", "WATCHER_FORGE_API": "ftp://y"}
    with pytest.raises(ConfigurationError, match="WATCHER_FORGE_API"):
        Settings.from_env(env, overridden={"WATCHER_OPENAI_BASE_URL"})
    del env["WATCHER_FORGE_API"]
    assert Settings.from_env(env, overridden={"WATCHER_OPENAI_BASE_URL"}).openai_base_url == "ftp://x"
    replayed = subprocess.run(  # `--base-url` replaces the variable: its bad value is not in the way
        [
            sys.executable,
            "-m",
            "watcher",
            "replay",
            "none.jsonl",
            "--evaluator",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        env={**os.environ, "WATCHER_OPENAI_BASE_URL": "ftp://x"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert "WATCHER_OPENAI_BASE_URL" not in replayed.stderr and "none.jsonl" in replayed.stderr, replayed.stderr


def test_secrets_never_show_in_the_repr() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-very-secret",
        "OPENAI_API_KEY": "sk-openai-very-secret",
        "GITHUB_TOKEN": "ghp_very_secret",
        "WATCHER_JOURNAL": "postgresql://watcher:pg-very-secret@db.example/watch",
        "ANTHROPIC_BASE_URL": "http://gateway:gw-very-secret@127.0.0.1:9/",
        "WATCHER_OPENAI_BASE_URL": "http://lm:lm-very-secret@127.0.0.1:8/v1",
        "WATCHER_FORGE_API": "https://ghp_very_secret_forge_token_000000000000@forge.example/api",
    }
    settings = Settings.from_env(env)
    shown = f"{settings!r} {settings} {settings.anthropic_key}"
    assert "very-secret" not in shown and "very_secret" not in shown
    assert "postgresql://***@db.example/watch" in shown and "http://***@127.0.0.1:9/" in shown
    assert settings.anthropic_key is not None and settings.anthropic_key.reveal() == "sk-ant-very-secret"


def test_settings_are_frozen_and_compare_by_value() -> None:
    one, two = Settings.from_env({"OPENAI_API_KEY": "k"}), Settings.from_env({"OPENAI_API_KEY": "k", "HOME": "/h"})
    assert one == two  # the raw environment is not part of the comparison
    assert one != Settings.from_env({"OPENAI_API_KEY": "other"})
    with pytest.raises(AttributeError):
        one.openai_model = "x"  # type: ignore[misc]


def test_no_argument_reads_this_process_environment() -> None:
    code = "from watcher.settings import Settings; s = Settings.from_env(); print(s.openai_model, s.serve_idle_s)"
    env = {"PATH": "/usr/bin:/bin", "WATCHER_OPENAI_MODEL": "from-the-process", "WATCHER_SERVE_IDLE": "12"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["from-the-process", "12.0"]
