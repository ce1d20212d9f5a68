"""``watcher hooks policy`` and ``watcher hooks check``: the guard's policy, read and tried without running anything."""

from __future__ import annotations

import argparse
import json
import os
import shlex
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.redact import redact_value
from watcher.core.terminal import for_terminal, json_for_terminal
from watcher.guard import PACKS, judge, load_policy

__all__ = ["add_parsers", "run_check", "run_policy"]


def add_parsers(action: argparse._SubParsersAction[Any]) -> None:
    """Add ``policy`` and ``check`` to ``watcher hooks``."""
    text = "print the guard policy in force here: its pack, categories and the project's rules"
    p = action.add_parser("policy", help=text, description=text)
    p.add_argument("--cwd", default=".", help="the session's working directory (default: here)")
    p.add_argument("--pack", choices=PACKS, help="show this pack instead of the project's")
    p.set_defaults(func=run_policy)
    text = "say what the guard would answer to a tool call, and why, without running it"
    c = action.add_parser("check", help=text, description=text)
    c.add_argument("command", nargs="?", default="", help="a shell command (the Bash tool's input)")
    c.add_argument("--tool", default="", help="the tool (default: Bash with a command, Read with --path)")
    c.add_argument("--path", default="", help="the file the tool reads or writes")
    c.add_argument("--input", default="", help="the tool's whole input as JSON (e.g. an MCP tool's)")
    c.add_argument("--cwd", default=".", help="the session's working directory (default: here)")
    c.add_argument("--pack", choices=PACKS, help="judge with this pack instead of the project's")
    c.add_argument(
        "--json", action="store_true", help="print the verdict as one JSON object (decision, category, reason, rule)"
    )
    c.set_defaults(func=run_check)


_FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Grep", "Glob", "LS"})


def run_policy(args: argparse.Namespace) -> int:
    """Print the policy in force (a project's file is a checkout's text: shown, never obeyed by the terminal)."""
    cwd = os.path.abspath(args.cwd)
    policy = load_policy(cwd, pack=args.pack)
    data = policy.data
    protected = ", ".join(data["git"]["protected"])
    lines = [
        f"pack: {policy.pack} ({data['description']})",
        f"project file: {policy.source or f'none (create .watcher/policy.toml in {cwd} to add rules)'}",
        "denied categories: " + ", ".join(data["categories"]),
        f"shared branches: {protected}, and the remote's default"
        + ("; any force-push" if data["git"]["any_force"] else ""),
        f"command rules: {len(data.get('command', []))}; secret file patterns: {len(data['secrets']['names'])}",
    ]
    for kind, rules in (("allow", policy.allow), ("deny", policy.deny)):
        lines += [f"{kind} rule {n}: {rule.describe()}" for n, rule in enumerate(rules, 1)]
    lines += [f"problem: {problem}" for problem in policy.problems]
    for line in lines:
        print(for_terminal(line, one_line=True))
    return 1 if policy.problems else 0


def run_check(args: argparse.Namespace) -> int:
    """Print the verdict; exit 0 when allowed, 1 when denied."""
    tool = args.tool or ("Read" if args.path and not args.command else "Bash")
    if args.command and not args.path and tool in _FILE_TOOLS:  # `check --tool Read ~/.ssh/id_rsa`
        raise ConfigurationError(
            f"--tool {tool} reads or writes a file: give it as --path {shlex.quote(args.command)} "
            "(a COMMAND is a shell command, for Bash)"
        )
    tool_input: dict[str, Any] = {}
    if args.input:
        try:
            tool_input = json.loads(args.input)
        except ValueError as exc:
            raise ConfigurationError(f"--input is not JSON ({exc}); pass the tool input as a JSON object") from exc
        if not isinstance(tool_input, dict):
            raise ConfigurationError(
                f"--input is a JSON {type(tool_input).__name__}, not an object; pass the tool input as "
                """'{"command": "…"}'"""
            )
    if args.command:
        tool_input["command"] = args.command
    if args.path:
        tool_input["file_path"] = args.path
    if not tool_input:
        raise ConfigurationError("nothing to check: give a COMMAND, --path or --input")
    cwd = os.path.abspath(args.cwd)
    verdict = judge(tool, tool_input, cwd=cwd, policy=load_policy(cwd, pack=args.pack))
    if args.json:
        shown = {"tool": tool, **verdict._asdict(), "problems": list(verdict.problems)}
        print(json_for_terminal(json.dumps(redact_value(shown), ensure_ascii=False)))
    elif verdict.denied:  # a reason may quote the command or a project rule's text
        print(
            for_terminal(
                f"deny [{verdict.category}]: this call {verdict.reason} (policy: {verdict.rule})", one_line=True
            )
        )
    else:
        print(
            for_terminal(
                f"allow: {verdict.reason or 'no rule of the ' + verdict.rule + ' pack applies'}", one_line=True
            )
        )
    for problem in () if args.json else verdict.problems:
        print(for_terminal(f"problem: {problem}", one_line=True))
    return 1 if verdict.denied else 0
