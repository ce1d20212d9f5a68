"""Redaction: secrets never reach the journal or a prompt, in any of the shapes they travel in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from watcher.core.observations import ToolCall
from watcher.core.protocol import describe_observation
from watcher.core.redact import may_hold_secret, redact, redact_url, redact_value

SECRETS = {
    "anthropic": "sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq",
    "openai": "sk-proj-4fJ8kL2mN9pQ3rS7tU1vW5xY0zA6bC",
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack": "xoxb-1234567890-abcdefghijKLMN",
    "aws": "AKIAIOSFODNN7EXAMPLE",
}


@pytest.mark.parametrize(("kind", "secret"), SECRETS.items())
def test_known_formats_are_masked_everywhere(kind: str, secret: str) -> None:
    text = f"export KEY={secret}\nprint('{secret}')"
    out = redact(text)
    assert secret not in out and "[REDACTED]" in out
    assert secret not in json.dumps(redact_value({"a": [text, {"b": text}]}))
    prompt = redact(describe_observation(ToolCall(id="t", name="Write", input={"content": text})))
    assert secret not in prompt


def test_assignments_in_plain_and_json_escaped_text() -> None:
    code = "password = \"hunter2-correct-horse\"\napi_key: 'abcd1234efgh5678'"
    assert "hunter2-correct-horse" not in redact(code)
    assert "abcd1234efgh5678" not in redact(code)
    escaped = json.dumps({"content": code})
    assert "hunter2-correct-horse" not in redact(escaped)


def test_mask_keeps_a_short_prefix_only() -> None:
    assert redact(SECRETS["anthropic"]) == "sk-ant-…[REDACTED]"


def test_benign_text_is_untouched() -> None:
    text = "The token count was 42; see the secret garden. sk-learn is not a key."
    assert redact(text) == text


@given(st.sampled_from(list(SECRETS.values())), st.text(max_size=30), st.text(max_size=30))
def test_the_pre_check_never_misses_what_redact_masks(secret: str, before: str, after: str) -> None:
    text = f"{before} {secret} {after}"
    if redact(text) != text:
        assert may_hold_secret(text)
    assert secret not in redact(text)


CASES = json.loads((Path(__file__).parent / "vectors" / "redaction_cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_redaction_vectors(case: dict[str, object]) -> None:
    text = str(case["text"])
    out = redact(text)
    if case.get("kept"):
        assert out == text
    for secret in case.get("gone", []):  # type: ignore[attr-defined]
        assert secret not in out and "[REDACTED]" in out


def test_deeply_nested_values_are_redacted_without_recursion() -> None:
    value: object = "sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq"
    for _ in range(10_000):
        value = [value]
    out = redact_value(value)
    for _ in range(10_000):
        assert isinstance(out, list)
        out = out[0]
    assert out == "sk-ant-…[REDACTED]"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "http://u:sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq@127.0.0.1:9/v1",
            "http://***@127.0.0.1:9/v1",
        ),
        ("https://ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8@github.com/o/r", "https://***@github.com/o/r"),
        ("https://x-access-token:opaque-but-secret@host/", "https://***@host/"),
        ("ftp://u:p@ss@h/x", "ftp://***@h/x"),  # the host follows the last @
        ("http://h/v1?api_key=abcdef123456789", "http://h/v1?api_key=abc…[REDACTED]"),
        ("sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq", "sk-ant-…[REDACTED]"),  # a key, not a URL
        ("http://localhost:1234/v1", "http://localhost:1234/v1"),
        ("http://[bad", "http://[bad"),
        ("/a/path/with@sign:in/it", "/a/path/with@sign:in/it"),
    ],
)
def test_redact_url_drops_the_userinfo_and_masks_the_rest(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact_url(shown) == shown  # idempotent: a shown URL can be shown again
