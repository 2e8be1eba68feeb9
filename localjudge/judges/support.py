"""Support checks: is a claim supported by the passages? (groundedness, context_sufficiency)

A claim (a statement of the response, or the expected answer) is judged against each
passage on its own, as fact-checkers such as MiniCheck do: the prompt is the request, one
passage, the claim, and a plain question. The best-supporting passage decides for the
claim. The request and the passage come first, so every claim asked of a passage shares
that prefix (and chunk_relevance's prompt for the same passage): a claim costs its own
tokens and the question's, not the passage's again.

The model's probabilities are combined with signals that do not depend on wording (the
share of the claim's numbers and names missing from the passages) by a logistic model
whose weights were fitted across sources (docs/agreement.md); word overlap is reported,
not weighed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from localjudge.engine.base import Part, Verdict, VerdictRequest
from localjudge.judges.base import (
    YES_NO,
    fence,
    make_prompt,
    passage_part,
    question,
    request_part,
)
from localjudge.judges.lexical import align_quantities
from localjudge.records import Record


def claim_requests(
    record: Record, tag: str, claims: Sequence[str], text: str
) -> list[VerdictRequest]:
    """One request per (claim, passage), claims outer: request, passage, the claim (fenced
    as `tag`, its quantities and dates written as the passage writes them when the values
    are equal: lexical.align_quantities), question. The model's own label is not the
    judge's (the combination decides), so no threshold."""
    head = request_part(record)
    chunks = list(record.retrieved_context or ())
    return [
        VerdictRequest(
            prompt=make_prompt(
                [
                    head,
                    passage_part(i, c),
                    fence(tag, align_quantities(claim, [c.content or ""])),
                    question(text),
                ]
            ),
            labels=YES_NO,
        )
        for claim in claims
        for i, c in enumerate(chunks)
    ]


def statement_parts(texts: Sequence[str]) -> list[Part]:
    return [fence("statement", t) for t in texts]


@dataclass(frozen=True)
class Evidence:
    """The passage that supports a claim best (0-based index in retrieval order) and its
    P(supported); both None when a verdict failed."""

    passage: int | None
    p: float | None


def best_evidence(verdicts: Sequence[Verdict], claims: int) -> list[Evidence]:
    """Per claim, the passage with the highest P(yes) among the verdicts of
    `claim_requests` (claims outer, passages inner). Ties go to the earlier passage."""
    n = len(verdicts) // claims if claims else 0
    out: list[Evidence] = []
    for k in range(claims):
        best = Evidence(None, None)
        for i, v in enumerate(verdicts[k * n : (k + 1) * n]):
            if v.label is None:
                best = Evidence(None, None)
                break
            p = v.probabilities.get("yes", 0.0)
            if best.p is None or p > best.p:
                best = Evidence(i, p)
        out.append(best)
    return out


def logit(p: float) -> float:
    """log(p / (1 - p)), with p clipped to [1e-6, 1 - 1e-6]."""
    p = min(max(p, 1e-6), 1.0 - 1e-6)
    return math.log(p / (1.0 - p))


def shifted(p: float, shift: float) -> float:
    """sigmoid(logit(p) + shift): a probability moved by `shift` logits, so that its even
    odds sit at sigmoid(shift) (a model's own verdict put on a threshold's scale)."""
    return 1.0 / (1.0 + math.exp(-(logit(p) + shift)))


@dataclass(frozen=True)
class Logistic:
    """P = 1 / (1 + exp(-(intercept + Σ weights[name] · x[name]))). Probabilities enter as
    logits, shares as they are; which is which is the caller's choice of x."""

    intercept: float
    weights: Mapping[str, float]

    def __call__(self, x: Mapping[str, float]) -> float:
        z = self.intercept + sum(w * x[name] for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-z))

    def describe(self) -> str:
        terms = " + ".join(f"{w:+.3f}·{name}" for name, w in self.weights.items())
        return f"P(yes) = sigmoid({self.intercept:+.3f} {terms})"
