"""Dangerous shell commands an agent runs: destructive deletes, world-writable trees, remote code
piped into a shell, writes into ``~/.ssh``, and switched-off TLS verification.

Commands are split into simple commands on ``;``, ``&&``, ``||``, ``|`` and newlines, then each is
tokenised with ``shlex``; the piped-download rule looks at the whole line. Removing a build
directory inside the project (``rm -rf build/ dist node_modules``) is ordinary and not reported.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace

from watcher.core.interjection import Severity
from watcher.roles._security_model import Finding

__all__ = ["shell_findings", "tls_findings"]

_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_WRAPPERS = frozenset({"sudo", "doas", "nohup", "time", "exec", "command", "builtin", "xargs", "env"})
_HOME = r"(?:~|\$HOME|\$\{HOME\}|/root|/home/[^/\s]+|/Users/[^/\s]+)"
_ROOTS = re.compile(
    rf"^(?:/+\*?|/\.\*?|{_HOME}/*\*?|/(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|usr|var|Users|System)/*\*?)$"
)
_PIPE_TO_SHELL = re.compile(
    r"\b(?:curl|wget|fetch|iwr|Invoke-WebRequest)\b[^|;&\n]*\|\s*(?P<sudo>sudo\s+(?:-\S+\s+)*)?(?:env\s+)?"
    r"(?:/usr)?(?:/bin/)?(?:ba|z|k|da|fi)?sh\b|"
    r"\b(?P<sudo2>sudo\s+)?(?:ba|z|k)?sh\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*(?:curl|wget)\b|"
    r"\b(?:curl|wget)\b[^|;&\n]*\|\s*(?:sudo\s+)?python3?\b"
)
_SSH_WRITE = re.compile(
    rf"(?:>>?\s*|\btee\s+(?:-a\s+)?|\b(?:cp|mv|install|ln)\s+(?:-\S+\s+)*\S+\s+){_HOME}?/*\S*\.ssh/(?P<file>\S*)"
)
_CONTINUES = re.compile(r"(?:\|\||&&|(?<!\|)\|)\s*$")
_NOUNSET = re.compile(r"^\s*set\s+(?:-\w*u\w*|-o\s+nounset)\b", re.M)
# a path made of a variable and a slash: when the variable is empty or unset it is the root
_EMPTY_VAR_ROOT = re.compile(r"^\$(?:\{(?P<braced>[A-Za-z_]\w*)\}|(?P<plain>[A-Za-z_]\w*))/+\*?$")
_EVAL = re.compile(r"(?:^|[;&|(]\s*|\s)eval\s+(?P<arg>.*)")
_ASSIGNED = re.compile(r"(?:^|[;&|(\s])(?:export\s+|local\s+|readonly\s+|declare\s+\S+\s+)?([A-Za-z_]\w*)=(?=[^\s;&|])")
_LOOP_VAR = re.compile(r"\b(?:for|read(?:\s+-\w+)*)\s+([A-Za-z_]\w*)\b")
_EVAL_VARIABLE = re.compile(r"^['\"]?\$(?:\{[A-Za-z_]\w*\}|[A-Za-z_]\w*)")
_DOWNLOAD = re.compile(r"\b(?:curl|wget|fetch|iwr|Invoke-WebRequest|Invoke-RestMethod)\b")
_TLS = [
    (re.compile(r"\bcurl\b[^|;&\n]*\s(?:-[a-zA-Z]*k[a-zA-Z]*|--insecure)\b"), "curl -k/--insecure"),
    (re.compile(r"\bwget\b[^|;&\n]*--no-check-certificate"), "wget --no-check-certificate"),
    (
        re.compile(r"(?i)\bgit\b[^|;&\n]*\bhttp\.(?:[^\s=]+\.)?sslVerify['\"]?\s*(?:=\s*)?['\"]?(?:false|0|no)\b"),
        "git http.sslVerify false",
    ),
    (re.compile(r"\bGIT_SSL_NO_VERIFY\s*=\s*['\"]?(?:1|true)"), "GIT_SSL_NO_VERIFY"),
    (re.compile(r"\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0"), "NODE_TLS_REJECT_UNAUTHORIZED=0"),
    (re.compile(r"\bPYTHONHTTPSVERIFY\s*=\s*['\"]?0"), "PYTHONHTTPSVERIFY=0"),
    (re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\b[^|;&\n]*--trusted-host\b"), "pip --trusted-host"),
    (
        re.compile(
            r"(?i)\b(?:npm|yarn|pnpm)\b[^|;&\n]*?\bset\b[^|;&\n]*?['\"]?strict[-_]ssl['\"]?(?:\s+|\s*=\s*)['\"]?false\b"
        ),
        "npm strict-ssl false",
    ),
    (re.compile(r"(?i)\bnpm_config_strict_ssl\s*=\s*['\"]?false"), "npm strict-ssl false"),
    (re.compile(r"(?i)--strict-ssl[= ]false\b"), "npm --strict-ssl=false"),
    (re.compile(r"(?i)\bpip3?\s+config\s+set\s+\S*trusted-host\b"), "pip trusted-host"),
    (re.compile(r"(?i)\bconda\s+config\s+--set\s+ssl_verify\s+(?:false|no|0)\b"), "conda ssl_verify false"),
]
_TLS_GATE = re.compile(
    r"(?i)curl|wget|sslVerify|GIT_SSL_NO_VERIFY|NODE_TLS|PYTHONHTTPSVERIFY|trusted-host|strict[-_]ssl|ssl_verify"
)
# the same gate for lower-cased ASCII text: re searches a case-insensitive alternation some ten times slower
_TLS_GATE_LOWER = re.compile(
    r"curl|wget|sslverify|git_ssl_no_verify|node_tls|pythonhttpsverify|trusted-host|strict[-_]ssl|ssl_verify"
)
_RM_CHMOD = re.compile(r"\b(?:rm|chmod)\b")
_DISK = re.compile(
    r"\b(?:mkfs(?:\.\w+)?\s+/dev/|dd\b[^|;&\n]*\bof=/dev/(?:sd|hd|nvme|disk|xvd|vd)|>\s*/dev/(?:sd|nvme|disk)\w*)"
)


def shell_findings(script: str, *, line_offset: int = 0) -> list[Finding]:
    """Dangerous commands in ``script``; lines count from ``line_offset + 1``.

    A command continued over lines (a trailing backslash, or a line ending in ``|``, ``&&`` or
    ``||``) is read as one, and its finding spans those lines.
    """
    found: list[Finding] = []
    guarded = bool(_NOUNSET.search(script))
    # variables the script itself sets to something (tmp=$(mktemp -d); for d in ...): not empty
    set_here = frozenset(_ASSIGNED.findall(script)) | frozenset(_LOOP_VAR.findall(script))
    for first, last, line in _logical_lines(script.splitlines()):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for finding in _line_findings(line, first + line_offset, guarded=guarded, set_here=set_here):
            end = last + line_offset
            found.append(replace(finding, end_line=end) if end > finding.start_line else finding)
    return found


def _logical_lines(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, last line, the command joined into one line) for each command of a script."""
    out: list[tuple[int, int, str]] = []
    start, parts = 0, []  # type: tuple[int, list[str]]
    for number, line in enumerate(lines, 1):
        if not parts:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\") and not stripped.lstrip().startswith("#"):
            parts.append(stripped[:-1])
            continue
        parts.append(stripped)
        if _CONTINUES.search(stripped) and not stripped.lstrip().startswith("#") and number < len(lines):
            continue
        out.append((start, number, " ".join(p.strip() for p in parts)))
        parts = []
    if parts:
        out.append((start, len(lines), " ".join(p.strip() for p in parts)))
    return out


