"""What the environment tells watcher, read once where watcher starts and handed down from there.

``Settings.from_env()`` is called at the boundary — the ``watcher`` command, ``%load_ext watcher``,
the language server's start, or the first call of the Python API that was given no settings — and
library code takes the ``Settings`` (or the one value it needs) as a parameter. This is the only
module of the package that reads ``os.environ``, but for the thin hook client and the guard it loads
alone (a warm hook cannot afford this import) and the fake agent CLI of ``watcher.testing`` (whose
environment is an agent's); ``tests/test_environment_reads.py`` keeps it so.

=========================  ===============================================================
variable                   setting
=========================  ===============================================================
WATCHER_JOURNAL            ``journal``: a journal path or a ``postgresql://`` URL
ANTHROPIC_API_KEY          ``anthropic_key`` (else ``ANTHROPIC_AUTH_TOKEN``)
ANTHROPIC_BASE_URL         ``anthropic_base_url``: another Messages-API server
WATCHER_ANTHROPIC_MODEL    ``anthropic_model`` (default ``DEFAULT_WATCHER_MODEL``)
OPENAI_API_KEY             ``openai_key``
WATCHER_OPENAI_BASE_URL    ``openai_base_url`` (else ``OPENAI_BASE_URL``)
WATCHER_OPENAI_MODEL       ``openai_model``
GITHUB_TOKEN               ``github_token`` (else ``GH_TOKEN``): opens pull requests
WATCHER_FORGE_API          ``forge_api``: a forge's REST API other than GitHub's
CODEX_HOME                 ``codex_home``: where Codex keeps its user hooks
WATCHER_SERVE_IDLE         ``serve_idle_s``: seconds the hook daemon waits idle before it exits
JPY_SESSION_NAME           ``notebook_path``: the notebook a kernel runs (set by jupyter_server)
WATCHER_DEMO_FAKE_CLI      ``demo_fake_cli``: the spawn demo replays a recorded CLI stream
=========================  ===============================================================

The whole environment is kept too (``environ``), for the child processes watcher starts (a
spawned CLI gets a filtered copy of it). Keys and tokens are ``Secret``: their repr never shows
them, so a settings object can be logged or journaled.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from urllib.parse import urlsplit

from watcher.core.errors import ConfigurationError
from watcher.core.redact import redact, redact_url

__all__ = ["DEFAULT_AGENT_MODEL", "DEFAULT_OPENAI_PLANNER_MODEL", "DEFAULT_WATCHER_MODEL", "Secret", "Settings"]

#: the model an LLM watcher judges with (and the spawn planner plans with) unless told otherwise
DEFAULT_WATCHER_MODEL = "claude-haiku-4-5"
#: the model an agent run (and a fleet's task) works with unless told otherwise
DEFAULT_AGENT_MODEL = "claude-sonnet-5-5"
#: the model name the spawn planner sends a local OpenAI-compatible server that was given none
DEFAULT_OPENAI_PLANNER_MODEL = "local-model"

_DEFAULT_SERVE_IDLE_S = 900.0


class Secret:
    """A key or token: ``reveal()`` gives it to the one call that needs it; its repr never shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself, for the SDK or header that sends it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True, slots=True)
