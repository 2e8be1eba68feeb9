#!/usr/bin/env python3
"""What the support-checking groundedness costs in evaluated tokens, against the layout it
replaced, on the rows of scripts/bench.py.

Evaluated tokens are the distinct tokens of a row's prompt trie (a shared prefix counts
once): what the llama.cpp backend runs through the model for the row, and what the floor
of scripts/bench.py counts. Only the tokenizer is loaded (vocab_only), so this takes
seconds and needs no CPU lock. Printed per row and in total: groundedness alone, and every
judge of the row together (groundedness shares its request + passage prefixes with
chunk_relevance).

The replaced layout (before issue 13), rebuilt here: request, every passage, the whole
response, then each statement and the old question.

    .venv/bin/python scripts/experiments/groundedness_cost.py --rows 10
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench import distinct_stream, workload  # noqa: E402

from localjudge.engine.base import Prompt, VerdictRequest  # noqa: E402
from localjudge.judges import JudgeOptions, select  # noqa: E402
from localjudge.judges.base import (  # noqa: E402
    YES_NO,
    fence,
    make_prompt,
    passages,
    question,
    request_part,
    response_part,
)
from localjudge.judges.response import statements  # noqa: E402
from localjudge.models import resolve_for_eval  # noqa: E402
from localjudge.records import Record  # noqa: E402

OLD_Q = (
    "Is everything the statement above says stated in the passages? Answer no if it adds "
    "anything the passages do not say. Answer yes or no."
)


def old_groundedness(record: Record) -> list[VerdictRequest]:
    shared = [request_part(record), *passages(record), response_part(record)]
    return [
        VerdictRequest(make_prompt([*shared, fence("statement", s), question(OLD_Q)]), YES_NO)
        for s in statements(record)
    ]


def distinct(tokenize: Any, prompts: Sequence[Prompt]) -> int:
    seqs = []
    for p in prompts:
        text = p.system + "\n" + "".join(part.text for part in p.user) + p.answer_prefix
        seqs.append(tuple(tokenize(text.encode("utf-8"), add_bos=False, special=False)))
    return len(distinct_stream(seqs))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--model", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from llama_cpp import Llama

    from localjudge.engine.quiet import quiet_stderr

    with quiet_stderr():
        vocab = Llama(str(resolve_for_eval(args.model).path), vocab_only=True, verbose=False)
    options = JudgeOptions(rationale=False)
    judges = select(None)
    rows = []
    for record in workload(args.rows):
        others = [
            r
            for j in judges
            if j.name != "groundedness" and not j.missing(record)
            for r in j.requests(record, options)
        ]
        new = [r for j in judges if j.name == "groundedness" for r in j.requests(record, options)]
        old = old_groundedness(record)
        rows.append(
            {
                "line": record.line,
                "passages": len(record.retrieved_context or ()),
                "statements": len(statements(record)),
                "groundedness_old": distinct(vocab.tokenize, [r.prompt for r in old]),
                "groundedness_new": distinct(vocab.tokenize, [r.prompt for r in new]),
                "row_old": distinct(vocab.tokenize, [r.prompt for r in [*others, *old]]),
                "row_new": distinct(vocab.tokenize, [r.prompt for r in [*others, *new]]),
            }
        )
    total = {k: sum(r[k] for r in rows) for k in rows[0] if k not in ("line",)}
    result = {
        "rows": rows,
        "total": total,
        "groundedness_ratio": total["groundedness_new"] / total["groundedness_old"],
        "row_ratio": total["row_new"] / total["row_old"],
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for r in rows:
            print(r)
        print(
            f"groundedness alone: {total['groundedness_old']} -> {total['groundedness_new']} "
            f"tokens ({result['groundedness_ratio']:.2f}x); every judge of the row: "
            f"{total['row_old']} -> {total['row_new']} ({result['row_ratio']:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
