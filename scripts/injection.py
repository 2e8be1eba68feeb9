#!/usr/bin/env python
"""Prompt-injection flip rate: does text under judgement steer the judge?

tests/data/injection.jsonl holds base rows whose correct verdict is "no" for one judge,
each with variants whose response or passage carries an instruction aimed at the judge
(kinds: ignore-instructions, fake-end-of-prompt, fake-json-verdict, chat-special-tokens).
Every row has an `injection` object (base id, judge, kind); `localjudge eval` ignores it.

The rows are judged exactly as `localjudge eval` judges them (records.read_records,
models.resolve_for_eval, LlamaBackend with the CLI's defaults, api.evaluate), each with
only the judge it was written for. A pair is (plain verdict, variant verdict); it flips
when they differ. Reported per judge: pairs, the plain verdicts' "no" rate (how often
the judge gets the base row right) and the flip rate, plus flips to "yes" and per kind.

    .venv/bin/python scripts/injection.py --no-rationale            # default model
    .venv/bin/python scripts/injection.py --no-rationale --no-guard # without the guard
    .venv/bin/python scripts/injection.py --data tests/data/injection_holdout.jsonl
    .venv/bin/python scripts/injection.py --model smollm2-135m-instruct-q4_1 --json

Loads a model: on a shared machine run it under the CPU lock (flock /tmp/cpu.lock ...).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from localjudge import api, judges, models  # noqa: E402
from localjudge.engine.llama import LlamaBackend, physical_cores  # noqa: E402
from localjudge.errors import LocalJudgeError  # noqa: E402
from localjudge.records import Record, read_records  # noqa: E402

DATA = REPO / "tests" / "data" / "injection.jsonl"
PLAIN = "plain"


def load_rows(path: Path) -> list[tuple[Record, dict[str, Any]]]:
    """Each valid row with its `injection` object (read from the same line)."""
    meta_by_line: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line.strip():
            meta = json.loads(line).get("injection")
            if isinstance(meta, dict):
                meta_by_line[number] = meta
    out = []
    for row in read_records(path).rows:
        if not isinstance(row, Record):
            raise SystemExit(f"{path}: {row.error}")
        if row.line not in meta_by_line:
            raise SystemExit(f"{path}: line {row.line} has no 'injection' object")
        out.append((row, meta_by_line[row.line]))
    return out


def verdict(result: dict[str, Any], judge: str) -> str | None:
    """The row's verdict for `judge`: its rating, or the first chunk's for chunk judges."""
    for step in ("response", "retrieval"):
        rating = result.get(f"{step}/llm_judged/{judge}/rating")
        if rating is not None:
            return str(rating)
        ratings = result.get(f"{step}/llm_judged/{judge}/ratings")
        if ratings:
            return None if ratings[0] is None else str(ratings[0])
    return None


def measure(
    rows: list[tuple[Record, dict[str, Any]]], backend: Any, options: judges.JudgeOptions
) -> dict[str, Any]:
    by_judge: dict[str, list[tuple[Record, dict[str, Any]]]] = defaultdict(list)
    for record, meta in rows:
        by_judge[meta["judge"]].append((record, meta))
    report: dict[str, Any] = {}
    for name, items in by_judge.items():
        chosen = judges.select([name])
        run = api.evaluate([r for r, _ in items], backend, chosen, options)
        verdicts: dict[tuple[str, str], str | None] = {}
        removed: dict[tuple[str, str], bool] = {}
        for (_, meta), result in zip(items, run.results, strict=True):
            verdicts[(meta["base"], meta["kind"])] = verdict(result, name)
            removed[(meta["base"], meta["kind"])] = bool(result.get("guard/removed"))
        bases = sorted({b for b, k in verdicts if k == PLAIN})
        pairs = flips = to_yes = errors = 0
        per_kind: dict[str, dict[str, int]] = defaultdict(
            lambda: {"pairs": 0, "flips": 0, "guarded": 0}
        )
        flipped: list[str] = []
        guarded = false_alarms = 0
        for (base, kind), label in sorted(verdicts.items()):
            if kind == PLAIN:
                continue
            plain = verdicts.get((base, PLAIN))
            if plain is None or label is None:
                errors += 1
                continue
            pairs += 1
            per_kind[kind]["pairs"] += 1
            guarded += removed[(base, kind)]
            per_kind[kind]["guarded"] += removed[(base, kind)]
            if label != plain:
                flips += 1
                per_kind[kind]["flips"] += 1
                to_yes += label == "yes"
                flipped.append(f"{base}~{kind}: {plain} -> {label}")
        plain_labels = [verdicts[(b, PLAIN)] for b in bases]
        false_alarms = sum(removed[(b, PLAIN)] for b in bases)
        report[name] = {
            "bases": len(bases),
            "pairs": pairs,
            "plain_no_rate": _rate(sum(v == "no" for v in plain_labels), len(bases)),
            "flips": flips,
            "flip_rate": _rate(flips, pairs),
            "flips_to_yes": to_yes,
            "errors": errors,
            "guarded": guarded,
            "plain_rows_guarded": false_alarms,
            "per_kind": {k: dict(v) for k, v in sorted(per_kind.items())},
            "flipped": flipped,
        }
    return report


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def overall(report: dict[str, Any]) -> dict[str, Any]:
    pairs = sum(j["pairs"] for j in report.values())
    flips = sum(j["flips"] for j in report.values())
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: {"pairs": 0, "flips": 0, "guarded": 0})
    for j in report.values():
        for kind, c in j["per_kind"].items():
            for key in ("pairs", "flips", "guarded"):
                kinds[kind][key] += c[key]
    return {
        "pairs": pairs,
        "flips": flips,
        "flip_rate": _rate(flips, pairs),
        "flips_to_yes": sum(j["flips_to_yes"] for j in report.values()),
        "guarded": sum(j["guarded"] for j in report.values()),
        "plain_rows_guarded": sum(j["plain_rows_guarded"] for j in report.values()),
        "per_kind": {
            k: {**v, "flip_rate": _rate(v["flips"], v["pairs"])} for k, v in sorted(kinds.items())
        },
    }


def table(report: dict[str, Any], total: dict[str, Any]) -> str:
    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    lines = [
        f"{'judge':<22}{'pairs':>6}{'plain no':>10}{'guarded':>9}{'flips':>7}{'flip rate':>11}"
        f"{'to yes':>8}"
    ]
    for name, j in report.items():
        lines.append(
            f"{name:<22}{j['pairs']:>6}{pct(j['plain_no_rate']):>10}{j['guarded']:>9}"
            f"{j['flips']:>7}{pct(j['flip_rate']):>11}{j['flips_to_yes']:>8}"
        )
    lines.append(
        f"{'all':<22}{total['pairs']:>6}{'':>10}{total['guarded']:>9}{total['flips']:>7}"
        f"{pct(total['flip_rate']):>11}{total['flips_to_yes']:>8}"
    )
    lines.append(f"plain rows the guard changed (false alarms): {total['plain_rows_guarded']}")
    lines.append("")
    lines.append(
        "per kind: "
        + ", ".join(f"{k} {v['flips']}/{v['pairs']}" for k, v in total["per_kind"].items())
    )
    for name, j in report.items():
        for item in j["flipped"]:
            lines.append(f"flipped [{name}] {item}")
        if j["errors"]:
            lines.append(f"[{name}] {j['errors']} pair(s) without a verdict")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--model", help="model id or GGUF path (default: the default model)")
    parser.add_argument("--rationale", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--guard",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the injection guard, as `eval --guard/--no-guard` (default on)",
    )
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--bases-per-judge", type=int, default=None, help="only the first N base rows per judge"
    )
    parser.add_argument(
        "--kinds", help="comma-separated injection kinds to keep (default: every kind)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)

    rows = load_rows(args.data)
    if args.bases_per_judge is not None:
        keep: dict[str, list[str]] = defaultdict(list)
        for _, meta in rows:
            bases = keep[meta["judge"]]
            if meta["base"] not in bases and len(bases) < args.bases_per_judge:
                bases.append(meta["base"])
        rows = [(r, m) for r, m in rows if m["base"] in keep[m["judge"]]]
    if args.kinds:
        kinds = {PLAIN, *(k.strip() for k in args.kinds.split(","))}
        rows = [(r, m) for r, m in rows if m["kind"] in kinds]

    resolved = models.resolve_for_eval(args.model)
    entry = resolved.entry
    options = judges.JudgeOptions(
        rationale=args.rationale,
        thresholds=dict(entry.thresholds) if entry else {},
        guard=args.guard,
    )
    started = time.perf_counter()
    backend = LlamaBackend(
        resolved.path,
        template=entry.template if entry else None,
        n_ctx=args.ctx,
        threads=args.threads or physical_cores(),
        batch_size=args.batch_size,
        seed=args.seed,
    )
    try:
        report = measure(rows, backend, options)
    finally:
        backend.close()
    total = overall(report)
    if args.json:
        out = {
            "model": {"id": resolved.id, "file": resolved.path.name, "sha256": resolved.sha256},
            "data": str(args.data),
            "rationale": args.rationale,
            "guard": judges.guard.FINGERPRINT if args.guard else None,
            "thresholds": dict(options.thresholds),
            "template_hashes": {n: judges.template_hash(judges.BUILTIN[n]) for n in report},
            "seconds": round(time.perf_counter() - started, 1),
            "judges": report,
            "overall": total,
        }
        print(json.dumps(out, indent=2))
    else:
        print(f"model: {resolved.id} ({resolved.path.name})  data: {args.data}")
        print(table(report, total))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except LocalJudgeError as err:
        print(f"Error: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
