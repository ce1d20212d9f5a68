"""``watcher spawn`` in careless or hostile surroundings: a tag named like the base, a forge that
redirects, a repository under a path with spaces, two spawns of one repository at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from spawn_helpers import Project, git, init, new_repo, result, tool_result, tool_use, write_script

from watcher.spawn import SpawnConfig, SpawnResult, run_spawn
from watcher.testing import LoopbackForge
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow


def writing(name: str) -> list[dict[str, object]]:
    return [
        init(),
        tool_use("Write", {"file_path": f"@CWD@/{name}", "content": "a\n"}, "t1"),
        {"fake": "write", "path": name, "content": f"{name}\n"},
        tool_result("t1", "File created"),
        result(f"Added {name}."),
    ]


def config(project: Project, folder: Path, name: str = "a.txt", **options: object) -> SpawnConfig:
    folder.mkdir(parents=True, exist_ok=True)
    cli = str(launcher(write_script(folder / "script.jsonl", writing(name)), folder))
    defaults: dict[str, object] = {
        "agent": "claude", "repo": project.repo, "cli_path": cli, "forge_api": project.forge.api_url,
        "env": project.env(), "journal": project.journal, "idle_timeout_s": 20, "total_timeout_s": 60,
        "watchers": (),
    }  # fmt: skip
    return SpawnConfig(f"add {name}", **{**defaults, **options})  # type: ignore[arg-type]


async def test_a_tag_named_like_the_base_branch_neither_stops_the_spawn_nor_stands_for_the_branch(
    project: Project, tmp_path: Path
) -> None:
    git(project.repo, "tag", "main")  # a release tag named as the branch: `main` alone is ambiguous to git
    (project.repo / "later.txt").write_text("later\n")
    git(project.repo, "add", "later.txt")
    git(project.repo, "commit", "-qm", "later")
    git(project.repo, "push", "-q", "origin", "refs/heads/main:refs/heads/main")

    spawned = await run_spawn(config(project, tmp_path / "cli"))

    assert spawned.status == "completed", spawned.detail
    assert [f.path for f in spawned.files] == ["a.txt"]  # not later.txt, which the tag's commit lacks
    assert (Path(spawned.worktree) / "later.txt").exists()  # branched from the branch, not the tag
    assert len(spawned.commits) == 1 and project.forge.pulls[0]["base"] == "main"


class _Recorder(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append(("GET", self.path, self.headers.get("authorization")))  # type: ignore[attr-defined]
        self._answer(200, b"[]")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.server.seen.append(("POST", self.path, self.headers.get("authorization")))  # type: ignore[attr-defined]
        target = self.server.redirect_to  # type: ignore[attr-defined]
        if target:
            self.send_response(301)
            self.send_header("location", target + self.path)
            self.send_header("content-length", "0")
            self.end_headers()
        else:
            self._answer(201, json.dumps({"number": 7, "html_url": "http://elsewhere/7"}).encode())

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def http_server(redirect_to: str = "") -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.daemon_threads = True
    server.seen = []  # type: ignore[attr-defined]
    server.redirect_to = redirect_to  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


async def test_a_forge_api_that_redirects_the_pull_request_gets_no_token_sent_on_and_is_said(
    project: Project, tmp_path: Path
) -> None:
    with http_server() as elsewhere, http_server(redirect_to=url(elsewhere)) as forge:
        spawned = await run_spawn(config(project, tmp_path / "cli", forge_api=url(forge) + "/api/v3"))
        assert elsewhere.seen == []  # type: ignore[attr-defined]  # the token went nowhere else
        assert [s[:2] for s in forge.seen] == [("POST", "/api/v3/repos/acme/shop/pulls")]  # type: ignore[attr-defined]
    assert spawned.status == "integration_failed" and spawned.pr is None
    assert "answered the pull request with a redirect (301" in spawned.detail and url(elsewhere) in spawned.detail
    assert "--forge-api" in spawned.detail and f"{spawned.branch} is pushed to 'origin'" in spawned.detail


async def test_a_forge_answer_without_a_pull_request_number_is_said_not_a_crash(
    project: Project, tmp_path: Path
) -> None:
    class Lister(_Recorder):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self._answer(200, b"[]")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Lister)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        spawned = await run_spawn(config(project, tmp_path / "cli", forge_api=url(server)))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert spawned.status == "integration_failed", spawned.detail
    assert "answered the pull request without its number ([])" in spawned.detail


async def test_a_repository_under_a_path_with_spaces_is_spawned_proposed_and_reported(tmp_path: Path) -> None:
    from watcher.runtime.journal import Journal

    repo = new_repo(tmp_path / "my projects" / "the shop")
    with LoopbackForge() as forge, Journal(tmp_path / "journal.sqlite3") as journal:
        git(repo, "remote", "add", "origin", forge.create_repo("acme", "shop", seed=repo))
        project = Project(repo, forge, journal)
        spawned = await run_spawn(config(project, tmp_path / "cli dir", name="new file.txt"))
        assert spawned.status == "completed", spawned.detail
        assert " " in spawned.worktree and [f.path for f in spawned.files] == ["new file.txt"]
        assert project.forge_file(spawned.branch, "new file.txt") == "new file.txt"


async def test_two_spawns_of_one_repository_at_once_each_propose_their_own_work(
    project: Project, tmp_path: Path
) -> None:
    first, second = await asyncio.gather(
        run_spawn(config(project, tmp_path / "one", name="one.txt")),
        run_spawn(config(project, tmp_path / "two", name="two.txt")),
    )
    spawned: list[SpawnResult] = [first, second]
    assert [s.status for s in spawned] == ["completed", "completed"], [s.detail for s in spawned]
    assert [[f.path for f in s.files] for s in spawned] == [["one.txt"], ["two.txt"]]
    assert sorted(p["head"] for p in project.forge.pulls) == sorted(s.branch for s in spawned)
    assert git(project.repo, "status", "--porcelain") == ""  # the main checkout untouched


async def test_a_forge_api_address_holding_a_password_is_refused_before_anything_without_showing_it(
    project: Project, tmp_path: Path
) -> None:
    from watcher.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as refused:
        await run_spawn(config(project, tmp_path / "cli", forge_api="http://me:s3cr3t-pass@127.0.0.1:9/api/v3"))
    said = str(refused.value)
    assert "holds a user or password" in said and "GITHUB_TOKEN" in said and "s3cr3t" not in said
    assert not (project.repo / ".watcher" / "spawns").exists()


async def test_an_agent_under_a_path_with_a_colon_is_still_fenced_off_from_the_main_checkout(tmp_path: Path) -> None:
    from watcher.runtime.journal import Journal

    repo = new_repo(tmp_path / "backup 10:30" / "shop")  # GIT_CEILING_DIRECTORIES is split at ':'
    main_before = git(repo, "rev-parse", "main")
    steps: list[dict[str, object]] = [
        init(),
        {"fake": "run", "argv": ["rm", ".git"]},
        {"fake": "run", "argv": ["sh", "-c", "git rev-parse --show-toplevel > git-said.txt 2>&1"]},
        result(),
    ]
    (tmp_path / "cli").mkdir()
    cli = str(launcher(write_script(tmp_path / "cli" / "script.jsonl", steps), tmp_path / "cli"))
    with LoopbackForge() as forge, Journal(tmp_path / "journal.sqlite3") as journal:
        spawned = await run_spawn(
            SpawnConfig(
                "look", repo=repo, cli_path=cli, env=Project(repo, forge, journal).env(), journal=journal, pr=False,
                watchers=(), idle_timeout_s=20, total_timeout_s=60,
            )
        )  # fmt: skip
    said = (Path(spawned.worktree) / "git-said.txt").read_text()
    assert "not a git repository" in said, said  # not the main checkout above the worktree
    assert git(repo, "rev-parse", "main") == main_before and spawned.status == "completed", spawned.detail
    links = os.path.join(tempfile.gettempdir(), f"watcher-spawn-ceilings-{os.getuid()}")
    assert spawned.id not in await asyncio.to_thread(os.listdir, links)  # the link naming the folder went with it
