"""A loopback forge: git smart-HTTP plus GitHub's REST pull-request endpoint, on 127.0.0.1.

No real forge installs offline, and a pull request is the end of every spawn, so tests need one.
``LoopbackForge`` serves bare repositories under a temporary root through git's own CGI program
(``git http-backend``: clone, fetch and push work with a stock ``git``) at
``http://127.0.0.1:PORT/git/<owner>/<repo>.git``, and answers
``POST /api/v3/repos/<owner>/<repo>/pulls`` the way GitHub does (201 with ``number`` and
``html_url``; 422 when the head or base branch is not on the forge; 401 without a token). Every
pull request it received is kept in ``pulls``, every API request in ``requests``::

    with LoopbackForge() as forge:
        remote = forge.create_repo("acme", "shop", seed=path_of_a_repo)
        ...  # push a branch to ``remote``, then POST to forge.api_url
        assert forge.pulls[0]["head"] == "spawn/abc"
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from watcher.core.logs import logger

__all__ = ["LoopbackForge"]

log = logger("watcher.testing")
_PULLS = re.compile(r"^/api/v3/repos/([^/]+)/([^/]+)/pulls$")


class LoopbackForge:
    """Bare repositories over smart HTTP and a pull-request API, for tests and offline demos."""

    def __init__(self, root: str | Path | None = None, *, host: str = "127.0.0.1") -> None:
        self._tmp = None if root else tempfile.TemporaryDirectory(prefix="watcher-forge-")
        self.root = Path(root or self._tmp.name)  # type: ignore[union-attr]
        self.pulls: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, 0), _Handler)
        self._server.daemon_threads = True
        self._server.forge = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def root_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        """The REST base URL (GitHub Enterprise style: ``.../api/v3``)."""
        return f"{self.root_url}/api/v3"

    def remote_url(self, owner: str, repo: str) -> str:
        """The smart-HTTP URL of ``owner/repo``."""
        return f"{self.root_url}/git/{owner}/{repo}.git"

    def create_repo(self, owner: str, repo: str, *, seed: str | Path | None = None) -> str:
        """A bare repository ``owner/repo`` (``seed``'s branches pushed, its branch as HEAD); returns its URL."""
        path = self.root / owner / f"{repo}.git"
        path.parent.mkdir(parents=True, exist_ok=True)
        head = "main"
        if seed is not None:
            found = subprocess.run(
                ["git", "-C", str(seed), "symbolic-ref", "--short", "HEAD"], capture_output=True, text=True
            )
            head = found.stdout.strip() or head
        subprocess.run(["git", "init", "-q", "--bare", f"--initial-branch={head}", str(path)], check=True)
        subprocess.run(["git", "-C", str(path), "config", "http.receivepack", "true"], check=True)
        if seed is not None:
            subprocess.run(["git", "-C", str(seed), "push", "-q", str(path), "--all"], check=True)
        return self.remote_url(owner, repo)

    def branch_head(self, owner: str, repo: str, branch: str) -> str | None:
        """The commit ``branch`` points at on the forge, or None."""
        found = subprocess.run(
            [
                "git",
                "-C",
                str(self.root / owner / f"{repo}.git"),
                "rev-parse",
                "--verify",
                "-q",
                f"refs/heads/{branch}",
            ],
            capture_output=True,
            text=True,
        )
        return found.stdout.strip() or None

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the pull-request API ----------------------------------------------------------------

    def open_pull(self, owner: str, repo: str, auth: str, body: Any) -> tuple[int, dict[str, Any]]:
        """Validate and record one pull request the way GitHub does: (status, JSON answer)."""
        if not auth:
            return 401, {"message": "Requires authentication", "documentation_url": "loopback"}
        if not (self.root / owner / f"{repo}.git").is_dir():
            return 404, {"message": "Not Found"}
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("title", "head", "base")):
            return 422, {"message": "Validation Failed: title, head and base are required strings"}
        missing = [body[k] for k in ("head", "base") if self.branch_head(owner, repo, body[k]) is None]
        if missing:
            return 422, {"message": "Validation Failed", "errors": [{"field": "head/base", "missing": missing}]}
        with self._lock:
            number = len(self.pulls) + 1
            url = f"{self.root_url}/{owner}/{repo}/pull/{number}"
            record = {
                "number": number,
                "owner": owner,
                "repo": repo,
                "title": body["title"],
                "body": body.get("body") or "",
                "head": body["head"],
                "base": body["base"],
                "head_sha": self.branch_head(owner, repo, body["head"]),
                "html_url": url,
            }
            self.pulls.append(record)
        answer = {
            "number": number,
            "html_url": url,
            "url": f"{self.api_url}/repos/{owner}/{repo}/pulls/{number}",
            "state": "open",
            "title": body["title"],
            "head": {"ref": body["head"], "sha": record["head_sha"]},
            "base": {"ref": body["base"]},
        }
        return 201, answer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def forge(self) -> LoopbackForge:
        return self.server.forge  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("forge: " + format, *args)

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def _body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _route(self) -> None:
        path, _, query = self.path.partition("?")
        body = self._body()
        with self.forge._lock:
            self.forge.requests.append((self.command, path, {k.lower(): v for k, v in self.headers.items()}))
        if path.startswith("/git/"):
            self._git(path.removeprefix("/git"), query, body)
            return
        found = _PULLS.match(path)
        if found and self.command == "POST":
            try:
                payload = json.loads(body) if body else None
            except ValueError:
                payload = None
            auth = self.headers.get("authorization", "")
            status, answer = self.forge.open_pull(found[1], found[2], auth, payload)
            self._send(status, json.dumps(answer).encode(), "application/json")
            return
        self._send(404, json.dumps({"message": f"no route {self.command} {path}"}).encode(), "application/json")

    def _git(self, path_info: str, query: str, body: bytes) -> None:
        env = {
            "GIT_PROJECT_ROOT": str(self.forge.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path_info,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("content-type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "loopback",
            "REMOTE_ADDR": "127.0.0.1",
            "PATH": "/usr/bin:/bin",
        }
        if self.headers.get("content-encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["content-encoding"]
        if self.headers.get("git-protocol"):
            env["GIT_PROTOCOL"] = self.headers["git-protocol"]
        git = shutil.which("git") or "git"
        done = subprocess.run([git, "http-backend"], input=body, env=env, capture_output=True, timeout=60)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = done.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send(self, status: int, data: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
