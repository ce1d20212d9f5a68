"""Integrate: commit what the agent left, push ``spawn/<id>``, open a pull request (seed 002).

The pull request goes through GitHub's REST API (``POST /repos/{owner}/{repo}/pulls``) at a
configurable base URL, so GitHub Enterprise and compatible forges work (and the loopback forge in
tests); the token comes from ``GITHUB_TOKEN`` or ``GH_TOKEN`` and is never logged. Before
pushing, a base that moved on the remote is checked for conflicts with the spawn's branch
(``git merge-tree``): the conflicting files are reported.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.core.errors import SpawnError
from watcher.spawn import _gitproc
from watcher.spawn._commit import commit_leftovers, identity
from watcher.spawn.provision import Sandbox, git

__all__ = [
    "Connections",
    "FileChange",
    "PullRequest",
    "abort_merge",
    "changed_files",
    "commit_leftovers",
    "conflict_hunks",
    "conflicting_files",
    "finish_merge",
    "forge_repo",
    "open_pull_request",
    "printable",
    "push",
    "rejoin_branch",
    "start_merge",
]

GITHUB_API = "https://api.github.com"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One changed file of the spawn's branch: +/− lines and the subject of its last commit."""

    path: str
    added: int
    removed: int
    summary: str


@dataclass(frozen=True, slots=True)
class PullRequest:
    number: int
    url: str


def rejoin_branch(sandbox: Sandbox) -> str:
    """Put the worktree back on the spawn's branch if the agent left it; '' when it never did, else what it was on.

    When the agent made a branch of its own (``git checkout -b fix``) or detached HEAD, what it
    committed there continues the spawn's branch, which is moved up to it. ``SpawnError`` when it
    does not (the agent switched to an unrelated branch): its work is there, not on the spawn's.
    """
    here = git(sandbox.worktree, "symbolic-ref", "-q", "HEAD", check=False).removeprefix("refs/heads/")
    if here == sandbox.branch:
        return ""
    head = git(sandbox.worktree, "rev-parse", "HEAD")
    was = f"branch {here}" if here else f"a detached HEAD ({head[:10]})"
    if git(sandbox.worktree, "merge-base", sandbox.branch, head, check=False) != git(
        sandbox.worktree, "rev-parse", sandbox.branch
    ):
        raise SpawnError(
            f"the agent switched the worktree to {was}, which does not continue {sandbox.branch}: "
            f"its work is there, not on {sandbox.branch}; look in {sandbox.worktree}"
        )
    git(sandbox.worktree, "checkout", "-q", "-B", sandbox.branch, head)  # uncommitted changes stay as they are
    return was


def changed_files(sandbox: Sandbox) -> list[FileChange]:
    """Every file the branch changed against its base, with the last commit subject that touched it.

    Two git calls whatever the size of the change (a per-file ``git log`` took minutes for thousands of files).
    """
    span = f"{sandbox.base_ref}...{sandbox.branch_ref}"
    fields = iter(git(sandbox.repo, "diff", "--numstat", "-z", span).split("\0"))  # names as they are, unquoted
    subjects = _last_subjects(sandbox)
    out = []
    for row in fields:
        if not row:
            continue
        added, removed, path = row.split("\t", 2)
        shown = path
        if not path:  # a rename: its old and new names follow
            old, path = next(fields, ""), next(fields, "")
            shown = f"{old} => {path}"
        counts = int(added) if added != "-" else 0, int(removed) if removed != "-" else 0
        out.append(FileChange(printable(shown), *counts, printable(subjects.get(path, ""))))
    return out


def printable(text: str) -> str:
    """A name or subject as text a report can print: bytes that were not UTF-8 become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _last_subjects(sandbox: Sandbox) -> dict[str, str]:
    """Each path the branch's commits touched → the subject of the newest commit that touched it."""
    log = git(sandbox.repo, "log", "--format=%x01%s", "--name-only", "-z", f"{sandbox.base_ref}..{sandbox.branch_ref}")
    subjects: dict[str, str] = {}
    for record in log.split("\x01")[1:]:  # newest first: "subject\0\npath\0path\0"
        subject, _, names = record.partition("\0")
        for name in names.removeprefix("\n").split("\0"):
            if name:
                subjects.setdefault(name, subject)
    return subjects


