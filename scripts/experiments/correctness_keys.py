#!/usr/bin/env python3
"""correctness: would recall over the expected answer's numbers and names (its key terms)
serve better than recall over all its content words? (issue 13, thirteenth round.)

The expected answer often explains ("1,852 metres, by international agreement"; "A week
has 168 hours."), and a terse right answer ("6,076 feet, or thereabouts."; "168, unless my
sums are off.") then finds few of its words. `key_recall` is the share of the expected
answer's key terms found in the response (numbers by value, names; lexical.key_terms),
the best of the accepted answers, and the word recall where the answer has no key term.
Units already collected (P(same) of the shipped question; EVOUNA's 150 rows and plain sets
1-16 in `docs/runs/issue13-r13-correctness-units.jsonl`, more files on the command line);
signals recomputed with the current code; each source held out in turn. No model is run:

    .venv/bin/python scripts/experiments/correctness_keys.py [MORE_UNITS.jsonl ...]
"""

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

from localjudge.judges.lexical import missing_key_terms  # noqa: E402
from localjudge.judges.response import (  # noqa: E402
    CORRECTNESS_MODEL,
    correctness_signals,
    expected_recall,
)
from localjudge.judges.support import logit  # noqa: E402
from localjudge.records import validate_row  # noqa: E402

THRESHOLD = 0.5746  # the catalogue's, default model
files = [REPO / "docs" / "runs" / "issue13-r13-correctness-units.jsonl"]
units = {}
for f in [*files, *(Path(a) for a in sys.argv[1:])]:
    for line in f.read_text().splitlines():
        u = json.loads(line)
        units[u["id"]] = u
out = []
for uid, u in units.items():
    n = int(uid.rsplit(":", 1)[1])
    row = json.loads(set_path(uid).read_text().splitlines()[n])
    record = validate_row(n + 1, {k: v for k, v in row.items() if k not in ("labels", "source")})
    recall = expected_recall(record)["answer_recall"]
    expected = record.expected_text() or ""
    shares = [missing_key_terms(a, [record.response or ""])[0] for a in expected.split(" / ")]
    keyed = [1.0 - s for s in shares if s is not None]
    key_recall = max(keyed) if keyed else recall
    source = "EVOUNA NQ" if "NQ" in u["source"] else "EVOUNA TQ" if "TQ" in u["source"] else ""
    out.append(
        {
            "id": uid,
            "source": source or u["source"],
            "label": u["label"],
            "same": u["shipped"],
            "answer_recall": recall,
            "key_recall": key_recall,
            "both_recall": max(recall, key_recall),
            "between_answers": correctness_signals(record)["between_answers"],
        }
    )
gs.LINEAR.update(answer_recall=1.0, key_recall=1.0, both_recall=1.0)
score = np.array(
    [
        CORRECTNESS_MODEL(
            {
                "same": logit(u["same"]),
                "answer_recall": u["answer_recall"],
                "between_answers": u["between_answers"],
            }
        )
        for u in out
    ]
)
ps.show(f"shipped ({THRESHOLD})", out, (score >= THRESHOLD).astype(int), score)
for name, feats in (
    ("same+answer_recall", ("same", "answer_recall")),
    ("same+key_recall", ("same", "key_recall")),
    ("same+max(answer, key recall)", ("same", "both_recall")),
    ("same+answer_recall+key_recall", ("same", "answer_recall", "key_recall")),
):
    ps.show(name + ", every other source", out, *ps.held_out(out, feats, bool))
