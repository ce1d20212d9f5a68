"""What touching a file means: reading a secret, writing a setting the agent must not change, a
system file, a device, or credential material written into a file; and whether a delete loses
something that cannot be had back."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
from fnmatch import fnmatchcase

from watcher.guard._lazy import lazy
from watcher.guard._paths import UNSET, Place, matches_any, under_any
from watcher.guard._policy import Policy, compiled

__all__ = [
    "SECRET_PROBES",
    "Finding",
    "credential",
    "delete_loss",
    "device",
    "foreign_registry",
    "git_records",
    "read_finding",
    "regular_text",
    "secret_file",
    "secret_glob",
    "system_path",
    "weakens_tls",
    "write_finding",
]

Finding = tuple[str, str]  # (category, reason)

# names of credential files a glob is tried against (`grep --include=.env*`, `cat .e*`): whether
# it could name one, where no such file is there to expand it to
SECRET_PROBES = (
    ".env",
    ".env.local",
    ".env.production",
    "id_rsa",
    "id_ed25519",
    "server.pem",
    "tls.key",
    "cert.p12",
    ".netrc",
    ".pgpass",
    "credentials",
    "secrets.yaml",
)

_SAFE_DEVICES = re.compile(
    r"^/dev/(null|zero|u?random|stdout|stderr|stdin|tty\w*|fd/\d+|shm(/.*)?|pts/\d+|console|full|tcp/.*|udp/.*)$"
)
# the system's own files, and its logs (a log rewritten or emptied hides what happened on the machine)
_SYSTEM_WRITES = (
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/sys", "/proc", "/System", "/Library", "/var/log",
    "/private/var/log",
)  # fmt: skip


def credential(policy: Policy, text: str, path: str = "") -> re.Match[str] | None:
    """Credential material in ``text`` (a private key, a cloud or service token, a password given as
    a literal), if any. ``path``: the file it is written to; a test's file may hold test passwords."""
    cache: list[tuple[tuple[str, ...], bool, bool, re.Pattern[str]]] = policy.data.setdefault("_credentials", [])
    if not cache:
        for entry in policy.data["secrets"]["content_patterns"]:
            given = entry["anchor"] if isinstance(entry["anchor"], list) else [entry["anchor"]]
            nocase = bool(entry.get("nocase"))
            shape = (tuple(a.lower() if nocase else a for a in given), nocase, bool(entry.get("anywhere", True)))
            cache.append((*shape, re.compile(entry["pattern"])))
    lowered = ""
    testing = bool(path) and bool(_TEST_FILE.search(path))
    for anchors, nocase, anywhere, pattern in cache:
        if testing and not anywhere:
            continue
        if nocase:
            lowered = lowered or text.lower()
        hay = lowered if nocase else text
        if any(a in hay for a in anchors):
            whole = len(text) <= _WHOLE or len(hay) != len(text)  # lower() may change a text's length
            found = pattern.search(text) if whole else _near_anchors(pattern, text, hay, anchors)
            if found:
                return found
    return _encoded_key(text) if "LS0tLS1CRUdJTi" in text else None


_WHOLE = 100_000  # a text longer than this is searched only near its anchors
_BEFORE, _AFTER = 256, 8192  # where a match holding an anchor can start before it, and end after it


