"""One tool call judged: what it would touch, by tool (Claude Code's, Codex's, Gemini CLI's, any
MCP tool's), through the pack's rules and the project's own allow and deny rules."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from watcher.guard._commands import shell_findings
from watcher.guard._database import destructive_sql, server_abuse
from watcher.guard._files import SECRET_PROBES, Finding, credential, read_finding, write_finding
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._policy import Policy, load_policy
from watcher.guard._scripts import scripts_written
from watcher.guard._secrets import credential_search, key_lines
from watcher.guard._urls import url_findings

__all__ = ["Verdict", "judge"]

_SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "local_shell",
        "exec_command",
        "run_shell_command",
        "container.exec",
        "terminal",
        "run_terminal_cmd",
        "execute_command",
        "powershell",
    }
)
_READ_TOOLS = frozenset(
    {
        "read",
        "notebookread",
        "read_file",
        "read_many_files",
        "view",
        "cat",
        "open_file",
        "grep",
        "search_file_content",
    }
)
_LIST_TOOLS = frozenset({"ls", "list_directory", "glob", "list_dir", "find_files"})  # names only, no content
_WRITE_TOOLS = frozenset(
    {
        "write",
        "edit",
        "multiedit",
        "notebookedit",
        "write_file",
        "replace",
        "create",
        "str_replace_editor",
        "edit_file",
        "create_file",
        "apply_diff",
        "insert",
    }
)
_FETCH_TOOLS = frozenset({"webfetch", "web_fetch", "fetch", "read_url", "browse"})
_PATH_KEYS = (
    "file_path",
    "path",
    "notebook_path",
    "filepath",
    "file",
    "filename",
    "absolute_path",
    "target",
    "target_file",
    "destination",
    "source",
    "dir",
    "directory",
    "uri",
)
_COMMAND_KEYS = ("command", "cmd", "script", "commands", "cli_command", "shell_command")
_URL_KEYS = ("url", "uri", "href", "endpoint")
_WRITE_VERBS = re.compile(
    r"(?i)write|edit|create|update|delete|remove|move|rename|put|upload|patch|replace|append|save|insert|set_|mkdir"
)
_DELETE_TOOL = lazy(r"(?i)delete|remove|(?:^|_)rm(?:$|_)|unlink|trash|purge")
_FLUSH_TOOL = lazy(r"(?i)flush(?:[_-]?(?:db|all|database))?$")  # redis's flushdb as a tool of its own
_MOVE_TOOL = lazy(r"(?i)move|rename|(?:^|_)mv(?:$|_)")
_SEND_VERBS = lazy(
    r"(?i)send|post|message|comment|issue|publish|upload|webhook|email|mail|tweet|chat|reply|create|gist|paste|push|commit"
)
_DB_TOOL = lazy(
    r"(?i)sql|postgres|mysql|sqlite|database|\bdb\b|_db|db_|query|mongo|redis|supabase|neon|bigquery|snowflake"
)


class Verdict(NamedTuple):
    """The guard's answer to one tool call: ``deny`` with the category and the reason, or ``allow``."""

    decision: str  # "allow" | "deny"
    category: str = ""
    reason: str = ""
    rule: str = ""  # "standard", "strict" or the project file's rule that decided
    problems: tuple[str, ...] = ()  # the policy's own problems (a broken project file), to report

    @property
    def denied(self) -> bool:
        return self.decision == "deny"

    def render(self) -> str:
        """The denial as the model reads it."""
        return f"[watcher guard] [{self.category}] Denied: this call {self.reason}. (policy: {self.rule})"


# A hook payload too deeply nested for JSON to be read (an MCP tool's input can be): the guard cannot see the
# call, so it is not waved through. No project file applies: the call's own folder is in the unread payload.
TOO_DEEP = Verdict(
    "deny", "unreadable", "has its input nested too deeply for the guard to read (JSON hundreds of levels deep)", "any"
)


