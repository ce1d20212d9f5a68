"""The guard's rule for fork and resource bombs: processes, files or memory without end, or a disk
filled in one go."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice

from watcher.guard._context import inline_code
from watcher.guard._files import Finding
from watcher.guard._lazy import lazy
from watcher.guard._shell import SHELLS, Command, TooLong, commands, functions, inner_script

__all__ = ["bombs", "spawns_itself"]

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTPE]?)(i?B)?$", re.I)
_BIG = 10 * 1024**3
_FREE_SPACE = lazy(r"(?:\$\(|`)\s*(?:df|stat\s+-f|findmnt)\b")  # a size read off a filesystem's free space


def _spawns_itself(name: str, body: str) -> bool:
    """The function's body calls itself piped or in the background (``:(){ :|:& }``): copies without end.
    A mention in a string (``echo "usage: f ARG" >&2``) is not a call."""
    if name not in body or not re.search(r"[|&]", body):
        return False
    try:
        ran = commands(body)
    except TooLong:
        return True  # a body too long to read that names itself and pipes or backgrounds: not read is not harmless
    calls = [c for c in ran if c.argv and c.argv[0] == name]
    piped = any(c.feeder is not None and c.feeder.argv[:1] == (name,) for c in ran)  # f | cat: each waits on the next
    return len(calls) > 1 or piped or any(c.background or c.feeder is not None for c in calls)


def bombs(script: str, cmds: list[Command]) -> Iterator[Finding]:
    scripts = [script, *(inner_script(c) or "" for c in cmds if c.name in SHELLS or c.name == "eval")]
    for name, body in {k: v for s in scripts for k, v in functions(s).items()}.items():
        if _spawns_itself(name, body):
            yield (
                "resource-bomb",
                f"defines {name}() to start copies of itself without end (a fork bomb): the machine stops answering",
            )
            return
    endless = _ENDLESS.search(script)
    body = script[endless.end() : endless.end() + 65536] if endless else ""  # the loop's body, bounded
    if (
        (endless and _BACKGROUND.match(body))
        or any(
            int(m.group(1) or m.group(2)) >= _MANY and _BACKGROUND.match(script, m.end(), m.end() + 4096)
            for m in islice(_COUNTED.finditer(script), 256)
        )
        or re.search(r"\$0[\"']?\s*&(?!&)|\$0[\"']?\s*\|\s*[\"']?\$0", script)
        or re.search(r"(?i)while\s*\(\s*\$true\s*\)\s*\{[^}]*start-process", script)
    ):
        yield "resource-bomb", "starts processes in an endless loop: the machine runs out of processes"
        return
    if endless and _MAKES_FILES.search(body) and not _PACED.search(body):
        yield "resource-bomb", "creates files in an endless loop with no pause: the disk runs out of space or inodes"
        return
    if _FORK_LOOP.search(script):
        yield "resource-bomb", "writes and runs a program that forks in an endless loop (a fork bomb)"
        return
    for c in cmds:
        code = inline_code(c)
        if (
            code
            and re.search(r"\bfork\b(?![-.])", code)  # fork(), Perl's `fork while 1`; not "fork-safe"
            and re.search(
                r"\bwhile\b|\bloop\b|\bfor\s*\(|\brepeat\b|\buntil\b|\bin\s+(?:iter\(|itertools\.count|count\()"
                r"|(?<![\d_])\.times|(?:\d{5,}|\d{1,3}(?:_\d{3})+)\.times",  # 3.times: three; n.times, 1_000_000.times
                code,
            )
        ):
            yield "resource-bomb", "forks in an endless loop (a fork bomb): the machine stops answering"
            return
        if code and _SPAWN_LOOP.search(code) and not _CODE_PACED.search(code):  # for(;;) spawn(…): no end, no pause
            yield (
                "resource-bomb",
                "starts processes in an endless loop (a fork bomb): the machine runs out of processes",
            )
            return
        if code and _POOL.search(code):
            yield "resource-bomb", "starts a pool of 10,000 or more processes or threads: the machine runs out"
            return
        if code and _SPAWNS.search(code) and _MANY_ROUNDS.search(code):
            yield (
                "resource-bomb",
                "starts a thread or process per round of a loop of 100,000 or more: the machine runs out",
            )
            return
        if code and _hoards(code):
            yield "resource-bomb", "allocates memory without bound: the machine runs out of memory"
            return
        if code and c.name.startswith("python") and (why := _grows_without_end(code)):
            yield "resource-bomb", why
            return
        if c.name in ("stress", "stress-ng") and not _timed(c):
            yield "resource-bomb", f"{c.name} loads the machine with no time limit: it stops answering"
            return
        if c.name in ("xargs", "parallel") and _unbounded(c):
            yield "resource-bomb", "starts as many processes at once as its long input has lines: the machine runs out"
            return
        if c.name in ("tail",) and "/dev/zero" in c.args:
            yield "resource-bomb", "reads /dev/zero into memory without end: the machine runs out of memory"
            return
        zeros = any(a in ("if=/dev/zero", "if=/dev/urandom", "if=/dev/random") for a in c.args)
        # into a file, not a device: a device written is the device-write rule's (it destroys what is on it)
        to_file = any(">" in op and _a_file(t) for op, t in c.redirects)
        if (
            c.name == "dd"
            and zeros
            and not any(a.startswith("count=") for a in c.args)
            and any(a.startswith("of=") and _a_file(a[3:]) for a in c.args)
        ):
            yield "resource-bomb", "writes zeros or random data without a count: it fills the disk"
            return
        if (
            c.name in ("cat", "yes", "pv")
            and to_file
            and (c.name == "yes" or any(a in ("/dev/zero", "/dev/urandom", "/dev/random") for a in c.args))
        ):
            yield "resource-bomb", "writes an endless stream into a file: it fills the disk"
            return
        size = _size_arg(c)
        if size >= _BIG:
            much = "all the free space" if size == float("inf") else f"{size / 1024**3:.0f} GiB"
            yield "resource-bomb", f"allocates {much} in one go: it fills the disk or the memory"
            return


def spawns_itself(code: str) -> str | None:
    """Why a script's code (Python or JavaScript, with its own path still named ``__file__``,
    ``__filename``, ``sys.argv[0]`` or ``process.argv[1]``) is a fork bomb: it starts a copy of itself
    without waiting for it (``spawn(process.execPath, [__filename])``, ``Popen([sys.executable,
    __file__])``), and nothing it tests (a variable, an argument, ``cluster.isPrimary``) stops a copy
    from doing the same. A copy waited for (``spawnSync``, ``subprocess.run``) or run in place of the
    script (``os.execv``) is one at a time, not a bomb."""
    if not _SELF_NAMED.search(code) or _STOPS.search(code):
        return None
    for m in islice(_STARTS_COPY.finditer(code), 64):
        if _SELF_NAMED.search(code, m.end(), m.end() + 300):
            return "starts copies of itself that each start more (a fork bomb): the machine runs out of processes"
    return None


# the script's own path as the code names it
_SELF_NAMED = lazy(r"__filename\b|__file__\b|\bsys\.argv\[0\]|\bprocess\.argv\[1\]|import\.meta\.url")
# a call that starts a process and goes on without waiting for it
_STARTS_COPY = lazy(r"(?<![\w.])(?:child_process\.|cp\.)?(?:spawn|fork|exec)\s*\(|\b(?:subprocess\.)?Popen\s*\(")
# a test that tells a copy from the first run: a variable, an argument, the primary of a cluster
_STOPS = lazy(
    r"(?:\bif\b|\?|&&|\bwhile\b)[^\n]{0,200}?(?:process\.env|process\.argv|os\.environ|sys\.argv|getenv|"
    r"isPrimary|isMaster|isMainThread|process\.send|workerData|depth|level|generation)"
)


def _grows_without_end(code: str) -> str | None:
    """Python that grows without end, read by its syntax tree (imported by the calls with Python only)."""
    from watcher.guard._python import python_readable
    from watcher.guard._python_bombs import endless_growth

    return endless_growth(python_readable(code) or code)


# loops that never end (`while true`, `while :`, `until false`, `for ((;;))`) and their body; a
# `for` over a counted range (`$(seq 1 1000000)`, `{1..1000000}`) of at least _MANY rounds
_ENDLESS = re.compile(
    r"\b(?:while\s+(?:true|:|\[\s*1\s*\]|\(\(\s*1\s*\)\))|until\s+false|for\s*\(\(\s*[^;\n]{0,200};\s*;[^)\n]{0,200}\)\))"
    r"\s*;?\s*do\b"
)
_COUNTED = re.compile(r"\bfor\s+\w+\s+in\s+(?:\$\(\s*seq\s+(?:-?\d+\s+){0,2}(\d+)\s*\)|\{-?\d+\.\.(\d+)\})")
_MANY = 10_000
_BACKGROUND = re.compile(r"[^\n]*?(?<![&|>])&(?![&>])")  # a command sent to the background, on the loop's line
_MAKES_FILES = re.compile(r"\b(?:mktemp|touch|mkdir|fallocate|cp|dd)\b|(?<![<2&])>>?\s*(?!/dev/)[\w\"$/.]")
_PACED = re.compile(r"\b(?:sleep|break|exit|return|read|wait)\b")
_FORK_LOOP = lazy(r"(?:for\s*\(\s*;\s*;\s*\)|while\s*\(?\s*(?:1|true|True)\s*\)?)\s*[:{]?\s*(?:os\.)?fork\s*\(")
# an endless loop that starts a process each round without waiting for it (spawnSync, run, wait do)
_SPAWN_LOOP = lazy(
    r"(?:for\s*\(\s*;\s*;\s*\)|while\s*\(?\s*(?:1|true|True)\s*\)?|\bloop\s*(?:do|\{))\s*[:{]?"
    r"[^;\n]{0,120}?(?:\bspawn|\bfork|\bPopen|\bexecFile|child_process\.exec|Process\([^)]*\)\.start)\s*\("
)
_CODE_PACED = lazy(r"\b(?:sleep|break|await|wait|setTimeout|join|communicate|exit|return)\b")
# inline code starting a thread or process per round of a loop of 100,000 or more
_SPAWNS = lazy(r"Thread\(|Process\(|Popen\(|fork\(|spawn\(|Worker\(")
_POOL = lazy(r"\b(?:Pool|ThreadPool|ProcessPoolExecutor|ThreadPoolExecutor)\(\s*(?:\w+\s*=\s*)?(\d{5,})\s*[,)]")
_MANY_ROUNDS = lazy(r"range\(\s*(?:10\s*\*\*\s*(?:[5-9]|\d\d)|\d{6,}|\d+e[5-9])\s*\)")


# a count of 10 billion or more: 10**12, 1e12, 12 digits, 1 << 40
_NUM = r"(?:10\s*\*\*\s*(?:1\d|[2-9]\d)|\d+(?:\.\d+)?e\+?(?:1\d|[2-9]\d)|\d{11,}|1\s*<<\s*(?:3[4-9]|[4-9]\d))\b"
# that count given to an allocation (bytearray(10**12), Buffer.alloc(1e12), np.zeros(10**11)) or
# multiplying a string, bytes or a list ('a' * 10**12, [0] * 10**11)
_HUGE_ALLOCATION = lazy(
    r"(?:bytearray|bytes|[Aa]lloc\w*|Array|zeros|ones|empty|full|repeat|malloc|calloc|urandom)\s*\(\s*"
    rf"(?:[\w.]+\s*[*,]\s*)?\(?\s*{_NUM}"
    rf"|['\"\]]\s*\*\s*\(?\s*{_NUM}|{_NUM}\s*\)?\s*\*\s*[bB]?['\"\[]"
)
_FOREVER = lazy(r"while\s*\(?\s*(?:True|true|1)\s*\)?\s*(?:[:{]|(?=\w))|for\s*\(\s*;\s*;\s*\)|\bloop\s*(?:do|\{)")
_GROWS = lazy(r"\.(?:append|push|extend|concat)\s*\(|\+=|\bs\s*=\s*s\s*\+?\s*s\b")


def _hoards(code: str) -> bool:
    """Inline code that allocates at least 10 GB at once (``bytearray(10**12)``, ``Buffer.alloc(1e12)``)
    or grows a value in a loop that never ends (``while True: a.append(...)`` with no ``break``)."""
    if _HUGE_ALLOCATION.search(code):
        return True
    return bool(
        _FOREVER.search(code) and _GROWS.search(code) and not re.search(r"\b(?:break|return|exit|sleep)\b", code)
    )


def _timed(c: Command) -> bool:
    """A stress run with a time limit (``--timeout 60s``, ``-t 10``), not ``--timeout 0``."""
    args = list(c.args)
    for i, a in enumerate(args):
        value = (
            a.split("=", 1)[1]
            if a.startswith("--timeout=")
            else args[i + 1]
            if a in ("--timeout", "-t") and i + 1 < len(args)
            else None
        )
        if value is not None:
            return value.strip("smhd") not in ("", "0")
    return False


def _unbounded(c: Command) -> bool:
    """``xargs -P 0`` (``parallel -j 0``): as many at once as it can, fed a long list (``seq 1 1000000``, ``yes``)."""
    args = list(c.args)
    flag = ("-P", "--max-procs") if c.name == "xargs" else ("-j", "--jobs")
    unlimited = any(
        (a in flag and i + 1 < len(args) and args[i + 1] == "0") or a in (f"{flag[0]}0", f"{flag[1]}=0")
        for i, a in enumerate(args)
    )
    feeder = c.feeder
    if not unlimited or feeder is None:
        return False
    if feeder.name == "yes" or (feeder.name == "seq" and any(a.lower() in ("inf", "infinity") for a in feeder.args)):
        return True
    numbers = [float(a) for a in feeder.args if re.fullmatch(r"\d+(?:\.\d+)?(?:e\d+)?", a)]  # seq 1e9 too
    return feeder.name == "seq" and bool(numbers) and max(numbers) >= _MANY


def _a_file(path: str) -> bool:
    """``path`` stores what is written (``/dev/shm`` too); ``/dev/null`` does not, and a disk written
    is the device-write rule's (it destroys what is on it)."""
    return not path.startswith("/dev/") or path.startswith("/dev/shm/")


