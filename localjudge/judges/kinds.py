"""The two shapes of LLM judge: one yes/no verdict per row, or one per retrieved chunk.

Built-in judges and custom judges from a TOML file are both instances of these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from localjudge import scoring
from localjudge.engine.base import Part, Verdict, VerdictRequest
from localjudge.judges.base import (
    YES_NO,
    JudgeOptions,
    LlmJudgeBase,
    Metric,
    make_prompt,
    round_prob,
    verdict_fields,
)
from localjudge.records import Chunk, Record

RowParts = Callable[[Record], list[Part]]
ChunkParts = Callable[[Record, int, Chunk], list[Part]]


@dataclass(frozen=True)
class RowJudge(LlmJudgeBase):
    """One yes/no verdict per row. `parts` builds the user message (question last).

    With `negated`, the question asks for the failing condition ("Does the response help
    someone cause harm?"): the model's "no" is the judge's "yes". The threshold still
    applies to P(judge's yes) = P(model's no); rating, probability and rationale are those
    of the judge's label.
    """

    name: str
    step: str
    needs: tuple[str, ...]
    description: str
    parts: RowParts = field(repr=False)
    fixed_texts: dict[str, str] = field(default_factory=dict, repr=False)
    aggregate_name: str = "percentage"
    labels: tuple[str, ...] = YES_NO
    negated: bool = False

    def requests(self, record: Record, options: JudgeOptions) -> list[VerdictRequest]:
        threshold = options.thresholds.get(self.name)
        if self.negated and threshold is not None:
            # judge's yes iff P(model's no) >= t, i.e. model's "yes" iff P(yes) > 1 - t
            # (the backend's rule is >=: the two differ only on an exact tie).
            threshold = 1.0 - threshold
        return [
            VerdictRequest(
                prompt=make_prompt(self.parts(record)),
                labels=self.labels,
                rationale=options.rationale,
                threshold=threshold,
            )
        ]

    def fields(
        self, record: Record, verdicts: Sequence[Verdict], options: JudgeOptions
    ) -> dict[str, Any]:
        (verdict,) = verdicts
        if self.negated:
            verdict = negate(verdict)
        return verdict_fields(self.prefix, verdict, options.rationale)

    def metrics(self) -> list[Metric]:
        return [
            Metric(f"{self.prefix}/rating/{self.aggregate_name}", f"{self.prefix}/rating", "rating")
        ]

    def templates(self) -> dict[str, str]:
        texts = dict(self.fixed_texts)
        if self.negated:
            texts["verdict"] = "negated: the model's no is the judge's yes"
        return texts


_NEGATED = {"yes": "no", "no": "yes"}


def negate(verdict: Verdict) -> Verdict:
    """The verdict of the opposite question: labels swapped, with their probabilities."""
    if verdict.label is None:
        return verdict
    return replace(
        verdict,
        label=_NEGATED[verdict.label],
        probabilities={_NEGATED[k]: v for k, v in verdict.probabilities.items()},
    )


@dataclass(frozen=True)
class ChunkJudge(LlmJudgeBase):
    """One yes/no verdict per retrieved chunk, in retrieval order; precision per row.

    A row whose chunk verdicts are not all computed gets no precision (null) rather than a
    number over a subset: the missing verdicts are reported in error_messages.
    """

    name: str
    needs: tuple[str, ...]
    description: str
    parts: ChunkParts = field(repr=False)
    fixed_texts: dict[str, str] = field(default_factory=dict, repr=False)
    step: str = "retrieval"
    labels: tuple[str, ...] = YES_NO

    def requests(self, record: Record, options: JudgeOptions) -> list[VerdictRequest]:
        return [
            VerdictRequest(
                prompt=make_prompt(self.parts(record, i, chunk)),
                labels=self.labels,
                rationale=options.rationale,
                threshold=options.thresholds.get(self.name),
            )
            for i, chunk in enumerate(record.retrieved_context or ())
            if chunk.content is not None and chunk.content.strip()
        ]

    def fields(
        self, record: Record, verdicts: Sequence[Verdict], options: JudgeOptions
    ) -> dict[str, Any]:
        it = iter(verdicts)
        per_chunk: list[Verdict] = []
        for chunk in record.retrieved_context or ():
            if chunk.content is not None and chunk.content.strip():
                per_chunk.append(next(it))
            else:
                per_chunk.append(Verdict.failed("chunk has no content"))
        ratings = [v.label for v in per_chunk]
        complete = all(r is not None for r in ratings)
        vector = [1 if r == "yes" else 0 for r in ratings]
        return {
            f"{self.prefix}/ratings": ratings,
            f"{self.prefix}/rationales": [v.rationale for v in per_chunk]
            if options.rationale
            else None,
            f"{self.prefix}/probabilities": [round_prob(v.probability) for v in per_chunk],
            f"{self.prefix}/error_messages": [v.error for v in per_chunk],
            f"{self.prefix}/truncated": [v.truncated for v in per_chunk],
            f"{self.prefix}/precision": scoring.precision(vector) if complete else None,
        }

    def metrics(self) -> list[Metric]:
        return [Metric(f"{self.prefix}/precision/average", f"{self.prefix}/precision", "mean")]

    def templates(self) -> dict[str, str]:
        return dict(self.fixed_texts)
