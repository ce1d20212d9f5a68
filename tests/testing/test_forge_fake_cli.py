"""The loopback forge (real ``git`` over smart HTTP, the REST pull endpoint) and the fake CLI."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

import pytest

from watcher.testing import LoopbackForge
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


def make_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


def pull(forge: LoopbackForge, body: dict[str, str], token: str = "token t") -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        f"{forge.api_url}/repos/acme/shop/pulls", json.dumps(body).encode(), {"authorization": token}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_clone_push_and_open_a_pull_request(tmp_path: Path) -> None:
    seed = make_repo(tmp_path / "seed")
    with LoopbackForge() as forge:
        url = forge.create_repo("acme", "shop", seed=seed)
        clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", url, str(clone)], check=True)
        git(clone, "switch", "-qc", "feature")
        (clone / "a.txt").write_text("a\n")
        git(clone, "add", "-A")
        git(clone, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "add a")
        git(clone, "push", "-q", "origin", "feature")
        assert forge.branch_head("acme", "shop", "feature") == git(clone, "rev-parse", "HEAD").strip()
        assert pull(forge, {"title": "t", "head": "feature", "base": "main"}, token="")[0] == 401
        assert pull(forge, {"title": "t", "head": "nope", "base": "main"})[0] == 422
        status, answer = pull(forge, {"title": "Add a", "head": "feature", "base": "main", "body": "b"})
        assert status == 201 and answer["number"] == 1
        assert forge.pulls == [
            {
                "number": 1,
                "owner": "acme",
                "repo": "shop",
                "title": "Add a",
                "body": "b",
                "head": "feature",
                "base": "main",
                "head_sha": git(clone, "rev-parse", "HEAD").strip(),
                "html_url": answer["html_url"],
            }
        ]


def test_fake_cli_replays_lines_runs_directives_and_answers_control_requests(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(
        "\n".join(
            [
                json.dumps({"type": "system", "subtype": "init", "cwd": "@CWD@"}),
                json.dumps({"fake": "write", "path": "out/a.js", "content": "x"}),
                json.dumps({"fake": "await_input", "timeout": 5}),
                json.dumps({"type": "result", "subtype": "success"}),
                json.dumps({"fake": "exit", "code": 3}),
            ]
        )
    )
    inbox = tmp_path / "inbox"
    exe = launcher(script, tmp_path)
    stdin = json.dumps({"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}}) + "\n"
    stdin += json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n"
    done = subprocess.run(
        [str(exe), "--flag"],
        cwd=tmp_path,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=20,
        env={"PATH": "/usr/bin:/bin", "WATCHER_FAKE_CLI_INBOX": str(inbox)},
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 3
    assert lines[0] == {"type": "system", "subtype": "init", "cwd": str(tmp_path)}
    assert lines[1]["type"] == "control_response" and lines[1]["response"]["request_id"] == "r1"
    assert lines[2] == {"type": "result", "subtype": "success"}
    assert (tmp_path / "out" / "a.js").read_text() == "x"
    assert len(inbox.read_text().splitlines()) == 2
