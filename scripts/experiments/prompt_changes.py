#!/usr/bin/env python3
"""Which dev and plain rows a change of prompts touches: every labelled row's prompts, built
by this checkout's judges and by another checkout's (a `git worktree` of the old
revision), compared. No model is loaded. With --fields, also every field the judges
compute without the model (answer recall, lexical support, the numbers and names not
found, and P with every verdict at P(yes) 0.5): a lexical change that moves no dev field
and no dev prompt moves no dev figure.

A change that touches no dev row leaves every dev-source and leave-one-source-out figure
as it was; only the rows listed need judging again. Prints each changed row with the first
fenced part that differs (statement or expected answer), then the counts.

    git worktree add /tmp/old REV
    .venv/bin/python scripts/experiments/prompt_changes.py --old /tmp/old \
        --judges groundedness,correctness,context_sufficiency [--fields]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "benchmarks"

# Run in a checkout (argv[1]) with its own localjudge on the path: print {key: [prompt]}.
_DUMP = """
import json, sys
from localjudge.engine.base import Verdict
from localjudge.judges import JudgeOptions, select
from localjudge.records import validate_row
judges = select(sys.argv[2].split(","))
fields = sys.argv[3] == "fields"
even = {"yes": 0.5, "no": 0.5}
out = {}
for path in sys.argv[4:]:
    for i, line in enumerate(open(path, encoding="utf-8")):
        try:
            obj = json.loads(line)
            row = {k: v for k, v in obj.items() if k not in ("labels", "source")}
            record = validate_row(i + 1, row)
        except Exception:
            continue  # the example's deliberately broken line
        for judge in judges:
            if judge.name in (obj.get("labels") or {}):
                requests = judge.requests(record, JudgeOptions())
                out[f"{path}:{i + 1}:{judge.name}"] = [repr(r.prompt) for r in requests]
                if fields:
                    verdicts = [Verdict("yes", 0.5, even) for _ in requests]
                    got = judge.fields(record, verdicts, JudgeOptions())
                    out[f"{path}:{i + 1}:{judge.name}:fields"] = [
                        f"{k.rsplit('/', 1)[-1]}={v!r}" for k, v in sorted(got.items())
                    ]
json.dump(out, sys.stdout)
"""


def prompts(
    checkout: Path, judges: str, files: list[str], fields: bool = False
) -> dict[str, list[str]]:
    """Every labelled row's prompts as `checkout`'s code builds them (run from a neutral
    directory, so that only that checkout's package is imported), and with `fields` its
    fields computed with every verdict at P(yes) 0.5."""
    script = f"import sys; sys.path.insert(0, {str(checkout)!r})\n" + _DUMP
    done = subprocess.run(
        [sys.executable, "-c", script, str(checkout), judges, "fields" if fields else "-", *files],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


def fenced(prompt: str) -> list[tuple[str, str]]:
    return re.findall(r"<(statement|expected)>\\n(.*?)\\n</", prompt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="checkout of the old code")
    parser.add_argument("--judges", default="groundedness,correctness,context_sufficiency")
    parser.add_argument(
        "--fields", action="store_true", help="also compare the fields computed without the model"
    )
    args = parser.parse_args()
    files = sorted(str(p) for p in SHARED.glob("*.jsonl"))
    files += sorted(str(p) for p in (REPO / "tests" / "data").glob("plain*/*.jsonl"))
    files.append(str(REPO / "examples" / "rag_eval.jsonl"))
    old = prompts(args.old.resolve(), args.judges, files, args.fields)
    new = prompts(REPO, args.judges, files, args.fields)
    changed = {"dev": 0, "other": 0, "dev fields": 0, "other fields": 0}
    for key in sorted(old.keys() & new.keys()):
        if old[key] == new[key]:
            continue
        what = "dev" if key.startswith(str(SHARED)) else "other"
        name = key.replace(str(REPO.parent) + "/", "")
        if key.endswith(":fields"):
            before_f = dict(f.split("=", 1) for f in old[key])
            after_f = dict(f.split("=", 1) for f in new[key])
            moved = [k for k in before_f.keys() & after_f.keys() if before_f[k] != after_f[k]]
            if moved:  # a field only one checkout computes is not a change of a row
                changed[f"{what} fields"] += 1
                print(name, "; ".join(f"{k}: {before_f[k]} -> {after_f[k]}" for k in moved))
            continue
        changed[what] += 1
        before, after = next((a, b) for a, b in zip(old[key], new[key], strict=False) if a != b)
        print(name, fenced(before), "->", fenced(after))
    compared = len({k for k in old.keys() & new.keys() if not k.endswith(":fields")})
    print(
        f"{compared} rows x judges compared; prompts changed: "
        f"{changed['dev']} dev, {changed['other']} plain or example"
        + (
            f"; fields changed: {changed['dev fields']} dev, {changed['other fields']} "
            "plain or example"
            if args.fields
            else ""
        )
    )


if __name__ == "__main__":
    main()