def _size_arg(c: Command) -> float:
    args = list(c.args)
    for i, a in enumerate(args):
        value = ""
        if c.name == "mkfile" and not a.startswith("-"):  # macOS: mkfile 900g ~/pad.img
            return _bytes(a.upper().rstrip("B") + "B" if a[-1:].lower() in "kmgtb" else a)
        if (c.name == "fallocate" and a in ("-l", "--length") and i + 1 < len(args)) or (
            c.name == "head"
            and a == "-c"
            and i + 1 < len(args)
            and any(z in args for z in ("/dev/zero", "/dev/urandom"))
        ):
            value = args[i + 1]
        elif c.name == "dd" and a.startswith("bs=") and any(b.startswith("count=") for b in args):
            count = next(b[6:] for b in args if b.startswith("count="))
            bs = _bytes(a[3:])
            return bs * float(count) if count.isdigit() else 0.0
        if value:
            return _bytes(value)
    return 0.0


def _bytes(text: str) -> float:
    if _FREE_SPACE.search(text):
        return float("inf")  # fallocate -l "$(df --output=avail …)": all the space there is
    m = _SIZE.match(text)
    if not m:
        return 0.0
    return float(m.group(1)) * 1024 ** "BKMGTPE".index(m.group(2).upper() or "B") if m.group(2) else float(m.group(1))
