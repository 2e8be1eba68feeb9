"""The judges: a plain registry of the built-ins (SPEC §3), plus custom judges from TOML."""

from __future__ import annotations

from collections.abc import Sequence

from localjudge.errors import UsageError
from localjudge.judges import guard
from localjudge.judges.answer_relevancy import answer_relevancy
from localjudge.judges.base import Judge, JudgeOptions, Metric, template_hash
from localjudge.judges.custom import load_judge_file
from localjudge.judges.response import (
    correctness,
    groundedness,
    guideline_adherence,
    relevance_to_query,
    safety,
)
from localjudge.judges.retrieval import (
    ChunkScoreJudge,
    chunk_relevance,
    context_position,
    context_precision,
    context_sufficiency,
    document_recall,
)

BUILTIN: dict[str, Judge] = {
    j.name: j
    for j in (
        relevance_to_query,
        groundedness,
        safety,
        correctness,
        guideline_adherence,
        answer_relevancy,
        chunk_relevance,
        context_position,
        context_precision,
        context_sufficiency,
        document_recall,
    )
}


def select(names: Sequence[str] | None, custom: Sequence[Judge] = ()) -> list[Judge]:
    """The judges to run, in registry order. None means every judge (built-in and custom).

    A score judge derived from chunk_relevance pulls chunk_relevance in.
    """
    available: dict[str, Judge] = {**BUILTIN, **{j.name: j for j in custom}}
    if names is None:
        return list(available.values())
    unknown = [n for n in names if n not in available]
    if unknown:
        raise UsageError(f"unknown judge(s): {', '.join(unknown)} (see `localjudge judges list`)")
    wanted = set(names)
    if any(isinstance(available[n], ChunkScoreJudge) for n in names):
        wanted.add(chunk_relevance.name)
    return [j for name, j in available.items() if name in wanted]


__all__ = [
    "BUILTIN",
    "ChunkScoreJudge",
    "Judge",
    "JudgeOptions",
    "Metric",
    "guard",
    "load_judge_file",
    "select",
    "template_hash",
]
