#!/usr/bin/env python3
"""context_sufficiency: would the expected answer's numbers and names missing from the
passages (groundedness's `key_missing`, read off the expected answer) add to the judge's
P? (issue 13, twelfth round; measured, not adopted.)

Units already collected: the model's P(yes) for HotpotQA's 150 rows
(`docs/runs/issue13-r9-sufficiency-units.jsonl`) and plain sets 1-15
(`issue13-r12-sufficiency-units.jsonl`). The judge's P is recomputed from them with the
current answer recall and polar rule; `key_missing` from each row. Each source is held out
in turn (every plain set a source). No model is run:

    .venv/bin/python scripts/experiments/sufficiency_key.py
"""

import collections
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
import plain_sources as ps  # noqa: E402
from groundedness_together import set_path  # noqa: E402

from localjudge.judges.lexical import answer_word, best_answer_recall, missing_key_terms  # noqa: E402
from localjudge.judges.retrieval import ANSWER_WEIGHT, polar_p  # noqa: E402

R = REPO / "docs" / "runs"
units = {}
for f in ("issue13-r9-sufficiency-units.jsonl", "issue13-r12-sufficiency-units.jsonl"):
    for line in (R / f).read_text().splitlines():
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
    p = mp if rec is None else ANSWER_WEIGHT * rec + (1 - ANSWER_WEIGHT) * mp
    if rec is not None and answer_word(exp) is not None:
        p = max(p, polar_p(mp))
    km = missing_key_terms(exp, chunks)[1]
    out.append(
        {
            "id": uid,
            "source": u["source"],
            "label": u["label"],
            "judge_p": min(max(p, 1e-4), 1 - 1e-4),
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
for k in sorted(c):
    print(k, c[k])
