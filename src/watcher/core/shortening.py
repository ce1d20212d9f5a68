"""How an evaluation prompt is shortened to fit an evaluator's token budget, a step at a time.

An evaluator with a budget asks ``Shortening.at(step)`` for successively shorter prompts and sends
the first that fits: outputs shorten before code, old observations before new, and only then are
the oldest observations left out (never the newest).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence

from watcher.core.edits import Files, KnownFile, Lookup
from watcher.core.observations import Observation
from watcher.core.protocol import END_OBSERVATIONS, EvaluationPrompt, neutralise, static_prompt
from watcher.core.spec import WatcherSpec
from watcher.core.view import CODE_LINES, OUTPUT_LINES, render_all

__all__ = ["Shortening", "format_evaluation_prompt"]


class Shortening:
    """The evaluation prompt at every step of shortening, from the fullest (step 0) to the shortest.

    An evaluator with a token budget takes the first step that fits. The steps shorten outputs
    (messages, tool results, cell output) before code (files, cells, diffs, commands), each from
    the oldest observation to the newest, a level at a time; then they leave out the oldest
    observations, never the newest. Only what a step changes counts as a step.
    """

    def __init__(
        self,
        spec: WatcherSpec,
        parent: str,
        observations: Sequence[Observation],
        *,
        digest: str = "",
        nonce: str | None = None,
        files: Mapping[str, KnownFile] | None = None,
        lookup: Lookup | None = None,
    ) -> None:
        self.static = static_prompt(spec, parent)
        self.nonce = nonce or secrets.token_hex(6)
        self.digest = digest
        self.rendered = render_all(observations, Files(files, lookup))
        self._steps: list[tuple[str, int, int]] = []
        for kind, levels in (("output", OUTPUT_LINES), ("code", CODE_LINES)):
            for level in range(1, len(levels)):
                for i, shown in enumerate(self.rendered):
                    if shown.shortens(code=kind == "code", keep=levels[level]):
                        self._steps.append((kind, i, level))
        self._steps += [("drop", i, 0) for i in range(len(self.rendered) - 1)]

    @classmethod
    def given(cls, prompt: EvaluationPrompt) -> Shortening:
        """A prompt formatted by its role rather than from observations: one step, sent as it is."""
        return _Given(prompt)

    @property
    def steps(self) -> int:
        """The last step: the shortest prompt."""
        return len(self._steps)

    def at(self, step: int) -> EvaluationPrompt:
        """The prompt after the first ``step`` shortening steps."""
        n = len(self.rendered)
        code, output = [0] * n, [0] * n
        dropped = 0
        for kind, i, level in self._steps[: max(0, step)]:
            if kind == "code":
                code[i] = level
            elif kind == "output":
                output[i] = level
            else:
                dropped = i + 1
        fence = f"OBSERVED-{self.nonce}"
        shown = [
            f"<<<{fence}\n{neutralise(self.rendered[i].text(code[i], output[i]))}\n{fence}>>>"
            for i in range(dropped, n)
        ]
        if dropped:
            shown.insert(
                0, f"({dropped} older observation{'s are' if dropped != 1 else ' is'} left out to fit the budget)"
            )
        body = "\n\n".join(shown) or "(no activity)"
        older = f"EARLIER (digest): {neutralise(self.digest)}\n\n" if self.digest else ""
        activity = f"RECENT ACTIVITY IN PARENT SESSION:\n{older}{body}\n{END_OBSERVATIONS}"
        return EvaluationPrompt(static=self.static, activity=activity, nonce=self.nonce)


class _Given(Shortening):
    """``Shortening.given``: a role's own prompt, which has no shorter form."""

    def __init__(self, prompt: EvaluationPrompt) -> None:  # nothing to render: the role formatted it
        self.static, self.nonce, self.digest = prompt.static, prompt.nonce, ""
        self.rendered = []
        self._steps = []
        self._prompt = prompt

    def at(self, step: int) -> EvaluationPrompt:
        return self._prompt


def format_evaluation_prompt(
    spec: WatcherSpec,
    parent: str,
    observations: Sequence[Observation],
    *,
    digest: str = "",
    nonce: str | None = None,
    files: Mapping[str, KnownFile] | None = None,
    lookup: Lookup | None = None,
) -> EvaluationPrompt:
    """Build the ``[WATCHER EVALUATION]`` prompt for ``spec`` watching ``parent``, nothing shortened.

    ``digest`` is a short summary of older observations (minimal context). ``nonce`` fixes the
    fence delimiter (tests); by default each evaluation gets a fresh random one. ``files`` and
    ``lookup`` say what is known of the files edited (see ``Shortening``).
    """
    return Shortening(spec, parent, observations, digest=digest, nonce=nonce, files=files, lookup=lookup).at(0)