def judge(
    tool: str, tool_input: Mapping[str, Any], *, cwd: str, home: str | None = None, policy: Policy | None = None
) -> Verdict:
    """The guard's verdict on calling ``tool`` with ``tool_input`` from ``cwd``."""
    policy = policy or load_policy(cwd)
    place = Place.of(cwd, home)
    command = _command(tool, tool_input)
    paths = sorted({place.resolve(p) for p in _paths(tool_input)})
    for n, rule in enumerate(policy.deny, 1):
        if rule.matches(tool, command, paths, policy.root):
            reason = "is denied by this project's policy" + (f" ({rule.reason})" if rule.reason else "")
            return Verdict("deny", "project-policy", reason, f"{policy.source} deny rule {n}", policy.problems)
    try:
        for category, reason in findings(tool, tool_input, place, policy):
            return _verdict(category, reason, tool, command, paths, policy)
    except Exception as exc:  # noqa: BLE001 - any failure to read it: deny, never wave it through
        # a call the guard cannot read is not waved through: the session is told why and goes on
        reason = f"could not be read by the guard ({type(exc).__name__}): run it in smaller, plainer steps"
        return _verdict("unreadable", reason, tool, command, paths, policy)
    return Verdict("allow", problems=policy.problems, rule=policy.pack)


def _verdict(category: str, reason: str, tool: str, command: str, paths: list[str], policy: Policy) -> Verdict:
    """A finding's verdict: denied, unless the project's policy file allows the call."""
    for n, rule in enumerate(policy.allow, 1):
        if rule.matches(tool, command, paths, policy.root):
            return Verdict(
                "allow",
                category,
                f"allowed by {policy.source} allow rule {n}: {reason}",
                policy.source,
                policy.problems,
            )
    return Verdict("deny", category, reason, policy.pack, policy.problems)


def _command(tool: str, tool_input: Mapping[str, Any]) -> str:
    for key in _COMMAND_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
                return str(value[2])
            if value and value[0] == "apply_patch":
                return ""
            return shlex.join(value)
    return ""


def _paths(tool_input: Mapping[str, Any]) -> Iterator[str]:
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if (isinstance(value, str) and value and key != "uri") or (
            isinstance(value, str) and value.startswith("file:")
        ):
            yield value
    for key in ("paths", "file_paths", "files", "include"):  # include: read_many_files' globs
        value = tool_input.get(key)
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, str))


def findings(tool: str, tool_input: Mapping[str, Any], place: Place, policy: Policy) -> Iterator[Finding]:
    """Every (category, reason) the pack finds in the call, most direct first."""
    key = tool.lower()
    command = _command(tool, tool_input)
    if command and key in ("powershell", "cmd", "pwsh"):
        command = command.replace("\\", "/")  # Windows paths: a backslash separates, it does not escape
    if command and (key in _SHELL_TOOLS or key.startswith("mcp__") or key not in _READ_TOOLS | _WRITE_TOOLS):
        yield from shell_findings(command, place, policy)
    patch = _patch_text(tool, tool_input)
    if patch:
        yield from _patch(patch, place, policy)
        return
    mcp_write = key not in _READ_TOOLS | _WRITE_TOOLS and bool(_WRITE_VERBS.search(key))
    writes = key in _WRITE_TOOLS or mcp_write
    content = _content(tool_input)
    deletes = mcp_write and bool(_DELETE_TOOL.search(key.rsplit("__", 1)[-1]))
    moved = [str(tool_input.get(k) or "") for k in ("source", "destination")]
    if mcp_write and all(moved) and _MOVE_TOOL.search(key.rsplit("__", 1)[-1]):  # gone from where it was, as `mv`
        yield from shell_findings(f"mv -- {shlex.quote(moved[0])} {shlex.quote(moved[1])}", place, policy)
    # Grep's names of the files that match, or their counts: no line of a file reaches the model
    names_only = key in ("grep", "search_file_content") and tool_input.get("output_mode") in (
        "files_with_matches",
        "count",
    )
    for raw in _paths(tool_input) if key not in _LIST_TOOLS else ():
        if names_only:
            continue
        if deletes:  # a tool that deletes a path: judged as `rm -rf` of it (a home, a tree holding the project)
            yield from (
                f for f in shell_findings(f"rm -rf -- {shlex.quote(raw)}", place, policy) if f[0] != "secret-write"
            )
        path = place.resolve(raw)
        found = write_finding(place, path, policy, content) if writes else read_finding(place, path, policy)
        if found and policy.enabled(found[0]):
            yield found
        if writes and content:
            yield from scripts_written(path, content, place, policy)
    committed = key.startswith("mcp__") and (mcp_write or re.search(r"(?i)push|commit", key) is not None)
    for raw, text in _file_objects(tool_input) if committed else ():  # push_files: each {path, content} written
        found = write_finding(place, place.resolve(raw), policy, text)
        if found and policy.enabled(found[0]):
            yield found
    if key in ("grep", "search_file_content"):
        pattern = str(tool_input.get("glob") or tool_input.get("include") or "").removeprefix("**/")
        if (
            pattern.strip("*./")
            and any(fnmatchcase(p, pattern) for p in SECRET_PROBES)
            and policy.enabled("secret-read")
        ):
            yield "secret-read", f"searches inside files matching {pattern}, which hold credentials"
        where = str(tool_input.get("path") or tool_input.get("dir_path") or ".")
        searched = str(tool_input.get("pattern") or "")
        if policy.enabled("secret-read") and credential_search(place, searched, place.resolve(where)):
            yield "secret-read", f"searches {where} for credentials: whatever secrets lie there would reach the model"
        around = any(tool_input.get(k) for k in ("-A", "-B", "-C", "context", "multiline"))
        shown = str(tool_input.get("output_mode") or "files_with_matches") == "content"
        if policy.enabled("secret-read") and shown and key_lines(searched, around):
            yield "secret-read", "prints the private keys it finds (the lines after their BEGIN marker)"
    for k in _URL_KEYS:
        url = tool_input.get(k)
        if isinstance(url, str) and url:
            yield from url_findings(url, place, policy)
    if key.startswith("mcp__") or key not in _SHELL_TOOLS | _READ_TOOLS | _WRITE_TOOLS | _FETCH_TOOLS:
        yield from _generic(key, tool_input, place, policy)


