"""Fault class 6: watcher-lsp answers every request, and its follower survives any row.

Driven over stdio with raw JSON-RPC bytes (a real client library would refuse to send these).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from watcher.runtime import Journal

pytestmark = [pytest.mark.faults, pytest.mark.slow]


class RawClient:
    """A language client that writes whatever it is given and collects every message back."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "watcher.lsp_bridge", "--poll", "0.05"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
        )
        self.messages: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
            }
        )
        self.wait(lambda m: m.get("id") == 0)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while line := out.readline():
                if not line.strip():
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            self.messages.append(json.loads(out.read(length)))

    def wait(self, match: Any, within: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            for message in list(self.messages):
                if match(message):
                    return message
            time.sleep(0.02)
        raise AssertionError(f"no matching message within {within}s; got {self.messages}")

    def close(self) -> str:
        self.proc.kill()
        _, err = self.proc.communicate(timeout=10)
        assert self.proc.stdin is not None
        return err.decode()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


MALFORMED = [
    ("textDocument/codeAction", "x"),
    ("textDocument/codeAction", {"textDocument": 5}),
    (
        "textDocument/codeAction",
        {
            "textDocument": {"uri": "file:///a.py"},
            "range": {"start": {"line": 0, "character": "a"}, "end": 3},
            "context": {"diagnostics": []},
        },
    ),
    ("workspace/executeCommand", None),
    ("workspace/executeCommand", {"command": "watcher.inject", "arguments": [5]}),
    ("workspace/executeCommand", {"command": "watcher.dismiss", "arguments": [{"interjection_id": "nope"}]}),
    ("workspace/executeCommand", {"command": "watcher.inject", "arguments": [{"interjection_id": "i", "journal": 5}]}),
    (
        "workspace/executeCommand",
        {"command": "watcher.inject", "arguments": [{"interjection_id": "i", "journal": "/tmp/a\u0000b"}]},
    ),
    ("workspace/executeCommand", {"command": "watcher.accept", "arguments": [{"interjection_id": "i", "journal": []}]}),
]


def test_every_malformed_request_is_answered_with_invalid_params(root: Path) -> None:
    client = RawClient(root)
    try:
        for number, (method, params) in enumerate(MALFORMED, start=1):
            client.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        for number, (method, _) in enumerate(MALFORMED, start=1):
            answer = client.wait(lambda m, n=number: m.get("id") == n)  # type: ignore[misc]
            error = answer.get("error")
            assert error is not None and error["code"] == -32602, (method, answer)
            assert "Traceback" not in json.dumps(answer) and "traceback" not in json.dumps(error.get("data") or {})
        # and it still works afterwards
        client.send({"jsonrpc": "2.0", "id": 99, "method": "shutdown", "params": None})
        assert "result" in client.wait(lambda m: m.get("id") == 99)
    finally:
        client.close()


def test_the_follower_survives_a_row_that_is_not_utf8(root: Path) -> None:
    journal = root / ".watcher" / "journal.sqlite3"
    Journal(journal).close()
    (root / "auth.js").write_text("a\nb\nc\nd\ne\n")
    client = RawClient(root)
    try:
        time.sleep(0.5)  # following: what comes now is live
        conn = sqlite3.connect(journal)
        conn.execute(
            "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (0, 's', 'security', 'interjection', CAST(? AS TEXT))",
            (b'{"interjection": {"id": "bad", "content": "\xff\xfe"}}',),
        )
        good = {
            "interjection": {
                "id": "good",
                "watcher": "security",
                "content": "still followed",
                "urgent": False,
                "severity": "critical",
                "action": "guidance",
                "locations": [{"path": "auth.js", "start_line": 2, "end_line": 2}],
                "fix": None,
            },
            "status": "pending",
            "index": 0,
        }
        conn.execute(
            "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (?, 's', 'security', 'interjection', ?)",
            (time.time(), json.dumps(good)),
        )
        conn.commit()
        conn.close()
        published = client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and any("still followed" in d["message"] for d in m["params"]["diagnostics"])
            )
        )
        assert published["params"]["uri"].endswith("auth.js")
    finally:
        err = client.close()
    assert "skipping corrupt journal row" in err


def test_a_damaged_journal_is_shown_to_the_person_once(root: Path) -> None:
    journal = root / ".watcher" / "journal.sqlite3"
    journal.parent.mkdir()
    journal.write_bytes(b"\x13garbage, not a database" * 400)
    client = RawClient(root)
    try:
        shown = client.wait(
            lambda m: m.get("method") == "window/showMessage" and "is damaged" in m["params"]["message"]
        )
        assert str(journal) in shown["params"]["message"] and "move it aside" in shown["params"]["message"]
        time.sleep(1.5)  # the follower keeps retrying; the person is told once
        told = [m for m in client.messages if m.get("method") == "window/showMessage"]
        assert len(told) == 1
        client.send({"jsonrpc": "2.0", "id": 7, "method": "shutdown", "params": None})
        assert "result" in client.wait(lambda m: m.get("id") == 7)
    finally:
        client.close()
