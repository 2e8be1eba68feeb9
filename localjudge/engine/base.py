"""The narrow interface between judges and a model.

Judges build abstract prompts (a fixed system text, then the user message as ordered
parts, then the start of the answer) and ask for verdicts; they never touch llama.cpp.
A backend turns each prompt into tokens with the model's chat template, constrains the
verdict to the allowed labels and reports each label's probability.

Prompt layout matters for speed (SPEC §7): parts are ordered from the most shared (the
system text, the request) to the most specific (the judge's question), so that prompts
of one row share long prefixes that a backend evaluates once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

ANSWER_PREFIX = '{"verdict": "'
RATIONALE_PREFIX = '", "rationale": "'


@dataclass(frozen=True)
class Part:
    """A piece of the user message.

    `data` marks text under judgement: it is tokenised as plain text (special tokens in it
    stay text) and it is what gets truncated when a prompt does not fit the context.
    """

    text: str
    data: bool = False


@dataclass(frozen=True)
class Prompt:
    """A chat prompt: system text, user message parts in order, and the answer's start."""

    system: str
    user: tuple[Part, ...]
    answer_prefix: str = ANSWER_PREFIX

    def user_text(self) -> str:
        return "".join(p.text for p in self.user)


@dataclass(frozen=True)
class VerdictRequest:
    """One verdict to compute: the model may answer nothing but one of `labels`.

    With `threshold` set (binary yes/no only), the label is "yes" when its probability is
    at least the threshold, else "no"; without it, the most probable label wins.
    """

    prompt: Prompt
    labels: tuple[str, ...]
    rationale: bool = False
    threshold: float | None = None


@dataclass(frozen=True)
class Verdict:
    """A computed verdict, or an error with no label (left out of means, counted)."""

    label: str | None
    probability: float | None
    probabilities: Mapping[str, float] = field(default_factory=dict)
    rationale: str | None = None
    error: str | None = None
    truncated: bool = False

    @staticmethod
    def failed(message: str, truncated: bool = False) -> Verdict:
        return Verdict(label=None, probability=None, error=message, truncated=truncated)


def choose_label(
    probabilities: Mapping[str, float], labels: Sequence[str], threshold: float | None
) -> str:
    """The decision rule shared by every backend: threshold on yes, else the argmax.

    Ties go to the label listed first, so the rule is deterministic.
    """
    if threshold is not None and set(labels) == {"yes", "no"}:
        return "yes" if probabilities["yes"] >= threshold else "no"
    best = labels[0]
    for label in labels[1:]:
        if probabilities[label] > probabilities[best]:
            best = label
    return best


@dataclass
class BackendStats:
    """Work counters, for timings in the summary and for benchmarks."""

    verdicts: int = 0
    prompt_tokens: int = 0  # tokens in the prompts as asked (what a plain judge evaluates)
    evaluated_tokens: int = 0  # tokens actually run through the model
    generated_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "verdicts": self.verdicts,
            "prompt_tokens": self.prompt_tokens,
            "evaluated_tokens": self.evaluated_tokens,
            "generated_tokens": self.generated_tokens,
        }


class Backend(Protocol):
    """What judges need from a model."""

    stats: BackendStats

    def judge(self, requests: Sequence[VerdictRequest]) -> list[Verdict]:
        """Verdicts for `requests`, in the same order. Never raises for one bad prompt:
        a verdict that cannot be computed carries an error instead."""
        ...

    def describe(self) -> dict[str, object]:
        """What goes into the run manifest about this backend."""
        ...
