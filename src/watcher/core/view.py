"""The evaluation prompt's view of observations: made for reading, not escaped JSON.

A written file, a cell's source and a command are numbered code blocks in their language, with
line numbers as the file will have them; an edit or a patch is a unified diff whose lines carry
the file's new line numbers (relative ones, said so, when the file's text is not known); a long
output keeps its head and tail around an explicit ``… N lines omitted …`` marker.

Each observation renders at a detail *level* for its outputs (messages, tool results, cell
output) and one for its code (files, cells, diffs, commands); a higher level shows fewer lines.
``Shortening`` orders the steps an over-budget prompt takes: outputs before code, old
observations before new ones, and last of all the oldest observations are left out.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from watcher.core.edits import FileChange, Files, apply_edit, file_changes
from watcher.core.observations import (
    AssistantMessage,
    CellExecuted,
    Condensation,
    Done,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)

__all__ = [
    "CODE_LINES",
    "LINE_CHARS",
    "OUTPUT_LINES",
    "Block",
    "Rendered",
    "language_of",
    "omitted",
    "render_all",
    "render_observation",
]

OUTPUT_LINES = (80, 16, 4, 0)  # lines an output keeps at each level (head and tail halves)
CODE_LINES = (400, 60, 12, 0)  # lines a file, cell, diff or command keeps at each level
LINE_CHARS = 400  # characters one shown line keeps

_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".ipynb": "json", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "jsx", ".ts": "typescript", ".tsx": "tsx", ".sh": "bash", ".bash": "bash",
    ".zsh": "bash", ".rb": "ruby", ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".php": "php", ".sql": "sql",
    ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".md": "markdown", ".html": "html",
    ".css": "css", ".xml": "xml", ".ini": "ini", ".env": "bash", ".txt": "text",
}  # fmt: skip
_FENCE_RUN = re.compile(r"\s{0,3}(`*)")
_SHELL_TOOLS = frozenset({"Bash", "bash", "shell", "run_shell_command", "exec_command", "local_shell", "execute_bash"})
_CODE_TOOLS = frozenset({"execute_ipython_cell", "python", "run_python"})  # input "code": Python the agent ran


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced piece of an observation: a ``title`` line, then ``lines`` in a code block of ``language``.

    ``language`` "" shows prose without a code block. ``code`` says whether it shortens as code
    (``CODE_LINES``) or as output (``OUTPUT_LINES``);
    ``numbers`` holds each line's number in the file (None: the line shows no number).
    """

    title: str
    lines: tuple[str, ...] = ()
    language: str = "text"
    code: bool = False
    numbers: tuple[int | None, ...] = ()
    marks: tuple[str, ...] = ()  # a diff's "+", "-" or " " per line


@dataclass(frozen=True, slots=True)
class Rendered:
    """An observation's blocks; ``shortens`` says which shortening levels change it."""

    blocks: tuple[Block, ...]

    def shortens(self, *, code: bool, keep: int) -> bool:
        """Whether keeping ``keep`` lines of its code (or of its outputs) leaves something out."""
        return any(b.code == code and len(b.lines) > keep for b in self.blocks)

    def text(self, code_level: int = 0, output_level: int = 0) -> str:
        """The observation at the given levels (0 shows the most)."""
        return "\n".join(
            _block_text(b, CODE_LINES[code_level] if b.code else OUTPUT_LINES[output_level]) for b in self.blocks
        )


def omitted(count: int) -> str:
    """The marker standing for lines left out."""
    return f"… {count} lines omitted …"


def language_of(path: str) -> str:
    """The code block language for a file name (``text`` when unknown)."""
    return _LANGUAGES.get(posixpath.splitext(path.lower())[1], "text")


def _lines(text: str) -> list[str]:
    return text.removesuffix("\n").split("\n") if text else []


