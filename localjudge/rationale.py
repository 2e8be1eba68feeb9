"""`--rationale failing`: a rationale only for the verdicts that fail.

A rationale costs generated tokens, one at a time, and most of them explain passing
verdicts nobody reads. In this mode a row is judged first with no rationale at all; then,
for each judge whose verdict on the row fails (rating "no", or a chunk or statement rated
"no"), the requests that would have carried a rationale are asked again, of the same
backend in one call (so their shared prompt prefix is evaluated once), and only their
rationales are kept: the labels and probabilities are always those of the first pass, so
the verdicts are exactly those of `--no-rationale`. A judge with a verdict per chunk or
statement gets a rationale for each failing one only.

The fields of passing judges are those of `--no-rationale` (rationale null); the fields of
failing judges are those of `--rationale` (for chunk and statement judges, null for the
units that pass).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from localjudge import api
from localjudge.engine.base import Backend, BackendStats, Verdict, VerdictRequest
from localjudge.judges import Judge, JudgeOptions
from localjudge.records import BadRecord, Record, RecordSet
from localjudge.runs import judge_prefix


def _plain(request: VerdictRequest) -> VerdictRequest:
    return replace(request, rationale=False)


class _Recorder:
    """Asks `inner` without rationales and remembers every verdict by its request."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.stats = inner.stats
        self.seen: dict[VerdictRequest, Verdict] = {}

    def judge(self, requests: Sequence[VerdictRequest]) -> list[Verdict]:
        plain = [_plain(r) for r in requests]
        verdicts = self.inner.judge(plain)
        self.seen.update(zip(plain, verdicts, strict=True))
        return verdicts

    def describe(self) -> dict[str, object]:
        return self.inner.describe()


class _Replay:
    """Answers from recorded verdicts, with the rationales in `rationales` added; records
    which requests asked for a rationale."""

    def __init__(
        self, seen: Mapping[VerdictRequest, Verdict], rationales: Mapping[VerdictRequest, str]
    ) -> None:
        self.stats = BackendStats()
        self.seen = seen
        self.rationales = rationales
        self.asked: list[VerdictRequest] = []

    def judge(self, requests: Sequence[VerdictRequest]) -> list[Verdict]:
        out = []
        for request in requests:
            key = _plain(request)
            if request.rationale:
                self.asked.append(key)
            out.append(replace(self.seen[key], rationale=self.rationales.get(key)))
        return out

    def describe(self) -> dict[str, object]:
        return {"backend": "replay"}


def failing_judges(row: Mapping[str, Any], judges: Sequence[Judge]) -> list[Judge]:
    """The model judges whose verdict on `row` fails: rating "no", or any chunk or
    statement rated "no"."""
    out = []
    for judge in judges:
        if not judge.labels:
            continue
        prefix = judge_prefix(judge)
        ratings = row.get(f"{prefix}/ratings")
        if row.get(f"{prefix}/rating") == "no" or (isinstance(ratings, list) and "no" in ratings):
            out.append(judge)
    return out


def judge_row(
    record: Record, judges: Sequence[Judge], backend: Backend, options: JudgeOptions
) -> dict[str, Any]:
    """api.judge_row with a rationale only for the failing verdicts (module docstring)."""
    quiet = replace(options, rationale=False)
    loud = replace(options, rationale=True)
    recorder = _Recorder(backend)
    row = api.judge_row(record, judges, recorder, quiet)
    failing = failing_judges(row, judges)
    if not failing:
        return row
    wanted: list[VerdictRequest] = []
    for judge in failing:
        probe = _Replay(recorder.seen, {})
        api.judge_row(record, [judge], probe, loud)
        per_unit = isinstance(row.get(f"{judge_prefix(judge)}/ratings"), list)
        for key in probe.asked:
            if key not in wanted and (not per_unit or recorder.seen[key].label == "no"):
                wanted.append(key)
    asked = [replace(k, rationale=True) for k in wanted]
    answers = backend.judge(asked) if asked else []
    rationales = {
        k: v.rationale
        for k, v in zip(wanted, answers, strict=True)
        if v.error is None and v.rationale is not None
    }
    again = api.judge_row(record, failing, _Replay(recorder.seen, rationales), loud)
    prefixes = tuple(judge_prefix(j) + "/" for j in failing)
    row.update({k: v for k, v in again.items() if k.startswith(prefixes)})
    return row


def iter_results(
    records: RecordSet | Iterable[Record | BadRecord],
    backend: Backend,
    judges: Sequence[Judge],
    options: JudgeOptions,
) -> Iterator[dict[str, Any]]:
    """api.iter_results with a rationale only for the failing verdicts."""
    rows = records.rows if isinstance(records, RecordSet) else records
    for row in rows:
        yield (
            api.base_fields(row)
            if isinstance(row, BadRecord)
            else judge_row(row, judges, backend, options)
        )


def evaluate(
    records: RecordSet | Iterable[Record | BadRecord],
    backend: Backend,
    judges: Sequence[Judge],
    options: JudgeOptions,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> api.Run:
    """api.evaluate with a rationale only for the failing verdicts."""
    started = time.perf_counter()
    results = []
    for result in iter_results(records, backend, judges, options):
        results.append(result)
        if on_row is not None:
            on_row(result)
    return api.Run(results, list(judges), {"judge_seconds": time.perf_counter() - started})
