"""The benchmark world: a seeded virtual file system holding one chain of trace files and its distractors.

A chain of ``length`` trace files, each naming the next — directly (``NEXT: beta/trace_120.log``)
or indirectly (``NEXT: the sequence continues in beta/ after the archived traces, at the first
trace numbered above 119``, which takes a ``list_dir`` to resolve) — ends in a file holding the
final token. Distractors sit around it: archived traces, near-miss names (swapped digits, a
neighbouring number, the same name in another directory) and decoy pointers that lead further
astray. Distractors never mention a final token, so only the chain can end a task correctly.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from watcher.core.errors import ConfigurationError

__all__ = ["Pointer", "World", "generate_world", "parse_pointer", "resolve_indirect", "solve", "trace_number"]

DIRECTORIES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
ARCHIVED = "[ARCHIVED] this trace is kept for reference only; it is not part of any active sequence."

_DIRECT = re.compile(r"^NEXT: ([a-z]+/trace_\d{3}\.log)\s*$", re.MULTILINE)
_INDIRECT = re.compile(
    r"^NEXT: the sequence continues in ([a-z]+)/ after the archived traces, at the first trace numbered above (\d+)\s*$",
    re.MULTILINE,
)
_FINAL = re.compile(r"^FINAL TOKEN: (\S+)\s*$", re.MULTILINE)
_NUMBER = re.compile(r"trace_(\d{3})\.log$")
_NOISE = (
    "INFO worker-{w} heartbeat ok",
    "DEBUG cache hit ratio {p}%",
    "INFO request {n} served in {w}ms",
    "WARN retrying upstream call ({r}/3)",
    "INFO checkpoint {n} written",
    "DEBUG queue depth {w}",
)


@dataclass(frozen=True, slots=True)
class Pointer:
    """What a trace says comes next: a path, a directory plus threshold (indirect), or the final token."""

    kind: str  # "direct" | "indirect" | "final"
    value: str  # the path, the directory, or the token
    above: int = 0  # indirect only: the next trace is the first numbered above this

    def describe(self) -> str:
        """The pointer in words, for prompts and guidance."""
        if self.kind == "direct":
            return self.value
        if self.kind == "indirect":
            return f"the first trace in {self.value}/ numbered above {self.above}"
        return f"the final token {self.value}"


@dataclass(frozen=True, slots=True)
class World:
    """One task's file system: ``files`` maps ``dir/name`` to content; ``chain`` is the path to follow."""

    task: int
    seed: int
    files: dict[str, str]
    chain: tuple[str, ...]
    token: str

    @property
    def start(self) -> str:
        """The first file of the chain, named in the task."""
        return self.chain[0]

    def listing(self, directory: str) -> list[str] | None:
        """The sorted file names in ``directory`` (``""`` lists the directories), or None if it does not exist."""
        directory = directory.strip().strip("/")
        if not directory:
            return sorted({p.split("/", 1)[0] + "/" for p in self.files})
        names = sorted(p.split("/", 1)[1] for p in self.files if p.split("/", 1)[0] == directory)
        return names or None


def parse_pointer(content: str) -> Pointer | None:
    """The pointer a trace's content carries, or None (the final token wins over a ``NEXT`` line)."""
    if m := _FINAL.search(content):
        return Pointer("final", m.group(1))
    if m := _INDIRECT.search(content):
        return Pointer("indirect", m.group(1), int(m.group(2)))
    if m := _DIRECT.search(content):
        return Pointer("direct", m.group(1))
    return None


def trace_number(name: str) -> int | None:
    """The number in ``trace_NNN.log`` (or ``dir/trace_NNN.log``), else None."""
    m = _NUMBER.search(name)
    return int(m.group(1)) if m else None


def resolve_indirect(pointer: Pointer, names: list[str]) -> str | None:
    """The path an indirect pointer names, given its directory's listing: the lowest number above the threshold."""
    numbered = sorted((n, name) for name in names if (n := trace_number(name)) is not None and n > pointer.above)
    return f"{pointer.value}/{numbered[0][1]}" if numbered else None


def solve(world: World) -> tuple[list[str], str | None]:
    """Follow the chain as a perfect agent would, using only file contents and listings: (reads, token)."""
    reads: list[str] = []
    path: str | None = world.start
    while path is not None and path in world.files and len(reads) <= len(world.files):
        reads.append(path)
        pointer = parse_pointer(world.files[path])
        if pointer is None:
            return reads, None
        if pointer.kind == "final":
            return reads, pointer.value
        if pointer.kind == "direct":
            path = pointer.value
        else:
            path = resolve_indirect(pointer, world.listing(pointer.value) or [])
    return reads, None