def _block_text(block: Block, keep: int) -> str:
    if not block.lines:
        return block.title
    total = len(block.lines)
    if keep <= 0:
        return f"{block.title} ({omitted(total)})"
    shown = list(range(total)) if total <= keep else [*range((keep + 1) // 2), -1, *range(total - keep // 2, total)]
    width = max((len(str(n)) for n in block.numbers if n is not None), default=0)
    body: list[str] = []
    for i in shown:
        if i < 0:
            body.append(omitted(total - keep))
            continue
        line = block.lines[i]
        if len(line) > LINE_CHARS:
            line = f"{line[:LINE_CHARS]}… (+{len(line) - LINE_CHARS} characters)"
        if not block.numbers:
            body.append(line)
            continue
        number = block.numbers[i]
        if block.marks and block.marks[i] == "@":  # a diff's hunk header
            body.append(line)
            continue
        gutter = f"{number:>{width}}" if number is not None else " " * width
        body.append(f"{gutter} {block.marks[i] if block.marks else '|'} {line}")
    if not block.language:  # prose: shown as written
        return f"{block.title}: {body[0]}" if len(body) == 1 else f"{block.title}:\n" + "\n".join(body)
    # a fence longer than any run of backticks a line starts with: content cannot close it
    fence = "`" * max(3, 1 + max((_fence_run(line) for line in body), default=0))
    return f"{block.title}\n{fence}{block.language}\n" + "\n".join(body) + f"\n{fence}"


def _fence_run(line: str) -> int:
    match = _FENCE_RUN.match(line)
    return len(match.group(1)) if match else 0


def _numbered(title: str, text: str, language: str, first: int = 1) -> Block:
    lines = _lines(text)
    return Block(title, tuple(lines), language, code=True, numbers=tuple(range(first, first + len(lines))))


def _output(title: str, text: str, language: str = "text") -> Block:
    return Block(title, tuple(_lines(text)), language)


def _diff(title: str, before: str, after: str, first: int) -> Block:
    """A unified diff of ``before`` → ``after`` (difflib), each line numbered as the new text has it."""
    old, new = _lines(before), _lines(after)
    lines: list[str] = []
    numbers: list[int | None] = []
    marks: list[str] = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        a1, a2, b1, b2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines.append(f"@@ -{a1 + first},{a2 - a1} +{b1 + first},{b2 - b1} @@")
        numbers.append(None)
        marks.append("@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for k in range(j2 - j1):
                    lines.append(new[j1 + k])
                    numbers.append(j1 + k + first)
                    marks.append(" ")
                continue
            for k in range(i1, i2):
                lines.append(old[k])
                numbers.append(None)
                marks.append("-")
            for k in range(j1, j2):
                lines.append(new[k])
                numbers.append(k + first)
                marks.append("+")
    return Block(title, tuple(lines), "diff", code=True, numbers=tuple(numbers), marks=tuple(marks))


def _change_blocks(change: FileChange, files: Files) -> list[Block]:
    cite = f"cite lines as {change.path}:LINE"
    if change.kind == "write":
        lines = len(_lines(change.new))
        return [
            _numbered(
                f"writes {change.path}: the whole file, {lines} lines; {cite}", change.new, language_of(change.path)
            )
        ]
    if change.kind == "delete":
        return [Block(f"deletes {change.path}")]
    known = files.before(change)
    after = apply_edit(known.text, change) if known is not None else None
    if known is not None and after is not None:
        where = "the whole file" if known.first_line == 1 else f"the file from line {known.first_line}"
        title = f"edits {change.path} (unified diff of {where}, numbered as the file will read); {cite}"
        return [_diff(title, known.text, after, known.first_line)]
    title = (
        f"edits {change.path} (unified diff; the file's text was not shown, so line numbers are relative "
        "to the edited text, not the file's)"
    )
    return [_diff(title if i == 0 else "and", old, new, 1) for i, (old, new) in enumerate(change.pieces)]


def _tool_call(obs: ToolCall, files: Files) -> list[Block]:
    changes = file_changes(obs)
    if changes:
        blocks = [Block(f"[ToolCall] {obs.name}")]
        for change in changes:
            blocks += _change_blocks(change, files)
        return blocks
    command = obs.input.get("command")
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = " ".join(command)
    if obs.name in _SHELL_TOOLS and isinstance(command, str):
        return [_numbered(f"[ToolCall] {obs.name}: runs this command", command, "bash")]
    code = obs.input.get("code")
    if obs.name in _CODE_TOOLS and isinstance(code, str):
        return [_numbered(f"[ToolCall] {obs.name}: runs this Python", code, "python")]
    if obs.name == "NotebookEdit" and isinstance(obs.input.get("new_source"), str):
        cell = obs.input.get("cell_id")
        target = f"cell:{cell}" if cell else "cell"
        title = f"[ToolCall] NotebookEdit {obs.input.get('notebook_path', '')}: the cell's new source; cite lines as {target}:LINE"
        return [_numbered(title, obs.input["new_source"], "python")]
    arguments = json.dumps(obs.input, ensure_ascii=False, indent=1, default=str)
    return [Block(f"[ToolCall] {obs.name}", tuple(_lines(arguments)), "json")]


def _tool_result(obs: ToolResult) -> list[Block]:
    label = "ToolResult (error)" if obs.is_error else "ToolResult"
    suffix = f" [exit {obs.exit_code}]" if obs.exit_code is not None else ""
    lines = len(_lines(obs.output))
    if not lines:
        return [Block(f"[{label}]{suffix}: (no output)")]
    return [_output(f"[{label}]{suffix}: {lines} line{'s' if lines != 1 else ''}", obs.output)]


def _cell(obs: CellExecuted) -> list[Block]:
    label = f"Cell In[{obs.execution_count}]" if obs.execution_count is not None else "Cell"
    if obs.cell_id:
        target = f"cell:{obs.cell_id}"
    elif obs.execution_count is not None:
        target = f"In[{obs.execution_count}]"
    else:
        target = "cell"
    blocks = [_numbered(f"[{label}] ran this source; cite lines as {target}:LINE", obs.source, "python")]
    if obs.stdout:
        blocks.append(_output("[Cell output]", obs.stdout))
    if obs.error is not None:
        at = f" at line {obs.error.lineno}" if obs.error.lineno else ""
        blocks.append(Block(f"[Cell error]{at}: {obs.error.ename}", tuple(_lines(obs.error.evalue))))
    return blocks


def render_observation(obs: Observation, files: Files | None = None) -> Rendered:
    """``obs`` as the evaluation prompt shows it; ``files`` (what the session showed so far) places edits."""
    files = files if files is not None else Files()
    match obs:
        case UserMessage(text=text):
            blocks = [_output("[User]", text, "")]
        case AssistantMessage(text=text):
            blocks = [_output("[Assistant]", text, "")]
        case ToolCall():
            blocks = _tool_call(obs, files)
        case ToolResult():
            blocks = _tool_result(obs)
        case CellExecuted():
            blocks = _cell(obs)
        case Condensation():
            blocks = [Block("[Condensation]: the context was trimmed")]
        case HarnessError(text=text):
            blocks = [_output("[Error]", text, "")]
        case Done():
            blocks = [Block("[Done]")]
        case _:
            blocks = [Block(f"[{obs.kind}]")]
    return Rendered(tuple(blocks))


def render_all(observations: Sequence[Observation], files: Files) -> list[Rendered]:
    """Every observation rendered in order, ``files`` learning from each after it is shown."""
    out = []
    for obs in observations:
        out.append(render_observation(obs, files))
        files.learn(obs)
    return out
