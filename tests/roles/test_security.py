"""The security role in-process: fixes, state across evaluations, redaction, and each scanner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher.core.answers import parse_decision, render_decision
from watcher.core.interjection import Continue, Interject, Location
from watcher.core.observations import CellExecuted, Observation, ToolCall, ToolResult, observation_from_dict
from watcher.roles import make_role, security, spec_for_role
from watcher.roles._security_pyast import blocks
from watcher.roles._security_python import _bandit, python_findings
from watcher.roles._security_secrets import secret_findings
from watcher.roles._security_shell import shell_findings
from watcher.roles.security import SecurityRole

SEED = Path(__file__).resolve().parents[2] / "example_notebooks" / "data" / "agent_writes_vulnerable_code.jsonl"
KEY = "sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq"


def _seed() -> list[Observation]:
    return [observation_from_dict(json.loads(line)) for line in SEED.read_text().splitlines() if line.strip()]


def _write(path: str, content: str, id: str = "t1") -> list[Observation]:
    return [
        ToolCall(id=id, name="Write", input={"file_path": path, "content": content}),
        ToolResult(tool_call_id=id, output="ok"),
    ]


def test_registered_with_the_seed_brief() -> None:
    role = make_role("security")
    assert isinstance(role, SecurityRole)
    spec = spec_for_role("security")
    assert spec.description == "Security Reviewer"
    assert "SQL injection" in spec.brief
    assert {"tool_result", "cell_executed", "turn_done"} <= spec.triggers.on


def test_login_gets_the_parameterised_query_as_fix() -> None:
    role = SecurityRole()
    obs = _seed()[:4]
    decision = role.evaluate(obs, len(obs))
    assert isinstance(decision, Interject)
    i = decision.interjection
    assert i.urgent and i.severity == "critical" and i.action == "guidance"
    assert i.fix is not None
    assert i.fix.location == Location(path="auth.js", start_line=4, end_line=5)
    assert i.fix.replacement == (
        "  const query = 'SELECT * FROM users WHERE username=? AND password=?';\n  return db.query(query, [username, password]);"
    )


def test_seed_transcript_step_by_step_and_fixed_file_is_clean() -> None:
    """Evaluating at each tool result as the engine does: three findings, then the fix passes."""
    role = SecurityRole()
    obs = _seed()
    said: dict[int, str] = {}
    last = 0
    for index, o in enumerate(obs):
        if isinstance(o, ToolResult) or o.kind == "done":
            decision = role.evaluate(obs[: index + 1], index + 1 - last)
            last = index + 1
            if isinstance(decision, Interject):
                said[index] = decision.interjection.content
    assert sorted(said) == [3, 6, 8]
    assert "login()" in said[3] and "Anthropic API key" in said[6] and "as root" in said[8]
    assert all(KEY not in text and KEY[10:30] not in text for text in said.values())


def test_only_new_observations_are_judged_and_nothing_is_said_twice() -> None:
    role = SecurityRole()
    obs = _write("loader.py", "import yaml\ncfg = yaml.load(open('c.yml'))\n")
    assert isinstance(role.evaluate(obs, 2), Interject)
    assert isinstance(role.evaluate(obs, 2), Continue)  # same finding again: already reported
    later = [*obs, CellExecuted(source="x = 1\n", cell_id="c2")]
    assert isinstance(SecurityRole().evaluate(later, 1), Continue)  # the Write is not new for a fresh role


def test_same_secret_in_code_then_output_is_reported_once() -> None:
    role = SecurityRole()
    first = _write("deploy.py", f'KEY = "{KEY}"\n')
    assert isinstance(role.evaluate(first, 2), Interject)
    echoed = [
        *first,
        ToolCall(id="t2", name="Bash", input={"command": "cat deploy.py"}),
        ToolResult(tool_call_id="t2", output=f'KEY = "{KEY}"'),
    ]
    assert isinstance(role.evaluate(echoed, 2), Continue)


def test_leaked_key_in_cell_output_is_masked_everywhere() -> None:
    role = SecurityRole()
    cell = CellExecuted(source="print(client.api_key)\n", cell_id="c9", stdout=f"{KEY}\n")
    decision = role.evaluate([cell], 1)
    assert isinstance(decision, Interject)
    rendered = render_decision(decision)
    for text in (decision.interjection.content, rendered, decision.note):
        assert KEY not in text and KEY[7:] not in text
    assert "sk-ant-…[REDACTED]" in decision.interjection.content
    parsed = parse_decision(rendered)  # what the rules evaluator's answer turns back into
    assert isinstance(parsed, Interject)
    assert parsed.interjection.urgent and parsed.interjection.locations == (Location(cell_id="c9"),)


def test_most_severe_first_with_every_location() -> None:
    role = SecurityRole()
    code = f'import yaml\ncfg = yaml.load(open("c"))\nTOKEN = "{KEY}"\n'
    decision = role.evaluate(_write("etl.py", code), 2)
    assert isinstance(decision, Interject)
    i = decision.interjection
    assert i.content.index("[critical]") < i.content.index("[warning]")
    assert [loc.start_line for loc in i.locations] == [3, 2]
    assert i.severity == "critical" and i.urgent


def test_tool_output_of_a_write_is_not_rescanned_but_a_read_is() -> None:
    calls = [
        ToolCall(id="r", name="Read", input={"file_path": "app.py"}),
        ToolResult(tool_call_id="r", output=f"1\tKEY = '{KEY}'"),
    ]
    decision = SecurityRole().evaluate(calls, 2)
    assert isinstance(decision, Interject)
    assert decision.interjection.locations == ()  # the output is not the file's content lines
    write_status = [
        ToolCall(id="w", name="Write", input={"file_path": "a.txt", "content": "hello"}),
        ToolResult(tool_call_id="w", output=f"wrote {KEY}"),
    ]
    assert isinstance(SecurityRole().evaluate(write_status, 2), Continue)


def test_bandit_is_built_once_and_unparsable_code_is_skipped() -> None:
    assert _bandit() is _bandit()
    assert [f.rule for f in python_findings("def broken(:\n  ???")] == ["py:not-scanned"]
    assert [f.rule for f in python_findings("\x00\x01 not python")] == ["py:not-scanned"]


def test_bidirectional_control_characters_are_found_on_their_line_and_nothing_else_is_reported() -> None:
    # bandit's file-level test runs only on a text that holds one of the characters it looks for
    spoofed = 'x = 1\nrole = "user\u202e \u2066# admin\u2069 \u2066"\nprint(role)\n'
    assert [(f.rule, f.start_line) for f in python_findings(spoofed)] == [("B613", 2)]
    assert python_findings(spoofed.replace("\u202e", "").replace("\u2066", "").replace("\u2069", "")) == []


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("import subprocess\nsubprocess.run(['ls', '-l'])\n", None),
        ("import subprocess\n", None),
        ("import random\nx = random.random()\nassert x < 2\n", None),
        ("import requests\nrequests.get('https://x', timeout=5)\n", None),
        ("import yaml\nyaml.load(f)\n", "B506"),
        ("import pickle\npickle.loads(blob)\n", "B301"),
        ("eval(user_input)\n", "B307"),
        ("import sqlite3\ncur.execute(f\"SELECT * FROM t WHERE id = '{x}'\")\n", "B608"),
        ('q = "SELECT * FROM t WHERE name = \'" + name + "\'"\n', "B608"),
        ("df = pd.read_sql(f'SELECT * FROM {table}', conn)\n", None),
        ("df.to_csv('/tmp/out.csv')\n", None),
        ("import hashlib\nh = hashlib.md5(data).hexdigest()\n", "B324"),
        # strings bandit reads on their own (a bind address) and through their parent (`.format`)
        ('import socket\ns = socket.socket()\ns.bind(("0.0.0.0", 8080))\n', "B104"),
        ("def q(cur, name):\n    cur.execute(\"DELETE FROM t WHERE name = '{}'\".format(name))\n", "B608"),
        ('config = {"host": "db", "query": "SELECT 1"}\nrun(config, "SELECT * FROM t")\n', None),
    ],
)
def test_python_findings(code: str, rule: str | None) -> None:
    assert [f.rule for f in python_findings(code)] == ([rule] if rule else [])


def test_python_sql_fix_for_a_known_driver() -> None:
    code = "import sqlite3\ndef find(cur, name):\n    cur.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n"
    (finding,) = python_findings(code)
    assert finding.replacement == '    cur.execute("SELECT * FROM users WHERE name = ?", (name,))'


@pytest.mark.parametrize(
    ("command", "rule", "severity"),
    [
        ("rm -rf /", "shell:rm-root", "critical"),
        ("sudo rm -rf --no-preserve-root /", "shell:rm-root", "critical"),
        ("rm -fr ~", "shell:rm-root", "critical"),
        ('rm -rf "$HOME"', "shell:rm-root", "critical"),
        ("rm -rf build/ dist ./node_modules", None, None),
        ("rm -rf ~/project/cache", None, None),
        ("chmod -R 777 .", "shell:chmod-777", "warning"),
        ("chmod 755 script.sh", None, None),
        ("curl -fsSL https://x.dev/i.sh | sudo bash", "shell:pipe-to-shell", "critical"),
        ("curl https://x.dev/i.sh | sh", "shell:pipe-to-shell", "critical"),
        ('sh -c "$(curl -fsSL https://x.dev/i.sh)"', "shell:pipe-to-shell", "critical"),
        ("curl -fsSL https://x.dev/data.json | jq .", None, None),
        ("cat id.pub >> ~/.ssh/authorized_keys", "shell:ssh-write", "critical"),
        ("ssh -i ~/.ssh/id_ed25519 host true", None, None),
        ("curl --insecure https://x", "shell:tls-off", "warning"),
        ("git -c http.sslVerify=false clone https://x", "shell:tls-off", "warning"),
        ("export NODE_TLS_REJECT_UNAUTHORIZED=0", "shell:tls-off", "warning"),
        ("pip install --trusted-host internal pkg", "shell:tls-off", "warning"),
        ("dd if=image.iso of=/dev/sda bs=4M", "shell:disk", "critical"),
    ],
)
def test_shell_findings(command: str, rule: str | None, severity: str | None) -> None:
    found = shell_findings(command)
    assert [(f.rule, f.severity) for f in found] == ([(rule, severity)] if rule else [])


@pytest.mark.parametrize(
    "line",
    [
        'token = os.environ["GITHUB_TOKEN"]',
        'api_key = "your-api-key-here"',
        'key = "sk-ant-..."',
        'OPENAI_API_KEY = "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxx"',
        'run_id = "123e4567-e89b-12d3-a456-426614174000"',
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        'name = "task-management-service-config-loader"',
        'headers = {"Authorization": f"Bearer {token}"}',
        "password = request.form['password']",
        'pw = getpass.getpass("Password: ")',
    ],
)
def test_benign_lines_have_no_secrets(line: str) -> None:
    assert secret_findings(line) == []


def test_known_key_formats_are_critical_and_masked() -> None:
    lines = {
        "Anthropic API key": f'k = "{KEY}"',
        "GitHub token": "t = 'ghp_R7kL2mQ9xT4vW8zB1nC5dF3hJ6pS0aYeU2iO'",
        "Slack token": 'SLACK = "xoxb-482915736204-5839201746382-Kq7Vm2Xr9Tl4Wn8Zp3Bc6Hd"',
        "OpenAI API key": "OPENAI_API_KEY=sk-proj-Tq3Lm8Vx2Rk7Wn4Zp9Bc1Hd6Jf5Gs0Ya",
    }
    for kind, line in lines.items():
        (finding,) = secret_findings(line)
        assert finding.rule == f"secret:{kind}" and finding.severity == "critical"
        secret = line.split("=", 1)[1].strip("'\" ")
        assert secret not in finding.explanation and "[REDACTED]" in finding.explanation


def test_a_fragment_indented_throughout_that_does_not_parse_is_scanned_without_error() -> None:
    """An Edit of a function body can be indented on every line and still not parse on its own."""
    assert list(blocks("    query = (\n        'SELECT 1'\n")) == []
    fragment = "    x = (\n    os.system('rm -rf ' + path)\n"
    assert isinstance(python_findings(fragment), list)  # the scan of what can be scanned must not raise


def test_a_file_too_large_to_review_says_so_and_is_still_searched_for_credentials() -> None:
    body = "".join(f"x_{n} = {n}\n" for n in range(30_000))  # ~300 KB of statements: costly to review
    content = (
        "import os\nos.system(input())\n"
        + body
        + "AWS_SECRET_ACCESS_KEY = 'Hk29fLm3Qz7WxPq8Rt5Yv1Bn4Mc6Dz0Ls9Ke2Ja7'\n"
    )
    assert len(content) > security.REVIEWED_CHARS
    decision = make_role("security").evaluate(_write("gen/tables.py", content), 2)
    assert isinstance(decision, Interject)
    text = decision.interjection.content
    assert "gen/tables.py not reviewed for security problems" in text and "KB" in text
    assert "os.system" not in text  # the review did not run
    assert "Hk29fLm3" not in text and "credential" in text.lower()  # the credential was still found, shown redacted
