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
    assert refused.returncode == 2 and "cannot reach its server 127.0.0.1" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / ".claude").exists()
    allowed = _install(tmp_path, "--allow-missing-key", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=url)
    assert allowed.returncode == 0 and "warning: the anthropic evaluator cannot reach" in allowed.stdout


def test_a_key_and_a_server_that_answers_install_quietly(tmp_path: Path) -> None:
    with StubAnthropicServer() as stub:
        done = _install(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=stub.root_url)
    assert done.returncode == 0 and "warning" not in done.stdout
    assert (tmp_path / ".claude" / "settings.local.json").exists()
