"""The guard's rules for code that comes from another machine and runs unread: a script piped from a
download into a shell, a file downloaded and run in the same line, code hidden by an encoding, a
package installed from a host that is no package index."""

from __future__ import annotations

import os
import re
from fnmatch import fnmatchcase
from itertools import islice

from watcher.guard._built import runs_its_input
from watcher.guard._context import INTERPRETERS, PASS_THROUGH, At, inline_code, readable_code
from watcher.guard._files import Finding
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._ran import notebook_run
from watcher.guard._shell import SHELLS, Command, inner_script
from watcher.guard._wrappers import STDIN_PATHS

__all__ = ["download_exec", "downloaded_then_run"]

_DOWNLOADERS = frozenset(
    {
        "curl",
        "wget",
        "fetch",
        "iwr",
        "invoke-webrequest",
        "irm",
        "invoke-restmethod",
        "http",
        "https",
        "xh",
        "aria2c",
        "lwp-request",
        "GET",
    }
)


_HIDDEN = (
    "runs code hidden by an encoding (base64, hex, reversed or escaped text): nobody, the guard included, "
    "can read what it does before it runs; decode it to a file, read it, then run it"
)
_HIDDEN_TEXT = lazy(
    r"(?:\$\(|`)[^)`]*\b(?:base64\s+(?:-\w*[dD]|--decode)|xxd\s+(?:-\w+\s+)*-r|openssl\s+(?:base64|enc)\b[^)`]*\s-d\b|(?<![\w-])rev(?![\w-]))"
)


_SUBSTITUTED_DOWNLOAD = lazy(r"(?:<\(|\$\(|`)\s*(?:sudo\s+)?(?:curl|wget|fetch|iwr|irm|http)\b")
_SUBSTITUTED_DOWNLOAD_NO_BACKTICK = lazy(r"(?:<\(|\$\()\s*(?:sudo\s+)?(?:curl|wget|fetch|iwr|irm|http)\b")
_OWN_BACKTICKS = frozenset({"node", "deno", "bun", "ruby", "perl", "php", "pwsh", "powershell"})
_SUBSTITUTED = re.compile(r"\s*(?:\$\(|`)")  # a script that is, from its first word, a command's output


def _decodes(cmd: Command) -> bool:
    """``cmd`` turns unreadable text into a script: a base64 or hex decode, a reversal, escaped bytes."""
    args = list(cmd.args)
    if cmd.name == "base64":
        return any(a in ("-d", "-D", "--decode") or re.fullmatch(r"-\w*d\w*", a) for a in args)
    if cmd.name == "xxd":
        return any(re.fullmatch(r"-\w*r\w*", a) for a in args)
    if cmd.name == "openssl":
        return bool(args) and args[0] in ("base64", "enc") and "-d" in args
    if cmd.name == "printf":
        return any(re.search(r"\\(x[0-9a-fA-F]{2}|[0-7]{3})", a) for a in args)
    return cmd.name in ("rev", "uudecode", "basenc")


_PS_DOWNLOAD = lazy(r"(?i)\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|curl|wget)\b|downloadstring|net\.webclient")


def _powershell_download(cmd: Command) -> bool:
    """PowerShell's ``iex`` given a download: ``iex (iwr URL)``, ``irm URL | iex``, ``iex ((New-Object
    Net.WebClient).DownloadString(URL))``."""
    feeder = cmd.feeder
    while feeder is not None:
        if feeder.name.lower() in _DOWNLOADERS or any(_PS_DOWNLOAD.search(a) for a in (feeder.name, *feeder.args)):
            return True
        feeder = feeder.feeder
    return any(_PS_DOWNLOAD.search(a) for a in cmd.args)