def _name(n: int) -> str:
    return f"trace_{n:03d}.log"


def _noise(rng: random.Random, lines: int) -> list[str]:
    out = []
    for i in range(lines):
        template = rng.choice(_NOISE)
        out.append(
            f"2026-03-01T12:{i:02d}:{rng.randrange(60):02d} "
            + template.format(
                w=rng.randrange(1, 9), n=rng.randrange(100, 999), p=rng.randrange(40, 100), r=rng.randrange(1, 4)
            )
        )
    return out


def _near_misses(path: str, taken: set[str], rng: random.Random) -> list[str]:
    directory, name = path.split("/", 1)
    n = trace_number(name) or 0
    digits = f"{n:03d}"
    swapped = int(digits[0] + digits[2] + digits[1])
    others = [d for d in DIRECTORIES if d != directory]
    candidates = [f"{directory}/{_name(swapped)}", f"{directory}/{_name(n + 1)}", f"{directory}/{_name(n - 1)}"]
    candidates.append(f"{rng.choice(others)}/{name}")
    return [c for c in candidates if c not in taken and c != path]


def generate_world(seed: int, task: int, length: int, distractors: int) -> World:
    """A solvable world: a chain of ``length`` files and about ``distractors`` distractors per link."""
    if length < 1:
        raise ConfigurationError(f"a chain needs at least one file, not {length}; pass --chain-length 1 or more")
    rng = random.Random(f"longchain:{seed}:{task}:{length}:{distractors}")
    token = f"TOKEN-{rng.randrange(16**6):06X}"
    chain: list[str] = []
    used: set[str] = set()
    while len(chain) < length:
        path = f"{rng.choice(DIRECTORIES)}/{_name(rng.randrange(120, 880))}"
        near = {path} | {f"{path.split('/')[0]}/{_name((trace_number(path) or 0) + d)}" for d in (-1, 1)}
        if not (near & used):
            chain.append(path)
            used |= near
    files: dict[str, str] = {}
    chain_set = set(chain)
    decoys: list[str] = []
    for nxt in chain[1:]:
        for path in _near_misses(nxt, chain_set | set(files), rng)[: max(0, distractors - 1)]:
            files[path] = ""
            decoys.append(path)
        directory = nxt.split("/")[0]
        low = (trace_number(nxt) or 0) - rng.randrange(2, 9)
        archived = f"{directory}/{_name(low)}"
        if distractors > 0 and archived not in chain_set and archived not in files:
            files[archived] = ARCHIVED
            decoys.append(archived)
    # decoy contents: noise, and often a pointer to another distractor (or to nowhere): never to the chain
    for path in decoys:
        lines = ([ARCHIVED] if files[path] == ARCHIVED else []) + _noise(rng, rng.randrange(2, 5))
        if rng.random() < 0.9:
            target = (
                rng.choice(decoys)
                if rng.random() < 0.8
                else f"{rng.choice(DIRECTORIES)}/{_name(rng.randrange(900, 999))}"
            )
            if target != path:
                lines.append(f"NEXT: {target}")
        files[path] = "\n".join([f"# {path}", *lines]) + "\n"
    for i, path in enumerate(chain):
        lines = [f"# {path}", *_noise(rng, rng.randrange(3, 6))]
        if i == len(chain) - 1:
            lines.append(f"FINAL TOKEN: {token}")
        else:
            nxt = chain[i + 1]
            directory = nxt.split("/")[0]
            n = trace_number(nxt) or 0
            below = [m for p in [*files, *chain] if p.startswith(directory + "/") and (m := trace_number(p) or 0) < n]
            has_archive = any(files.get(p, "").find(ARCHIVED) >= 0 for p in files if p.startswith(directory + "/"))
            if i > 0 and below and has_archive and rng.random() < 0.35:
                lines.append(
                    f"NEXT: the sequence continues in {directory}/ after the archived traces, "
                    f"at the first trace numbered above {max(below)}"
                )
            else:
                lines.append(f"NEXT: {nxt}")
        files[path] = "\n".join(lines) + "\n"
    return World(task=task, seed=seed, files=dict(sorted(files.items())), chain=tuple(chain), token=token)