class Settings:
    """The environment's configuration of watcher; the defaults are an empty environment's."""

    journal: str | None = None
    anthropic_key: Secret | None = None
    anthropic_base_url: str | None = None
    anthropic_model: str = DEFAULT_WATCHER_MODEL
    openai_key: Secret | None = None
    openai_base_url: str | None = None
    openai_model: str | None = None
    github_token: Secret | None = None
    forge_api: str | None = None
    codex_home: Path | None = None
    serve_idle_s: float = _DEFAULT_SERVE_IDLE_S
    notebook_path: str | None = None
    demo_fake_cli: bool = False
    environ: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, check_urls: bool = True, overridden: Collection[str] = ()
    ) -> Settings:
        """The settings ``environ`` gives (default: this process's environment, read now).

        Raises ``ConfigurationError`` naming the variable when one holds what it cannot (a base URL
        that is not an http(s) URL, an idle time that is not a positive number); the message never
        shows a secret the value holds. ``check_urls=False`` keeps the URL variables unchecked, for
        a caller that uses none of them (``watcher roles``), so a bad one does not stop it;
        ``overridden`` names variables a flag given on the command line replaces (``--base-url``).
        """
        env = dict(os.environ if environ is None else environ)

        def text(*names: str) -> str | None:
            return next((env[n] for n in names if env.get(n)), None)

        def secret(*names: str) -> Secret | None:
            found = text(*names)
            return Secret(found) if found else None

        def url(*names: str) -> str | None:
            for name in names:
                if env.get(name):
                    return _checked_url(name, env[name]) if check_urls and name not in overridden else env[name]
            return None

        return cls(
            journal=text("WATCHER_JOURNAL"),
            anthropic_key=secret("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
            anthropic_base_url=url("ANTHROPIC_BASE_URL"),
            anthropic_model=text("WATCHER_ANTHROPIC_MODEL") or DEFAULT_WATCHER_MODEL,
            openai_key=secret("OPENAI_API_KEY"),
            openai_base_url=url("WATCHER_OPENAI_BASE_URL", "OPENAI_BASE_URL"),
            openai_model=text("WATCHER_OPENAI_MODEL"),
            github_token=secret("GITHUB_TOKEN", "GH_TOKEN"),
            forge_api=url("WATCHER_FORGE_API"),
            codex_home=Path(found).expanduser() if (found := text("CODEX_HOME")) else None,
            serve_idle_s=_seconds("WATCHER_SERVE_IDLE", text("WATCHER_SERVE_IDLE"), _DEFAULT_SERVE_IDLE_S),
            notebook_path=text("JPY_SESSION_NAME"),
            demo_fake_cli=bool(text("WATCHER_DEMO_FAKE_CLI")),
            environ=MappingProxyType(env),
        )

    def __repr__(self) -> str:
        journal, anthropic_url, openai_url, forge_api = (
            redact_url(url) if url else url
            for url in (self.journal, self.anthropic_base_url, self.openai_base_url, self.forge_api)
        )
        return (
            f"Settings(journal={journal!r}, anthropic_key={self.anthropic_key!r}, "
            f"anthropic_base_url={anthropic_url!r}, anthropic_model={self.anthropic_model!r}, "
            f"openai_key={self.openai_key!r}, openai_base_url={openai_url!r}, "
            f"openai_model={self.openai_model!r}, github_token={self.github_token!r}, forge_api={forge_api!r}, "
            f"codex_home={self.codex_home!r}, serve_idle_s={self.serve_idle_s!r}, "
            f"notebook_path={self.notebook_path!r}, demo_fake_cli={self.demo_fake_cli!r})"
        )


def _checked_url(name: str, value: str) -> str:
    parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        parts = parts._replace(netloc="")  # reported below, as any other URL that names no server
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"{name}={_shown(value)} is not an http(s) URL; set it to a server's address "
            f"(e.g. `export {name}=http://localhost:1234/v1`) or unset it"
        )
    return value


def _shown(value: str) -> str:
    """``value`` as a message may quote it: without a URL's userinfo, secrets masked.

    A value that looks like neither a URL nor an address (no ``:``, ``/`` or ``.``) may be a key
    pasted into the wrong variable in a shape ``redact`` does not know: only its first characters
    and its length are shown.
    """
    shown = redact_url(value)
    if shown == value and not any(c in value for c in ":/.") and len(value) > 8:
        return f"{value[:4]!r}… ({len(value)} characters)"
    return repr(shown)


def _seconds(name: str, value: str | None, default: float) -> float:
    if value is None:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        raise ConfigurationError(
            f"{name}={redact(value)!r} is not a number of seconds above 0; set it to e.g. `export {name}={default:g}` or unset it"
        )
    return seconds
