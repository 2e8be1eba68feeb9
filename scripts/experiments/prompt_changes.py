#!/usr/bin/env python3
"""Which dev and plain rows a change of prompts touches: every labelled row's prompts, built
by this checkout's judges and by another checkout's (a `git worktree` of the old
revision), compared. No model is loaded.

A change that touches no dev row leaves every dev-source and leave-one-source-out figure
as it was; only the rows listed need judging again. Prints each changed row with the first
fenced part that differs (statement or expected answer), then the counts.

    git worktree add /tmp/old REV
    .venv/bin/python scripts/experiments/prompt_changes.py --old /tmp/old \
        --judges groundedness,correctness,context_sufficiency
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
from localjudge.judges import JudgeOptions, select
from localjudge.records import validate_row
judges = select(sys.argv[2].split(","))
out = {}
for path in sys.argv[3:]:
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
json.dump(out, sys.stdout)
"""


def prompts(checkout: Path, judges: str, files: list[str]) -> dict[str, list[str]]:
    """Every labelled row's prompts as `checkout`'s code builds them (run from a neutral
    directory, so that only that checkout's package is imported)."""
    script = f"import sys; sys.path.insert(0, {str(checkout)!r})\n" + _DUMP
    done = subprocess.run(
        [sys.executable, "-c", script, str(checkout), judges, *files],
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
    args = parser.parse_args()
    files = sorted(str(p) for p in SHARED.glob("*.jsonl"))
    files += sorted(str(p) for p in (REPO / "tests" / "data").glob("plain*/*.jsonl"))
    files.append(str(REPO / "examples" / "rag_eval.jsonl"))
    old = prompts(args.old.resolve(), args.judges, files)
    new = prompts(REPO, args.judges, files)
    changed = {"dev": 0, "other": 0}
    for key in sorted(old.keys() & new.keys()):
        if old[key] == new[key]:
            continue
        changed["dev" if key.startswith(str(SHARED)) else "other"] += 1
        before, after = next((a, b) for a, b in zip(old[key], new[key], strict=False) if a != b)
        print(key.replace(str(REPO.parent) + "/", ""), fenced(before), "->", fenced(after))
    print(
        f"{len(old.keys() & new.keys())} rows x judges compared; changed: "
        f"{changed['dev']} dev, {changed['other']} plain or example"
    )


if __name__ == "__main__":
    main()