def conflicting_files(sandbox: Sandbox, remote: str) -> list[str]:
    """Files that conflict between the branch and the remote's base (empty when it merges cleanly)."""
    try:
        # FETCH_HEAD only (each worktree has its own): updating origin/<base> too failed on its lock whenever
        # another spawn of the repository fetched at the same moment, and the conflict check was skipped
        git(sandbox.worktree, "fetch", "-q", "--refmap=", remote, f"refs/heads/{sandbox.base}")
    except SpawnError:
        return []  # the base is not on the remote yet: nothing to conflict with
    done = subprocess.run(
        ["git", "-C", str(sandbox.worktree), "merge-tree", "--write-tree", "--name-only", "-z", "FETCH_HEAD", "HEAD"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_gitproc.environ(),
    )
    if done.returncode != 1:
        return []
    # the tree id, then the conflicting paths (unquoted), then an empty field before git's messages
    fields = done.stdout.split("\0")[1:]
    return fields[: fields.index("")] if "" in fields else [f for f in fields if f]


def start_merge(sandbox: Sandbox) -> int:
    """Merge the fetched base into the branch, leaving conflict markers; returns the conflict hunks."""
    subprocess.run(
        ["git", "-C", str(sandbox.worktree), "merge", "--no-ff", "--no-commit", "FETCH_HEAD"],
        capture_output=True,
        timeout=120,
        env=_gitproc.environ(),
    )
    return conflict_hunks(sandbox)


def conflict_hunks(sandbox: Sandbox) -> int:
    """Conflict markers left in the worktree's unmerged files (a deleted file counts as one)."""
    files = [f for f in git(sandbox.worktree, "diff", "--name-only", "-z", "--diff-filter=U").split("\0") if f]
    hunks = 0
    for path in files:
        file = sandbox.worktree / path
        if not file.is_file():
            hunks += 1
            continue
        hunks += sum(1 for line in file.read_text(errors="replace").splitlines() if line.startswith("<<<<<<< "))
    return hunks


def finish_merge(sandbox: Sandbox) -> bool:
    """Conclude the merge once no markers are left (committing what a repair run left); False if it cannot."""
    if not git(sandbox.worktree, "rev-parse", "--verify", "-q", "MERGE_HEAD", check=False):
        return True  # the repair run concluded the merge itself
    names = git(sandbox.worktree, "diff", "--name-only", "-z", "HEAD").split("\0")
    files = [sandbox.worktree / f for f in names if f]
    if any(f.is_file() and "<<<<<<< " in f.read_text(errors="replace") for f in files):
        return False
    git(sandbox.worktree, "add", "-A")
    git(sandbox.worktree, *identity(sandbox.worktree), "commit", "-q", "--no-edit")
    return True


def abort_merge(sandbox: Sandbox) -> None:
    git(sandbox.worktree, "merge", "--abort", check=False)


def push(sandbox: Sandbox, remote: str) -> None:
    """Push ``spawn/<id>`` under its own name (the worktree's upstream is the base, so name it)."""
    try:
        git(sandbox.worktree, "push", "-q", remote, f"{sandbox.branch}:refs/heads/{sandbox.branch}")
    except SpawnError as exc:
        said = str(exc).split(": ", 1)[-1] if " failed in " in str(exc) else str(exc)
        words = [line.strip() for line in said.splitlines() if line.strip().startswith(("remote:", "!", "fatal:"))]
        why = " ".join(words) or said
        if "non-fast-forward" in said or "fetch first" in said:
            why = (
                f"it already has a branch {sandbox.branch} with other commits, which watcher does not overwrite ({why})"
            )
        raise SpawnError(
            f"the remote {remote!r} refused the push of {sandbox.branch}: {why}. The work is committed on "
            f"{sandbox.branch} (nothing is lost): deal with what the remote says, then push it "
            f"(git -C {sandbox.worktree} push {remote} {sandbox.branch}) and open the pull request"
        ) from None


def forge_repo(remote_url: str) -> tuple[str, str]:
    """(owner, repo) from a remote URL: ``https://host/owner/repo.git``, ``git@host:owner/repo.git``."""
    found = re.search(r"[/:]([^/:]+)/([^/]+?)(?:\.git)?/?$", remote_url)
    if found is None:
        raise SpawnError(
            f"cannot tell the forge's owner/repo from the remote URL {remote_url!r}; pass --forge-repo OWNER/REPO"
        )
    return found[1], found[2]


def open_pull_request(
    api_url: str,
    owner: str,
    repo: str,
    *,
    token: str,
    title: str,
    body: str,
    head: str,
    base: str,
    timeout: float = 30,
    connections: Connections | None = None,
) -> PullRequest:
    """``POST {api_url}/repos/{owner}/{repo}/pulls``; a refusal raises ``SpawnError`` with the forge's message.

    ``connections``: where the request's connections are tracked, so another thread can cut them.
    """
    url = f"{api_url.rstrip('/')}/repos/{owner}/{repo}/pulls"
    data = json.dumps({"title": title, "body": body, "head": head, "base": base}).encode()
    headers = {
        "accept": "application/vnd.github+json",
        "authorization": f"Bearer {token}",
        "content-type": "application/json",
        "user-agent": "watcher-spawn",
        "x-github-api-version": "2022-11-28",
    }
    opener = urllib.request.build_opener(_NoRedirect(), *(connections or Connections()).handlers())
    try:
        request = urllib.request.Request(url, data, headers, method="POST")  # (a URL it cannot read: ValueError)
        with opener.open(request, timeout=timeout) as answer:
            reply = json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        with exc:  # (its connection is closed here, not left to the garbage collector)
            if 300 <= exc.code < 400:
                raise SpawnError(
                    f"the forge answered the pull request with a redirect ({exc.code} from {url} to "
                    f"{exc.headers.get('location') or 'nowhere said'}), which watcher does not follow with your "
                    "token: pass --forge-api with the forge's REST API address (or set WATCHER_FORGE_API)"
                ) from None
            detail = exc.read().decode(errors="replace")[:300]
        raise SpawnError(f"the forge refused the pull request ({exc.code} from {url}): {detail}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SpawnError(f"could not open the pull request at {url}: {exc}") from exc
    number = reply.get("number") if isinstance(reply, dict) else None
    if type(number) is not int:
        raise SpawnError(
            f"the forge at {url} answered the pull request without its number ({json.dumps(reply)[:200]}): "
            "is --forge-api the forge's REST API?"
        )
    return PullRequest(number, str(reply.get("html_url") or reply.get("url") or ""))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """No redirect is followed: urllib would turn the POST into a GET, carrying the token to wherever it points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Connections:
    """The connections one forge request opens, so another thread can stop it: ``cut()``.

    Cut, their sockets are shut down (a thread blocked reading the answer wakes with an error),
    and a connection not yet made is refused: a request stopped before it connected is never sent.
    """

    def __init__(self) -> None:
        self._opened: list[http.client.HTTPConnection] = []
        self._cut = threading.Event()

    def track(self, connection: http.client.HTTPConnection) -> http.client.HTTPConnection:
        connect = connection.connect

        def guarded() -> None:
            if self._cut.is_set():
                raise OSError("the request was stopped before it connected")
            connect()
            if self._cut.is_set():  # cut while connecting
                self._shut(connection)
                raise OSError("the request was stopped")

        connection.connect = guarded  # type: ignore[method-assign]
        self._opened.append(connection)
        return connection

    def cut(self) -> None:
        self._cut.set()
        for connection in list(self._opened):
            self._shut(connection)

    @staticmethod
    def _shut(connection: http.client.HTTPConnection) -> None:
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handlers(self) -> list[urllib.request.BaseHandler]:
        """urllib's HTTP and HTTPS handlers, each connection they open tracked here."""
        track = self.track

        def tracked(make: Callable[..., http.client.HTTPConnection]) -> Callable[..., http.client.HTTPConnection]:
            return lambda *args, **kwargs: track(make(*args, **kwargs))

        class Plain(urllib.request.HTTPHandler):
            def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
                return super().do_open(tracked(http_class), req, **kwargs)

        class Secure(urllib.request.HTTPSHandler):
            def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
                return super().do_open(tracked(http_class), req, **kwargs)

        return [Plain(), Secure()]


def remote_url(repo: Path, remote: str) -> str:
    return git(repo, "remote", "get-url", remote)
