"""The library entry point: judge rows with a backend. The CLI calls exactly this.

from localjudge.api import evaluate
run = evaluate(read_records("data.jsonl"), backend=FakeBackend(...))
run.results   # one dict per input row, in input order
run.summary   # aggregates with counts and intervals
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from localjudge import scoring
from localjudge.engine.base import Backend, VerdictRequest
from localjudge.judges import ChunkScoreJudge, Judge, JudgeOptions, guard, select
from localjudge.judges.base import unsure_fields
from localjudge.records import BadRecord, Record, RecordSet


@dataclass
class Run:
    """What an evaluation produced. `summary` is computed from `results` alone, so a run
    resumed from a results file summarises the same way."""

    results: list[dict[str, Any]]
    judges: list[Judge]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, Any]:
        return summarise(self.results, self.judges)


def judge_row(
    record: Record, judges: Sequence[Judge], backend: Backend, options: JudgeOptions
) -> dict[str, Any]:
    """Every selected judge's fields for one valid row. All of a row's verdicts go to the
    backend in one call, so that it can order them to reuse their shared prompt prefix.
    With `options.guard`, text aimed at the judge is removed first (judges.guard) and
    reported in `guard/removed`. A row whose judges ask the model nothing (document_recall
    alone) is not guarded: no text of it reaches a model, so nothing is removed."""
    original = record
    removed: list[guard.Removed] = []
    if options.guard and any(j.labels and not j.missing(record) for j in judges):
        record, removed = guard.guard_record(record)
    requests: list[VerdictRequest] = []
    spans: list[tuple[Judge, int, int]] = []
    skipped: list[str] = []
    for judge in judges:
        if judge.missing(record):
            skipped.append(judge.name)
            continue
        reqs = judge.requests(record, options)
        spans.append((judge, len(requests), len(reqs)))
        requests.extend(reqs)
    verdicts = backend.judge(requests) if requests else []
    fields: dict[str, Any] = {}
    for judge, start, n in spans:
        if not isinstance(judge, ChunkScoreJudge):
            fields.update(judge.fields(record, verdicts[start : start + n], options))
    for judge, _, _ in spans:
        if isinstance(judge, ChunkScoreJudge):
            fields.update(judge.score_fields(fields))
        band = options.unsure_bands.get(judge.name)
        if band is not None:
            fields.update(unsure_fields(f"{judge.step}/llm_judged/{judge.name}", fields, band))
    row = base_fields(original)
    if options.guard:
        row["guard/removed"] = [{"field": r.field, "text": r.text} for r in removed]
    row["judges_skipped"] = skipped
    row.update(fields)
    return row


def base_fields(row: Record | BadRecord) -> dict[str, Any]:
    """The fields every result row starts with."""
    if isinstance(row, BadRecord):
        return {"request_id": row.request_id, "line": row.line, "error": row.error}
    return {
        "request_id": row.request_id,
        "line": row.line,
        "error": None,
        "request": row.request,
        "response": row.response,
    }


def iter_results(
    records: RecordSet | Iterable[Record | BadRecord],
    backend: Backend,
    judges: Sequence[Judge] | None = None,
    options: JudgeOptions | None = None,
) -> Iterator[dict[str, Any]]:
    """Result rows, one per input row, in input order, as each is computed."""
    rows = records.rows if isinstance(records, RecordSet) else records
    chosen = list(judges) if judges is not None else select(None)
    opts = options or JudgeOptions()
    for row in rows:
        if isinstance(row, BadRecord):
            yield base_fields(row)
        else:
            yield judge_row(row, chosen, backend, opts)


def evaluate(
    records: RecordSet | Iterable[Record | BadRecord],
    backend: Backend,
    judges: Sequence[Judge] | None = None,
    options: JudgeOptions | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> Run:
    """Judge every row; call `on_row` with each result as soon as it is ready."""
    chosen = list(judges) if judges is not None else select(None)
    started = time.perf_counter()
    results = []
    for result in iter_results(records, backend, chosen, options):
        results.append(result)
        if on_row is not None:
            on_row(result)
    return Run(results, chosen, {"judge_seconds": time.perf_counter() - started})


def _count_errors(value: Any) -> int:
    if isinstance(value, list):
        return sum(1 for v in value if v is not None)
    return 0 if value is None else 1


_ERROR_FIELDS = ("error_message", "error_messages")


def summarise(results: Iterable[dict[str, Any]], judges: Sequence[Judge]) -> dict[str, Any]:
    """Aggregates (SPEC §3) with counts and intervals, plus what was read and what failed.

    One pass over `results` (a list, or rows streamed from results.jsonl), in memory
    bounded by the number of judges and distinct values, not rows."""
    plan = [
        (
            judge,
            judge.metrics()[0].field if judge.metrics() else None,
            [f"{judge.step}/llm_judged/{judge.name}/{key}" for key in _ERROR_FIELDS],
            [(m, scoring.MeanAccumulator()) for m in judge.metrics()],
        )
        for judge in judges
    ]
    per_judge = {j.name: {"rows_judged": 0, "rows_skipped": 0, "verdict_errors": 0} for j in judges}
    rows = valid = guarded = 0
    for r in results:
        rows += 1
        if r.get("error") is not None:
            continue
        valid += 1
        guarded += bool(r.get("guard/removed"))
        skipped = r.get("judges_skipped", ())
        for judge, main_field, error_keys, metrics in plan:
            counts = per_judge[judge.name]
            counts["verdict_errors"] += sum(_count_errors(r.get(k)) for k in error_keys)
            counts["rows_judged"] += main_field in r
            counts["rows_skipped"] += judge.name in skipped
            # Rows rated unsure inside a calibration's band: counted, left out of the rate.
            if f"{judge.step}/llm_judged/{judge.name}/threshold_rating" in r:
                counts["rows_unsure"] = counts.get("rows_unsure", 0) + (
                    r.get(main_field or "") == "unsure"
                )
            for metric, acc in metrics:
                if metric.field not in r:
                    continue
                value = r[metric.field]
                if metric.kind == "rating":
                    value = scoring.rating_value(value)
                if value is not None:
                    acc.add(float(value))
    aggregates = {m.key: acc.result().as_dict() for _, _, _, ms in plan for m, acc in ms}
    return {
        "rows_read": rows,
        "rows_with_input_errors": rows - valid,
        "verdicts_with_errors": sum(c["verdict_errors"] for c in per_judge.values()),
        "rows_with_text_removed_by_guard": guarded,
        "judges": per_judge,
        "aggregates": aggregates,
    }


def main_metric(judge: Judge) -> str:
    """The aggregate that `--fail-under JUDGE=VALUE` compares."""
    return judge.metrics()[0].key
