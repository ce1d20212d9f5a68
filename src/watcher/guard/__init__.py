"""The guard: offline rules that deny a dangerous tool call before it runs, whatever evaluator the
watchers use (an LLM evaluator only adds judgment; a missing key never opens the guard).

``judge(tool, tool_input, cwd=...)`` answers one call of Claude Code, Codex, Gemini CLI or an MCP
tool: shell commands are read with a real parser (tree-sitter-bash), paths are resolved against
the session's ``cwd``, and the policy is a pack (``standard``: safety only; ``strict``: plus team
policies; data files in ``packs/``) with the project's ``.watcher/policy.toml`` on top.

The package imports nothing of watcher beyond itself and only ``ast_grep_py`` beyond the standard
library, so a hook without its daemon pays for the guard alone.

Modules: ``_shell`` (the parser), ``_simple`` (a simple command), ``_wrappers`` (what a command
really runs), ``_built`` (commands ``xargs``, ``parallel`` and ``find`` build), ``_paths`` (where a path points), ``_files`` (what touching a
file means), ``_context`` (a command where it runs), ``_damage`` (deletes, devices, permissions), ``_bombs``
(fork and resource bombs), ``_bindings`` (what a line sets up before it acts), ``_set_by`` (variables builtins set: ``read``, ``printf -v``, ``declare -n``), ``_secrets`` (reads and exfiltration), ``_remote`` (downloads run, reverse shells),
``_git`` (pushes), ``_database`` (destructive statements), ``_registry`` (package managers' settings),
``_inspect`` (containers' and processes' environments), ``_urls`` (what a fetched URL reads), ``_commands`` (every
rule for a command line), ``_policy`` (packs, project file), ``_judge`` (a tool call).
"""

from __future__ import annotations

from watcher.guard._judge import TOO_DEEP, Verdict, judge
from watcher.guard._policy import PACKS, Policy, load_policy

__all__ = ["PACKS", "TOO_DEEP", "Policy", "Verdict", "judge", "load_policy"]
