"""The evaluator port: what an evaluator is given and what it gives back.

An evaluator judges a watcher's buffered observations at a breakpoint. Rule evaluators, LLM
evaluators and plain callables all implement ``Evaluator``; the runtime drives them the same way
and fails closed when one raises or times out. A request may also carry a ``Subject``: what a
supervisor measured of its parent (a fleet task's health), which its role reads and whose own
prompt an LLM evaluator sends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from watcher.core.edits import KnownFile, Lookup
from watcher.core.interjection import Decision
from watcher.core.observations import Observation
from watcher.core.protocol import EvaluationPrompt
from watcher.core.shortening import Shortening
from watcher.core.spec import WatcherSpec

__all__ = ["EvaluationRequest", "EvaluationResult", "Evaluator", "Subject", "Usage"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens an LLM evaluation used, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class Subject(Protocol):
    """What is judged besides observations (a fleet task's measured health): its role reads it.

    An LLM evaluator sends the prompt it formats instead of one made from the observations; that
    prompt states what was measured as fact and fences what the parent wrote as observed content.
    """

    def prompt(self, spec: WatcherSpec, *, nonce: str | None = None) -> EvaluationPrompt:
        """The evaluation prompt of ``spec`` judging this subject (``nonce`` fixes the fence, for tests)."""
        ...


@dataclass(frozen=True, slots=True)
class EvaluationRequest:
    """One evaluation: the watcher, its parent, the buffered observations and why now.

    ``new`` counts the observations at the end of ``observations`` not seen by the previous
    evaluation; ``index`` is the parent-session index of the last one; ``breakpoint`` names what
    triggered the evaluation. ``files`` holds what earlier observations, no longer shown, showed of
    files (so an edit is still numbered as its file reads). ``subject`` is what is judged besides
    the observations, when a role judges a measurement (see ``Subject``).
    """

    spec: WatcherSpec
    parent: str
    observations: Sequence[Observation]
    new: int
    index: int
    breakpoint: str
    digest: str = ""
    files: Mapping[str, KnownFile] = field(default_factory=dict)
    subject: Subject | None = None

    def prompt(self, *, nonce: str | None = None) -> EvaluationPrompt:
        """The ``[WATCHER EVALUATION]`` prompt for this request, nothing shortened."""
        return self.shortening(nonce=nonce).at(0)

    def shortening(self, *, nonce: str | None = None, lookup: Lookup | None = None) -> Shortening:
        """Every shortening of this request's prompt; ``lookup`` reads a file the session did not show.

        A subject's prompt is its role's own and is sent as it is (one step).
        """
        if self.subject is not None:
            return Shortening.given(self.subject.prompt(self.spec, nonce=nonce))
        return Shortening(
            self.spec,
            self.parent,
            self.observations,
            digest=self.digest,
            nonce=nonce,
            files=self.files,
            lookup=lookup,
        )


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    """What an evaluator concluded: its raw answer, the decision parsed from it, and its cost."""

    raw: str
    decision: Decision
    usage: Usage = Usage()  # frozen: one shared instance serves every result that used no tokens
    cost_usd: float = 0.0
    model: str = ""
    prompt: str = ""


@runtime_checkable
class Evaluator(Protocol):
    """Judges a watcher's observations. Implementations may raise; the runtime fails closed."""

    name: str

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        """Evaluate ``request`` and return the decision with its raw answer."""
        ...
