"""The public surface is deliberate: ``__all__`` lists (kept sorted by ruff's RUF022), locked here."""

from __future__ import annotations

import importlib

import pytest

import watcher

#: the deliberate public surface of every package, compared as exact sorted lists (as httpx locks its own):
#: adding or removing a name is a decision, made here too
PUBLIC = {
    "watcher": [
        "AgentRun",
        "CallableEvaluator",
        "Continue",
        "EvaluationRequest",
        "EvaluationResult",
        "Evaluator",
        "Interject",
        "Interjection",
        "Journal",
        "Location",
        "Origin",
        "ReplayResult",
        "WatcherError",
        "WatcherSpec",
        "__version__",
        "agent",
        "format_evaluation_prompt",
        "history",
        "load_ipython_extension",
        "make_evaluator",
        "parse_interjection",
        "read_transcript",
        "replay",
        "spec_for_role",
        "unload_ipython_extension",
    ],
    "watcher.agents": [
        "DEFAULT_MODEL",
        "GUIDANCE_MARKER",
        "GUIDANCE_PROTOCOL",
        "AgentRun",
        "Boundary",
        "ReplayResult",
        "RunConfig",
        "RunEvent",
        "RunEventKind",
        "RunHost",
        "RunResult",
        "Tool",
        "ToolOutcome",
        "agent",
        "format_injection",
        "make_client",
        "read_transcript",
        "replay",
        "set_host",
        "tool",
    ],
    "watcher.bench": [
        "CONDITIONS",
        "SIMULATED_NOTICE",
        "SimParams",
        "SuiteConfig",
        "Summary",
        "TaskResult",
        "World",
        "generate_world",
        "plot",
        "read_rows",
        "render_table",
        "report",
        "run_suite",
        "run_task",
        "summarize",
        "wilson",
    ],
    "watcher.cli": [
        "main",
    ],
    "watcher.core": [],
    "watcher.demo": [],
    "watcher.evaluators": [
        "EVALUATORS",
        "CallableEvaluator",
        "RulesEvaluator",
        "make_evaluator",
    ],
    "watcher.fleet": [
        "COMMAND_PREFIX",
        "Fleet",
        "FleetConfig",
        "Learning",
        "Recommendation",
        "Snapshot",
        "SupervisionHealth",
        "Supervisor",
        "TaskSpec",
        "extract",
        "load_tasks",
        "related",
        "render_sync",
    ],
    "watcher.guard": [
        "PACKS",
        "TOO_DEEP",
        "Policy",
        "Verdict",
        "judge",
        "load_policy",
    ],
    "watcher.hooks": [
        "Answer",
        "Desk",
        "HookCall",
        "HookConfig",
        "HookedSession",
    ],
    "watcher.judgment": [
        "Case",
        "Figures",
        "Rate",
        "RateLimit",
        "Runner",
        "Throttled",
        "figures",
        "outcome",
        "plot",
        "read_cases",
        "read_rows",
        "run_as",
        "table",
    ],
    "watcher.kernel_ext": [
        "KernelExtension",
        "current",
        "load_ipython_extension",
        "unload_ipython_extension",
    ],
    "watcher.lsp_bridge": [
        "WatcherLanguageServer",
        "create_server",
    ],
    "watcher.roles": [
        "ROLE_NAMES",
        "make_role",
        "role_class",
        "spec_for_role",
    ],
    "watcher.runtime": [
        "EventBus",
        "Journal",
        "RecordingSession",
        "Runtime",
        "Session",
        "Watcher",
        "default_journal_path",
    ],
    "watcher.settings": [
        "DEFAULT_AGENT_MODEL",
        "DEFAULT_OPENAI_PLANNER_MODEL",
        "DEFAULT_WATCHER_MODEL",
        "Secret",
        "Settings",
    ],
    "watcher.spawn": [
        "Recovery",
        "Sandbox",
        "SandboxManifest",
        "SpawnConfig",
        "SpawnResult",
        "adapter_for",
        "cleanup",
        "infer_manifest",
        "provision",
        "run_spawn",
        "spawn",
    ],
    "watcher.testing": [
        "FakeClock",
        "LoopbackForge",
        "RecordedRequest",
        "Reply",
        "StubAnthropicServer",
        "StubGeminiServer",
        "StubOpenAIServer",
        "StubResponsesServer",
        "ToolUse",
        "wait_until",
    ],
    "watcher.transcripts": [
        "FORMATS",
        "Format",
        "RecordReader",
        "Transcript",
        "detect_document",
        "detect_records",
        "format_named",
        "read_file",
        "read_records",
        "read_transcript",
        "reader_for",
    ],
    "watcher.widgets": [
        "MAX_FLUSHES_PER_S",
        "Mark",
        "PanelActions",
        "PanelState",
        "PanelView",
        "Pending",
        "WatcherPanel",
        "timeline_svg",
    ],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_the_public_surface_is_exactly_the_chosen_one(module: str) -> None:
    mod = importlib.import_module(module)
    assert list(mod.__all__) == PUBLIC[module]  # exact, in RUF022's order: a new export fails here
    for name in mod.__all__:
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_one_agent_entry_point() -> None:
    import watcher.agents

    assert watcher.agent is watcher.agents.agent
    assert watcher.replay is watcher.agents.replay


def test_import_watcher_stays_light() -> None:
    import subprocess
    import sys

    code = "import sys, watcher; print(sorted({'asyncio', 'sqlite3', 'polars', 'IPython', 'watcher.agents'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize(
    "module",
    [
        "watcher.runtime",
        "watcher.evaluators",
        "watcher.agents",
        "watcher.bench",
        "watcher.judgment",
        "watcher.core.errors",
        "watcher.core.protocol",
        "watcher.core.shortening",
        "watcher.core.answers",
        "watcher.core.interjection",
    ],
)
def test_subpackage_all_is_sorted_and_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    assert len(set(mod.__all__)) == len(mod.__all__)
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.{name}"


def test_parse_interjection_is_the_protocol_parser() -> None:
    found = watcher.parse_interjection("[INTERJECT]\nurgent: true\ncontent: hi\n[/INTERJECT]")
    assert found is not None and found.urgent is True and found.content == "hi"


def test_core_imports_no_framework() -> None:
    import subprocess
    import sys

    code = "import sys, watcher.core.protocol, watcher.core.shortening, watcher.core.answers, watcher.core.rules, watcher.core.evaluation, watcher.core.redact; bad = {'IPython','ipywidgets','pygls','anthropic','openai','sqlite3','asyncio','polars'} & set(sys.modules); print(sorted(bad))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
