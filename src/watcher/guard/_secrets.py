"""The guard's rules for secrets read in shell commands: a credential file, the environment, a
secret variable, a search for credentials (sending them is ``_exfiltration``'s to judge)."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from itertools import pairwise

from watcher.guard._context import NETWORK, At, code_at, inline_code, readable_code
from watcher.guard._files import SECRET_PROBES, Finding, read_finding, secret_file, secret_glob
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._policy import compiled
from watcher.guard._shell import SHELLS

__all__ = [
    "credential_search",
    "key_lines",
    "leaked",
    "redirected_reads",
    "secret_reads",
    "secret_vars",
]

# commands that use a secret file without showing its content
_OPAQUE = frozenset(
    {
        "ls",
        "stat",
        "file",
        "test",
        "[",
        "[[",
        "touch",
        "chmod",
        "chown",
        "chgrp",
        "icacls",
        "cacls",
        "setfacl",
        "getfacl",
        "takeown",
        "attrib",
        "mkdir",
        "rmdir",
        "ssh",
        "ssh-add",
        "ssh-copy-id",
        "ssh-keygen",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "md5sum",
        "shasum",
        "b2sum",
        "cksum",
        "wc",
        "du",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "export",
        "dotenv",
        "direnv",
        "docker",
        "docker-compose",
        "podman",
        "git",
        "ln",
        "echo",
        "printf",
        "find",
        "fd",
        "tree",
        "exa",
        "eza",
        "lsof",
        "code",
        "mv",
        "rm",
        "shred",
        "unlink",
        "trash",
        "which",
        "type",
        "sops",
        "security",
        "age",
        "gpg-connect-agent",
        "openssl",
        "kubectl",
        "helm",
        "terraform",
        "tofu",
        "ansible-vault",
        "envsubst",
        "tee",
        "truncate",
        "sponge",
    }
)

_ENV_DUMPS = frozenset({"printenv", "env", "set", "export", "declare", "typeset", "compgen"})

# PowerShell's (and cmd's) commands that list, test or name a path, not print what is in it
_OPAQUE_CMDLETS = frozenset(
    {"get-childitem", "gci", "dir", "test-path", "get-item", "gi", "get-acl", "set-acl", "resolve-path", "split-path"}
)

# programs whose first operand is a pattern or a program, not a file (unless given by an option)
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"})
_PATTERN_FIRST = _SEARCHERS | {"jq", "yq", "gojq", "jaq", "awk", "gawk", "mawk", "sed"}
_PATTERN_GIVEN = frozenset({"-e", "-f", "--regexp", "--file", "--expression", "--from-file"})

# programs whose every operand is a file they print: a bare name (`cat id_rsa`) is a file too
_READERS = frozenset(
    {
        "cat",
        "tac",
        "head",
        "tail",
        "less",
        "more",
        "most",
        "bat",
        "batcat",
        "nl",
        "od",
        "xxd",
        "hexdump",
        "hd",
        "strings",
        "base64",
        "base32",
        "sort",
        "uniq",
        "cut",
        "fold",
        "fmt",
        "pr",
        "rev",
        "column",
        "paste",
        "view",
        "vim",
        "vi",
        "nvim",
        "nano",
        "emacs",
        "ed",
        "pico",
        "zcat",
        "bzcat",
        "xzcat",
        "iconv",
        "expand",
        "unexpand",
        "dos2unix",
        "unix2dos",
    }
)


_LEAVES_OUT = re.compile(r"exclude|ignore|skip|omit")
_EDITOR_READERS = frozenset({"vim", "vi", "nvim", "view", "ex"})


# the whole environment as a value in inline code, and what shows or sends a value
_ENV_DUMP = lazy(
    r"(?<!\bin )(?<!\*\*)(?<!env=)(?<!env=dict\()os\.environ(?!\s*\[|\.(?:get|keys|setdefault|update|pop|copy)\b)"
    r"|\[(?:System\.)?Environment\]::GetEnvironmentVariables\(\)|(?<!Object\.keys\()process\.env(?!\.)|ENV\.(?:to_h|to_a|inspect|each|map|sort)|%ENV|\bp(?:p)?\s+ENV\b(?!\s*[\[.])"
    r"|Deno\.env\.toObject\(\)|\bBun\.env(?![.\[])|\bgetenv\(\s*\)|\$_ENV\b(?!\s*\[)|System\.getenv\(\s*\)"
)
_SHOWS_OR_SENDS = lazy(
    r"\b(?:print|pprint|puts|pp?|say|printf|echo|warn|var_dump|print_r|var_export|dd|dump)\b|console\.\w+|\.write|\bdumps?\b|\blog\w*\("
    r"|\b(?:post|put|send|urlopen|fetch|request|upload)\w*\s*\(|STDOUT|stdout"
)
# the environment held under a key of an object (``{ environment: { ...process.env } }``,
# ``vars: JSON.stringify(process.env)``)
_JS_HELD = lazy(r"""(?<![\w$])[\w$]+['"]?\s*:\s*(?:\{\s*\.\.\.\s*|JSON\.stringify\(\s*)?$""")
# a call that starts a program, up to the options object it is given: spawn("npm", ["test"], {
_STARTS_PROGRAM = lazy(
    r"\b(?:spawn|spawnSync|exec|execSync|execFile|execFileSync|fork|execa|execaSync|execaCommand|Worker)\s*\([^()]*$"
)


def _program_env(code: str, at: int) -> bool:
    """Whether the object whose key is at ``at`` is the options of a call that starts a
    program (``spawn(…, { env: { ...process.env, CI: "1" } })``): its environment, not a report."""
    depth = 0
    for i in range(at - 1, max(at - 4000, 0) - 1, -1):
        if code[i] == "}":
            depth += 1
        elif code[i] == "{":
            if depth == 0:
                return bool(_STARTS_PROGRAM.search(code[max(i - 400, 0) : i]))
            depth -= 1
    return False


# a secret file's path given only to a call that checks it or loads it into the process, not shows it
_CHECKS = r"(?:exists|isfile|is_file|isdir|existsSync|access|accessSync|stat|lstat|getsize|getmtime|load_dotenv|dotenv_values|Dotenv\.load|Dotenv\.overload)"


# one variable of the environment, read by name in Python, JavaScript, Ruby, Perl or PHP
_ENV_READ = lazy(
    r"""(?:os\.environ\[\s*|os\.environ\.get\(\s*|os\.getenv\(\s*|process\.env\[\s*|ENV\[\s*|ENV\.fetch\(\s*"""
    r"""|\$_ENV\[\s*|\bgetenv\(\s*)['"](?P<q>\w+)['"]\s*[\])]?|process\.env\.(?P<d>\w+)"""
    r"""|\$ENV\{\s*['"]?(?P<p>\w+)['"]?\s*\}?"""
)
# printing (not sending: a token sent to its own API is used, and the exfiltration rule judges the rest)
_PRINTS = lazy(r"\b(?:print|pprint|puts|pp?|say|printf|echo|warn)\b(?!\s*=)|console\.\w+|\blog\w*\(|STDOUT|stdout")
# between the printing call and the value: another call, or an object's key (the value is inside something else)
_INSIDE = lazy(r"""[\w\])]\s*\(|[{\[,]\s*['"]?[\w-]+['"]?\s*:(?!:)""")
# what only tests or measures a value (set or not, how long, which prefix), before it or after it
_TESTED_BEFORE = lazy(
    r"(?:\b(?:bool|len|Boolean|isset|empty|defined|hash|not|if|while|and|or|assert)|!!?|&&|\|\||typeof|\bin)\s*\(?\s*$"
)
_TESTED_AFTER = lazy(
    r"""^\s*\)?\s*(?:is\b|==|!=|===|!==|\?|\.length|\.startswith|\.startsWith|\[\s*:|\.slice|\.substring"""
    r"""|\.present|\.nil|\.empty|\.encode\(|\bif\b|\band\b|\bor\b|&&|\|\|)"""
)
# `key = os.environ["API_KEY"]`, `const key = process.env.API_KEY`, `my $k = $ENV{TOKEN}`: the name it is held under
_HELD_AS = lazy(r"(?:\b(?:const|let|var|my)\s+)?\$?(?P<n>[A-Za-z_]\w*)\s*=\s*$")


_OPENSSL_PRINTS = lazy(r"enc|base64|cms|smime|pkeyutl|rsautl")


def _transcodes(x: At) -> bool:
    """``openssl enc``/``base64``/``cms``/…: the input transformed, printed (no ``-out``), not sent."""
    subcommand = next((a for a in x.args if not a.startswith("-")), "")
    return x.name == "openssl" and "-out" not in x.args and bool(_OPENSSL_PRINTS.fullmatch(subcommand))


def _looped_files(x: At) -> list[str]:
    """The files ``perl -n``/``-p`` or ``ruby -n``/``-p`` run their code over, line by line (none when
    they edit them in place, ``-i``)."""
    at = code_at(x.cmd) if x.name in ("perl", "ruby") else None
    if at is None:
        return []
    flags = [a for a in x.args[:at] if a.startswith("-") and not a.startswith("--")]
    if not any("n" in f or "p" in f for f in flags) or any("i" in f for f in flags):
        return []
    return [a for a in x.args[at + 1 :] if not a.startswith("-")]


def _in_words(before: str) -> bool:
    """A name after ``before`` on its line is inside a string's text (``"not a Slack webhook"``),
    not in an f-string's ``{…}`` or a template's ``${…}`` (where it is code)."""
    for quote in "\"'`":
        if before.count(quote) % 2:
            return not re.search(r"\{[^}]*$", before[before.rfind(quote) + 1 :])
    return False


def _secret_env_shown(x: At, code: str) -> bool:
    """``print(os.environ["API_KEY"])``, ``console.log(process.env.GITHUB_TOKEN)``: a secret's variable
    printed as it is, or held under a name that is (a test of whether it is set, or its length, is not;
    nor a value built from it, such as a request made with it)."""
    names = compiled(x.policy, "secrets.env_names")
    for m in _ENV_READ.finditer(code):
        name = m.group("q") or m.group("d") or m.group("p")
        if not names.match(name) or (name.islower() and not _LOCAL_SECRET.search(name)):
            continue
        start = code.rfind("\n", 0, m.start()) + 1
        end = code.find("\n", m.end())
        before, after = code[start : m.start()], code[m.end() : end if end >= 0 else len(code)]
        shown = [(before, after)]
        if (held := _HELD_AS.search(before.rsplit(";", 1)[-1])) is not None:  # then wherever its name goes
            rest = code[m.end() :]
            uses = re.finditer(rf"(?<![\w.]){re.escape(held.group('n'))}(?![\w(])", rest)
            shown = [(rest[: u.start()].rsplit("\n", 1)[-1], rest[u.end() :].split("\n", 1)[0]) for u in uses]
            shown = [(b, a) for b, a in shown if not _in_words(b)]
        for b, a in shown:
            printing = list(_PRINTS.finditer(b))
            direct = bool(printing) and not _INSIDE.search(b[printing[-1].end() :])
            if direct and not _TESTED_BEFORE.search(b) and not _TESTED_AFTER.search(a):
                return True
    return False


def _only_checked(code: str, word: str) -> bool:
    """Every mention of ``word`` in ``code`` is a check or a loading of it (``os.path.exists(p)``,
    ``load_dotenv('.env')``): its secrets stay in the process."""
    quoted = rf"""['"]{re.escape(word)}['"]"""
    checked = len(re.findall(rf"{_CHECKS}\s*\(\s*(?:[\w.]+\(\s*)?{quoted}|{quoted}\s*\.\s*{_CHECKS}\(", code))
    return checked > 0 and checked + _named(code, quoted) == len(re.findall(quoted, code))


def _named(code: str, quoted: str) -> int:
    """How often ``quoted`` is only given a name (``path = '~/.netrc'``, ``const KEYS = "~/.ssh";``,
    ``return '~/.netrc'``): where the name is used is what is judged."""
    return len(
        re.findall(rf"^\s*(?:(?:const\s+|let\s+|var\s+)?[A-Za-z_]\w*\s*=|return)\s*{quoted}\s*;?\s*$", code, re.M)
    )


def _secret_path(x: At, word: str) -> str | None:
    """Why the string ``word`` names a secret file, when it is a path (not prose) and names one."""
    if ("/" in word or word.startswith((".", "~"))) and not re.search(r"\s", word.strip()):
        return secret_file(x.place, x.path(word), x.policy)
    return None


def _python_words(code: str) -> list[str] | None:
    """The strings Python code holds as data that it may read (not those it only prints, checks,
    compares or names); None for code that is not Python, whose every string literal is read."""
    if "import" not in code and "open(" not in code and "read" not in code:
        return None
    from watcher.guard._python_uses import used_strings  # its parser imported by the calls with code only

    return used_strings(code)


# a string literal, quote to the same quote (a '"' is a string holding a double quote)
_STRING = lazy(r"""(['"])((?:(?!\1)[^\\\n]|\\.){1,2000})\1""")


def _only_joined(code: str, word: str) -> bool:
    """Every mention of the folder ``word`` goes on with a part known only when the code runs
    (``'~/.ssh' / name``, ``os.path.join('~/.ssh', name)``): which of its files is read is not known
    here. A part that is known is written in place (``'~/.ssh/id_rsa'``) and judged as that file."""
    quoted = rf"""['"]{re.escape(word)}['"]"""
    joined = len(re.findall(rf"{quoted}\s*/\s*[A-Za-z_]|join\(\s*{quoted}\s*,\s*[A-Za-z_]", code))
    return joined > 0 and joined + _named(code, quoted) == len(re.findall(quoted, code))


def _tar_folder(x: At) -> tuple[str, str] | None:
    """The folder ``tar -C DIR`` (``--directory=DIR``) archives from, as a path, and the word naming it."""
    if x.name not in ("tar", "bsdtar", "gtar"):
        return None
    for i, a in enumerate(x.args):
        if a in ("-C", "--directory") and i + 1 < len(x.args):
            return x.path(x.args[i + 1]), x.args[i + 1]
        if a.startswith("--directory="):
            return x.path(a.split("=", 1)[1]), a.split("=", 1)[1]
    return None


def _names_only(x: At) -> bool:
    """``cut -d= -f1 .env``, ``awk -F= '{print $1}' .env``, ``grep -o '^[A-Z_]+' .env``: only the names
    before each ``=``, not the values."""
    joined = " ".join(x.args)
    if x.name == "cut":
        return bool(re.search(r"(?:-d\s*|--delimiter=)['\"]?=['\"]?(?:\s|$)", joined + " ")) and bool(
            re.search(r"(?:-f\s*|--fields=)1(?:\s|$)", joined + " ")
        )
    if x.name in ("grep", "egrep", "rg") and ("o" in x.short or "--only-matching" in x.args) and x.positional:
        # grep -oE '^[A-Z0-9_]+' .env: each line's name, up to its `=`
        return bool(re.fullmatch(r"\^(?:\[(?:\^=|[A-Za-z0-9_-]+)\]|\\w)[+*]", x.positional[0]))
    if x.name in ("awk", "gawk", "mawk"):
        return bool(re.search(r"-F\s*['\"]?=['\"]?\s", joined + " ")) and bool(
            re.fullmatch(r"\{\s*print\s+\$1;?\s*\}", next((a for a in x.positional), "").strip())
        )
    return False


def _counts_only(x: At) -> bool:
    """``grep -c``, ``-l``, ``-L``, ``-q``: a count, the files' names or an exit status, not their lines."""
    if x.name not in ("grep", "egrep", "fgrep", "rg", "zgrep"):
        return False
    return bool(set(x.short) & set("clLq")) or any(a in _COUNT_FLAGS for a in x.args)


_COUNT_FLAGS = frozenset({"--count", "--files-with-matches", "--files-without-match", "--quiet", "--silent"})


# options that make git log/show/diff print names or counts, not the changed lines
_NO_PATCH = frozenset(
    {"--stat", "--name-only", "--name-status", "--numstat", "--shortstat", "--quiet", "-s", "--no-patch", "--summary"}
)


def _git_shown(x: At) -> str | None:
    """``git show REV:.env``, ``git cat-file -p HEAD:.env``: a file's text as a commit holds it;
    ``git log -p -- .env``, ``git diff HEAD~1 -- .env``: its lines, as the changes to it show them."""
    words = [a for a in x.positional if not a.startswith("-")]
    if words[:1] in (["log"], ["show"], ["diff"], ["whatchanged"]) and not _NO_PATCH & set(x.args):
        patch = words[0] != "log" or any(a in ("-p", "-u", "--patch") or a.startswith("-U") for a in x.args)
        named = x.args[x.args.index("--") + 1 :] if "--" in x.args else words[1:] if words[0] == "diff" else []
        for word in named if patch else ():
            why = secret_file(x.place, x.path(word), x.policy)
            if why:
                return f"{why} as its changes show it"
    if not words or words[0] not in ("show", "cat-file") or len(words) < 2:
        return None
    for word in words[1:]:
        rev, colon, path = word.partition(":")
        if colon and path and not rev.startswith(("http", "ssh")):
            why = secret_file(x.place, x.path(path), x.policy)
            if why:
                return f"{why} as the commit {rev or 'in the index'} holds it"
    return None


def leaked(x: At) -> str | None:
    """What secret this command's output carries: a credential file, the environment, a secret variable."""
    cmd = x.cmd
    if x.name in _ENV_DUMPS and (
        (x.name in ("printenv", "env") and not [a for a in x.positional if "=" not in a] and "-S" not in x.args)
        or (x.name == "set" and not x.args)  # `set -x` traces; bare `set` prints every variable
        or (
            x.name in ("export", "declare", "typeset")
            and (not x.args or x.args[0] in ("-p", "-x", "-px"))
            and not x.positional
        )
    ):
        return "the whole environment (every token and key in it)"
    if x.name in ("declare", "typeset", "export") and x.args[:1] in (["-p"], ["-px"]) and x.positional:
        names = compiled(x.policy, "secrets.env_names")  # declare -p PATH: the variables named, only
        if any(names.match(p) for p in x.positional):
            return "a secret environment variable"
    if (x.name.lower() in _OPAQUE_CMDLETS and any(a.lower().rstrip("\\/*") == "env:" for a in x.args)) or (
        _ENV_DUMP.fullmatch(x.name) and x.name.startswith("[")  # [Environment]::GetEnvironmentVariables() typed in
    ):
        return "the whole environment (every token and key in it)"  # PowerShell's Get-ChildItem Env:
    if x.name == "printenv" and any(compiled(x.policy, "secrets.env_names").match(a) for a in x.positional):
        return "a secret environment variable"
    if x.name in ("echo", "printf", "print") and any(secret_vars(x, a) for a in cmd.args):
        return "a secret environment variable"
    if (listed := _listed(x)) is not None:
        return listed
    for op, target in cmd.redirects:
        if op == "<" and secret_file(x.place, x.path(target), x.policy):
            return secret_file(x.place, x.path(target), x.policy)
    code = readable_code(inline_code(x.cmd))
    if code:
        named = [w for w in (m.group(2) for m in _STRING.finditer(code)) if _secret_path(x, w)]
        # Python: of those, the strings its syntax tree shows it may read (not only print, check or name)
        used = _python_words(code) if named else None
        for word in [w for w in used if _secret_path(x, w)] if used is not None else named:
            if used is not None or not (_only_checked(code, word) or _only_joined(code, word)):
                return _secret_path(x, word)
        for m in _ENV_DUMP.finditer(code):  # shown or sent on its line: print(dict(os.environ)), not env=dict(…)
            start = code.rfind("\n", 0, m.start()) + 1
            line = code[start : code.find("\n", m.end()) % (len(code) + 1)]
            # {"env": dict(os.environ)}, report["env"] = dict(os.environ): a report holding it
            before = code[start : m.start()]
            key = _JS_HELD.search(before) if m.group(0) == "process.env" else None
            held = re.search(r"""['"]\s*(?::|\]\s*=)\s*(?:dict\(\s*)?$""", before) or (
                key is not None and not _program_env(code, start + key.start())
            )
            if _SHOWS_OR_SENDS.search(code if held else line):  # a report holding it, shown or sent anywhere
                return "the whole environment (every token and key in it)"
            if x.name in ("pwsh", "powershell") and not re.search(r"=\s*$", before):
                return "the whole environment (every token and key in it)"  # PowerShell prints a statement's value
        if _secret_env_shown(x, code):
            return "a secret environment variable"
        for word in _looped_files(x):  # perl -ne 'print' .env: the code runs on every line of its files
            if why := secret_file(x.place, x.path(word), x.policy):
                return why
        return None
    if _transcodes(x):  # openssl enc -base64 -in .env: the file, encoded (or decrypted), printed
        for word in [b for a, b in pairwise(x.args) if a == "-in"]:
            if why := secret_file(x.place, x.path(word), x.policy):
                return why
    if x.name == "git" and (shown := _git_shown(x)):
        return shown
    if x.name in _OPAQUE or x.name.lower() in _OPAQUE_CMDLETS or x.name in SHELLS or _names_only(x) or _counts_only(x):
        return None
    words = x.positional + [
        a.split("=", 1)[1]
        for a in x.args
        if a.startswith("--") and "=" in a and not _LEAVES_OUT.search(a.split("=", 1)[0])
    ]  # --file=.env is read; --exclude=.env* is what is left out
    if x.name in _EDITOR_READERS:  # vim -c 'set ft=sh' f, vim +10 f: editor commands, not files
        given = {a for i, a in enumerate(x.args[1:], 1) if x.args[i - 1] in ("-c", "--cmd")}
        words = [w for w in words if w not in given and not w.startswith("+")]
    if x.name in _PATTERN_FIRST and words and not _PATTERN_GIVEN & set(x.args):
        if x.name == "yq" and words[0] in ("eval", "e", "eval-all", "ea"):
            words = words[1:]  # yq eval '.key' file.yaml: the subcommand, then the expression
        words = words[1:]  # grep '.key' notes.txt, jq .key data.json: the first operand is a pattern
    if x.name == "dd":  # dd reads if=, writes of=
        words = [a[3:] for a in x.args if a.startswith("if=")]
    reader = x.name in _READERS
    base = _tar_folder(x)  # tar -czf k.tgz -C "$HOME" .ssh .aws: the operands are in that folder
    for word in words:
        if base and not word.startswith(("/", "~", "$")) and word != base[1]:
            word = base[0].rstrip("/") + "/" + word
        word = word.lstrip("@")
        if (
            not word
            or word.startswith(("http://", "https://"))
            or ("/" not in word and "." not in word and "~" not in word and "$" not in word and not reader)
        ):
            continue
        why = secret_file(x.place, x.path(word), x.policy)
        if not why and any(c in word for c in "*?["):
            why = secret_glob(x.place, word, x.policy)
        if why:
            return why
    return None


def _listed(x: At) -> str | None:
    """The secret files a reader is handed by a listing before it: ``ls ~/.ssh/* | xargs cat``,
    ``find ~/.ssh -type f | xargs cat``, PowerShell's ``Get-ChildItem ~/.ssh | Get-Content`` (or
    ``ForEach-Object { Get-Content $_ }``): every file the listing names is read."""
    name = x.name.lower()
    reads_items = (
        (x.name in _READERS and "{xargs input}" in x.args)
        or (name in _PS_READERS and not x.positional)
        or (name in ("foreach-object", "%") and any(a.lower() in _PS_READERS for a in x.args))
    )
    lister = x.cmd.feeder
    if not reads_items or lister is None or lister.name.lower() not in _LISTERS:
        return None
    words = [a for a in lister.args if not a.startswith("-")]
    if lister.name in ("find", "fd"):  # the folders searched, each with the names it picks (-name '*.pub')
        largs = list(lister.args)
        picked = [
            largs[i + 1]
            for i, a in enumerate(largs[:-1])
            if a in ("-name", "-iname") and (i == 0 or largs[i - 1] not in ("-not", "!"))
        ]
        # a name that starts as a credential's does (id_*, .env*), not a whole kind (*, *.pem)
        keys = [p for p in picked if p[:1] not in "*?[" and any(fnmatchcase(probe, p) for probe in SECRET_PROBES)]
        if keys and lister.name == "find":  # find ~ -name 'id_*' | xargs cat: a key's name, at any depth
            return f"every file named {keys[0]} that find lists (private keys and credentials among them)"
        folders = [a for a in lister.args[: next((i for i, a in enumerate(lister.args) if a.startswith("-")), None)]]
        words = [f"{f.rstrip('/')}/{p}" for f in folders for p in picked] if picked else folders
    for word in words:
        why = secret_file(x.place, x.path(word), x.policy) or (
            secret_glob(x.place, word, x.policy) if any(c in word for c in "*?[") else None
        )
        if why:
            return why
    return None


_PS_READERS = frozenset({"get-content", "gc", "cat", "type"})
_LISTERS = frozenset({"ls", "find", "fd", "get-childitem", "gci", "dir"})


def secret_vars(x: At, word: str) -> bool:
    """``word`` expands a secret's variable (``$GITHUB_TOKEN``). A script's own lower-case variable
    counts only when it names a secret outright (``$password``, not the counter ``$pass``)."""
    names = re.findall(r"\$\{?([A-Za-z_]\w*)", word)
    return any(
        compiled(x.policy, "secrets.env_names").match(n) and (not n.islower() or _LOCAL_SECRET.search(n)) for n in names
    )


_LOCAL_SECRET = lazy(r"password|passwd|secret|token|api_?key|private_?key|credential")


# what an environment dump may be piped into and show only names, counts or chosen lines
_NARROWERS = frozenset({"grep", "egrep", "fgrep", "rg", "wc", "cut", "awk", "jq", "sed", "head", "tail"})
# what a secret may be piped into and show only a count or a digest
_COUNTERS = frozenset({"wc", "sha1sum", "sha256sum", "sha512sum", "md5sum", "shasum", "b2sum", "cksum"})
_FISHING = re.compile(
    r"(?i)passw|secret|token|api[_-]?key|private[_ ]key|credential|BEGIN .*PRIVATE|aws_"
    r"|(?-i:AKIA|ASIA|ghp_|gho_|github_pat_|glpat-|xox[bpa]|AIza|sk-ant-|sk_live_)"  # the formats of keys
)


_CONTEXT = re.compile(r"-[ABC]\d*|-\w*[ABC]|--(?:after-|before-)?context(?:=\d+)?|-[ABC]=?\d+")


def key_lines(pattern: str, context: bool) -> bool:
    """A search for a private key's BEGIN marker that prints the lines around it: the key itself."""
    upper = pattern.upper()
    return context and "BEGIN" in upper and "PRIVATE" in upper and "KEY" in upper


def credential_search(place: Place, pattern: str, path: str) -> bool:
    """A search for credential-looking text across the whole machine, ``/etc`` or the home (a
    folder of it that holds no project): what it prints is whatever secrets lie there."""
    if not _FISHING.search(pattern):
        return False
    rel = place.in_home(path)
    if path in ("/", "/etc", "/home", "/Users", "/root") or rel == "" or re.fullmatch(r"/(?:home|Users)/[^/]+", path):
        return True  # the whole machine, a home or every home (their ~/.aws, ~/.ssh …)
    return rel is not None and "/" not in rel and not place.holds_project(path)


def _fishing(x: At) -> str | None:
    """A search for credentials across the home, a credential store or the whole machine."""
    if x.name not in _SEARCHERS or not x.positional:
        return None
    around = any(_CONTEXT.fullmatch(a) for a in x.args)
    if any(key_lines(p, around) for p in x.positional):  # grep -A 30 'BEGIN …' (30: -A's value)
        return "the private keys it finds (the lines after their BEGIN marker)"
    for word in x.positional[1:]:
        if credential_search(x.place, x.positional[0], x.path(word)):
            return f"whatever credentials lie under {word} (a search for them)"
    return None


def secret_reads(x: At) -> Finding | None:
    if not x.on("secret-read") or (x.name in NETWORK and x.name not in ("scp", "rsync") and not _transcodes(x)):
        return None  # what a network tool sends is the exfiltration rule's to judge
    if x.name in ("cp", "rsync", "scp", "install", "ln") and len(x.positional) >= 2:
        *sources, dest = x.positional
        if not secret_file(x.place, x.path(dest), x.policy) and ":" not in dest:
            for s in sources:
                why = secret_file(x.place, x.path(s), x.policy)
                if why:
                    copies = "links another name to" if x.name == "ln" else "copies out"  # ln -s ~/.ssh/id_rsa k
                    return "secret-read", f"{copies} {why}; credentials stay where they are"
        return None
    what = leaked(x) or _fishing(x)
    if what is None:
        return None
    kept = x.fed & {"tee", "sponge", "{secret filter}", *NETWORK} or any(">" in op for op, _ in x.cmd.redirects)
    if what.startswith("the whole environment") and not kept and x.fed & _NARROWERS:
        return None  # filtered or counted: only what the filter picks reaches the model
    if x.fed and x.fed <= _COUNTERS and not kept:
        return None  # cat .env | wc -l, cat key | sha256sum: only a count or a digest is shown
    if x.fed & NETWORK and x.on("secret-exfiltration"):  # cat .env | nc host 80
        return "secret-exfiltration", f"sends {what} to another machine (piped into {sorted(x.fed & NETWORK)[0]})"
    return "secret-read", f"reads {what}: its secrets would reach the model and the transcript"


def redirected_reads(x: At) -> Finding | None:
    for op, target in x.cmd.redirects:
        if op == "<":
            found = read_finding(x.place, x.path(target), x.policy)
            if found and x.on("secret-read") and x.name not in NETWORK:
                return found
    return None
