#!/usr/bin/env python3
"""correctness: does asking the model to set aside how sure a response sounds ("aside")
rate right answers given with a doubt better than the shipped question ("same"), without
losing elsewhere? (issue 13, fifteenth round.)

Units: `response_signals.py --judge correctness --only shipped --only aside` on EVOUNA's
150 rows, plain sets 1-21, the readings sets and the two hedge sets. Per source (EVOUNA
NQ, EVOUNA TQ, every plain set its own): balanced accuracy / ROC AUC of

- the shipped combination (CORRECTNESS_MODEL) at the catalogue's threshold;
- the same combination with "aside" in place of "same", weights and threshold unchanged;
- each question with answer recall, refitted leaving each source out (fitted on every other
  source) with its threshold, the between_answers rule applied on top as shipped.

No model is run:

    .venv/bin/python scripts/experiments/correctness_aside.py UNITS.jsonl
"""

from __future__ import annotations

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

from localjudge.judges.response import CORRECTNESS_MODEL, correctness_signals  # noqa: E402
from localjudge.judges.support import logit  # noqa: E402
from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402


def load(unit_id: str) -> Record:
    obj = gs.unit_row(unit_id)
    record = validate_row(
        int(unit_id.rsplit(":", 1)[1]) + 1,
        {k: v for k, v in obj.items() if k not in ("labels", "source")},
    )
    assert isinstance(record, Record)
    return record


def units_of(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        u = json.loads(line)
        folder = u["id"].split("/")[0]
        source = u["source"].removesuffix(".json") if folder == "benchmarks" else folder
        signals = correctness_signals(load(u["id"]))
        out.append(
            {
                "id": u["id"],
                "source": source,
                "half": u["half"],
                "label": u["label"],
                "same": u["shipped"],
                "aside": u["aside"],
                **signals,
            }
        )
    return out


def main(path: Path) -> int:
    units = units_of(path)
    t = load_catalogue()[default_model_id()].thresholds["correctness"]
    rule = np.array([u["between_answers"] for u in units]) > 0
    for name in ("same", "aside"):
        score = np.array(
            [
                CORRECTNESS_MODEL(
                    {
                        "same": logit(u[name]),
                        "answer_recall": u["answer_recall"],
                        "between_answers": u["between_answers"],
                    }
                )
                for u in units
            ]
        )
        ps.show(f"{name} in the shipped combination ({t})", units, (score >= t).astype(int), score)
    gs.LINEAR.update(answer_recall=1.0)
    for name in ("same", "aside"):
        pred, score = ps.held_out(units, (name, "answer_recall"), lambda g: True)
        pred[rule] = 0
        ps.show(f"{name}+answer_recall, every other source, the rule on top", units, pred, score)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
