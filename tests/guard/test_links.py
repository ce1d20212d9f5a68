"""A symbolic link an earlier call made exists when a later call is judged: a path through it is
judged where it really points. The links are real links in a temporary project; nothing is run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from watcher.guard import judge, load_policy

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----\n"


@pytest.fixture
def linked(place: tuple[Path, Path]) -> tuple[Path, Path]:
    """The project with links to the home, the root, /etc, a key, the agent's settings, ~/.bashrc, its own src."""
    project, home = place
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(KEY)
    (home / "Documents").mkdir()
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{}")
    (project / "src").mkdir()
    for name, target in {
        "hm": home,
        "r": Path("/"),
        "e": Path("/etc"),
        "notes.txt": home / ".ssh" / "id_rsa",
        "keys": home / ".ssh",
        "cfg.json": project / ".claude" / "settings.json",
        "brc": home / ".bashrc",
        "srclink": project / "src",
    }.items():
        os.symlink(target, project / name)
    os.symlink("src", project / "rel")  # a relative link inside the project
    return project, home


def _judge(place: tuple[Path, Path], tool: str, tool_input: dict[str, str]) -> tuple[str, str]:
    project, home = place
    v = judge(tool, tool_input, cwd=str(project), home=str(home), policy=load_policy(str(project)))
    return v.decision, v.category


@pytest.mark.parametrize(
    ("command", "category"),
    [
        ("rm -rf hm/", "destructive-delete"),  # the link's contents: the home
        ("rm -rf hm/*", "destructive-delete"),
        ("rm -rf hm/Documents", "destructive-delete"),
        ("cd hm && rm -rf *", "destructive-delete"),
        ("rm -rf r/usr", "destructive-delete"),
        ("cat notes.txt", "secret-read"),
        ("cp notes.txt /tmp/k", "secret-read"),
        ("cat keys/id_rsa", "secret-read"),
        ("echo '{}' > cfg.json", "config-tampering"),
        ("echo 'alias ls=rm' >> brc", "config-tampering"),
        ("echo 127.0.0.1 x >> e/hosts", "system-change"),
    ],
)
def test_a_call_through_a_link_is_judged_where_it_points(
    linked: tuple[Path, Path], command: str, category: str
) -> None:
    assert _judge(linked, "Bash", {"command": command}) == ("deny", category)


@pytest.mark.parametrize(
    ("tool", "name", "category"),
    [
        ("Read", "notes.txt", "secret-read"),
        ("Write", "cfg.json", "config-tampering"),
        ("Edit", "brc", "config-tampering"),
        ("Write", "hm/.bashrc", "config-tampering"),
    ],
)
def test_a_file_tool_goes_through_a_link(linked: tuple[Path, Path], tool: str, name: str, category: str) -> None:
    tool_input = {"file_path": str(linked[0] / name), "content": "x", "old_string": "a", "new_string": "b"}
    assert _judge(linked, tool, tool_input) == ("deny", category)


@pytest.mark.parametrize(
    "command",
    [
        "rm hm",  # the link itself goes, not what it points to
        "rm -rf hm",
        "rm notes.txt",
        "find hm -delete",  # find does not follow a link it is given without -L or a trailing /
        "rm -rf srclink/ rel/old",  # links inside the project stay inside it
        "rm -rf missing/x && cat missing/id",  # nothing on disk: the path as written
        "echo hi > /dev/stdout",  # a link to the terminal: a device is judged by its name
    ],
)
def test_a_link_that_leads_nowhere_protected_is_allowed(linked: tuple[Path, Path], command: str) -> None:
    assert _judge(linked, "Bash", {"command": command})[0] == "allow"


def test_a_project_reached_through_a_link_is_still_the_project(place: tuple[Path, Path], tmp_path: Path) -> None:
    """A session whose folder is named through a link (``/tmp`` on macOS) works in it as named."""
    project, home = place
    (project / "build").mkdir()
    os.symlink(tmp_path, tmp_path.parent / (tmp_path.name + "-alias"))
    alias = tmp_path.parent / (tmp_path.name + "-alias") / "project"
    v = judge("Bash", {"command": "rm -rf build/ && rm -rf ./build/*"}, cwd=str(alias), home=str(home))
    assert v.decision == "allow"
    os.symlink(alias / "build", project / "b2")  # a link into the project, named through the alias
    v = judge("Bash", {"command": "rm -rf b2/"}, cwd=str(project), home=str(home))
    assert v.decision == "allow"