def download_exec(x: At) -> Finding | None:
    if not x.on("download-exec"):
        return None
    name = x.name
    if runs_its_input(x.cmd):
        return (
            "download-exec",
            f"hands {name}'s input to a shell as the script: whatever the input holds runs, unread; write the commands out",
        )
    sourced = name in ("source", ".")
    runs_stdin = (
        (name in SHELLS or name in INTERPRETERS or sourced)
        and ((not x.positional and not sourced) or (x.positional and x.positional[0] in STDIN_PATHS) or "-s" in x.args)
        and not any(a in ("-m", "-c", "-e", "-r") for a in x.args[:2])
    )
    reads_script = name in ("python", "python3") and (
        not x.args or x.args[0] in ("-", "-i") or (x.positional[:1] == ["-"] and "-c" not in x.args)
    )  # python3 - / -i: the piped text is the program (python3 -c '…json.load(sys.stdin)…' reads data)
    if (runs_stdin and name not in ("python", "python3")) or (runs_stdin and reads_script):
        feeder = x.cmd.feeder
        while feeder is not None:
            if feeder.name in _DOWNLOADERS:
                return (
                    "download-exec",
                    "runs a script downloaded from the network, unread: whoever controls the URL runs code here; download it to a file, check and read it, then run it",
                )
            feeder = feeder.feeder if feeder.name in PASS_THROUGH else None
        feeder = x.cmd.feeder
        readable = (name in SHELLS or sourced) and inner_script(
            x.cmd
        ) is not None  # echo <base64> | base64 -d | sh: read
        while feeder is not None and not readable:
            if _decodes(feeder):
                return "download-exec", _HIDDEN
            feeder = feeder.feeder
    if name.lower() in ("iex", "invoke-expression") and _powershell_download(x.cmd):
        return (
            "download-exec",
            "runs a script downloaded from the network, unread: download it to a file, check and read it, then run it",
        )
    if _remote_with_rights(x):
        return (
            "download-exec",
            "runs a module from the network with the rights to change this machine (deno run -A URL), unread: "
            "download it, read it, then run it (or grant it no --allow-* rights)",
        )
    if (host := _foreign_package(x)) is not None:
        return (
            "download-exec",
            f"installs a package from {host}, which runs its setup code here: install it from the package "
            "index, or download and read it first",
        )
    runs_code = name in SHELLS or name in INTERPRETERS or name in ("eval", "source", ".", "iex", "invoke-expression")
    if runs_code and any(_HIDDEN_TEXT.search(a) for a in x.args):
        return "download-exec", _HIDDEN
    texts = list(x.args)
    if x.cmd.stdin and (name in SHELLS or name in INTERPRETERS or runs_stdin) and _SUBSTITUTED.match(x.cmd.stdin):
        texts.append(x.cmd.stdin)  # bash <<< "$(curl …)": the script is what the download prints
    # the script is a download's output, put in by the shell: `$(curl …)`, `<(curl …)`, `` `curl …` ``
    # (in JavaScript, Ruby, Perl, PHP and PowerShell a backtick is the language's own: a template, a
    # command whose output is a value, an escape; it puts nothing into the code)
    substituted = _SUBSTITUTED_DOWNLOAD if name not in _OWN_BACKTICKS else _SUBSTITUTED_DOWNLOAD_NO_BACKTICK
    for t in texts:
        if substituted.search(t) and (
            name in SHELLS or name in INTERPRETERS or name in ("eval", "source", ".", "iex", "invoke-expression")
        ):
            return (
                "download-exec",
                "runs a script downloaded from the network, unread: download it to a file, check and read it, then run it",
            )
    code = readable_code(inline_code(x.cmd))
    if code and _SOURCED_URL.search(code):
        return "download-exec", "runs a script it reads from the network, unread: download it, read it, then run it"
    if code and _EVALS.search(code) and _FETCHES.search(code) and re.search(r"(?i)\b(?:https?|ftp)://", code):
        return (
            "download-exec",
            "evaluates code it fetches from the network, unread: whoever controls the URL runs code here",
        )
    return None


_MODULE = lazy(r"\.(?:[cm]?[jt]s|[jt]sx)$")


def _remote_with_rights(x: At) -> bool:
    """``deno run -A https://…``: a module from the network given the rights to run programs, write
    files or read the environment (with none of them, Deno's sandbox keeps it from this machine)."""
    if x.name != "deno" or x.args[:1] not in (["run"], ["install"]):
        return False
    script = next((a for a in x.args[1:] if a.startswith(("https://", "http://")) or _MODULE.search(a)), "")
    granted = any(a in ("-A", "--allow-all") or a.startswith(("--allow-run", "--allow-write", "--allow-env",
                                                              "--allow-ffi", "--allow-all")) for a in x.args[1:])  # fmt: skip
    return granted and script.startswith(("https://", "http://"))


# R's source() and Ruby's/Python's loaders given a URL: the script is read from the network and run
_SOURCED_URL = lazy(r"""\b(?:source|sys\.source|source_url|load)\s*\(\s*['"](?:https?|ftp)://""")
# inline code that evaluates what it fetches: exec(urlopen(URL).read()), eval(file_get_contents(URL)),
# eval(await (await fetch(URL)).text()), eval(URI.open(URL).read)
_EVALS = lazy(
    r"(?<![\w.])(?:exec|eval|Function|instance_eval)\s*\(|\(\s*eval\s*\)|new\s+Function\b|\beval\s+get\b"
    r"|(?<![\w.$])eval\s+[A-Za-z_]"  # Ruby's and Perl's eval without parentheses: eval URI.open(URL).read
)
_FETCHES = lazy(
    r"urlopen|requests\.get|httpx\.get|urllib|fetch\s*\(|file_get_contents|URI\.open|Net::HTTP|LWP|https?\.get"
    r"|\bget\s*\(\s*['\"](?:https?|ftp)://"
    r"|['\"`]\s*(?:curl|wget)(?:\s|['\"]\s*,)"  # a download the code runs: execSync("curl -s …"), ["curl", …]
)


