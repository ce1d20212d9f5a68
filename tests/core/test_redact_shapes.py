"""Redaction of the shapes secrets take in a shell session: headers, ``-u user:pass``, query strings, provider tokens.

Each was found sent to the model as it was, in a tool's output.
"""

from __future__ import annotations

import time

import pytest

from watcher.core.redact import redact, redact_known

SHOWN = {
    "a Basic authorization header": (
        "Authorization: Basic dXNlcjpwYXNzd29yZDEyMzQ1Ng==",
        "dXNlcjpwYXNzd29yZDEyMzQ1Ng==",
    ),
    "a Token authorization header in JSON": ('{"Authorization": "Token 9f8e7d6c5b4a3928"}', "9f8e7d6c5b4a3928"),
    "curl -u": ("curl -u admin:hunter2hunter2 https://api.example.com", "hunter2hunter2"),
    "--user=": ("http --user=bob:Pa55word! GET /", "Pa55word!"),
    "a Hugging Face token": ("HF: hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
    "a Google OAuth token": (
        "Bearer? no: ya29.a0AfH6SMBxabcdefghijklmnopqrstuv",
        "ya29.a0AfH6SMBxabcdefghijklmnopqrstuv",
    ),
    "a Docker token": ("docker login -p dckr_pat_abcdefghijklmnopqrstuvwx", "dckr_pat_abcdefghijklmnopqrstuvwx"),
    "a password after a plain token in a query": ("GET /cb?token=abc&password=xyz12345678 200", "xyz12345678"),
}


@pytest.mark.parametrize(("text", "secret"), SHOWN.values(), ids=SHOWN.keys())
def test_the_secret_is_masked(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED]" in out


KEPT = [
    "git push -u origin main",
    "docker run -u 1000:1000 image",
    "the authorization: basic functionality of the server",
    "shelf_abcdefghijklmnopqrstuvwxyzABCDEFGH",  # hf_ inside a word
    "pip install -U requests",
    '{"Authorization": "Token"}',
]


@pytest.mark.parametrize("text", KEPT)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact(text) == text


def test_a_quote_around_a_header_value_stays() -> None:
    assert redact('{"Authorization": "Token 9f8e7d6c5b4a3928"}').endswith('…[REDACTED]"}')


def test_known_values_are_masked_whatever_their_shape() -> None:
    out = redact_known("key mygw-7fa9c2e1 and mygw-7fa9c2e1b4 again", ["mygw-7fa9c2e1", "mygw-7fa9c2e1b4"])
    assert "7fa9c2e1" not in out and out.count("[REDACTED]") == 2


@pytest.mark.parametrize(
    "hostile",
    ["authorization: basic " + "a" * 200_000, "-u x:" * 50_000, "token=" * 50_000, "password=a&" * 50_000],
)
def test_hostile_inputs_stay_linear(hostile: str) -> None:
    started = time.perf_counter()
    redact(hostile)
    assert time.perf_counter() - started < 1.0
