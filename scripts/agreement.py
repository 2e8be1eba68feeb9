#!/usr/bin/env python3
"""How often localjudge's judges agree with human labels (../shared/benchmarks).

Runs the same code path as `localjudge eval` (records.validate_row, judges.select,
api.evaluate on the llama.cpp backend, no rationale: verdicts are the same either way)
and reports per judge, and per source dataset within a judge: rows, accuracy, balanced
accuracy, Cohen's kappa and ROC AUC from the verdict probabilities, each with a bootstrap
95% interval (per chunk for chunk_relevance; document_recall exactly, no model).

Each dev set is split in two halves by row parity (even rows: fit, odd rows: report).
A per-judge decision threshold on P(yes) is fitted on the fit half (the value that
maximises balanced accuracy there) and reported on the other half, next to the plain
argmax rule (threshold 0.5). `--write-thresholds` stores the fitted values in the model
catalogue (merged into the model's `thresholds` table; other judges' values are kept).
Labels are read only to score; the judge never sees them or the row's source.

    .venv/bin/python scripts/agreement.py                         # default model, all rows
    .venv/bin/python scripts/agreement.py --model qwen2.5-coder-1.5b-instruct-q4_k_m --rows 60
    .venv/bin/python scripts/agreement.py --json
    .venv/bin/python scripts/agreement.py --judges answer_relevancy --rows 40   # proxy, below

answer_relevancy (opt-in) has no labelled set: its score is ranked against the row-level
relevance labels of relevance_to_query.jsonl, and the share of statements rated yes /
unsure / no is reported. Its unsure band is measured by rescoring the same statement
probabilities with every band width in BANDS (and with the plain mean P(yes)).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from localjudge import api, scoring  # noqa: E402
from localjudge.engine.llama import LlamaBackend, physical_cores  # noqa: E402
from localjudge.judges import JudgeOptions, select  # noqa: E402
from localjudge.judges.answer_relevancy import rate_p  # noqa: E402
from localjudge.models import resolve_for_eval  # noqa: E402
from localjudge.records import validate_row  # noqa: E402

BENCHMARKS = REPO.parent / "shared" / "benchmarks"
LLM_JUDGES = (
    "relevance_to_query",
    "groundedness",
    "safety",
    "correctness",
    "chunk_relevance",
    "context_sufficiency",
)
FIELD = {
    "relevance_to_query": "response/llm_judged/relevance_to_query",
    "groundedness": "response/llm_judged/groundedness",
    "safety": "response/llm_judged/safety",
    "correctness": "response/llm_judged/correctness",
    "context_sufficiency": "retrieval/llm_judged/context_sufficiency",
    "chunk_relevance": "retrieval/llm_judged/chunk_relevance",
}
BOOT = 1000
SEED = 7

FloatArray = npt.NDArray[np.float64]


# answer_relevancy has no set of its own: its score is checked against the row-level human
# relevance labels of relevance_to_query.jsonl (a proxy: the score is a share of relevant
# statements, the label a yes/no on the whole response).
SET_OF = {"answer_relevancy": "relevance_to_query"}


def load(judge: str, rows: int | None) -> list[dict[str, Any]]:
    with open(BENCHMARKS / f"{SET_OF.get(judge, judge)}.jsonl", encoding="utf-8") as f:
        items = [json.loads(line) for line in f]
    return items[:rows] if rows else items


def p_yes(rating: str | None, probability: float | None) -> float | None:
    if rating is None or probability is None:
        return None
    return probability if rating == "yes" else 1.0 - probability


def collect(
    judge: str, items: Sequence[dict[str, Any]], backend: LlamaBackend | None
) -> list[dict[str, Any]]:
    """One entry per scored unit (row, or chunk for chunk_relevance): label, P(yes), half,
    source dataset."""
    units: list[dict[str, Any]] = []
    records = []
    for i, item in enumerate(items, start=1):
        row = {k: v for k, v in item.items() if k not in ("labels", "source")}
        records.append(validate_row(i, row))
    if judge == "document_recall":
        for i, (item, rec) in enumerate(zip(items, records, strict=True)):
            retrieved = [c.doc_uri for c in rec.retrieved_context or () if c.doc_uri]
            recall = scoring.document_recall(rec.expected_retrieved_context or (), retrieved)
            units.append(unit(item, i, item["labels"][judge], 1.0 if recall == 1.0 else 0.0))
        return units
    assert backend is not None
    run = api.evaluate(records, backend, select([judge]), JudgeOptions(rationale=False))
    if judge == "answer_relevancy":
        prefix = "response/llm_judged/answer_relevancy"
        for i, (item, result) in enumerate(zip(items, run.results, strict=True)):
            scored = unit(item, i, item["labels"][SET_OF[judge]], result[f"{prefix}/score"])
            units.append(
                {
                    **scored,
                    "ratings": result[f"{prefix}/ratings"],
                    "statement_p": result[f"{prefix}/statement_p_relevant"],
                }
            )
        return units
    prefix = FIELD[judge]
    for i, (item, result) in enumerate(zip(items, run.results, strict=True)):
        if judge == "chunk_relevance":
            ratings = result[f"{prefix}/ratings"]
            probs = result[f"{prefix}/probabilities"]
            for label, rating, prob in zip(item["labels"][judge], ratings, probs, strict=True):
                units.append(unit(item, i, label, p_yes(rating, prob)))
        else:
            units.append(
                unit(
                    item,
                    i,
                    item["labels"][judge],
                    p_yes(result[f"{prefix}/rating"], result[f"{prefix}/probability"]),
                )
            )
    return units


def unit(item: dict[str, Any], index: int, label: str, p: float | None) -> dict[str, Any]:
    """A scored unit: row index, half (by parity), source dataset, label (1 = yes), P(yes)."""
    return {
        "row": index,
        "half": "fit" if index % 2 == 0 else "report",
        "source": str(item.get("source", "")).split()[0],
        "label": 1 if label == "yes" else 0,
        "p_yes": p,
    }


def roc_auc(y: FloatArray, s: FloatArray) -> float | None:
    """Mann–Whitney estimate with ties counted half."""
    pos, neg = s[y == 1], s[y == 0]
    if pos.size == 0 or neg.size == 0:
        return None
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (pos.size * neg.size))


def classify(y: FloatArray, pred: FloatArray) -> dict[str, float | None]:
    tp = float(((pred == 1) & (y == 1)).sum())
    tn = float(((pred == 0) & (y == 0)).sum())
    fp = float(((pred == 1) & (y == 0)).sum())
    fn = float(((pred == 0) & (y == 1)).sum())
    n = tp + tn + fp + fn
    acc = (tp + tn) / n if n else None
    tpr = tp / (tp + fn) if tp + fn else None
    tnr = tn / (tn + fp) if tn + fp else None
    bal = (tpr + tnr) / 2 if tpr is not None and tnr is not None else None
    pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n) if n else None
    kappa = (acc - pe) / (1 - pe) if acc is not None and pe is not None and pe < 1 else None
    return {"accuracy": acc, "balanced_accuracy": bal, "kappa": kappa}


def metrics(units: Sequence[dict[str, Any]], threshold: float) -> dict[str, Any]:
    scored = [u for u in units if u["p_yes"] is not None]
    y = np.array([u["label"] for u in scored], dtype=np.float64)
    s = np.array([u["p_yes"] for u in scored], dtype=np.float64)
    out: dict[str, Any] = {"n": len(scored), "errors": len(units) - len(scored)}
    if not scored:
        return out
    point = classify(y, (s >= threshold).astype(np.float64))
    point["auc"] = roc_auc(y, s)
    rng = np.random.default_rng(SEED)
    samples: dict[str, list[float]] = {k: [] for k in point}
    for _ in range(BOOT):
        idx = rng.integers(0, y.size, y.size)
        b = classify(y[idx], (s[idx] >= threshold).astype(np.float64))
        b["auc"] = roc_auc(y[idx], s[idx])
        for k, v in b.items():
            if v is not None:
                samples[k].append(v)
    for k, v in point.items():
        ci = np.percentile(samples[k], [2.5, 97.5]) if samples[k] else [None, None]
        out[k] = {"value": v, "ci95": [None if c is None else float(c) for c in ci]}
    return out


def fit_threshold(units: Sequence[dict[str, Any]]) -> float:
    """The P(yes) threshold that maximises balanced accuracy on `units` (midpoints)."""
    scored = [u for u in units if u["p_yes"] is not None]
    if not scored:
        return 0.5
    y = np.array([u["label"] for u in scored], dtype=np.float64)
    s = np.array([u["p_yes"] for u in scored], dtype=np.float64)
    values = np.unique(s)
    candidates = [0.5, *((values[:-1] + values[1:]) / 2).tolist()]
    best, best_bal = 0.5, -1.0
    for t in candidates:
        bal = classify(y, (s >= t).astype(np.float64))["balanced_accuracy"] or 0.0
        # Prefer the threshold nearest 0.5 among ties: the least fitted one.
        if bal > best_bal + 1e-12 or (
            abs(bal - best_bal) <= 1e-12 and abs(t - 0.5) < abs(best - 0.5)
        ):
            best, best_bal = float(t), bal
    return round(best, 4)


def evaluate_judge(units: list[dict[str, Any]]) -> dict[str, Any]:
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
        result["by_source"][source] = {
            "report_half_fitted": metrics(sub, threshold),
        }
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


def render(report: dict[str, Any]) -> str:
    lines = [
        f"model {report['model']}; {report['seconds']:.0f} s; halves by row parity "
        "(even: fit threshold, odd: report)",
        "",
        "| judge | set | n | threshold | accuracy | balanced acc. | kappa | ROC AUC |",
        "|---|---|---:|---:|---|---|---|---|",
    ]
    for judge, r in report["judges"].items():
        for name, key, thr in (
            ("report half, argmax", "report_half_argmax", 0.5),
            ("report half, fitted", "report_half_fitted", r["threshold"]),
        ):
            m = r[key]
            lines.append(
                f"| {judge} | {name} | {m['n']} | {thr:.3f} | {fmt(m, 'accuracy')} | "
                f"{fmt(m, 'balanced_accuracy')} | {fmt(m, 'kappa')} | {fmt(m, 'auc')} |"
            )
        if len(r["by_source"]) > 1:
            for source, sr in r["by_source"].items():
                m = sr["report_half_fitted"]
                lines.append(
                    f"| {judge} | {source} (report, fitted) | {m['n']} | {r['threshold']:.3f} | "
                    f"{fmt(m, 'accuracy')} | {fmt(m, 'balanced_accuracy')} | {fmt(m, 'kappa')} "
                    f"| {fmt(m, 'auc')} |"
                )
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
    report: dict[str, Any] = {"model": model.id, "rows_per_set": args.rows, "judges": {}}
    all_units: list[dict[str, Any]] = []
    for judge in judges:
        t0 = time.perf_counter()
        units = collect(judge, load(judge, args.rows), backend)
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
