#!/usr/bin/env python3
"""Should groundedness also ask each statement against all the passages together?

A statement that joins facts from two passages ("The Pipit 7 has a 12-hour battery and
costs 40 pounds", one fact per passage) is supported by neither passage alone, so the
per-passage check (judges/support.py) rates it unsupported. This script adds, for the rows
of an existing groundedness units file (`groundedness_support.py`) that have two or more
passages, one more verdict per statement: the request, every passage, the statement, the
same question. That prompt starts with the request and the first passage, as the
per-passage prompt for passage 1 does, and its request-and-every-passage prefix is
context_sufficiency's, so it costs the other passages once per row and each statement's
own tokens.

Collect (rows with one passage are copied: their together-prompt is the per-passage one):

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/groundedness_together.py \
        --units docs/runs/issue13-groundedness-units.jsonl --out together-units.jsonl

Analyse (leave one source out, as groundedness_support.py does), the statements' best
evidence being the best passage (pp) or the best of the passages and all of them together
(pp+all):

    .venv/bin/python scripts/experiments/groundedness_together.py --analyse together-units.jsonl

Labels are read only to score.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts" / "experiments"))

from groundedness_support import QUESTIONS, analyse, open_backend, render  # noqa: E402

from localjudge.engine.base import VerdictRequest  # noqa: E402
from localjudge.judges.base import YES_NO, make_prompt, passages, question, request_part  # noqa: E402
from localjudge.judges.lexical import missing_key_terms  # noqa: E402
from localjudge.judges.response import statements  # noqa: E402
from localjudge.judges.support import statement_parts  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

# Where the units' sets live, by the directory name their ids carry.
SET_DIRS = {
    "benchmarks": REPO.parent / "shared" / "benchmarks",
}


def set_path(uid: str) -> Path:
    folder, rest = uid.split("/", 1)
    name = rest.rsplit(":", 1)[0]
    base = SET_DIRS.get(folder, REPO / "tests" / "data" / folder)
    return base / name


def key_missing(uid: str) -> bool:
    """Whether a number or name of the unit's response is in none of its passages, as the
    judge reads it (groundedness's `key_missing`), from the row the id names."""
    row = json.loads(set_path(uid).read_text().splitlines()[int(uid.rsplit(":", 1)[1])])
    chunks = [c.get("content") or "" for c in row.get("retrieved_context") or ()]
    return bool(missing_key_terms(row.get("response") or "", chunks)[1])


def together_requests(record: Record) -> list[VerdictRequest]:
    """The judge's statements, each after the request and every passage."""
    head = [request_part(record), *passages(record)]
    return [
        VerdictRequest(make_prompt([*head, claim, question(QUESTIONS["q1"])]), YES_NO)
        for claim in statement_parts(statements(record))
    ]


def collect(units_in: Path, out_path: Path, model: str | None, threads: int) -> None:
    done = set()
    if out_path.exists():
        done = {json.loads(line)["id"] for line in out_path.read_text().splitlines() if line}
    units = [json.loads(line) for line in units_in.read_text().splitlines() if line]
    backend = open_backend(model, threads)
    with out_path.open("a", encoding="utf-8") as out:
        for u in units:
            if u["id"] in done:
                continue
            pp = [p for _, p in u["pp_stmt_q1_evidence"]]
            if u["passages"] < 2:
                together: list[float | None] = list(pp)
                tokens, seconds = 0, 0.0
            else:
                i = int(u["id"].rsplit(":", 1)[1])
                item = json.loads(set_path(u["id"]).read_text().splitlines()[i])
                row = {k: v for k, v in item.items() if k not in ("labels", "source")}
                record = validate_row(i + 1, row)
                assert isinstance(record, Record), record
                reqs = together_requests(record)
                assert len(reqs) == len(pp), (u["id"], len(reqs), len(pp))
                before = backend.stats.evaluated_tokens
                t0 = time.perf_counter()
                verdicts = backend.judge(reqs)
                together = [v.probabilities.get("yes") if v.label else None for v in verdicts]
                tokens = backend.stats.evaluated_tokens - before
                seconds = round(time.perf_counter() - t0, 3)
                print(f"{u['id']} {seconds:.1f}s", file=sys.stderr)
            out.write(
                json.dumps(
                    {
                        **u,
                        "together_q1": together,
                        "together_tokens": tokens,
                        "together_seconds": seconds,
                    }
                )
                + "\n"
            )
            out.flush()


def with_together(u: dict[str, Any]) -> dict[str, Any]:
    """The unit with each statement's evidence the best of its passages and all of them."""
    ev = u["pp_stmt_q1_evidence"]
    both = [
        [pi, max(p, t if t is not None else 0.0)]
        for (pi, p), t in zip(ev, u["together_q1"], strict=True)
    ]
    return {**u, "pp_stmt_q1_evidence": both}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=Path, help="a groundedness_support.py units file")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--analyse", type=Path, help="a units file this script wrote")
    args = parser.parse_args(argv)
    if args.analyse:
        units = [json.loads(line) for line in args.analyse.read_text().splitlines() if line]
        feats: dict[str, tuple[str, ...]] = {
            "mean+min+n": ("mean_logit", "min_logit", "log_statements")
        }
        tmp = args.analyse.with_suffix(".both.jsonl")
        tmp.write_text("".join(json.dumps(with_together(u)) + "\n" for u in units))
        for name, path in (("pp", args.analyse), ("pp+all", tmp)):
            print(f"## {name}\n")
            print(render(analyse(path, feats)))
            print()
        tmp.unlink()
        return 0
    if not args.units or not args.out:
        parser.error("--units and --out are needed to collect")
    collect(args.units, args.out, args.model, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
