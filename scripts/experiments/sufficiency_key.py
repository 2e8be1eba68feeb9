#!/usr/bin/env python3
"""context_sufficiency: would the expected answer's numbers and names missing from the
passages (groundedness's `key_missing`, read off the expected answer) add to the judge's
P? (issue 13, twelfth round measured it; the thirteenth fitted the shift.)

Units already collected: the model's P(yes) for HotpotQA's 150 rows
(`docs/runs/issue13-r9-sufficiency-units.jsonl`) and plain sets 1-15
(`issue13-r12-sufficiency-units.jsonl`); more unit files (later plain sets, one-shape sets)
may be named on the command line. The judge's P is recomputed from them with the current
answer recall and polar rule; `key_missing` from each row. Each source is held out in turn
(every plain set a source). Besides logistic fits, the form a judge can ship: the judge's
P moved down by a fixed number of logits when a key term is missing (`shift`), with the
threshold kept or fitted. No model is run:

    .venv/bin/python scripts/experiments/sufficiency_key.py [MORE_UNITS.jsonl ...]
"""

import collections
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
import plain_sources as ps  # noqa: E402
from groundedness_together import set_path  # noqa: E402

from localjudge.judges.lexical import answer_word, best_answer_recall, missing_key_terms  # noqa: E402
from localjudge.judges.retrieval import sufficiency_p  # noqa: E402
from localjudge.judges.support import shifted  # noqa: E402

R = REPO / "docs" / "runs"
units = {}
files = [R / "issue13-r9-sufficiency-units.jsonl", R / "issue13-r12-sufficiency-units.jsonl"]
for f in [*files, *(Path(a) for a in sys.argv[1:])]:
    for line in f.read_text().splitlines():
        u = json.loads(line)
        units[u["id"]] = u  # the later file's plain rows replace the earlier's
out = []
for uid, u in units.items():
    n = int(uid.rsplit(":", 1)[1])
    row = json.loads(set_path(uid).read_text().splitlines()[n])
    exp = row.get("expected_response")
    exp = exp if isinstance(exp, str) else (exp[0] if exp else "")
    chunks = [c.get("content") or "" for c in row.get("retrieved_context") or ()]
    rec, _ = best_answer_recall(exp, chunks)
    mp = u["shipped"]
    blend = sufficiency_p(mp, rec, polar=False)
    km = missing_key_terms(exp, chunks)[1]
    p = sufficiency_p(mp, rec, polar=rec is not None and answer_word(exp) is not None)
    # the polar rule kept for answers none of whose numbers and names is missing
    polar_kept = p if not km else blend
    out.append(
        {
            "id": uid,
            "source": u["source"],
            "label": u["label"],
            "judge_p": min(max(p, 1e-4), 1 - 1e-4),
            "polar_kept": min(max(polar_kept, 1e-4), 1 - 1e-4),
            "key_missing": 1.0 if km else 0.0,
            "model_p": mp,
            "recall": rec if rec is not None else 1.0,
        }
    )
gs.LINEAR.update(key_missing=0.0, recall=1.0)
score = np.array([u["judge_p"] for u in out])
ps.show("shipped (0.7158)", out, (score >= 0.7158).astype(int), score)
for nm, feats in (
    ("judge_p", ("judge_p",)),
    ("judge_p+key", ("judge_p", "key_missing")),
    ("model+recall", ("model_p", "recall")),
    ("model+recall+key", ("model_p", "recall", "key_missing")),
):
    ps.show(nm + " every other", out, *ps.held_out(out, feats, bool))
c = collections.Counter(
    (ps.group(u) if not ps.group(u).startswith("plain") else "plain*", u["label"], u["key_missing"])
    for u in out
)
for kind in sorted(c):
    print(kind, c[kind])


def shift_fit(
    units: list[dict[str, Any]], threshold: float | None, base: str = "judge_p"
) -> tuple[float, float]:
    """The shift (0-4 logits, steps of 0.25) and, unless given, the threshold that
    maximise balanced accuracy over `units`."""
    y = np.array([u["label"] for u in units])
    best = (-1.0, 0.0, 0.0)
    for k in np.arange(0.0, 4.01, 0.25):
        s = np.array([shifted(u[base], -k * u["key_missing"]) for u in units])
        t = gs.best_threshold(y, s) if threshold is None else threshold
        b = gs.balanced(y, (s >= t).astype(int))
        if b > best[0] + 1e-9:
            best = (b, float(k), float(t))
    return best[1], best[2]


kept = np.array([u["polar_kept"] for u in out])
ps.show(
    "polar rule only when no key term is missing (0.7158)", out, (kept >= 0.7158).astype(int), kept
)
for base in ("judge_p", "polar_kept"):
    for nm, fixed in (("shift, threshold 0.7158", 0.7158), ("shift and threshold", None)):
        pred, score = np.zeros(len(out), dtype=int), np.zeros(len(out))
        for src in sorted({u["source"] for u in out}):
            test = [i for i, u in enumerate(out) if u["source"] == src]
            shift, t = shift_fit([u for u in out if u["source"] != src], fixed, base)
            for i in test:
                score[i] = shifted(out[i][base], -shift * out[i]["key_missing"])
                pred[i] = int(score[i] >= t)
        ps.show(f"{base}: {nm} every other", out, pred, score)
        shift, t = shift_fit(out, fixed, base)
        print(f"  fitted on every unit: shift {shift:.2f} logits, threshold {t:.4f}")
