"""Hook payloads in forms the CLIs do not send but a wrapper might: the guard still reads and judges them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hook_procs import CLIENT, hook_env

from watcher.hooks._payload import read_payload
from watcher.hooks._wire import HookCall

CALL = {
    "session_id": "s-forms",
    "cwd": "/",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf ~/"},
    "tool_use_id": "toolu_forms",
}
TEXT = json.dumps(CALL)

FORMS = {
    "byte-order mark": b"\xef\xbb\xbf" + TEXT.encode(),
    "UTF-16": TEXT.encode("utf-16"),
    "UTF-32": TEXT.encode("utf-32"),
    "blank lines around": b"\n  " + TEXT.encode() + b"\r\n\n",
    "a second object after it": TEXT.encode() + b"\n{}",
    "tool_input as a JSON string": json.dumps({**CALL, "tool_input": json.dumps(CALL["tool_input"])}).encode(),
}


@pytest.mark.parametrize("raw", FORMS.values(), ids=FORMS.keys())
def test_each_form_reads_as_the_call(raw: bytes) -> None:
    assert read_payload(raw) == CALL
    call = HookCall.parse("claude", "PreToolUse", raw)  # what the daemon does with the bytes it is sent
    assert call.payload["tool_input"] == {"command": "rm -rf ~/"}


def test_what_is_not_json_stays_an_error_and_a_string_input_that_is_no_object_stays_a_string() -> None:
    with pytest.raises(ValueError):
        read_payload(b"rm -rf ~/")
    assert read_payload(b"") == {}
    odd = {**CALL, "tool_input": "[1, 2]"}
    assert read_payload(json.dumps(odd).encode())["tool_input"] == "[1, 2]"
    latin = json.dumps({**CALL, "tool_input": {"command": "rm -rf ~/caf_"}}).encode().replace(b"caf_", b"caf\xe9")
    assert read_payload(latin)["tool_input"]["command"] == "rm -rf ~/caf\ufffd"  # not text: still judged


@pytest.mark.parametrize("form", ["byte-order mark", "UTF-16", "tool_input as a JSON string"])
def test_the_hook_without_a_daemon_denies_rm_home_in_each_form(tmp_path: Path, form: str) -> None:
    env = hook_env(tmp_path, WATCHER_HOOK_DAEMON="0", HOME=str(tmp_path / "home"))
    os.makedirs(tmp_path / "home")
    done = subprocess.run(
        [*CLIENT, "PreToolUse"], input=FORMS[form], capture_output=True, env=env, timeout=30, check=False
    )
    assert done.returncode == 0
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "destructive-delete" in answer["permissionDecisionReason"]
