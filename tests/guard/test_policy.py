"""The policy in force: packs, the project's ``.watcher/policy.toml``, and the ``hooks policy`` /
``hooks check`` commands a person reads it with (run as real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from watcher.guard import judge, load_policy

RM_CACHE = {"command": "rm -rf /srv/cache/*"}


def _project(tmp_path: Path, policy: str) -> Path:
    (tmp_path / ".watcher").mkdir(parents=True)
    (tmp_path / ".watcher" / "policy.toml").write_text(policy, encoding="utf-8")
    return tmp_path


def _watcher(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "watcher", "hooks", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_a_project_allow_rule_opens_exactly_what_it_names(tmp_path: Path) -> None:
    root = _project(tmp_path, '[[allow]]\ntool = "Bash"\ncommand = "rm -rf /srv/cache/*"\nreason = "ours"\n')
    assert not judge("Bash", RM_CACHE, cwd=str(root)).denied
    assert judge("Bash", {"command": "rm -rf /srv/data/*"}, cwd=str(root)).denied
    assert judge("Bash", {"command": "rm -rf ~/"}, cwd=str(root)).denied


def test_a_relative_path_glob_names_only_the_projects_files(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", '[[allow]]\ntool = "Read"\npath = "*"\n[[allow]]\ntool = "Read"\npath = "*.pem"\n')
    key = os.path.expanduser("~/.ssh/id_rsa")
    assert judge("Read", {"file_path": key}, cwd=str(root)).denied  # `*` is this project's files, not the home
    assert not judge("Read", {"file_path": str(root / "certs" / "dev.pem")}, cwd=str(root)).denied
    rooted = _project(tmp_path / "q", '[[allow]]\ntool = "Read"\npath = "~/.ssh/id_*"\n')
    assert not judge("Read", {"file_path": key}, cwd=str(rooted)).denied  # written from ~: that very path


def test_a_project_deny_rule_closes_a_path_for_the_tools_it_names(tmp_path: Path) -> None:
    root = _project(tmp_path, '[[deny]]\ntool = "Read|Grep"\npath = "data/customers/**"\nreason = "PII"\n')
    verdict = judge("Read", {"file_path": "data/customers/2024.csv"}, cwd=str(root))
    assert verdict.denied and verdict.category == "project-policy" and "PII" in verdict.reason
    assert not judge("Read", {"file_path": "data/products.csv"}, cwd=str(root)).denied
    assert not judge("Write", {"file_path": "data/customers/new.csv", "content": "x"}, cwd=str(root)).denied


def test_the_project_file_chooses_the_strict_pack(tmp_path: Path) -> None:
    root = _project(tmp_path, 'pack = "strict"\n')
    assert judge("Bash", {"command": "git reset --hard"}, cwd=str(root)).category == "team-policy"
    assert not judge("Bash", {"command": "git reset --hard"}, cwd=str(tmp_path.parent)).denied


def test_strict_keeps_its_own_rules_after_standard_judged_in_the_same_process(tmp_path: Path) -> None:
    """One hook daemon serves projects on either pack: the pack judged first must not lend its
    compiled command table to the other (a fresh process, so no earlier test has compiled either)."""
    (tmp_path / "strict").mkdir()
    (tmp_path / "plain").mkdir()
    strict, plain = _project(tmp_path / "strict", 'pack = "strict"\n'), tmp_path / "plain"
    script = (
        "import sys\nfrom watcher.guard import judge\n"
        "call = {'command': 'git reset --hard'}\n"
        "print(judge('Bash', call, cwd=sys.argv[1]).decision, judge('Bash', call, cwd=sys.argv[2]).decision,"
        " judge('Bash', call, cwd=sys.argv[1]).decision)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(plain), str(strict)], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["allow", "deny", "allow"]


@pytest.mark.parametrize(
    "text",
    [
        "pack = 'strict\n",
        "pack = 'lenient'\n",
        "[[allow]]\ntool = '*'\n",
        "allow = 3\n",
        "[[deny]]\ncolour = 'red'\n",
        "[[allow]]\ntool = 5\ncommand = ['rm -rf ~/']\n",
    ],
    ids=["broken-toml", "unknown-pack", "allow-everything", "not-a-list", "unknown-key", "not-strings"],
)
def test_a_mistake_in_the_project_file_is_named_and_never_opens_the_guard(tmp_path: Path, text: str) -> None:
    root = _project(tmp_path, text)
    policy = load_policy(str(root))
    assert policy.problems and str(root / ".watcher" / "policy.toml") in policy.problems[0]
    verdict = judge("Bash", {"command": "rm -rf ~/"}, cwd=str(root), policy=policy)
    assert verdict.denied and verdict.problems == policy.problems


def test_a_project_file_that_is_not_utf8_is_named_and_never_opens_the_guard(tmp_path: Path) -> None:
    (tmp_path / ".watcher").mkdir()
    (tmp_path / ".watcher" / "policy.toml").write_bytes(b"\xff\xfe[[allow]]\ncommand = 'rm *'\n")
    verdict = judge("Bash", {"command": "rm -rf ~/"}, cwd=str(tmp_path))
    assert verdict.denied and "could not be read" in verdict.problems[0]
    checked = _watcher(tmp_path, "check", "rm -rf ~/")
    assert "Traceback" not in checked.stderr and "deny" in checked.stdout and "could not be read" in checked.stdout


def test_hooks_check_says_what_the_guard_would_answer_and_why(tmp_path: Path) -> None:
    denied = _watcher(tmp_path, "check", "rm -rf ~/")
    assert denied.returncode == 1
    assert denied.stdout.startswith("deny [destructive-delete]: this call deletes your home folder")
    allowed = _watcher(tmp_path, "check", "rm -rf node_modules")
    assert (allowed.returncode, allowed.stdout.split(":")[0]) == (0, "allow")
    read = _watcher(tmp_path, "check", "--tool", "Read", "--path", "~/.ssh/id_rsa")
    assert read.returncode == 1 and "[secret-read]" in read.stdout
    strict = _watcher(tmp_path, "check", "git push --force-with-lease origin my-feature", "--pack", "strict")
    assert strict.returncode == 1 and "[force-push]" in strict.stdout
    bad = _watcher(tmp_path, "check", "--input", "{not json")
    assert bad.returncode == 2 and "--input is not JSON" in bad.stderr and "Traceback" not in bad.stderr


def test_hooks_policy_prints_the_pack_the_rules_and_the_problems(tmp_path: Path) -> None:
    plain = _watcher(tmp_path, "policy")
    assert plain.returncode == 0 and plain.stdout.startswith("pack: standard")
    assert "denied categories: destructive-delete" in plain.stdout
    root = _project(tmp_path, 'pack = "strict"\n[[deny]]\ntool = "Read"\npath = "secret/**"\nreason = "x"\n[[allow]]\n')
    shown = _watcher(root, "policy")
    assert shown.stdout.startswith("pack: strict") and "team-policy" in shown.stdout
    assert "deny rule 1: tool Read, path 'secret/**' (x)" in shown.stdout
    assert "problem:" in shown.stdout and shown.returncode == 1
