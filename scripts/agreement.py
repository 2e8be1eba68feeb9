#!/usr/bin/env python3
"""How often localjudge's judges agree with human labels (../shared/benchmarks).

Runs the same code path as `localjudge eval` (records.validate_row, judges.select,
api.evaluate on the llama.cpp backend, no rationale: verdicts are the same either way)
and reports per judge, and per source within a judge: units, accuracy, balanced accuracy,
Cohen's kappa, ROC AUC from the verdict probabilities, false-yes and false-no rates, each
with a bootstrap 95% interval (localjudge.agreement; per chunk for chunk_relevance, chunks
of one row resampled together; document_recall exactly, no model).

Each set is split in two halves by row parity within its file (even rows: fit, odd rows:
report). A per-judge decision threshold on P(yes) is fitted on the fit half (the value
that maximises balanced accuracy there) and reported on the other half, next to the plain
argmax rule (threshold 0.5); per source, on the report half. Leave one source out: for
each source, the threshold fitted on all rows of the other sources, reported on all rows
of this one ("pooled": every held-out verdict together). A row's source is the leading
words of its `source` field (localjudge.labelled.source_name: "SummEdits samsum",
"FaithBench", "EVOUNA NQ"). `--write-thresholds` stores the fitted values in the model
catalogue (merged into the model's `thresholds` table; other judges' values are kept).
Labels are read only to score; the judge never sees them or the row's source.

The sets: ../shared/benchmarks/JUDGE.jsonl for each judge, plus every `--set FILE` (any
labelled JSONL; each label key of its rows adds those rows to that judge), or only the
`--set` files with `--sets-only`.

    .venv/bin/python scripts/agreement.py                         # default model, all rows
    .venv/bin/python scripts/agreement.py --model qwen2.5-coder-1.5b-instruct-q4_k_m --rows 60
    .venv/bin/python scripts/agreement.py --json
    # groundedness on BEGIN, FaithBench and the 8 SummEdits domains:
    .venv/bin/python scripts/agreement.py --judges groundedness \
        --set ../shared/benchmarks/groundedness_summedits.jsonl
    .venv/bin/python scripts/agreement.py --sets-only --set tests/data/plain/groundedness.jsonl
    .venv/bin/python scripts/agreement.py --judges answer_relevancy --rows 40   # proxy, below

answer_relevancy (opt-in) has no labelled set: its score is ranked against the row-level
relevance labels of relevance_to_query.jsonl, and the share of statements rated yes /
unsure / no is reported. Its unsure band is measured by rescoring the same statement
probabilities with every band width in BANDS (and with the plain mean P(yes)).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from localjudge import api, labelled, scoring  # noqa: E402
from localjudge.agreement import Rule, at_rule, leave_one_source_out  # noqa: E402
from localjudge.agreement import fit_threshold as fit_on  # noqa: E402
from localjudge.agreement import roc_auc as roc_auc  # noqa: E402  (for the scripts importing this)
from localjudge.engine.llama import LlamaBackend, physical_cores  # noqa: E402
from localjudge.judges import JudgeOptions, select  # noqa: E402
from localjudge.judges.answer_relevancy import rate_p  # noqa: E402
from localjudge.models import resolve_for_eval  # noqa: E402

BENCHMARKS = REPO.parent / "shared" / "benchmarks"
LLM_JUDGES = (
    "relevance_to_query",
    "groundedness",
    "safety",
    "correctness",
    "chunk_relevance",
    "context_sufficiency",
)

# answer_relevancy has no set of its own: its score is checked against the row-level human
# relevance labels of relevance_to_query.jsonl (a proxy: the score is a share of relevant
# statements, the label a yes/no on the whole response).
SET_OF = {"answer_relevancy": "relevance_to_query"}


def load(judge: str, rows: int | None) -> list[dict[str, Any]]:
    """The raw rows of JUDGE's benchmark set (the first `rows`), labels and source kept."""
    with open(BENCHMARKS / f"{SET_OF.get(judge, judge)}.jsonl", encoding="utf-8") as f:
        items = [json.loads(line) for line in f]
    return items[:rows] if rows else items


def load_set(path: Path, rows: int | None) -> labelled.LabelledSet:
    """A labelled file, cut to its first `rows` labelled rows."""
    data = labelled.read_labelled(str(path))
    return dataclasses.replace(data, rows=data.rows[:rows]) if rows else data