def _file_objects(tool_input: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The files an MCP tool writes as objects (GitHub's push_files: ``files: [{path, content}]``)."""
    files = tool_input.get("files")
    for item in files if isinstance(files, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("path"), str):
            yield item["path"], str(item.get("content") or "")


def _content(tool_input: Mapping[str, Any]) -> str:
    parts = [tool_input.get(k) for k in ("content", "new_string", "new_source", "text", "new_str", "file_text", "body")]
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        parts += [e.get("new_string") for e in edits if isinstance(e, Mapping)]
    return "\n".join(p for p in parts if isinstance(p, str))


def _patch_text(tool: str, tool_input: Mapping[str, Any]) -> str:
    for key in ("patch", "input", "command", "diff"):
        value = tool_input.get(key)
        if isinstance(value, list):
            value = "\n".join(v for v in value if isinstance(v, str))
        if isinstance(value, str) and "*** Begin Patch" in value:
            return value
    return ""


def _patch(patch: str, place: Place, policy: Policy) -> Iterator[Finding]:
    """Codex's apply_patch: every file it adds, updates, deletes or moves to, with the added lines."""
    files: dict[str, list[str]] = {}
    current = ""
    for line in patch.splitlines():
        m = re.match(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", line)
        if m:
            current = (m.group(1) or m.group(2)).strip()
            files.setdefault(current, [])
        elif current and line.startswith("+"):
            files[current].append(line[1:])
    for raw, added in files.items():
        found = write_finding(place, place.resolve(raw), policy, "\n".join(added))
        if found and policy.enabled(found[0]):
            yield found
        yield from scripts_written(place.resolve(raw), "\n".join(added), place, policy)


def _generic(key: str, tool_input: Mapping[str, Any], place: Place, policy: Policy) -> Iterator[Finding]:
    """An MCP or unknown tool: SQL in its input, credentials in what it sends."""
    texts = list(_strings(tool_input))
    if _DB_TOOL.search(key) and policy.enabled("database"):
        for text in texts:
            if destructive_sql(policy, text):
                yield (
                    "database",
                    "runs a destructive database statement (DROP, TRUNCATE, DELETE without WHERE, FLUSHALL)",
                )
                return
    if _DB_TOOL.search(key) and _FLUSH_TOOL.match(key.rsplit("__", 1)[-1]) and policy.enabled("database"):
        yield "database", f"empties a whole database through the tool {key} (as FLUSHDB or FLUSHALL does)"
        return
    if _DB_TOOL.search(key):
        for text in texts:
            if (abuse := server_abuse(text)) and policy.enabled(abuse[0]):
                yield abuse
                return
    if (found := _reveals(key, tool_input)) and policy.enabled(found[0]):
        yield found
        return
    if (found := _destroys(key, tool_input)) and policy.enabled(found[0]):
        yield found
        return
    if (found := _moves_shared_branch(key, tool_input, policy)) and policy.enabled(found[0]):
        yield found
        return
    if _SEND_VERBS.search(key) and policy.enabled("secret-exfiltration"):
        for text in texts:
            if credential(policy, text):
                yield "secret-exfiltration", "sends a credential to another service"
                return


def _reveals(key: str, tool_input: Mapping[str, Any]) -> Finding | None:
    """An MCP tool that reads a cluster's secrets (``kubectl_get`` of ``secrets``): their values reach the model."""
    name = key.rsplit("__", 1)[-1]
    if not re.search(r"(?i)get|describe|read|list|show|export", name):
        return None
    kinds = [str(v).lower() for k, v in tool_input.items() if k.lower() in _KIND_KEYS and isinstance(v, str)]
    if re.search(r"(?i)(?:get|read|describe)[_-]?secrets?(?![a-z])", name) or any(
        k in ("secret", "secrets") for k in kinds
    ):
        return "secret-read", f"reads secrets through the tool {key}: their values would reach the model"
    return None


def _moves_shared_branch(key: str, tool_input: Mapping[str, Any], policy: Policy) -> Finding | None:
    """A forge's tool that force-updates (``update_ref`` with ``force``) or deletes a shared branch."""
    name = key.rsplit("__", 1)[-1]
    if not re.search(r"(?i)ref|branch|push|commit", name):
        return None
    given = [tool_input.get(k) for k in ("branch", "ref", "target_branch", "branch_name", "head")]
    branches = [re.sub(r"^(?:refs/)?heads/", "", b) for b in given if isinstance(b, str)]
    shared = next((b for b in branches if any(fnmatchcase(b, p) for p in policy.data["git"]["protected"])), None)
    if shared is None:
        return None
    if re.search(r"(?i)delete|remove", name):
        return "force-push", f"deletes the shared branch {shared} through the tool {key}"
    if tool_input.get("force") is True or str(tool_input.get("force")).lower() == "true":
        return (
            "force-push",
            f"force-updates the shared branch {shared} through the tool {key}: others' commits on it would be lost",
        )
    return None


def _destroys(key: str, tool_input: Mapping[str, Any]) -> Finding | None:
    """An MCP tool that deletes (``kubectl_delete``, ``uninstall_helm_chart``, ``delete_bucket``) a
    whole namespace, cluster, bucket, database or project, or anything in production."""
    name = key.rsplit("__", 1)[-1]
    verb = _DESTROY_VERBS.search(name)
    if verb is None and not re.search(r"(?i)scale", name):  # scaled to none in production: an outage
        return None
    named = _NAMED_KIND.search(name) if verb else None
    given = [str(v).lower() for k, v in tool_input.items() if k.lower() in _KIND_KEYS and isinstance(v, str)]
    kind = named.group(1) if named else next((v for v in given if _WHOLE.fullmatch(v)), None) if verb else None
    if kind:
        data = re.sub(r"(?:s|es)$", "", kind) in ("database", "table", "collection", "index", "indic", "keyspace")
        return ("database" if data else "infrastructure"), f"deletes a whole {kind} through the tool {key}"
    names = [str(v) for k, v in tool_input.items() if k.lower() in _WHERE_KEYS and isinstance(v, str) and " " not in v]
    shown = next((t for t in names if _PRODUCTION.search(t)), None)  # a name or place, not prose about one
    if shown is not None and (verb or str(tool_input.get("replicas")) == "0"):
        what = "scales to nothing" if verb is None else "deletes or uninstalls"
        return "infrastructure", f"{what} something in production ({shown[:80]}) through the tool {key}"
    return None


_VERBS = "delete|destroy|drop|uninstall|remove|purge|terminate|wipe|teardown"
_KINDS = (
    r"(?:namespace|cluster|bucket|database|project|resource_?group|stack|keyspace|collection|table"
    r"|(?:persistent)?volume|vpc|zone|repo|repository|organization|org|account|instance|droplet)s?"
    r"|repositories|indices|indexes|index"
)
_DESTROY_VERBS = lazy(f"(?i){_VERBS}")
_NAMED_KIND = lazy(rf"(?i)(?:{_VERBS})[_-]?(?:the[_-])?({_KINDS})(?![a-z_])")  # delete_namespace
_KIND_KEYS = frozenset({"resourcetype", "resource_type", "kind", "type", "resource", "target", "object"})
# the inputs that name what a tool acts on, or where: a production value there is production's
_WHERE_KEYS = frozenset(
    {
        "namespace",
        "name",
        "environment",
        "env",
        "context",
        "cluster",
        "project",
        "stage",
        "resourcename",
        "resource_name",
        "deployment",
        "service",
        "app",
        "release",
        "releasename",
        "stack",
        "bucket",
        "database",
    }
)
_WHOLE = lazy(_KINDS)
_PRODUCTION = lazy(r"(?i)(?:^|[-_./:\s])(?:prod|production|live)(?:$|[-_./:\s])")


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    if depth > 6:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)
