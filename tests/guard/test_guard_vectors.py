"""The guard against its vectors: per category, dangerous calls denied and benign look-alikes allowed.

Each ``data/<category>.toml`` holds ``dangerous`` and ``benign`` lists. A string is a Bash command;
a table names ``tool`` with ``path`` (a file) or ``input`` (the whole tool input), or ``command``,
and may set ``pack`` and ``cwd`` (a folder beside the project, outside any repository). Every call is judged in a temporary project (a git repository on branch
``my-feature``) with a temporary home: ``~`` and ``/home/dev`` in a vector are that home. The project holds an
``.npmrc`` and ``packages/web/.npmrc`` without tokens, a certificate chain ``fullchain.pem`` and
``bundle.pem`` (a certificate and its private key); the home an ``.npmrc`` and ``.pypirc`` with tokens
and the SSH keys ``~/.ssh/id_rsa`` and ``id_ed25519``.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from watcher.guard import judge, load_policy

DATA = Path(__file__).parent / "data"
FILES = sorted(DATA.glob("*.toml"))


def _cases(kind: str) -> list[Any]:
    out = []
    for path in FILES:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for n, vector in enumerate(data[kind]):
            label = vector if isinstance(vector, str) else json.dumps(vector)
            out.append(pytest.param(data, vector, id=f"{path.stem}-{n}-{label[:50]}"))
    return out


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("guard")
    project, home = root / "project", root / "home"
    project.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "my-feature", str(project)], check=True)
    (home / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789\n")
    (home / ".pypirc").write_text("[pypi]\nusername = __token__\npassword = pypi-abc\n")
    (home / ".ssh").mkdir()
    for key in ("id_rsa", "id_ed25519"):  # the person's keys: remaking one overwrites it
        (home / ".ssh" / key).write_text(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----\n"
        )
    (project / ".npmrc").write_text("registry=https://registry.npmjs.org/\n")
    (project / "packages" / "web").mkdir(parents=True)
    (project / "packages" / "web" / ".npmrc").write_text("@acme:registry=https://npm.acme.example/\n")
    certificate = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
    (project / "fullchain.pem").write_text(certificate * 2)
    key = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIDx\n-----END EC PRIVATE KEY-----\n"
    (project / "bundle.pem").write_text(certificate + key)  # a proxy's certificate and key in one file
    return project, home


def _verdict(data: dict[str, Any], vector: Any, place: tuple[Path, Path]) -> Any:
    project, home = place
    if isinstance(vector, str):
        vector = {"command": vector}
    pack = vector.get("pack", data.get("pack", "standard"))
    tool = vector.get("tool", "Bash")
    tool_input = dict(vector.get("input") or {})
    if "command" in vector:
        tool_input["command"] = vector["command"]
    if "path" in vector:
        tool_input["file_path"] = vector["path"]
    text = json.dumps(tool_input).replace("/home/dev", str(home))
    cwd = project.parent / vector["cwd"] if "cwd" in vector else project  # "outside": no repository
    cwd.mkdir(exist_ok=True)
    policy = load_policy(str(cwd), pack=pack)
    return judge(tool, json.loads(text), cwd=str(cwd), home=str(home), policy=policy)


@pytest.mark.parametrize(("data", "vector"), _cases("dangerous"))
def test_a_dangerous_call_is_denied(data: dict[str, Any], vector: Any, place: tuple[Path, Path]) -> None:
    verdict = _verdict(data, vector, place)
    assert verdict.denied, f"allowed: {vector!r}"
    assert verdict.reason and verdict.category


@pytest.mark.parametrize(("data", "vector"), _cases("benign"))
def test_a_benign_look_alike_is_allowed(data: dict[str, Any], vector: Any, place: tuple[Path, Path]) -> None:
    verdict = _verdict(data, vector, place)
    assert not verdict.denied, f"denied [{verdict.category}] {verdict.reason}: {vector!r}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_category_has_at_least_15_of_each(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert len(data["dangerous"]) >= 15 and len(data["benign"]) >= 15
    assert data["category"] in load_policy("/", pack=data.get("pack", "standard")).data["categories"]


@pytest.mark.parametrize(
    ("command", "denied"),
    [
        ("cat ~/.gitconfig", False),
        ("cat /root/notes.txt", False),
        ("cat ~/.aws/credentials", True),
        ("cat /root/.bash_history", True),
        ("cat /home/alice/.gitconfig", False),
        ("cat /root/.ssh/id_ed25519", True),
    ],
)
def test_a_session_run_as_root_has_root_as_its_home(command: str, denied: bool) -> None:
    """`/root/*` is another account's files, except for a session whose home it is (agents run as
    root in containers and CI): there its own files are judged as any home's are."""
    verdict = judge("Bash", {"command": command}, cwd="/root/work/app", home="/root", policy=load_policy("/"))
    assert verdict.denied is denied, verdict


@pytest.mark.parametrize(
    ("tool", "tool_input", "denied"),
    [
        ("Bash", {"command": "grep -r password ~"}, True),
        ("Grep", {"pattern": "api_key", "path": "~"}, True),
        ("Bash", {"command": "grep -rn password ."}, False),
        ("Bash", {"command": "grep -r TODO ~"}, False),
        ("Bash", {"command": "rg -i api_key ~/code"}, False),
    ],
)
def test_a_search_of_the_whole_home_for_credentials_from_a_project_inside_it(
    tool: str, tool_input: dict[str, str], denied: bool
) -> None:
    """The project usually lives in the home: searching all of it still reaches ~/.aws and ~/.ssh."""
    verdict = judge(tool, tool_input, cwd="/home/dev/code/app", home="/home/dev", policy=load_policy("/"))
    assert verdict.denied is denied, verdict


@pytest.mark.parametrize(
    ("command", "denied"),
    [
        ("xargs rm -rf < dirs.txt", False),
        ("cat dirs.txt | xargs rm -rf", False),
        ("xargs -a home.txt rm -rf", True),
        ("cat home.txt | xargs rm -rf", True),
        ("echo build | xargs -a gone.txt rm -rf", True),
        ("xargs rm < gone.txt", False),
    ],
)
def test_xargs_deletes_what_its_list_file_names(tmp_path: Path, command: str, denied: bool) -> None:
    """The words xargs reads from a file (``-a``, ``<``, ``cat f |``) are the paths it deletes: the
    guard reads the list; a recursive delete from a list it cannot read is denied."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "dirs.txt").write_text("build\nnode_modules\n")
    (project / "home.txt").write_text(f"build\n{home}\n")
    verdict = judge("Bash", {"command": command}, cwd=str(project), home=str(home), policy=load_policy("/"))
    assert verdict.denied is denied, verdict


@pytest.mark.parametrize(
    ("command", "denied"),
    [
        ("rm -rf node_modules", False),
        ("rm -rf build", False),
        ("rm -rf src", True),
        ("rm -rf usr", True),
        ("rm -rf /usr/lib/node_modules", True),
        ("rm -rf *", True),
    ],
)
def test_a_session_at_the_filesystem_root(command: str, denied: bool) -> None:
    """A hook called with no working directory of its own may run at `/`: its build folders there
    are its own, the system's folders are not."""
    verdict = judge("Bash", {"command": command}, cwd="/", home="/root", policy=load_policy("/"))
    assert verdict.denied is denied, verdict
