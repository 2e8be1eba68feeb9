#!/usr/bin/env python3
"""relevance_to_query: which question does the response answer? (issue 13, twelfth round)

An answer to another question on the same subject, or a general statement about the
subject, is rated relevant by the shipped questions (they see the subject). RAGAS's
answer relevancy turns this round: it writes the question the response answers and
compares it with the request. Per labelled row, with the default model, greedy:

1. **write**: from the response alone (the request is not shown, or the model copies it),
   the answer starts '{"question": "' and the model writes up to --max-tokens tokens, to
   the closing quote.
2. **compare**: the request, the written question in a <question> fence, and each of
   COMPARE's questions; P(yes) is read as every localjudge verdict is, after
   '{"verdict": "'.

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/relevance_question.py \
        --ids docs/runs/issue13-r11-relevance-units.jsonl --out units.jsonl
    .venv/bin/python scripts/experiments/relevance_question.py --analyse units.jsonl \
        --shipped docs/runs/issue13-r11-relevance-units.jsonl

--ids takes the rows named by a units file (ids "folder/file.jsonl:line"); --set takes
every row of a labelled file. `--analyse` joins the shipped questions' P(yes) by id and
reports, leaving one source out, the shipped combination against it with each compare
question added. Labels are read only to score. Rows already in --out are skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
import plain_sources as ps  # noqa: E402
from groundedness_together import set_path  # noqa: E402
from safety_reasoning import Model  # noqa: E402

from localjudge.engine.base import ANSWER_PREFIX  # noqa: E402
from localjudge.judges.base import SYSTEM, fence, question, request_part, response_part  # noqa: E402
from localjudge.models import resolve_for_eval  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

WRITE_SYSTEM = SYSTEM.replace(
    '{"verdict": "yes" or "no", "rationale": "one sentence"}', '{"question": "one question"}'
)
WRITE_Q = "What question does the response above answer? Write it as one short question."
WRITE_PREFIX = '{"question": "'
YN = " Answer yes or no."
COMPARE = {
    "same": "Does the question above ask for the same thing as the request?" + YN,
    "answers_too": "Would an answer to the question above also answer the request?" + YN,
}


def rows(ids: Sequence[Path], sets: Sequence[Path]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in ids:
        for line in path.read_text().splitlines():
            uid = json.loads(line)["id"]
            n = int(uid.rsplit(":", 1)[1])
            yield uid, json.loads(set_path(uid).read_text().splitlines()[n])
    for path in sets:
        for n, line in enumerate(path.read_text().splitlines()):
            yield f"{path.parent.name}/{path.name}:{n}", json.loads(line)


def collect(ids: Sequence[Path], sets: Sequence[Path], out_path: Path, limit: int) -> None:
    done = set()
    if out_path.exists():
        done = {json.loads(x)["id"] for x in out_path.read_text().splitlines() if x}
    model = Model(Path(resolve_for_eval(None).path))
    with out_path.open("a", encoding="utf-8") as out:
        for uid, item in rows(ids, sets):
            if uid in done:
                continue
            row = {k: v for k, v in item.items() if k not in ("labels", "source")}
            record = validate_row(int(uid.rsplit(":", 1)[1]) + 1, row)
            assert isinstance(record, Record), record
            t0 = time.perf_counter()
            user = response_part(record).text + question(WRITE_Q).text
            model.start(WRITE_SYSTEM, user, WRITE_PREFIX)
            written = model.write(limit).strip()
            unit: dict[str, Any] = {
                "id": uid,
                "source": gs.source_name(item),
                "label": 1 if item["labels"]["relevance_to_query"] == "yes" else 0,
                "written": written,
            }
            head = request_part(record).text + fence("question", written).text
            for name, text in COMPARE.items():
                model.start(SYSTEM, head + question(text).text, ANSWER_PREFIX)
                unit[name] = model.p_yes()
            unit["seconds"] = round(time.perf_counter() - t0, 2)
            out.write(json.dumps(unit) + "\n")
            out.flush()
            print(uid, unit["seconds"], written, file=sys.stderr)


def analyse(path: Path, shipped: Path) -> None:
    from localjudge.judges.response import RELEVANCE_MODEL

    ship = {u["id"]: u for u in (json.loads(x) for x in shipped.read_text().splitlines() if x)}
    units = [json.loads(x) for x in path.read_text().splitlines() if x]
    units = [{**ship[u["id"]], **u} for u in units if u["id"] in ship]
    base = list(RELEVANCE_MODEL.weights)  # answers, gives, redirect (P(yes), fitted as logits)
    for name in ("shipped", *(f"+{c}" for c in COMPARE), *(f"{c} alone" for c in COMPARE)):
        if name == "shipped":
            feats = base
        elif name.endswith(" alone"):
            feats = [name.split()[0]]
        else:
            feats = [*base, name[1:]]
        ps.show(f"{name}, each source held out", units, *ps.held_out(units, feats, bool))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", type=Path, action="append", default=[])
    parser.add_argument("--set", type=Path, action="append", default=[])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--analyse", type=Path)
    parser.add_argument("--shipped", type=Path, help="--analyse: the shipped questions' units")
    args = parser.parse_args(argv)
    if args.analyse:
        if not args.shipped:
            parser.error("--analyse needs --shipped")
        analyse(args.analyse, args.shipped)
        return 0
    if not args.out or not (args.ids or args.set):
        parser.error("--ids or --set, and --out, are needed to collect")
    collect(args.ids, args.set, args.out, args.max_tokens)
    return 0


if __name__ == "__main__":
    sys.exit(main())
