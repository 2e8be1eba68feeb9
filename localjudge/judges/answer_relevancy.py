"""answer_relevancy (Mastra): the response is split into statements by a deterministic
sentence splitter (no model call); each statement is judged yes / unsure / no for
relevance to the request; score = (n_yes + w·n_unsure) / n, w = uncertainty_weight.

"unsure" comes from the model's probabilities, not from a third label a small model
would rarely pick: the model answers yes or no under the label grammar, and a statement
whose P(yes) lies within UNSURE_BAND of the decision threshold (0.5 unless the catalogue
calibrates one) is rated unsure. Outside the band the rating is the model's yes or no.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localjudge import scoring
from localjudge.engine.base import Verdict, VerdictRequest
from localjudge.judges.base import (
    JudgeOptions,
    LlmJudgeBase,
    Metric,
    fence,
    make_prompt,
    question,
    request_part,
    response_part,
    round_prob,
)
from localjudge.records import Record

LABELS: tuple[str, ...] = ("yes", "no")
RATINGS: tuple[str, ...] = ("yes", "unsure", "no")
# Chosen on the default model's statement probabilities (docs/agreement.md): they lie between
# 0.36 and 0.69, so a wide band would rate nearly every statement unsure.
UNSURE_BAND = 0.02

STATEMENT_Q = (
    "Is the statement above relevant to the request: does it help to answer it? Answer "
    '"no" if it is about something else. Answer yes or no.'
)

# Abbreviations after which a period does not end a sentence.
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "cf",
        "al",
        "fig",
        "no",
        "vol",
        "approx",
        "inc",
        "ltd",
        "co",
        "corp",
        "u.s",
        "u.k",
        "a.m",
        "p.m",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+")


def split_statements(text: str) -> list[str]:
    """Split a response into statements: lines first (lists), then sentences.

    A sentence ends at . ! or ? followed by white space, unless the word before the period
    is a known abbreviation, a single letter (an initial), or the next text starts in lower
    case. Bullets and numbering are removed; empty pieces are dropped. Deterministic.
    """
    statements: list[str] = []
    for raw_line in text.splitlines():
        line = _BULLET.sub("", raw_line).strip()
        if not line:
            continue
        start = 0
        for m in _BOUNDARY.finditer(line):
            end = m.start()
            candidate = line[start:end].rstrip("\"')]")
            words = candidate.split()
            last = words[-1].rstrip(".!?").lower() if words else ""
            rest = line[m.end() :]
            if (
                line[end - 1] == "."
                and (last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()))
            ) or (rest[:1].islower()):
                continue
            piece = line[start : m.end()].strip()
            if piece:
                statements.append(piece)
            start = m.end()
        tail = line[start:].strip()
        if tail:
            statements.append(tail)
    return statements


@dataclass(frozen=True)
class AnswerRelevancyJudge(LlmJudgeBase):
    name: str = "answer_relevancy"
    step: str = "response"
    labels: tuple[str, ...] = LABELS
    needs: tuple[str, ...] = ("request", "response")
    description: str = "Share of the response's statements relevant to the request (Mastra)"

    def requests(self, record: Record, options: JudgeOptions) -> list[VerdictRequest]:
        shared = [request_part(record), response_part(record)]
        return [
            VerdictRequest(
                prompt=make_prompt([*shared, fence("statement", s), question(STATEMENT_Q)]),
                labels=self.labels,
                rationale=options.rationale,
                threshold=options.thresholds.get(self.name),
            )
            for s in split_statements(record.response or "")
        ]

    def fields(
        self, record: Record, verdicts: Sequence[Verdict], options: JudgeOptions
    ) -> dict[str, Any]:
        statements = split_statements(record.response or "")
        threshold = options.thresholds.get(self.name, 0.5)
        ratings = [rate(v, threshold) for v in verdicts]
        errors = [v.error for v in verdicts]
        if any(r is None for r in ratings):
            score = None
        else:
            score = scoring.answer_relevancy(
                ratings.count("yes"),
                ratings.count("unsure"),
                len(ratings),
                options.uncertainty_weight,
            )
        return {
            f"{self.prefix}/score": score,
            f"{self.prefix}/statements": statements,
            f"{self.prefix}/ratings": ratings,
            f"{self.prefix}/probabilities": [round_prob(v.probability) for v in verdicts],
            f"{self.prefix}/statement_p_relevant": [
                round_prob(v.probabilities.get("yes")) if v.label is not None else None
                for v in verdicts
            ],
            f"{self.prefix}/rationales": [v.rationale for v in verdicts]
            if options.rationale
            else None,
            f"{self.prefix}/error_messages": errors,
            f"{self.prefix}/truncated": [v.truncated for v in verdicts],
        }

    def metrics(self) -> list[Metric]:
        return [Metric(f"{self.prefix}/score/average", f"{self.prefix}/score", "mean")]

    def templates(self) -> dict[str, str]:
        return {
            "question": STATEMENT_Q,
            "splitter": "lines, then sentences; v1",
            "unsure": f"|P(yes) - threshold| < {UNSURE_BAND}",
        }


def rate(verdict: Verdict, threshold: float) -> str | None:
    """yes / unsure / no from the verdict's P(yes); None when the verdict failed."""
    if verdict.label is None:
        return None
    p_yes = verdict.probabilities.get("yes")
    if p_yes is None:
        return verdict.label
    return rate_p(p_yes, threshold)


def rate_p(p_yes: float, threshold: float, band: float = UNSURE_BAND) -> str:
    """yes / unsure / no from P(yes): unsure within `band` of the threshold."""
    if abs(p_yes - threshold) < band:
        return "unsure"
    return "yes" if p_yes >= threshold else "no"


answer_relevancy = AnswerRelevancyJudge()
