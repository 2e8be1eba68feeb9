#!/usr/bin/env python3
"""Does a second question beside chunk_relevance's hold across sources?

Issue 13: on the plain sets chunk_relevance fails passages that answer in other words
(P 0.51-0.68 at the threshold 0.6855) and passes passages on the subject that do not
answer (0.69-0.78). This collects, per labelled chunk, the P(yes) of the shipped question
and of candidates asked after the same prefix (request, that passage; each costs its
question's tokens and one verdict), one unit per chunk, so that groundedness_support.py's
analysis can fit combinations leaving one source out:

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/chunk_signals.py \
        --set ../shared/benchmarks/chunk_relevance.jsonl \
        --set tests/data/plain/chunk_relevance.jsonl --units units.jsonl
    .venv/bin/python scripts/experiments/groundedness_support.py --analyse units.jsonl \
        --features shipped --features shipped+needed ...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402

from localjudge.engine.base import VerdictRequest  # noqa: E402
from localjudge.judges.base import (  # noqa: E402
    YES_NO,
    make_prompt,
    passage_part,
    question,
    request_part,
)
from localjudge.judges.retrieval import CHUNK_RELEVANCE_Q  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

YN = " Answer yes or no."
# (name, question); "{n}" is the passage's number.
CANDIDATES = [
    ("shipped", CHUNK_RELEVANCE_Q),
    ("answers", "Does passage {n} answer the request?" + YN),
    ("needed", "Does passage {n} give information needed to answer the request?" + YN),
]


def collect(sets: Sequence[Path], units_path: Path, model: str | None, threads: int) -> None:
    done = set()
    if units_path.exists():
        done = {json.loads(line)["id"] for line in units_path.read_text().splitlines() if line}
    backend = gs.open_backend(model, threads)
    with units_path.open("a", encoding="utf-8") as out:
        for path in sets:
            items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            for i, item in enumerate(items):
                uid = f"{path.parent.name}/{path.name}:{i}"
                if f"{uid}:0" in done:
                    continue
                row = {k: v for k, v in item.items() if k not in ("labels", "source")}
                record = validate_row(i + 1, row)
                assert isinstance(record, Record), record
                chunks = list(record.retrieved_context or ())
                reqs = [
                    VerdictRequest(
                        make_prompt(
                            [
                                request_part(record),
                                passage_part(j, chunk),
                                question(q.format(n=j + 1)),
                            ]
                        ),
                        YES_NO,
                    )
                    for j, chunk in enumerate(chunks)
                    for _, q in CANDIDATES
                ]
                t0 = time.perf_counter()
                verdicts = backend.judge(reqs)
                seconds = round(time.perf_counter() - t0, 3)
                labels = item["labels"]["chunk_relevance"]
                for j in range(len(chunks)):
                    ps = verdicts[j * len(CANDIDATES) : (j + 1) * len(CANDIDATES)]
                    unit = {
                        "id": f"{uid}:{j}",
                        "set": path.name,
                        "row": i,
                        "chunk": j,
                        "half": "fit" if i % 2 == 0 else "report",
                        "source": gs.source_name(item),
                        "label": 1 if labels[j] == "yes" else 0,
                        **{
                            name: v.probabilities.get("yes") if v.label else None
                            for (name, _), v in zip(CANDIDATES, ps, strict=True)
                        },
                    }
                    out.write(json.dumps(unit) + "\n")
                out.flush()
                print(f"{uid} {len(chunks)} chunks {seconds:.1f}s", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=[], required=True)
    parser.add_argument("--units", type=Path, required=True)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    collect(args.set, args.units, args.model, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
