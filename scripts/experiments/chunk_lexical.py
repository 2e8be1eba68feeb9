#!/usr/bin/env python3
"""chunk_relevance: do the request's words found in a chunk add to the model's P? (issue
13, thirteenth round; measured, not adopted.)

Units already collected (`docs/runs/issue13-r11-chunk-units.jsonl`: the shipped question's
P(yes) for HotpotQA's 414 chunks and plain sets 1-13). Two signals need no model: `lex`,
the share of the request's content words found in the chunk (lexical_support), and
`keyfound`, the share of its numbers and names found there (1 when it has none). Logistic
fits: on HotpotQA's fit half and the plain sets, reported on HotpotQA's report half; on the
plain sets alone, reported on all of HotpotQA; and each plain set held out. No model is run:

    .venv/bin/python scripts/experiments/chunk_lexical.py
"""

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
from groundedness_together import set_path  # noqa: E402

from localjudge.judges.lexical import lexical_support, missing_key_terms  # noqa: E402

units = [
    json.loads(line)
    for line in (REPO / "docs" / "runs" / "issue13-r11-chunk-units.jsonl").read_text().splitlines()
]
rows: dict[str, list[dict[str, Any]]] = {}
for u in units:
    folder_set, row_i, chunk_i = u["id"].rsplit(":", 2)
    if folder_set not in rows:
        rows[folder_set] = [
            json.loads(x) for x in set_path(folder_set + ":0").read_text().splitlines()
        ]
    row = rows[folder_set][int(row_i)]
    request = (
        row["request"]
        if isinstance(row["request"], str)
        else row["request"]["messages"][-1]["content"]
    )
    chunk = row["retrieved_context"][int(chunk_i)]["content"]
    share = missing_key_terms(request, [chunk])[0]
    u["lex"] = lexical_support(request, [chunk])[0]
    u["keyfound"] = 1.0 if share is None else 1.0 - share


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


y = np.array([u["label"] for u in units])
hot = np.array([u["source"] == "HotpotQA" for u in units])
fit_half = np.array([u["half"] == "fit" for u in units])
for names in (
    ("shipped",),
    ("shipped", "lex"),
    ("shipped", "keyfound"),
    ("shipped", "lex", "keyfound"),
    ("lex",),
):
    x = np.array([[logit(u["shipped"]) if n == "shipped" else u[n] for n in names] for u in units])
    train = (hot & fit_half) | ~hot
    w = gs.fit_logistic(x[train], y[train])
    t = gs.best_threshold(y[train], gs.predict(w, x[train]))
    test = hot & ~fit_half
    s = gs.predict(w, x[test])
    w2 = gs.fit_logistic(x[~hot], y[~hot])
    t2 = gs.best_threshold(y[~hot], gs.predict(w2, x[~hot]))
    s2 = gs.predict(w2, x[hot])
    held = []
    for src in sorted({u["source"] for u in units} - {"HotpotQA"}):
        te = np.array([u["source"] == src for u in units])
        w3 = gs.fit_logistic(x[~te], y[~te])
        t3 = gs.best_threshold(y[~te], gs.predict(w3, x[~te]))
        held.append(gs.balanced(y[te], (gs.predict(w3, x[te]) >= t3).astype(int)))
    report = gs.balanced(y[test], (s >= t).astype(int))
    held_hot = gs.balanced(y[hot], (s2 >= t2).astype(int))
    print(
        "+".join(names),
        f"HotpotQA report half {report:.3f} (AUC {gs.auc(y[test], s):.3f})",
        f"| HotpotQA held out {held_hot:.3f} (AUC {gs.auc(y[hot], s2):.3f})",
        f"| plain sets held out, mean {np.mean(held):.3f} (lowest {min(held):.2f})",
    )
