"""The rules-evaluator framework: offline roles that judge observations without an LLM.

A ``Role`` is a named brief plus deterministic logic. One instance serves one watcher, so a role
may keep state between evaluations (what it already reported, how far it escalated). Roles answer
with a ``Decision``; the rules evaluator renders it in the protocol format so the pipeline is the
same as for an LLM watcher.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Decision
from watcher.core.observations import Observation
from watcher.core.spec import Authority, Triggers

__all__ = ["Role"]


class Role(ABC):
    """A rule-based watcher role; subclasses set the class attributes and implement ``evaluate``."""

    name: ClassVar[str]
    description: ClassVar[str]
    brief: ClassVar[str]
    authority: ClassVar[Authority] = "supervisor"
    triggers: ClassVar[Triggers] = Triggers()

    @abstractmethod
    def evaluate(self, observations: Sequence[Observation], new: int) -> Decision:
        """Judge the buffered ``observations``; the last ``new`` of them arrived since last time."""

    def judge(self, request: EvaluationRequest) -> Decision:
        """Judge ``request``: its observations; a role that judges a measurement (``request.subject``) overrides this."""
        return self.evaluate(request.observations, request.new)
