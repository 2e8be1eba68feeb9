#!/usr/bin/env python3
"""Which labelled rows a lexical change moves, at the model's own P: correctness and
context_sufficiency rows whose units were collected (the model's P(yes) to the shipped
question, in `docs/runs/*-units*.jsonl`), judged by this checkout's judges and by another
checkout's (a `git worktree` of the old revision) with that P. No model is loaded.

prompt_changes.py --fields compares fields with every verdict at P(yes) 0.5; this compares
the row's P at the P the model gave, so it names the rows whose rating flips at the
default model's threshold. Only valid while the change leaves the rows' prompts as they
were (prompt_changes.py says which do not).

    git worktree add /tmp/old REV
    .venv/bin/python scripts/experiments/units_diff.py --old /tmp/old
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "docs" / "runs"
# The units of each judge (a later file's row replaces an earlier's) and the default
# model's threshold (models/catalogue.toml).
UNITS = {
    "context_sufficiency": (
        [
            "issue13-r9-sufficiency-units.jsonl",
            "issue13-r12-sufficiency-units.jsonl",
            "issue13-r12-plain-polar-units.jsonl",
            "issue13-r15-sufficiency-units-16-18.jsonl",
        ],
        0.7158,
    ),
    "correctness": (
        ["issue13-r13-correctness-units.jsonl", "issue13-r15-correctness-units-17-19.jsonl"],
        0.5746,
    ),
}

# Run in a checkout (argv[1]) with its own localjudge: print {id: [label, P, expected]}.
_JUDGE = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import localjudge
assert localjudge.__file__.startswith(sys.argv[1]), localjudge.__file__
from localjudge.engine.base import Verdict
from localjudge.judges import JudgeOptions, select
from localjudge.records import validate_row
(judge,) = select([sys.argv[2]])
shared = Path(sys.argv[3])
out = {}
for f in sys.argv[4:]:
    for line in open(f, encoding="utf-8"):
        u = json.loads(line)
        path, n = u["id"].rsplit(":", 1)
        top = path.split("/")[0]
        rows = (shared / path.split("/", 1)[1] if top == "benchmarks" else
                Path(sys.argv[1]) / "tests" / "data" / path)
        obj = json.loads(rows.read_text(encoding="utf-8").splitlines()[int(n)])
        row = {k: v for k, v in obj.items() if k not in ("labels", "source")}
        record = validate_row(int(n) + 1, row)
        p = u["shipped"]
        verdict = Verdict("yes" if p >= 0.5 else "no", p, {"yes": p, "no": 1 - p})
        got = judge.fields(record, [verdict], JudgeOptions())
        prob = next(v for k, v in got.items() if k.endswith("/probability"))
        rating = next(v for k, v in got.items() if k.endswith("/rating"))
        p_yes = prob if rating == "yes" else 1 - prob
        out[u["id"]] = [u["label"], p_yes, (record.expected_text() or "")[:80]]
json.dump(out, sys.stdout)
"""


def judged(root: Path, judge: str, files: list[Path]) -> dict[str, list[Any]]:
    """{unit id: [label, P(yes), expected answer]} by the checkout at `root`."""
    args = [
        sys.executable,
        "-c",
        _JUDGE,
        str(root),
        judge,
        str(REPO.parent / "shared" / "benchmarks"),
    ]
    done = subprocess.run(
        [*args, *map(str, files)], capture_output=True, text=True, cwd="/", check=False
    )
    if done.returncode:
        sys.exit(done.stderr)
    result: dict[str, list[Any]] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="checkout of the old code")
    args = parser.parse_args()
    for judge, (names, threshold) in UNITS.items():
        files = [RUNS / name for name in names]
        old, new = judged(args.old.resolve(), judge, files), judged(REPO, judge, files)
        moved = flips = 0
        for uid, (label, before, expected) in old.items():
            after = new[uid][1]
            if abs(after - before) < 1e-9:
                continue
            moved += 1
            flip = (before >= threshold) != (after >= threshold)
            flips += flip
            mark = " FLIP" if flip else ""
            print(f"{judge} {uid} label={label} {before:.3f} -> {after:.3f}{mark} | {expected}")
        print(f"{judge}: {len(old)} units, {moved} move, {flips} flip at {threshold}")


if __name__ == "__main__":
    main()
