"""``hooks install`` checks that the chosen evaluator can work before it writes anything: a missing
key or a server that does not answer is refused, or installed with ``--allow-missing-key`` and said."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from watcher.testing import StubAnthropicServer


def _install(tmp_path: Path, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "ANTHROPIC_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "watcher", "hooks", "install", "--evaluator", "anthropic", *extra],
        cwd=tmp_path,
        env={**base, "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        check=False,
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nothing listens there


def test_a_server_that_does_not_answer_is_refused_then_allowed_by_the_flag(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    refused = _install(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=url)
    assert refused.returncode == 2 and "cannot reach anthropic:" in refused.stderr and url in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / ".claude").exists()
    allowed = _install(tmp_path, "--allow-missing-key", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=url)
    assert allowed.returncode == 0 and "warning: cannot reach anthropic:" in allowed.stdout


def test_a_key_and_a_server_that_answers_install_quietly(tmp_path: Path) -> None:
    with StubAnthropicServer() as stub:
        done = _install(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=stub.root_url)
    assert done.returncode == 0 and "warning" not in done.stdout
    assert (tmp_path / ".claude" / "settings.local.json").exists()


def test_a_key_the_server_refuses_is_found_at_install(tmp_path: Path) -> None:
    with StubAnthropicServer(api_keys=["sk-ant-right"]) as stub:
        refused = _install(tmp_path, ANTHROPIC_API_KEY="sk-ant-wrong", ANTHROPIC_BASE_URL=stub.root_url)
        assert refused.returncode == 2 and "refused the key" in refused.stderr, refused.stderr
        assert "sk-ant-wrong" not in refused.stderr and "Traceback" not in refused.stderr
        assert not (tmp_path / ".claude").exists()
        done = _install(tmp_path, ANTHROPIC_API_KEY="sk-ant-right", ANTHROPIC_BASE_URL=stub.root_url)
    assert done.returncode == 0 and "warning" not in done.stdout, done.stdout + done.stderr


def test_a_model_the_server_does_not_have_is_found_at_install(tmp_path: Path) -> None:
    with StubAnthropicServer(models=["claude-sonnet-4-5"]) as stub:
        refused = _install(
            tmp_path,
            ANTHROPIC_API_KEY="sk-ant-x",
            ANTHROPIC_BASE_URL=stub.root_url,
            WATCHER_ANTHROPIC_MODEL="claude-sonet-4-5",
        )
    assert refused.returncode == 2 and "has no model 'claude-sonet-4-5'" in refused.stderr, refused.stderr
    assert "claude-sonnet-4-5" in refused.stderr