def tls_findings(text: str) -> list[Finding]:
    """Only the switched-off-TLS rules, for code that sets them (``NODE_TLS_REJECT_UNAUTHORIZED``)."""
    gate = _TLS_GATE_LOWER.search(text.lower()) if text.isascii() else _TLS_GATE.search(text)
    if gate is None:
        return []
    found: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        found.extend(_tls(line, number))
    return found


def _finding(rule: str, title: str, severity: Severity, explanation: str, line: str, number: int) -> Finding:
    return Finding(rule, title, severity, explanation, number, fingerprint=f"{rule}:{' '.join(line.split())}")


def _tls(line: str, number: int) -> list[Finding]:
    return [
        _finding(
            "shell:tls-off",
            f"TLS verification disabled ({what})",
            "warning",
            f"`{what}` turns off certificate checks, so a man-in-the-middle can serve anything. Fix the "
            "certificate setup instead (install the CA bundle, set REQUESTS_CA_BUNDLE / NODE_EXTRA_CA_CERTS).",
            line,
            number,
        )
        for pattern, what in _TLS
        if pattern.search(line)
    ]


def _line_findings(
    line: str, number: int, *, guarded: bool = False, set_here: frozenset[str] = frozenset()
) -> list[Finding]:
    out: list[Finding] = _tls(line, number)

    def add(rule: str, title: str, severity: Severity, explanation: str) -> None:
        out.append(_finding(rule, title, severity, explanation, line, number))

    for argv in _rm_chmod_commands(line) if _RM_CHMOD.search(line) else ():
        name = argv[0].rsplit("/", 1)[-1]
        flags = [a for a in argv[1:] if a.startswith("-")]
        targets = [a for a in argv[1:] if not a.startswith("-")]
        short = "".join(f[1:] for f in flags if not f.startswith("--"))
        if name == "rm" and ("r" in short.lower() or "--recursive" in flags):
            empty = [
                t
                for t in targets
                if (m := _EMPTY_VAR_ROOT.match(t)) is not None
                and (m.group("braced") or m.group("plain")) not in set_here
            ]
            if empty and not guarded:
                add(
                    "shell:rm-empty-var",
                    "Recursive delete of a path that is / when a variable is empty",
                    "critical",
                    f"`rm` deletes {', '.join(empty)}: if the variable is empty or unset, that is the filesystem "
                    'root. Guard it: `rm -rf "${VAR:?}/"*` stops with an error instead, or check the variable first.',
                )
            bad = [t for t in targets if _ROOTS.match(t)]
            if bad or "--no-preserve-root" in flags:
                add(
                    "shell:rm-root",
                    "Recursive delete of the filesystem root or home directory",
                    "critical",
                    f"`rm` would recursively delete {', '.join(bad) or '/'}: it destroys the machine's files or the "
                    "user's home and cannot be undone. Stop and delete only paths inside the project.",
                )
        recursive = "R" in short or "--recursive" in flags
        if name == "chmod" and recursive and any(re.fullmatch(r"0?777|a\+rwx|ugo\+rwx|o\+w|a\+w", t) for t in targets):
            severe = any(_ROOTS.match(t) for t in targets)
            add(
                "shell:chmod-777",
                "Recursive chmod 777",
                "critical" if severe else "warning",
                "`chmod -R 777` makes every file world-writable (and executable): any user or process can "
                "change code and data. Grant only what is needed, e.g. `chmod -R u+rwX,go+rX DIR`.",
            )
    match = _PIPE_TO_SHELL.search(line)
    if match:
        sudo = bool(match.group("sudo") or match.group("sudo2"))
        add(
            "shell:pipe-to-shell",
            "Download piped into a shell" + (" as root" if sudo else ""),
            "critical",  # whoever controls the URL runs code here: stopped before it runs, root or not
            "A script downloaded from the network is executed unread"
            + (" with root privileges" if sudo else "")
            + ": whoever controls that URL (or the connection) runs code on this machine. Download it to a "
            "file, check it (checksum or signature), read it, then run it.",
        )
    evaluated = _EVAL.search(line)
    argument = evaluated.group("arg") if evaluated else ""
    download = bool(_DOWNLOAD.search(argument))
    # eval "$(ssh-agent -s)" / "$(pyenv init -)": a local tool's setup output, the usual idiom
    if evaluated and (download or _EVAL_VARIABLE.search(argument)):
        add(
            "shell:eval",
            "eval of a download" if download else "eval of a variable",
            "critical" if download else "warning",
            (
                "The text a download returns is run as commands, unread: whoever controls the URL or the "
                "connection runs code here. Download to a file, check and read it, then run it."
                if download
                else "eval runs whatever the variable holds as shell code; a value from a download, a file "
                "or input runs as commands. Call the command directly with its arguments instead."
            ),
        )
    ssh = _SSH_WRITE.search(line)
    if ssh:
        keys = ssh.group("file").startswith(("authorized_keys", "id_"))
        add(
            "shell:ssh-write",
            "Write into ~/.ssh",
            "critical" if keys else "warning",
            "The command writes into ~/.ssh"
            + (
                " (authorized_keys / private keys): that grants or hands out SSH access to this account."
                if keys
                else ": SSH configuration changes who and what this account trusts."
            )
            + " Do not change SSH credentials from an agent; ask the user to do it.",
        )
    if _DISK.search(line):
        add(
            "shell:disk",
            "Raw write to a disk device",
            "critical",
            "The command overwrites a disk device: all data on it is lost. Stop.",
        )
    return out


def _rm_chmod_commands(line: str) -> list[list[str]]:
    """The simple commands of ``line`` that mention ``rm`` or ``chmod``, as argv lists, wrappers
    (sudo, env VAR=1, nohup) dropped. Only those are split: a line of 200,000 commands is read in
    a fraction of a second, not the half a minute ``shlex`` takes over all of them."""
    out = []
    for part in _SPLIT.split(line):
        if not _RM_CHMOD.search(part):
            continue
        try:
            argv = shlex.split(part, comments=True)
        except ValueError:
            argv = part.split()
        while argv and (
            argv[0] in _WRAPPERS or re.fullmatch(r"\w+=.*", argv[0]) or (argv[0].startswith("-") and len(argv) > 1)
        ):
            argv = argv[1:]
        if argv:
            out.append(argv)
    return out
