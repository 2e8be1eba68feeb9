#!/usr/bin/env python3
"""Which signals tell grounded from ungrounded responses, across sources?

Issue 13: the shipped groundedness (every passage, the whole response, then each statement,
75% lexical support) follows shared words, not support. This script collects, per labelled
row, the candidate signals a support-checking judge could use, all on the same prompt-trie
walk (one `backend.judge` call per row, so shared prefixes are evaluated once):

    pass_resp_{q}    P(yes): every passage, then the whole response as the statement
    pp_stmt_{q}      min over statements of max over passages of P(yes): one passage, then
                     the statement (MiniCheck's chunk-then-max), and which passage won;
                     pp_stmt_{q}_mean the mean over statements
    lexical          share of the response's content words found in the request + passages
    key_missing      share of the response's numbers and names not found in the passages

for the question wordings in QUESTIONS. Every prompt starts with the request and the
passage(s), as chunk_relevance's and context_sufficiency's do, so that a product judge of
this shape shares their prefixes and a statement costs only its own tokens. Units go to a
JSONL file as they are computed (a killed run resumes where it stopped); `--analyse` then
fits combinations (logistic regression on the signals' logits) leaving one source out at a
time and reports balanced accuracy per held-out source. Labels are read only to score.

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/groundedness_support.py \
        --set ../shared/benchmarks/groundedness.jsonl \
        --set ../shared/benchmarks/groundedness_summedits.jsonl --units units.jsonl
    .venv/bin/python scripts/experiments/groundedness_support.py --analyse units.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from localjudge.engine.base import VerdictRequest  # noqa: E402
from localjudge.judges.answer_relevancy import split_statements  # noqa: E402
from localjudge.judges.base import (  # noqa: E402
    YES_NO,
    fence,
    make_prompt,
    passage_part,
    question,
    request_part,
)
from localjudge.judges.lexical import lexical_support, missing_key_terms  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

QUESTIONS = {
    "q1": "Is the statement supported by the passages above? Answer yes or no.",
}


_ROWS: dict[Path, list[str]] = {}


def unit_row(uid: str) -> dict[str, Any]:
    """The labelled row a unit id names ("benchmarks/FILE:i" in ../shared, "DIR/FILE:i" in
    tests/data), as collect() writes ids; each file is read once."""
    path, i = uid.rsplit(":", 1)
    base = REPO.parent / "shared" if path.startswith("benchmarks/") else REPO / "tests" / "data"
    f = base / path
    if f not in _ROWS:
        _ROWS[f] = f.read_text(encoding="utf-8").splitlines()
    row: dict[str, Any] = json.loads(_ROWS[f][int(i)])
    return row


def source_name(item: dict[str, Any]) -> str:
    """The source dataset: its first word, and the second for sets whose second word names a
    part (SummEdits domains; EVOUNA's NQ and TQ halves)."""
    words = str(item.get("source", "")).split()
    if len(words) >= 2 and words[0] in ("SummEdits", "EVOUNA"):
        return " ".join(words[:2])
    return words[0] if words else ""


def row_requests(record: Record) -> tuple[list[VerdictRequest], list[tuple[str, int, int]]]:
    """The requests of one row and, for each, (signal, statement index, passage index)."""
    chunks = [c for c in record.retrieved_context or () if (c.content or "").strip()]
    parts = [passage_part(i, c) for i, c in enumerate(chunks)]
    stmts = split_statements(record.response or "") or [(record.response or "").strip()]
    head = [request_part(record)]
    reqs: list[VerdictRequest] = []
    keys: list[tuple[str, int, int]] = []
    for q, text in QUESTIONS.items():
        for si, s in enumerate(stmts):
            for pi, part in enumerate(parts):
                prompt = make_prompt([*head, part, fence("statement", s), question(text)])
                reqs.append(VerdictRequest(prompt, YES_NO))
                keys.append((f"pp_stmt_{q}", si, pi))
        whole = fence("statement", record.response or "")
        reqs.append(VerdictRequest(make_prompt([*head, *parts, whole, question(text)]), YES_NO))
        keys.append((f"pass_resp_{q}", -1, -1))
    return reqs, keys


def signals(
    record: Record, keys: Sequence[tuple[str, int, int]], ps: Sequence[float | None]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    nstmt = 1 + max(k[1] for k in keys)
    for q in QUESTIONS:
        resp = [p for (name, _, _), p in zip(keys, ps, strict=True) if name == f"pass_resp_{q}"]
        out[f"pass_resp_{q}"] = resp[0]
        per: list[tuple[float, int]] = []
        for si in range(nstmt):
            cands = [
                (p, pi)
                for (name, s, pi), p in zip(keys, ps, strict=True)
                if name == f"pp_stmt_{q}" and s == si and p is not None
            ]
            per.append(max(cands))
        out[f"pp_stmt_{q}"] = min(p for p, _ in per)
        out[f"pp_stmt_{q}_mean"] = sum(p for p, _ in per) / len(per)
        out[f"pp_stmt_{q}_evidence"] = [[pi, round(p, 6)] for p, pi in per]
    evidence = [record.request, *(c.content or "" for c in record.retrieved_context or ())]
    out["lexical"] = lexical_support(record.response or "", evidence)[0]
    share, missing = missing_key_terms(
        record.response or "", [c.content or "" for c in record.retrieved_context or ()]
    )
    out["key_missing"] = share
    out["key_missing_terms"] = missing
    out["statements"] = nstmt
    out["passages"] = len(record.retrieved_context or ())
    return out


def open_backend(model: str | None, threads: int) -> Any:
    """The llama.cpp backend on a catalogued model (None: the default), 4,096 tokens of
    context, as the experiment scripts run it."""
    from localjudge.engine.llama import LlamaBackend
    from localjudge.models import resolve_for_eval

    resolved = resolve_for_eval(model)
    return LlamaBackend(
        resolved.path,
        template=resolved.entry.template if resolved.entry else None,
        n_ctx=4096,
        threads=threads,
    )


RowRequests = Callable[[Record], tuple[list[VerdictRequest], list[Any]]]
RowSignals = Callable[[Record, Sequence[Any], Sequence[float | None]], dict[str, Any]]


def collect(
    sets: Sequence[Path],
    units_path: Path,
    model: str | None,
    threads: int,
    judge: str = "groundedness",
    requests_of: RowRequests | None = None,
    signals_of: RowSignals | None = None,
    per_source: int | None = None,
    sources: Sequence[str] = (),
) -> None:
    """Append one unit per labelled row of `sets` to `units_path` (rows already there are
    skipped): its label for `judge`, half, source, cost, and the signals computed by
    `signals_of` from the verdicts of `requests_of` (one backend call per row). With
    `sources`, only rows whose source starts with one of them."""
    requests_of = requests_of or row_requests
    signals_of = signals_of or signals
    done = set()
    if units_path.exists():
        done = {json.loads(line)["id"] for line in units_path.read_text().splitlines() if line}
    backend = open_backend(model, threads)
    with units_path.open("a", encoding="utf-8") as out:
        for path in sets:
            items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            taken: dict[str, int] = {}
            for i, item in enumerate(items):
                uid = f"{path.parent.name}/{path.name}:{i}"
                source = source_name(item)
                taken[source] = taken.get(source, 0) + 1
                if sources and not any(source.startswith(s) for s in sources):
                    continue
                if uid in done or (per_source is not None and taken[source] > per_source):
                    continue
                row = {k: v for k, v in item.items() if k not in ("labels", "source")}
                record = validate_row(i + 1, row)
                assert isinstance(record, Record), record
                reqs, keys = requests_of(record)
                before = backend.stats.evaluated_tokens
                t0 = time.perf_counter()
                verdicts = backend.judge(reqs)
                ps = [v.probabilities.get("yes") if v.label else None for v in verdicts]
                unit = {
                    "id": uid,
                    "set": path.name,
                    "row": i,
                    "half": "fit" if i % 2 == 0 else "report",
                    "source": source,
                    "label": 1 if item["labels"][judge] == "yes" else 0,
                    "evaluated_tokens": backend.stats.evaluated_tokens - before,
                    "seconds": round(time.perf_counter() - t0, 3),
                    **signals_of(record, keys, ps),
                }
                out.write(json.dumps(unit) + "\n")
                out.flush()
                print(f"{uid} {unit['seconds']:.1f}s", file=sys.stderr)


# ---------------------------------------------------------------------------- analysis


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


# Signals that are shares, logits or counts, not probabilities: used as they are, with the
# value a missing one stands for (a text without numbers or names misses none of them).
LINEAR = {
    "key_missing": 0.0,
    "lexical": 1.0,
    "recall": 1.0,
    "answer_recall": 1.0,
    "mean_logit": 0.0,
    "min_logit": 0.0,
    "log_statements": 0.0,
    "refusal_phrase": 0.0,
    "evasion_unrefused": 0.0,
    "refuses_help": 0.0,
}


def derive(u: dict[str, Any]) -> dict[str, Any]:
    """Aggregates of the statements' best-passage P(yes) (groundedness units): the mean and
    the minimum of their logits, and the log of their number."""
    best = [p for _, p in u.get("pp_stmt_q1_evidence") or ()]
    if not best:
        return u
    logits = [_logit(p) for p in best]
    return {
        **u,
        "mean_logit": sum(logits) / len(logits),
        "min_logit": min(logits),
        "log_statements": math.log(len(logits)),
    }


def features(u: dict[str, Any], names: Sequence[str]) -> list[float]:
    """The unit's signals: shares, logits and counts as they are, probabilities as logits."""
    row = []
    for n in names:
        v = u.get(n)
        if n in LINEAR:
            row.append(LINEAR[n] if v is None else float(v))
        elif v is None:
            raise ValueError(f"unit {u.get('id')} has no {n}")
        else:
            row.append(_logit(float(v)))
    return row


def fit_logistic(x: Any, y: Any, l2: float = 1.0, iters: int = 200) -> Any:
    """L2-regularised logistic regression by Newton's method (intercept not penalised)."""
    import numpy as np

    xb = np.hstack([np.ones((x.shape[0], 1)), x])
    w = np.zeros(xb.shape[1])
    reg = np.eye(xb.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + reg @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def predict(w: Any, x: Any) -> Any:
    import numpy as np

    return 1 / (1 + np.exp(-(w[0] + x @ w[1:])))


def balanced(y: Any, pred: Any) -> float:
    tpr = float((pred[y == 1] == 1).mean()) if (y == 1).any() else float("nan")
    tnr = float((pred[y == 0] == 0).mean()) if (y == 0).any() else float("nan")
    return (tpr + tnr) / 2


def source_balanced(y: Any, pred: Any, sources: Sequence[str], idx: Sequence[int]) -> float:
    """The mean over the sources of the units `idx` of each source's balanced accuracy:
    every source alike, however many units it has (the objective the recall experiments
    choose their variants by)."""
    import numpy as np

    vals = []
    for src in sorted({sources[i] for i in idx}):
        j = [i for i in idx if sources[i] == src]
        vals.append(balanced(y[j], pred[j]))
    return float(np.mean(vals))


def turned(y: Any, before: Any, after: Any, threshold: float) -> list[tuple[int, str]]:
    """(index, "right" or "wrong") of each unit whose rating at `threshold` differs between
    the scores `before` and `after` (the recall experiments' --rows)."""
    out = []
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        old, new = int(b >= threshold), int(a >= threshold)
        if old != new:
            out.append((i, "right" if new == y[i] else "wrong"))
    return out


def auc(y: Any, s: Any) -> float:
    pos, neg = s[y == 1], s[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    g = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(g / (len(pos) * len(neg)))


def balanced_ci(y: Any, pred: Any, boot: int = 1000, seed: int = 7) -> list[float]:
    """95% bootstrap interval of balanced accuracy (resampling units, fixed seed)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(boot):
        idx = rng.integers(0, len(y), len(y))
        if (y[idx] == 1).any() and (y[idx] == 0).any():
            vals.append(balanced(y[idx], pred[idx]))
    return [round(float(v), 3) for v in np.percentile(vals, [2.5, 97.5])] if vals else []


def best_threshold(y: Any, s: Any) -> float:
    import numpy as np

    vals = np.unique(s)
    cands = [0.5, *((vals[:-1] + vals[1:]) / 2).tolist()]
    best: float = max(cands, key=lambda t: (balanced(y, (s >= t).astype(int)), -abs(t - 0.5)))
    return best


FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "resp": ("pass_resp_q1",),
    "min": ("min_logit",),
    "mean": ("mean_logit",),
    "lexical": ("lexical",),
    "min+key": ("min_logit", "key_missing"),
    "mean+key": ("mean_logit", "key_missing"),
    "mean+lexical": ("mean_logit", "lexical"),
    "min+resp+key": ("min_logit", "pass_resp_q1", "key_missing"),
    "min+n": ("min_logit", "log_statements"),
    "mean+n": ("mean_logit", "log_statements"),
    "mean+n+key": ("mean_logit", "log_statements", "key_missing"),
    "mean+n+lexical": ("mean_logit", "log_statements", "lexical"),
    "mean+n+resp": ("mean_logit", "log_statements", "pass_resp_q1"),
    "mean+min+n": ("mean_logit", "min_logit", "log_statements"),
    "mean+min+n+key": ("mean_logit", "min_logit", "log_statements", "key_missing"),
}


def analyse(
    units_path: Path,
    feature_sets: dict[str, tuple[str, ...]] | None = None,
    keep_out: str | None = None,
) -> dict[str, Any]:
    """Leave-one-source-out: for each source, fit the combination and its threshold on the
    other sources, report balanced accuracy and ROC AUC on the held-out source. Also the
    pooled held-out figure and, per source, the score's AUC alone (no fitting). With
    `keep_out` (a source), also the weights and threshold fitted on every unit but that
    source's report half (what a judge ships, its report half left to report on)."""
    import numpy as np

    units = [derive(json.loads(line)) for line in units_path.read_text().splitlines() if line]
    sources = sorted({u["source"] for u in units})
    y_all = np.array([u["label"] for u in units], dtype=float)
    report: dict[str, Any] = {"sources": {s: sum(u["source"] == s for u in units) for s in sources}}
    for name, feats in (feature_sets or FEATURE_SETS).items():
        x_all = np.array([features(u, feats) for u in units], dtype=float)
        per: dict[str, dict[str, Any]] = {}
        held_pred = np.zeros(len(units))
        held_s = np.zeros(len(units))
        for s in sources:
            test = np.array([u["source"] == s for u in units])
            w = fit_logistic(x_all[~test], y_all[~test])
            s_train = predict(w, x_all[~test])
            t = best_threshold(y_all[~test], s_train)
            s_test = predict(w, x_all[test])
            pred = (s_test >= t).astype(int)
            held_pred[test] = pred
            held_s[test] = s_test
            per[s] = {
                "n": int(test.sum()),
                "balanced_accuracy": round(balanced(y_all[test], pred), 3),
                "ci95": balanced_ci(y_all[test], pred),
                "auc": round(auc(y_all[test], s_test), 3),
            }
        fit = np.array([u["half"] == "fit" for u in units])
        w_fit = fit_logistic(x_all[fit], y_all[fit])
        t_fit = best_threshold(y_all[fit], predict(w_fit, x_all[fit]))
        halves: dict[str, Any] = {"threshold": round(t_fit, 4)}
        for s in [*sources, None]:
            rep = np.array([u["half"] == "report" and s in (None, u["source"]) for u in units])
            pred = (predict(w_fit, x_all[rep]) >= t_fit).astype(int)
            halves[s or "all"] = {
                "n": int(rep.sum()),
                "balanced_accuracy": round(balanced(y_all[rep], pred), 3),
                "ci95": balanced_ci(y_all[rep], pred),
            }
        groups: dict[str, Any] = {}
        for g in sorted({u["source"].split()[0] for u in units}):
            sel = np.array([u["source"].split()[0] == g for u in units])
            rep = sel & np.array([u["half"] == "report" for u in units])
            half_pred = (predict(w_fit, x_all[rep]) >= t_fit).astype(int)
            groups[g] = {
                "n": int(sel.sum()),
                "loso": round(balanced(y_all[sel], held_pred[sel].astype(int)), 3),
                "loso_ci95": balanced_ci(y_all[sel], held_pred[sel].astype(int)),
                "loso_auc": round(auc(y_all[sel], held_s[sel]), 3),
                "report_half": round(balanced(y_all[rep], half_pred), 3),
                "report_half_ci95": balanced_ci(y_all[rep], half_pred),
                "report_n": int(rep.sum()),
            }
        w_all = fit_logistic(x_all, y_all)
        shipped: dict[str, Any] = {}
        if keep_out is not None:
            kept = np.array(
                [not (u["source"] == keep_out and u["half"] == "report") for u in units]
            )
            w_kept = fit_logistic(x_all[kept], y_all[kept])
            t_kept = best_threshold(y_all[kept], predict(w_kept, x_all[kept]))
            shipped = {
                f"weights_all_but_report_of {keep_out}": [round(float(v), 4) for v in w_kept],
                f"threshold_all_but_report_of {keep_out}": round(t_kept, 4),
            }
        report[name] = {
            **shipped,
            "groups": groups,
            "report_half": halves,
            "loso": per,
            "loso_pooled_balanced_accuracy": round(balanced(y_all, held_pred.astype(int)), 3),
            "loso_pooled_ci95": balanced_ci(y_all, held_pred.astype(int)),
            "mean_loso_balanced_accuracy": round(
                float(np.mean([v["balanced_accuracy"] for v in per.values()])), 3
            ),
            "weights_all_sources": [round(float(v), 4) for v in w_all],
        }
    return report


def render(report: dict[str, Any]) -> str:
    """A markdown table: per feature set and source group (sources sharing a first word,
    e.g. the SummEdits domains, pooled), balanced accuracy with its 95% interval on the
    report half (combination and threshold fitted on the fit half of every source) and
    leaving one source out (fitted on the other sources), and the held-out ROC AUC."""
    names = [k for k in report if k != "sources"]
    groups = list(report[names[0]]["groups"]) if names else []

    def cell(v: float, ci: list[float]) -> str:
        return f"{v:.2f} [{ci[0]:.2f},{ci[1]:.2f}]" if ci else f"{v:.2f}"

    head = (
        "| signals | "
        + " | ".join(f"{g} report half | {g} LOSO | {g} LOSO AUC" for g in groups)
        + " |"
    )
    lines = [head, "|---|" + "---|" * (3 * len(groups))]
    for n in names:
        gs_ = report[n]["groups"]
        cells = []
        for g in groups:
            r = gs_[g]
            cells += [
                cell(r["report_half"], r["report_half_ci95"]),
                cell(r["loso"], r["loso_ci95"]),
                f"{r['loso_auc']:.2f}",
            ]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=[])
    parser.add_argument("--units", type=Path)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--per-source", type=int, help="only the first N rows of each source")
    parser.add_argument("--analyse", type=Path, help="analyse a units file and print JSON")
    parser.add_argument("--json", action="store_true", help="with --analyse: JSON output")
    parser.add_argument(
        "--features",
        action="append",
        default=[],
        help="with --analyse: a feature set as NAME+NAME (repeatable; default: groundedness's)",
    )
    parser.add_argument(
        "--keep-out",
        metavar="SOURCE",
        help="with --analyse: also fit on every unit but SOURCE's report half (JSON output)",
    )
    args = parser.parse_args(argv)
    if args.analyse:
        sets = {f: tuple(f.split("+")) for f in args.features} or None
        result = analyse(args.analyse, sets, args.keep_out)
        print(json.dumps(result, indent=1) if args.json else render(result))
        return 0
    if not args.set or not args.units:
        parser.error("--set and --units are needed to collect")
    collect(args.set, args.units, args.model, args.threads, per_source=args.per_source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
