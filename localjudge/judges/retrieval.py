"""The retrieval judges: chunk_relevance (and context_position and context_precision,
derived from the same chunk verdicts), context_sufficiency, and document_recall (no model).

context_sufficiency blends two kinds of evidence, as groundedness does: the model's P(yes)
to "Do the passages contain the expected answer?" and answer recall, the share of the
expected answer's content words found word for word in the passages (judges/lexical.py),
each of its values (a time, date, price, quantity, share or number in digits) counting as
KEY_WEIGHT words: the passages must give the answer's values, and often say its other
words in other words ("They wind up at twenty past four." against "13:30 to 16:20").
The row's P(sufficient) is

    ANSWER_WEIGHT * answer recall + (1 - ANSWER_WEIGHT) * model P(yes)

and the rating is that value against the judge's threshold. An expected answer with no
content words beyond yes/no/true/false (the answer to a yes/no question) names nothing to
look for: the model's P(yes) alone is the row's P. An expected answer that starts with a
yes or a no and goes on ("No, you'll have to leave the dog behind.") usually says the rest
in other words than the passages ("Dogs aren't allowed"), so its recall is low and the
blend fails it however plainly the passages settle the question: its P is the larger of
the blend and the model's own verdict put on the blend's scale (POLAR_SHIFT: the model's
even odds sit at the default model's threshold). The expected answer's numbers and names
that no passage gives are reported (`key_terms_not_in_context`, found as groundedness finds
them: a number by its value, in words or in another unit), not weighed: holding the polar
rule back when one is missing was tried and reverted (docs/agreement.md, issue 13's
thirteenth round). Recall over exact words is strong evidence when the expected
answer is a name, a number or a short phrase (a fact the passages do not state rarely
leaves all of its words behind) and weaker when the expected response is a paraphrase,
which is why the model keeps half of the say; docs/agreement.md measures both parts and
the blend. The rationale is written without the model: the words not found and the
model's P(yes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localjudge import scoring
from localjudge.engine.base import Part, Verdict, VerdictRequest
from localjudge.judges.base import (
    JudgeOptions,
    Metric,
    expected_part,
    make_prompt,
    passage_part,
    passages,
    question,
    request_part,
    round_prob,
    score_fields,
)
from localjudge.judges.kinds import ChunkJudge, RowJudge
from localjudge.judges.lexical import (
    READINGS,
    RECALL_READINGS,
    answer_word,
    best_answer_recall,
    listed,
    missing_key_terms,
)
from localjudge.judges.support import logit, shifted
from localjudge.records import Chunk, Record

CHUNK_RELEVANCE_Q = "Is passage {n} relevant to the request? Answer yes or no."
SUFFICIENCY_Q = "Do the passages contain the expected answer? Answer yes or no."


def _chunk_parts(r: Record, i: int, chunk: Chunk) -> list[Part]:
    return [request_part(r), passage_part(i, chunk), question(CHUNK_RELEVANCE_Q.format(n=i + 1))]


def _sufficiency(r: Record) -> list[Part]:
    chunks = [c.content or "" for c in r.retrieved_context or ()]
    return [request_part(r), *passages(r), expected_part(r, like=chunks), question(SUFFICIENCY_Q)]


chunk_relevance = ChunkJudge(
    name="chunk_relevance",
    needs=("request", "retrieved_context"),
    description="Is each retrieved chunk relevant to the request? (ratings and precision)",
    parts=_chunk_parts,
    fixed_texts={"question": CHUNK_RELEVANCE_Q},
)

# Share of P(sufficient) that comes from answer recall (see the module docstring).
ANSWER_WEIGHT = 0.5
# How many words each of the expected answer's values counts as in answer recall: chosen
# with every plain set and HotpotQA a source, leaving each out in turn (docs/agreement.md,
# issue 13's eighteenth round; scripts/experiments/sufficiency_recall.py).
KEY_WEIGHT = 6.0
# An expected answer that starts with a yes or a no and goes on: the model's P(yes) is
# moved by this many logits, so that its even odds sit at the default model's threshold
# (0.7158, models/catalogue.toml), and the row's P is the larger of that and the blend
# (docs/agreement.md, issue 13's tenth round).
POLAR_SHIFT = logit(0.7158)


def polar_p(model_p: float) -> float:
    """The model's P(yes) on the blend's scale (POLAR_SHIFT)."""
    return shifted(model_p, POLAR_SHIFT)


def sufficiency_p(model_p: float, recall: float | None, polar: bool) -> float:
    """A row's P(sufficient): the model's P(yes) alone when the expected answer names
    nothing to look for (`recall` None), else the blend with answer recall; for an answer
    that starts with a yes or a no and goes on (`polar`), the larger of the blend and
    polar_p (see the module docstring)."""
    if recall is None:
        return model_p
    p = ANSWER_WEIGHT * recall + (1.0 - ANSWER_WEIGHT) * model_p
    return max(p, polar_p(model_p)) if polar else p


@dataclass(frozen=True)
class SufficiencyJudge(RowJudge):
    """context_sufficiency: the model's verdict blended with the expected answer's recall."""

    def requests(self, record: Record, options: JudgeOptions) -> list[VerdictRequest]:
        # The model's label is not the judge's (the blend decides), so no threshold, and
        # no rationale: it would argue for a verdict the blend may overturn.
        return [VerdictRequest(prompt=make_prompt(self.parts(record)), labels=self.labels)]

    def fields(
        self, record: Record, verdicts: Sequence[Verdict], options: JudgeOptions
    ) -> dict[str, Any]:
        (verdict,) = verdicts
        expected = record.expected_text() or ""
        chunks = [c.content or "" for c in record.retrieved_context or ()]
        recall, not_found = best_answer_recall(expected, chunks, key_weight=KEY_WEIGHT)
        key_missing = missing_key_terms(expected, chunks)[1]
        model_p = verdict.probabilities.get("yes") if verdict.label is not None else None
        p: float | None = None
        label: str | None = None
        rationale: str | None = None
        polar = recall is not None and answer_word(expected) is not None
        if verdict.error is None and model_p is not None:
            p = sufficiency_p(model_p, recall, polar)
            label = "yes" if p >= options.thresholds.get(self.name, 0.5) else "no"
            if options.rationale:
                rationale = _sufficiency_rationale(recall, not_found, model_p, polar)
        return {
            **score_fields(self.prefix, p, label, rationale, verdict.error, verdict.truncated),
            f"{self.prefix}/model_p_yes": round_prob(model_p),
            f"{self.prefix}/answer_recall": round_prob(recall),
            f"{self.prefix}/words_not_in_context": not_found,
            f"{self.prefix}/key_terms_not_in_context": key_missing,
        }

    def templates(self) -> dict[str, str]:
        return {
            **self.fixed_texts,
            "combine": (
                f"P(yes) = {ANSWER_WEIGHT} * answer recall + {1 - ANSWER_WEIGHT:.2f} * model "
                "P(yes), model P(yes) alone when the answer is only yes/no/true/false; "
                "when it starts with yes or no and goes on, the larger of that and "
                f"sigmoid(logit(model P(yes)) + {POLAR_SHIFT:.4f}); "
                "rating = P(yes) >= threshold"
            ),
            "answer recall": "share of the expected answer's content words in the passages, "
            f"each value (time, date, price, quantity, share, number) counting {KEY_WEIGHT:g} "
            f"times; {RECALL_READINGS}",
        }


def _sufficiency_rationale(
    recall: float | None, not_found: Sequence[str], model_p: float, polar: bool = False
) -> str:
    model = f"The model's P(sufficient) = {model_p:.2f}."
    if recall is None:
        return f"The expected answer is only yes/no, so the model alone decides. {model}"
    if polar:
        model += (
            " The expected answer starts with a yes or a no, so the model's own verdict"
            " also counts."
        )
    if not not_found:
        return f"Every content word of the expected answer is found in the passages. {model}"
    words = listed(not_found)
    return (
        f"Words of the expected answer not found in the passages: {words} "
        f"(answer recall {recall:.0%}, a value counting as {KEY_WEIGHT:g} words). {model}"
    )


context_sufficiency = SufficiencyJudge(
    name="context_sufficiency",
    step="retrieval",
    needs=("request", "retrieved_context", "expected"),
    description="Does the retrieved context hold everything needed for the expected response?",
    parts=_sufficiency,
    fixed_texts={
        "question": SUFFICIENCY_Q,
        "expected": "its quantities and dates as the passages write them when equal or "
        'within its own hedge ("just under 2 miles" as "3 km"; a one-sided hedge goes with '
        f"an equal value; a temperature's within half a degree; {READINGS}); "
        "a list of short items in the passages' order unless the request asks for one (items "
        "found by every word when one has no content word)",
    },
)


@dataclass(frozen=True)
class ChunkScoreJudge:
    """A score computed from chunk_relevance's ratings; asks the model nothing itself.

    The API computes chunk_relevance whenever one of these is selected; `fields` receives
    no verdicts and reads the ratings from `chunk_fields`.
    """

    name: str
    description: str
    formula: str
    step: str = "retrieval"
    labels: tuple[str, ...] = ()
    needs: tuple[str, ...] = ("request", "retrieved_context")
    source: str = "chunk_relevance"

    @property
    def prefix(self) -> str:
        return f"retrieval/llm_judged/{self.name}"

    def missing(self, record: Record) -> list[str]:
        return chunk_relevance.missing(record)

    def requests(self, record: Record, options: JudgeOptions) -> list[VerdictRequest]:
        return []

    def fields(
        self, record: Record, verdicts: Sequence[Verdict], options: JudgeOptions
    ) -> dict[str, Any]:
        raise NotImplementedError("use score_fields(chunk_fields)")

    def score_fields(self, chunk_fields: dict[str, Any]) -> dict[str, Any]:
        ratings = chunk_fields.get(f"{chunk_relevance.prefix}/ratings")
        if ratings is None or any(r is None for r in ratings):
            return {f"{self.prefix}/score": None}
        v = [1 if r == "yes" else 0 for r in ratings]
        if self.name == "context_position":
            return {f"{self.prefix}/score": scoring.context_position(v)}
        return {f"{self.prefix}/score": scoring.context_precision(v)}

    def metrics(self) -> list[Metric]:
        return [Metric(f"{self.prefix}/score/average", f"{self.prefix}/score", "mean")]

    def templates(self) -> dict[str, str]:
        return {"formula": self.formula}


context_position = ChunkScoreJudge(
    name="context_position",
    description="Are the relevant chunks ranked first? (Mastra position-weighted score)",
    formula="w_i = 1/(i+1); score = sum(w_i v_i) / sum(w_i); 0 when nothing is relevant",
)

context_precision = ChunkScoreJudge(
    name="context_precision",
    description="Average precision of the chunk ranking",
    formula="sum_k P@k v_k / sum(v), P@k = sum_{j<=k} v_j / k; 0 when nothing is relevant",
)


@dataclass(frozen=True)
class DocumentRecallJudge:
    """|E ∩ R| / |E| over distinct doc_uris; no model."""

    name: str = "document_recall"
    step: str = "retrieval"
    labels: tuple[str, ...] = ()
    needs: tuple[str, ...] = ("retrieved_context doc_uri", "expected_retrieved_context")
    description: str = "Share of the expected documents that were retrieved (no model)"

    def missing(self, record: Record) -> list[str]:
        out = []
        if not any(c.doc_uri for c in record.retrieved_context or ()):
            out.append("retrieved_context doc_uri")
        if not record.expected_retrieved_context:
            out.append("expected_retrieved_context")
        return out

    def requests(self, record: Record, options: JudgeOptions) -> list[VerdictRequest]:
        return []

    def fields(
        self, record: Record, verdicts: Sequence[Verdict], options: JudgeOptions
    ) -> dict[str, Any]:
        retrieved = [c.doc_uri for c in record.retrieved_context or () if c.doc_uri]
        recall = scoring.document_recall(record.expected_retrieved_context or (), retrieved)
        return {"retrieval/ground_truth/document_recall": recall}

    def metrics(self) -> list[Metric]:
        return [
            Metric(
                "retrieval/ground_truth/document_recall/average",
                "retrieval/ground_truth/document_recall",
                "mean",
            )
        ]

    def templates(self) -> dict[str, str]:
        return {"formula": "|E ∩ R| / |E| over distinct doc_uris"}


document_recall = DocumentRecallJudge()

__all__ = [
    "chunk_relevance",
    "context_position",
    "context_precision",
    "context_sufficiency",
    "document_recall",
    "passages",
]