def _downloads(cmd: Command) -> list[str]:
    """The files ``cmd`` saves a download to: ``curl -o F``/``-O``, ``curl URL > F``, ``wget -O F``
    or its URL's name, ``certutil -urlcache -f URL F``, the folder ``git clone URL [D]`` makes, the
    folder ``curl URL | tar x -C D`` unpacks into."""
    if cmd.name == "tar" and cmd.feeder is not None and cmd.feeder.name in _DOWNLOADERS:
        args = list(cmd.args)  # curl URL | tar xz -C DIR: the download, unpacked into DIR
        extracts = any(
            a == "--extract"
            or re.fullmatch(r"-[a-zA-Z]*x[a-zA-Z]*", a)
            or (i == 0 and re.fullmatch(r"[a-zA-Z]*x[a-zA-Z]*", a))
            for i, a in enumerate(args)
        )  # tar xz, tar -xzf -, tar --extract
        if extracts:
            into = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory")][:1]
            urls = [a for a in cmd.feeder.args if re.match(r"(?i)(https?|ftp)://", a)]
            stem = (
                re.sub(r"\.(?:tar\.\w+|tgz|tbz2?|txz|tar)$", "", os.path.basename(urls[0].split("?")[0]))
                if urls
                else ""
            )
            return into or ([stem] if stem else [])  # without -C: the folder named like the archive, as usual
        return []
    if cmd.name not in ("curl", "wget", "certutil", "git"):
        if _fed_a_download(cmd):  # curl URL | base64 -d > f, wget -qO- URL | gunzip > f: the download, saved
            return [t for op, t in cmd.redirects if op in (">", ">>", ">|", "&>")]
        return []
    args = list(cmd.args)
    urls = [a for a in args if re.match(r"(?i)(https?|ftp|git|ssh)://|git@", a)]
    named = [os.path.basename(u.split("?", 1)[0].rstrip("/")) for u in urls]
    if cmd.name == "git":
        rest = [a for a in args[args.index("clone") + 1 :] if not a.startswith("-")] if "clone" in args else []
        return (rest[1:2] or [n.removesuffix(".git") for n in named[:1]]) if rest else []
    printed = [t for op, t in cmd.redirects if op in (">", ">>", ">|", "&>")]  # what it prints, saved
    if cmd.name == "certutil":
        return [a for a in args[args.index(urls[0]) + 1 :] if not a.startswith("-")][:1] if urls else []
    if cmd.name == "curl":
        out = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--output" or re.fullmatch(r"-[A-Za-z]*o", a)]
        out += [a[2:] for a in args if a.startswith("-o") and len(a) > 2 and not a.startswith("--")]
        remote = any(a in ("-O", "--remote-name") or re.fullmatch(r"-[A-Za-z]*O[A-Za-z]*", a) for a in args)
        return out + (named if remote else []) + ([] if out or remote else printed)
    out = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-O", "--output-document")]
    out += [a.split("=", 1)[1] for a in args if a.startswith("--output-document=")]
    to_stdout = "-" in out or any(re.fullmatch(r"-[a-zA-Z]*O-", a) for a in args)
    return printed if to_stdout else [o for o in out if o != "-"] or ([] if out else named)


def _fed_a_download(cmd: Command) -> bool:
    """``cmd`` passes on (decoded, unpacked) what a download prints."""
    feeder = cmd.feeder
    while feeder is not None:
        if feeder.name in _DOWNLOADERS:
            return cmd.name in PASS_THROUGH or _decodes(cmd) or cmd.name in ("gzip", "xz", "bzip2", "zstd", "openssl")
        feeder = feeder.feeder if (feeder.name in PASS_THROUGH or _decodes(feeder)) else None
    return False