def sets_for(
    judges: Sequence[str], extra: Sequence[Path], sets_only: bool, rows: int | None
) -> dict[str, list[labelled.LabelledSet]]:
    """Per judge, the labelled sets it is measured on (see the module doc)."""
    out: dict[str, list[labelled.LabelledSet]] = {j: [] for j in judges}
    if not sets_only:
        for judge in judges:
            path = BENCHMARKS / f"{SET_OF.get(judge, judge)}.jsonl"
            if path.exists():
                out[judge].append(load_set(path, rows))
    for path in extra:
        data = load_set(path, rows)
        keys = set(data.judges())
        for judge in judges:
            if SET_OF.get(judge, judge) in keys:
                out[judge].append(data)
    return out


def unit(item: dict[str, Any], index: int, label: str, p: float | None) -> dict[str, Any]:
    """A scored unit: row index, half (by parity), source, label (1 = yes), P(yes)."""
    return {
        "row": index,
        "group": index,
        "half": "fit" if index % 2 == 0 else "report",
        "source": labelled.source_name(item.get("source")),
        "label": 1 if label == "yes" else 0,
        "p_yes": p,
    }


def collect(
    judge: str, data: labelled.LabelledSet, backend: LlamaBackend | None, set_index: int = 0
) -> list[dict[str, Any]]:
    """One entry per scored unit (row, or chunk for chunk_relevance) of one set: label,
    P(yes), half, source, group (the row: chunks of one row are resampled together)."""
    units: list[dict[str, Any]] = []

    def add(index: int, row: labelled.LabelledRow, label: int, p: float | None) -> dict[str, Any]:
        u = {
            "row": index,
            "group": set_index * 1_000_000 + index,
            "half": "fit" if index % 2 == 0 else "report",
            "source": row.source,
            "label": label,
            "p_yes": p,
        }
        units.append(u)
        return u

    records = [r.record for r in data.rows]
    if judge == "document_recall":
        for i, (row, rec) in enumerate(zip(data.rows, records, strict=True)):
            retrieved = [c.doc_uri for c in rec.retrieved_context or () if c.doc_uri]
            recall = scoring.document_recall(rec.expected_retrieved_context or (), retrieved)
            label = row.labels.get(judge)
            if label is not None:
                add(i, row, 1 if label == "yes" else 0, 1.0 if recall == 1.0 else 0.0)
        return units
    assert backend is not None
    (chosen,) = [j for j in select([judge]) if j.name == judge]
    run = api.evaluate(records, backend, [chosen], JudgeOptions(rationale=False))
    if judge == "answer_relevancy":
        prefix = "response/llm_judged/answer_relevancy"
        for i, (row, result) in enumerate(zip(data.rows, run.results, strict=True)):
            label = row.labels.get(SET_OF[judge])
            if label is None or isinstance(label, tuple):
                continue
            u = add(i, row, 1 if label == "yes" else 0, result.get(f"{prefix}/score"))
            u["ratings"] = result.get(f"{prefix}/ratings")
            u["statement_p"] = result.get(f"{prefix}/statement_p_relevant")
        return units
    found, _ = labelled.collect_units(data, run.results, chosen)
    for f in found:
        add(f.row, data.rows[f.row], f.label, f.p_yes)
    return units


def _arrays(units: Sequence[dict[str, Any]]) -> tuple[list[int], list[float], list[int], list[str]]:
    scored = [u for u in units if u["p_yes"] is not None]
    return (
        [u["label"] for u in scored],
        [float(u["p_yes"]) for u in scored],
        [u.get("group", u["row"]) for u in scored],
        [u["source"] for u in scored],
    )