def _near_anchors(pattern: re.Pattern[str], text: str, hay: str, anchors: tuple[str, ...]) -> re.Match[str] | None:
    """``pattern.search(text)`` for a pattern whose matches hold one of ``anchors``, in time that grows
    with the anchors found rather than with the text (``re`` tries a ``\\b``-led pattern at every
    position: 0.4 s a megabyte for the whole list). Each match in a window is matched again on the
    whole text, so a lookahead sees what the window cut off."""
    spans: list[tuple[int, int]] = []
    for anchor in anchors:
        at = hay.find(anchor)
        while at != -1:
            spans.append((max(0, at - _BEFORE), at + len(anchor) + _AFTER))
            at = hay.find(anchor, at + _AFTER // 2)  # the window already covers the next ones this close
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in merged:
        found = pattern.search(text, start, end)
        while found:
            whole = pattern.match(text, found.start())
            if whole:
                return whole
            found = pattern.search(text, found.start() + 1, end)
    return None


_ENCODED_PEM = lazy(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,4000}")  # base64 of "-----BEGIN" and what follows


def _encoded_key(text: str) -> re.Match[str] | None:
    """A private key written in base64 (``LS0tLS1CRUdJTiBPUEVOU1NI…``): what it decodes to is the key."""
    import base64  # only here: the hook's cold start does not pay for it

    for m in itertools.islice(_ENCODED_PEM.finditer(text), 16):
        body = m.group(0)[: len(m.group(0)) // 4 * 4]
        with contextlib.suppress(ValueError):
            if b"PRIVATE KEY" in base64.b64decode(body)[:200]:
                return m
    return None


# a test's file, fixture or mock: the passwords in it are the test's own
_TEST_FILE = lazy(
    r"(?:^|/)(?:tests?|__tests__|spec|specs|fixtures?|testdata|mocks?|__mocks__)/|(?:^|/)(?:test_[^/]*|[^/]*_test\.\w+|"
    r"[^/]*\.(?:test|spec)\.\w+|conftest\.py)$"
)


def secret_file(place: Place, path: str, policy: Policy, written: str | None = None) -> str | None:
    """Why ``path`` holds a credential, or None. ``written``: what a write puts into it, when known.
    A link to a credential (``ln -s ~/.ssh/id_rsa notes`` in an earlier call) is read and written through."""
    if path == UNSET:
        return None
    why = _secret_at(place, path, policy, written)
    if why is None and (folded := _folded(place, path)) != path:  # .ENV on macOS is .env
        why = _secret_at(place, folded, policy, written)
    if why is None and (real := place.on_disk(path, last=True)) != path:
        why = _secret_at(place, real, policy, written)
        return f"{why}, reached through a link ({_short(place, path)})" if why else None
    return why


# what editors, backups and copies add to a name: `.env~`, `server.key.bak`, `.npmrc.orig`, `id_rsa.old`
_BACKUP = lazy(r"(?<=[^/])(?:~|\.(?:bak|backup|old|orig|save|sav|swp|swo|tmp|copy|prev|[0-9]))+\Z")


def _secret_at(place: Place, path: str, policy: Policy, written: str | None, *, copies: bool = True) -> str | None:
    """Why the file ``path`` is a credential, by its name and place. With ``copies`` (reading or
    writing it), a backup's name is judged as the name it copies (``.env~`` as ``.env``,
    ``.env.example.bak`` as ``.env.example``), its text as its own; deleting a copy loses nothing."""
    secrets = policy.data["secrets"]
    named = _BACKUP.sub("", path) if copies else path
    if matches_any(place, named, secrets["not"]):
        return None
    if named.rsplit("/", 1)[-1] in secrets["token_files"]:
        if written is not None and _in_a_home(place, named):
            return f"{_short(place, path)}, the registry login of every project"  # ~/.npmrc, ~/.pypirc
        return _holds(place, path, policy, "secrets.token_pattern", "registry tokens", written)
    if matches_any(place, named, secrets["key_files"]):
        if written is not None and "-----BEGIN CERTIFICATE-----" not in written:
            return f"{_short(place, path)}, a key file"  # a certificate may be written there; anything else not
        return _holds(place, path, policy, "secrets.key_pattern", "a private key", written)
    # `/root/*` is another account's home, unless it is the session's own (run as root): then the
    # home's own rules apply, and ~/.gitconfig or ~/notes.txt is not a credential
    paths = [p for p in secrets["paths"] if p.rstrip("/*") != place.home]
    if matches_any(place, named, secrets["names"]) or matches_any(place, named, paths):
        return f"the credential file {_short(place, path)}"
    if under_any(place, path, policy.data["paths"]["secret_dirs"]):
        return f"{_short(place, path)} in a credential store"
    return None


def _holds(place: Place, path: str, policy: Policy, pattern: str, what: str, written: str | None) -> str | None:
    """Why ``path``, a file that is a credential only by what it holds (an ``.npmrc`` with a token,
    a ``.pem`` with a private key), is one: it holds ``what``, or it cannot be read to tell."""
    try:
        text = regular_text(path)
    except OSError:
        if written is None:
            return f"{_short(place, path)}, which may hold {what} (it cannot be read to tell)"
        text = ""  # a new file: what is written decides
    found = compiled(policy, pattern).search(text) or (written and compiled(policy, pattern).search(written))
    return f"{_short(place, path)}, which holds {what}" if found else None


def _in_a_home(place: Place, path: str) -> bool:
    """``path`` is a file at the top of a home (``~/.npmrc``, ``/home/alice/.pypirc``) or its ``~/.m2``."""
    rel = place.in_home(path)
    if rel is not None:
        return "/" not in rel or rel.startswith((".m2/", ".config/pip/", ".pip/"))
    return bool(re.match(r"^(?:/home/[^/]+|/Users/[^/]+|/root)/(?:\.m2/|\.config/pip/|\.pip/)?[^/]+$", path))


def regular_text(path: str) -> str:
    """The start of the regular file ``path``; OSError for anything else. Opened without blocking:
    a FIFO named ``key.pem`` would otherwise hold the guard (and the hook) until someone writes to it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, 65536).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _weakened(path: str, content: str) -> Finding | None:
    """A setting written that turns a safeguard off: a workflow printing every secret, an editor's
    workspace trust or automatic tasks, a package manager's TLS checks or registry."""
    if _WORKFLOW.search(path) and re.search(r"toJSON\(\s*secrets\s*\)", content):
        return "secret-exfiltration", "makes a workflow print every secret of the repository into its log"
    if path.endswith("/settings.json") and _EDITOR_TRUST.search(content):
        return "config-tampering", "turns off the editor's workspace trust or lets a folder's tasks run by themselves"
    if _PACKAGE_CONFIG.search(path) and _NO_TLS.search(content):
        return (
            "config-tampering",
            "points a package manager at a registry without TLS checks: anyone on the network can serve its packages",
        )
    return None


_EDITOR_TRUST = lazy(r'"security\.workspace\.trust\.enabled"\s*:\s*false|"task\.allowAutomaticTasks"\s*:\s*"on"')
_PACKAGE_CONFIG = lazy(
    r"(?:^|/)(?:\.npmrc|\.yarnrc(?:\.yml)?|pip\.conf|pip\.ini|\.condarc|\.gemrc|\.cargo/config(?:\.toml)?|\.bunfig\.toml)\Z"
)
_NO_TLS = lazy(
    r"(?i)strict[-_]?ssl\s*[=:]\s*false|check-revoke\s*=\s*false|ssl_verify\s*[=:]\s*(?:false|no)|trusted-host"
    r"|(?:registry|index-url|npmRegistryServer|index|find-links|channels?|sources?)\s*[=:]\s*[\"']?(?:sparse\+)?http://(?!localhost|127\.)"
)
# a line that says where packages come from, and the URL: `registry=…`, `index-url = …`, `npmRegistryServer: "…"`
_SOURCE_LINE = lazy(
    r"(?im)^[ \t]*[\"']?[\w.:@/-]*?(?:registry|npmRegistryServer|index-url|find-links|channel_alias)[\"']?[ \t]*[=:][ \t]*[\"']?"
    r"[a-z+]+://([^\s\"'/:]+)"
)


def weakens_tls(text: str) -> bool:
    """A package manager's setting (a file's text, or ``key=value``) that turns TLS checks off or
    fetches packages over plain HTTP from another machine."""
    return bool(_NO_TLS.search(text))


def foreign_registry(text: str, policy: Policy) -> str | None:
    """The host of a package source the text sets that is not one of the pack's ``package_hosts``."""
    hosts = policy.data["network"]["package_hosts"]
    for match in _SOURCE_LINE.finditer(text):
        if not any(fnmatchcase(match[1].lower(), h) for h in hosts):
            return match[1]
    return None


_WORKFLOW = re.compile(r"/\.github/workflows/[^/]+\.ya?ml\Z")
_PR_HEAD = lazy(r"github\.event\.pull_request\.head\.(?:sha|ref)|github\.head_ref|refs/pull/")


def _runs_strangers_code(path: str, content: str) -> bool:
    """A GitHub workflow on ``pull_request_target`` (run with the base repository's secrets) that checks
    out the pull request's head: the stranger's code runs with them. The file's text before the
    change counts too (an edit adding only the checkout)."""
    if not _WORKFLOW.search(path) or not ("pull_request_target" in content or _PR_HEAD.search(content)):
        return False
    before = ""
    with contextlib.suppress(OSError):
        before = regular_text(path)
    both = f"{before}\n{content}"
    return "pull_request_target" in both and bool(_PR_HEAD.search(both))


def _short(place: Place, path: str) -> str:
    rel = place.in_home(path)
    if rel is not None:
        return "~/" + rel if rel else "~"
    if place.inside_project(path):
        return os.path.relpath(path, place.project)
    return path


def read_finding(place: Place, path: str, policy: Policy) -> Finding | None:
    """Reading ``path`` puts a credential into the session's context."""
    why = secret_file(place, path, policy)
    return ("secret-read", f"reads {why}: its secrets would reach the model and the transcript") if why else None


def device(path: str) -> bool:
    return path.startswith("/dev/") and not _SAFE_DEVICES.match(path)


def write_finding(place: Place, path: str, policy: Policy, content: str = "") -> Finding | None:
    """Writing ``path`` (with ``content``, when known) changes something the agent must not change;
    through a link on its way, what the link points to is written."""
    if path == UNSET:
        return None
    found = _write_at(place, path, policy, content)
    if found is None and (real := place.on_disk(path, last=True)) != path:
        found = _write_at(place, real, policy, content)
        return (found[0], f"{found[1]} (reached through a link: {_short(place, path)})") if found else None
    return found


def _write_at(place: Place, path: str, policy: Policy, content: str) -> Finding | None:
    if device(path):
        return "device-write", f"writes to the device {path}: the data on it is overwritten"
    if matches_any(place, path, policy.data["config"]["paths"]) or matches_any(
        place, _folded(place, path), policy.data["config"]["paths"]
    ):
        return (
            "config-tampering",
            f"changes {_short(place, path)}, which sets the agent's own guard or permissions, what runs at start-up "
            "or on git's hooks, or who may log in; ask the person to change it",
        )
    config = policy.data["config"]
    if os.path.basename(path) in config.get("system_programs", ()) and any(
        os.path.dirname(path) == place.expand(d) for d in config.get("path_first", ())
    ):
        return (
            "config-tampering",
            f"puts a program named {os.path.basename(path)} where the PATH looks before the system's: it would "
            "run instead of the real one, with whatever it is given",
        )
    if content and (weakened := _weakened(path, content)):
        return weakened
    if content and policy.data["network"].get("any_registry") and policy.enabled("team-policy"):
        host = foreign_registry(content, policy) if _PACKAGE_CONFIG.search(path) else None
        if host:
            return (
                "team-policy",
                f"points {_short(place, path)} at the registry {host} (team policy: which registry to trust is the team's choice)",
            )
    if content and _runs_strangers_code(path, content):
        return (
            "config-tampering",
            f"makes {_short(place, path)} run a pull request's own code on pull_request_target, with the "
            "repository's secrets and write token: anyone who opens a pull request can take them",
        )
    if why := secret_file(place, path, policy, content or None):  # "": not known
        return "secret-write", f"changes {why}: credentials are the person's to set"
    if git_records(path):
        return (
            "destructive-delete",
            f"rewrites git's own records ({_short(place, path)}) by hand: commits can be lost; use git's commands",
        )
    if any(path == d or path.startswith(d + "/") for d in _SYSTEM_WRITES) and not place.inside_project(path):
        return "system-change", f"writes the system file {path}; system changes are the person's to make"
    if content and (m := credential(policy, content, path)):
        what = "a private key" if "PRIVATE KEY" in m.group(0) else "a credential"
        return "secret-write", f"writes {what} into {_short(place, path)}: keep it in the environment or a secret store"
    return None


# what a repository's history lives in, inside its .git folder (hooks and config are the
# config-tampering rules'; info/exclude, COMMIT_EDITMSG and the like are git's scratch)
_GIT_RECORDS = re.compile(r"/\.git/(?:refs(?:/.*)?|logs(?:/.*)?|objects(?:/.*)?|HEAD|packed-refs|shallow)\Z")


def git_records(path: str) -> bool:
    """``path`` is where a repository keeps its history: refs, reflogs, objects, HEAD."""
    return bool(_GIT_RECORDS.search(path))


def _folded(place: Place, path: str) -> str:
    """``path`` as a case-insensitive filesystem (macOS, Windows) finds it: ``.Claude/Settings.JSON``
    is ``.claude/settings.json`` there. The home's own spelling is kept."""
    rel = place.in_home(path)
    return path.lower() if rel is None else place.home.rstrip("/") + "/" + rel.lower()


def config_inside(place: Place, folder: str, policy: Policy) -> str:
    """A setting of the agent's guard that lives in ``folder`` ("" when none does); the pack's
    first such setting, as it lists them."""
    anywhere, placed = _settings_index(place, policy)
    segments = folder.rstrip("/").split("/")[1:]
    ends = ("/" + "/".join(segments[-k:]) for k in range(1, min(len(segments), 4) + 1))  # /hooks, /.git/hooks
    found = [hit for end in ends if (hit := anywhere.get(end)) is not None]
    if folder not in ("/", place.home):
        inside = folder.rstrip("/") + "/"
        found += [(n, _short(place, full)) for n, full in placed if full.startswith(inside)][:1]
    return min(found)[1] if found else ""


def _settings_index(place: Place, policy: Policy) -> tuple[dict[str, tuple[int, str]], list[tuple[int, str]]]:
    """The pack's settings, once per home: the folder ends a ``**/`` setting lives in (``/.git/hooks``,
    ``/.claude``) with the pack's order and the setting, and the placed settings, expanded."""
    cache = policy.data.setdefault("_compiled", {})
    key = f"_config_inside:{place.home}"
    index: tuple[dict[str, tuple[int, str]], list[tuple[int, str]]] | None = cache.get(key)
    if index is None:
        anywhere: dict[str, tuple[int, str]] = {}
        placed: list[tuple[int, str]] = []
        for n, pattern in enumerate(policy.data["config"]["paths"]):
            full = place.expand(pattern)
            if full.startswith("**/"):
                parts = full[3:].split("/")[:-1]  # the folders the setting is in: .git/hooks, .claude
                for k in range(len(parts)):
                    anywhere.setdefault("/" + "/".join(parts[: k + 1]), (n, full[3:]))
            else:
                placed.append((n, full))
        index = cache[key] = (anywhere, placed)
    return index


def delete_loss(
    place: Place, path: str, policy: Policy, *, recursive: bool, whole: bool, inside: bool = False
) -> str | None:
    """What deleting ``path`` would lose for good (None: an ordinary delete).

    ``recursive``: the delete takes folders; ``whole``: a glob names everything in ``path``; ``inside``:
    the path names a folder's entries (``h/``), so a link ``h`` is gone through, not only removed. A link
    on the way (``h/sub`` with ``h`` a link an earlier call made to the home) is judged where it points.
    """
    loss = _loss_at(place, path, policy, recursive=recursive, whole=whole)
    if loss is None and path != UNSET and (real := place.on_disk(path, last=whole or inside)) != path:
        loss = _loss_at(place, real, policy, recursive=recursive, whole=whole)
        return f"{loss}, reached through a link ({_short(place, path)})" if loss else None
    return loss


def _loss_at(place: Place, path: str, policy: Policy, *, recursive: bool, whole: bool) -> str | None:
    if path == UNSET:
        return "a path built from a variable this call does not set: what it holds is unknown here, and empty it can make the path the filesystem root"
    if not (recursive or whole) and (path in ("/", place.home) or place.holds_project(path)):
        return None  # a folder: a delete without -r refuses it
    if path == "/":
        return "the filesystem root"
    if device(path):
        return f"the device {path}"
    if path == place.home:
        return "your home folder"
    if place.holds_project(path) and (recursive or whole):
        return "the project" if path == place.project else "a folder that holds the project"
    paths = policy.data["paths"]
    if under_any(place, path, paths["secret_dirs"]) or (
        not recursive and _secret_at(place, path, policy, None, copies=False)
    ):
        return f"credentials ({_short(place, path)})"
    if path.endswith("/.git") and (place.holds_project(path[:-5]) or place.inside_project(path)):
        return "the repository's history (.git)"
    if git_records(path):
        return f"git's own records ({_short(place, path)}): commits only they point to are lost"
    if not (recursive or whole):
        system = system_path(place, path, paths)
        return f"the system file {path}" if system else None
    if place.inside_project(path):
        return None
    rel = place.in_home(path)
    if rel is not None:
        if any(rel == c or rel.startswith(c + "/") for c in paths["home_caches"]):
            return None
        if "/" not in rel:
            if place.project == place.home and rel != "bin" and any(fnmatchcase(rel, r) for r in paths["regenerable"]):
                return None  # a session working in the home itself: its node_modules or build is work
            return f"the folder ~/{rel} of your home"
    if under_any(place, path, paths["temporary"]) and rel is None:
        if under_any(place, place.project, paths["temporary"]) and os.path.dirname(path) == os.path.dirname(
            place.project
        ):
            return f"{path}, a folder beside the project"  # the project lives in /tmp: its neighbours are work too
        return None
    name = path.rsplit("/", 1)[-1]
    # `cd .. && rm -rf build`: beside the project, a "build" may be another project (unless the
    # session works at the root itself, where its build folder is its own)
    beside = place.holds_project(os.path.dirname(path)) and place.project != "/"
    regenerable = any(fnmatchcase(name, r) for r in paths["regenerable"])
    if regenerable and not beside and not under_any(place, path, paths["system"]):
        return None  # ../other-app/node_modules: a build makes it again
    if system_path(place, path, paths):
        return f"the system folder {path}"
    if beside:
        return f"{_short(place, path)}, a folder beside the project"
    return f"{_short(place, path)}, a folder outside the project"


def system_path(place: Place, path: str, paths: dict[str, list[str]]) -> bool:
    """``path`` is in a system tree (not a temporary folder, not a home): the machine's, not the project's."""
    if under_any(place, path, paths["temporary"]) or place.in_home(path) is not None:
        return False
    return path.count("/") == 1 or under_any(place, path, paths["system"])


def secret_glob(place: Place, pattern: str, policy: Policy) -> str | None:
    """Why the shell glob ``pattern`` (a path with ``*``, ``?`` or ``[``) names a credential: a file
    it expands to here, or, for a hidden-file pattern (``.e*``), a credential file's name it matches."""
    import glob

    folder, _, name = pattern.rpartition("/")
    for found in itertools.islice(glob.iglob(place.resolve(pattern)), 200):
        why = secret_file(place, found, policy)
        if why:
            return why
    if name.startswith("."):
        for probe in SECRET_PROBES:
            if fnmatchcase(probe, name):
                why = secret_file(place, place.resolve(f"{folder}/{probe}" if folder else probe), policy)
                if why:
                    return why
    return None
