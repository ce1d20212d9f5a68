"""watcher's loggers redact secrets before any handler sees a record."""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
from pathlib import Path

import pytest

import watcher
from watcher.core.logs import logger

KEY = "sk-ant-api03-" + "Zq7" * 12  # shaped like an Anthropic key, not one
GOOGLE = "AIza" + "Sy" + "Q" * 33
SRC = Path(watcher.__file__).parent


def test_a_message_and_its_arguments_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    log = logger("watcher.test_logs")
    with caplog.at_level(logging.INFO, logger="watcher"):
        log.warning("calling the model with %s failed", KEY)
        log.info(f"GET https://generativelanguage.example/v1/models?key={GOOGLE} -> 400")
    assert KEY not in caplog.text and GOOGLE not in caplog.text
    assert "calling the model with sk-ant" in caplog.text and "-> 400" in caplog.text  # the rest is kept


def test_observed_control_sequences_are_logged_as_code_points(caplog: pytest.LogCaptureFixture) -> None:
    """A log is read with cat or tail in a terminal: an agent's text in it must not clear the screen
    or write the clipboard there."""
    log = logger("watcher.test_logs")
    with caplog.at_level(logging.INFO, logger="watcher"):
        log.warning("tool output: %s", "\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07 done\u202e")
    assert "\x1b" not in caplog.text and "\x07" not in caplog.text and "\u202e" not in caplog.text
    assert "\u27e8U+001B\u27e9[2J" in caplog.text and " done" in caplog.text


def test_a_traceback_that_quotes_a_secret_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    log = logger("watcher.test_logs")
    with caplog.at_level(logging.ERROR, logger="watcher"):
        try:
            raise RuntimeError(f"401 for api_key={KEY}")
        except RuntimeError:
            log.exception("the evaluator failed")
    assert "the evaluator failed" in caplog.text and "RuntimeError: 401 for api_key=" in caplog.text
    assert KEY not in caplog.text


def test_the_filter_is_attached_once_however_often_the_logger_is_asked_for() -> None:
    for _ in range(3):
        log = logger("watcher.test_logs")
    assert len(log.filters) == 1


def test_every_watcher_logger_carries_the_filter() -> None:
    """Modules take their logger from ``watcher.core.logs.logger``; one that did not would log unredacted."""
    direct = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"logging\.getLogger\(\s*['\"]watcher", line)
    ]
    assert direct == [], f"use watcher.core.logs.logger(...) instead of logging.getLogger: {direct}"
    for module in pkgutil.walk_packages(watcher.__path__, "watcher."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    loggers = [x for n, x in logging.Logger.manager.loggerDict.items() if n.startswith("watcher.")]
    made = [x for x in loggers if isinstance(x, logging.Logger)]  # (a parent no module asked for is a placeholder)
    assert len(made) >= 10 and [x.name for x in made if not x.filters] == []