def metrics(units: Sequence[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Agreement at `threshold` (localjudge.agreement), with the count of failed verdicts."""
    y, p, groups, _ = _arrays(units)
    return {"errors": len(units) - len(y), **at_rule(y, p, Rule(threshold), groups)}


def fit_threshold(units: Sequence[dict[str, Any]]) -> float:
    """The P(yes) threshold that maximises balanced accuracy on `units`; 0.5 when it
    cannot be fitted (no scored unit of one class)."""
    y, p, _, _ = _arrays(units)
    t = fit_on(y, p)
    return 0.5 if t is None else t


def evaluate_judge(units: list[dict[str, Any]]) -> dict[str, Any]:
    """Fit/report halves, per source (report half), leave one source out."""
    fit = [u for u in units if u["half"] == "fit"]
    report = [u for u in units if u["half"] == "report"]
    threshold = fit_threshold(fit)
    result: dict[str, Any] = {
        "threshold": threshold,
        "report_half_argmax": metrics(report, 0.5),
        "report_half_fitted": metrics(report, threshold),
        "all_rows_argmax": metrics(units, 0.5),
        "by_source": {},
    }
    for source in sorted({u["source"] for u in units}):
        sub = [u for u in report if u["source"] == source]
        result["by_source"][source] = {"report_half_fitted": metrics(sub, threshold)}
    y, p, groups, sources = _arrays(units)
    result["leave_one_source_out"] = leave_one_source_out(y, p, sources, groups)
    return result


# Widths of answer_relevancy's unsure band tried by `unsure_bands` (0: no unsure rating).
BANDS = (0.0, 0.02, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30)


def unsure_bands(
    units: Sequence[dict[str, Any]], threshold: float, weight: float
) -> list[dict[str, Any]]:
    """answer_relevancy's row score recomputed from the statements' P(yes) for each band
    width in BANDS: the share of statements rated unsure, and how well the score ranks
    (ROC AUC, all rows) and separates (balanced accuracy and kappa on the report half, at
    a score threshold fitted on the fit half) the rows' human relevance labels. The mean
    statement P(yes), a score with no bands at all, is the last entry."""
    out = []
    for band in (*BANDS, None):
        rescored, ratings = [], []
        for u in units:
            ps = u.get("statement_p") or []
            if not ps or any(p is None for p in ps):
                rescored.append({**u, "p_yes": None})
                continue
            if band is None:
                score = float(np.mean(ps))
            else:
                rated = [rate_p(p, threshold, band) for p in ps]
                ratings += rated
                score = scoring.answer_relevancy(
                    rated.count("yes"), rated.count("unsure"), len(rated), weight
                )
            rescored.append({**u, "p_yes": score})
        fitted = fit_threshold([u for u in rescored if u["half"] == "fit"])
        report = metrics([u for u in rescored if u["half"] == "report"], fitted)
        out.append(
            {
                "band": band,
                "score": "mean P(yes)" if band is None else "(yes + w·unsure) / n",
                "unsure_share": ratings.count("unsure") / len(ratings) if ratings else None,
                "auc_all_rows": metrics(rescored, 0.5).get("auc"),
                "score_threshold": fitted,
                "report_half_fitted": report,
            }
        )
    return out


def fmt(m: dict[str, Any], key: str) -> str:
    v = m.get(key)
    if not isinstance(v, dict) or v["value"] is None:
        return "-"
    lo, hi = v["ci95"]
    return f"{v['value']:.2f} [{lo:.2f},{hi:.2f}]" if lo is not None else f"{v['value']:.2f}"


def _row(judge: str, name: str, m: dict[str, Any], threshold: float | None) -> str:
    thr = "-" if threshold is None else f"{threshold:.3f}"
    cells = " | ".join(fmt(m, k) for k in COLUMNS)
    return f"| {judge} | {name} | {m.get('n', 0)} | {thr} | {cells} |"


COLUMNS = ("accuracy", "balanced_accuracy", "kappa", "auc", "false_yes_rate", "false_no_rate")


def render(report: dict[str, Any]) -> str:
    lines = [
        f"model {report['model']}; {report['seconds']:.0f} s; halves by row parity "
        "(even: fit threshold, odd: report); leave one source out: fitted on the other "
        "sources, reported on all rows of this one",
        "",
        "| judge | set | n | threshold | accuracy | balanced acc. | kappa | ROC AUC | "
        "false-yes | false-no |",
        "|---|---|---:|---:|---|---|---|---|---|---|",
    ]
    for judge, r in report["judges"].items():
        lines.append(_row(judge, "report half, argmax", r["report_half_argmax"], 0.5))
        lines.append(_row(judge, "report half, fitted", r["report_half_fitted"], r["threshold"]))
        if len(r["by_source"]) > 1:
            for source, sr in r["by_source"].items():
                m = sr["report_half_fitted"]
                lines.append(_row(judge, f"{source} (report, fitted)", m, r["threshold"]))
        loso = r.get("leave_one_source_out") or {}
        for source, m in loso.get("sources", {}).items():
            lines.append(_row(judge, f"{source} (left out)", m, m.get("threshold")))
        if loso:
            lines.append(_row(judge, "left out, pooled", loso["pooled"], None))
    for judge, r in report["judges"].items():
        if "statement_ratings" in r:
            counts = ", ".join(f"{k} {v}" for k, v in r["statement_ratings"].items())
            lines.append(f"\n{judge}: statements rated {counts}")
        if "unsure_bands" in r:
            lines += [
                "",
                f"{judge}: unsure band width (score against the rows' relevance labels)",
                "",
                "| band | unsure share | ROC AUC, all rows | score threshold | balanced acc. "
                "(report) | kappa (report) |",
                "|---|---:|---|---:|---|---|",
            ]
            for b in r["unsure_bands"]:
                name = "mean P(yes)" if b["band"] is None else f"{b['band']:.2f}"
                share = "-" if b["unsure_share"] is None else f"{b['unsure_share']:.2f}"
                auc = {"auc": b["auc_all_rows"]} if b["auc_all_rows"] else {}
                m = b["report_half_fitted"]
                lines.append(
                    f"| {name} | {share} | {fmt(auc, 'auc')} | {b['score_threshold']:.3f} | "
                    f"{fmt(m, 'balanced_accuracy')} | {fmt(m, 'kappa')} |"
                )
    return "\n".join(lines)


CATALOGUE = REPO / "models" / "catalogue.toml"


def write_thresholds(path: Path, model_id: str, fitted: dict[str, float]) -> None:
    """Merge `fitted` into the `[models."ID".thresholds]` table of the catalogue file,
    keeping its other lines (comments included) as they are."""
    header = f'[models."{model_id}".thresholds]'
    lines = path.read_text(encoding="utf-8").splitlines()
    values: dict[str, float] = {}
    if header in lines:
        start = lines.index(header)
        end = start + 1
        while end < len(lines) and lines[end].strip() and not lines[end].startswith("["):
            key, _, value = lines[end].partition("=")
            values[key.strip()] = float(value)
            end += 1
    else:
        lines += ["", header]
        start = end = len(lines) - 1
        end += 1
    values.update(fitted)
    table = [f"{k} = {v:.4f}" for k, v in sorted(values.items())]
    lines[start + 1 : end] = table
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="catalogue id or GGUF path (default model)")
    parser.add_argument("--judges", default=",".join((*LLM_JUDGES, "document_recall")))
    parser.add_argument("--rows", type=int, default=None, help="first N rows of each set")
    parser.add_argument("--threads", type=int, default=physical_cores())
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--units", type=Path, help="also write every scored unit (JSONL)")
    parser.add_argument(
        "--set",
        dest="sets",
        type=Path,
        action="append",
        default=[],
        help="also measure on this labelled JSONL (repeatable); its label keys decide the judges",
    )
    parser.add_argument("--sets-only", action="store_true", help="measure on the --set files only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--write-thresholds",
        action="store_true",
        help="store the fitted thresholds in models/catalogue.toml for this model",
    )
    args = parser.parse_args(argv)

    judges = [j.strip() for j in args.judges.split(",") if j.strip()]
    model = resolve_for_eval(args.model)
    backend = None
    if any(j != "document_recall" for j in judges):
        backend = LlamaBackend(
            model.path,
            template=model.entry.template if model.entry else None,
            n_ctx=args.ctx,
            threads=args.threads,
        )
    started = time.perf_counter()
    sets = sets_for(judges, args.sets, args.sets_only, args.rows)
    report: dict[str, Any] = {
        "model": model.id,
        "rows_per_set": args.rows,
        "sets": {j: [d.path for d in found] for j, found in sets.items()},
        "judges": {},
    }
    all_units: list[dict[str, Any]] = []
    for judge in judges:
        if not sets[judge]:
            print(f"{judge}: no labelled set, skipped", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        units = [u for k, d in enumerate(sets[judge]) for u in collect(judge, d, backend, k)]
        result = evaluate_judge(units)
        result["seconds"] = time.perf_counter() - t0
        if judge == "answer_relevancy":
            ratings = [r for u in units for r in u.get("ratings") or ()]
            result["statement_ratings"] = {k: ratings.count(k) for k in ("yes", "unsure", "no")}
            thresholds = dict(model.entry.thresholds) if model.entry else {}
            result["unsure_bands"] = unsure_bands(
                units, thresholds.get(judge, 0.5), JudgeOptions().uncertainty_weight
            )
        report["judges"][judge] = result
        all_units.extend({"judge": judge, **u} for u in units)
        print(f"{judge}: done in {result['seconds']:.0f} s", file=sys.stderr)
    report["seconds"] = time.perf_counter() - started
    if args.units:
        args.units.write_text("".join(json.dumps(u) + "\n" for u in all_units))
    if args.write_thresholds:
        # answer_relevancy's fitted value is a threshold on its row score, not on a
        # verdict's P(yes): it is not a catalogue threshold.
        fitted = {
            j: r["threshold"]
            for j, r in report["judges"].items()
            if j not in ("document_recall", "answer_relevancy")
        }
        write_thresholds(CATALOGUE, model.id, fitted)
        print(f"thresholds for {model.id} written to {CATALOGUE}", file=sys.stderr)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