def downloaded_then_run(script: str, cmds: list[Command], place: Place) -> Finding | None:
    """A file downloaded by the line and run later in it, unread (``curl -o x URL && sh x``,
    ``wget URL/i.sh && chmod +x i.sh && ./i.sh``, a download into a ``bin`` folder run by its name),
    or a download's text kept in a variable and run (``c=$(curl URL); $c``, ``eval "$c"``)."""
    fetched = _fetched_variables(script)
    saved: set[str] = set()
    for c in cmds:
        if fetched and c.argv and _runs_variable(c, fetched):
            return (
                "download-exec",
                "runs what it downloads, kept in a variable, unread: download it to a file, read it, then run it",
            )
        if saved and c.argv:
            first = next((a for a in c.args if not a.startswith("-")), "")
            windows = c.argv[0].lower().endswith((".exe", ".bat", ".cmd", ".ps1"))  # found in the folder itself
            runs = place.resolve(c.argv[0]) if "/" in c.argv[0] or windows else _on_path(c.argv[0], saved)
            runner = first and (c.name in SHELLS or c.name in INTERPRETERS or c.name in (".", "source"))
            notebook = "" if runner else notebook_run(c)
            read = place.resolve(first if runner else notebook) if runner or notebook else ""  # the file it runs
            installs = c.name in _INSTALLERS and any(place.resolve(a) in saved for a in c.args if "/" in a or "." in a)
            if installs or _within(runs, saved) or _within(read, saved):
                return (
                    "download-exec",
                    "runs a file it downloads in the same command, unread: download it, read it, then run it",
                )
        saved.update(place.resolve(f) for f in _downloads(c) if f)
    return None


def _foreign_package(x: At) -> str | None:
    """The host a package is installed from, when it is none of the package hosts the pack trusts
    (``pip install https://host/p.tar.gz``, ``pip install git+https://host/r.git``, ``npm i URL``)."""
    args = x.args
    words = [a for i, a in enumerate(args) if not a.startswith("-") and not (i and args[i - 1] in _PIP_VALUED)]
    installs = (x.name in ("pip", "pip3", "pipx") and words[:1] == ["install"]) or (
        x.name == "uv" and (words[:2] == ["pip", "install"] or words[:1] in (["add"], ["tool"]))
    )
    installs = installs or (x.name in ("npm", "pnpm", "yarn", "bun") and words[:1] in (["install"], ["i"], ["add"]))
    installs = installs or (x.name == "brew" and words[:1] == ["tap"])  # brew tap NAME URL: its formulas run code
    if not installs:
        return None
    trusted = x.policy.data["network"].get("package_hosts", [])
    for a in words[1:]:
        m = _PACKAGE_URL.search(a)  # a URL, a VCS URL, or a direct reference (`pkg @ https://…`)
        host = m.group(1).lower() if m else ""
        if host and not any(fnmatchcase(host, t) for t in trusted):
            return host
    return None


# options whose value is an index, a file or a folder, not a package
_PIP_VALUED = frozenset(
    {
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "-c",
        "--constraint",
        "-r",
        "--requirement",
        "--registry",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--cache-dir",
        "--python",
        "-p",
        "--with",
    }
)
_PACKAGE_URL = lazy(r"(?:git\+)?(?:https?|ssh|git)://(?:[^@/\s]+@)?([^/:\s]+)")


def _on_path(name: str, saved: set[str]) -> str:
    """The file saved into a ``bin`` folder that the command ``name`` runs (``~/go/bin/gopls``)."""
    return next((f for f in saved if os.path.basename(f) == name and os.path.basename(os.path.dirname(f)) in _BINS), "")


_BINS = frozenset({"bin", "sbin"})
_FETCHED = lazy(
    r"(?:^|[\s;&|(])(?:export\s+|local\s+)?([A-Za-z_]\w*)=[\"']?(?:\$\(|`)\s*(?:sudo\s+)?(?:curl|wget|fetch|http|xh)\b"
)


def _fetched_variables(script: str) -> set[str]:
    """The variables the line sets to what a download prints (bounded: the first 256 such)."""
    if "curl" not in script and "wget" not in script and "fetch" not in script and "http" not in script:
        return set()
    return {m.group(1) for m in islice(_FETCHED.finditer(script), 256)}


def _runs_variable(c: Command, names: set[str]) -> bool:
    """``c`` runs one of ``names`` as a program or a script: ``$v``, ``eval "$v"``, ``bash -c "$v"``."""
    used = {m.group(1) for a in c.argv for m in re.finditer(r"\$\{?([A-Za-z_]\w*)", a)} & names
    if not used:
        return False
    if re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", c.argv[0]):
        return True
    code = c.name in ("eval", "source", ".", "iex") or (c.name in SHELLS and "-c" in c.args)
    return code or (c.name in INTERPRETERS and any(a in ("-c", "-e") for a in c.args))


# programs that run what is inside a package they install (its scripts, often as root)
_INSTALLERS = frozenset({"installer", "dpkg", "rpm", "msiexec", "apt", "apt-get", "yum", "dnf", "zypper", "pkg"})


def _within(path: str, saved: set[str]) -> bool:
    """``path`` is a file downloaded, or inside a folder cloned (``git clone URL d && bash d/run.sh``)."""
    return bool(path) and (path in saved or any(path.startswith(f + "/") for f in saved))
