#!/usr/bin/env python3
"""What `--rationale failing` saves: the same rows judged with no rationale, with a
rationale only for failing verdicts, and with a rationale for every verdict, on one loaded
model, one after the other; the verdicts are checked identical in the three modes.

Two workloads: the shipped example (examples/rag_eval.jsonl) and the first ROWS rows of the
speed benchmark (scripts/bench.py's workload: 3-5 chunks a row, every judge applies).

    flock /tmp/cpu.lock .venv/bin/python scripts/rationale_cost.py --bench-rows 5 \
        --json docs/runs/rationale-cost.json
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench import workload  # noqa: E402

from localjudge import api, evaluation  # noqa: E402
from localjudge.engine.llama import LlamaBackend, physical_cores  # noqa: E402
from localjudge.judges import select  # noqa: E402
from localjudge.models import ResolvedModel, resolve_for_eval  # noqa: E402
from localjudge.records import BadRecord, Record, read_records  # noqa: E402

MODES: tuple[evaluation.Rationale, ...] = (False, "failing", True)


def _verdicts(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in r.items() if not k.endswith(("/rationale", "/rationales"))} for r in rows
    ]


def measure(
    name: str,
    rows: Sequence[Record | BadRecord],
    backend: LlamaBackend,
    thresholds: dict[str, float],
    resolved: ResolvedModel,
    save: Path | None = None,
) -> dict[str, Any]:
    judges = select(None)
    out: dict[str, Any] = {"workload": name, "rows": len(rows), "modes": {}}
    reference: list[dict[str, Any]] | None = None
    for mode in MODES:
        before = backend.stats.as_dict()
        started = time.perf_counter()
        run = evaluation.judge_rows(rows, backend, judges, thresholds, mode, True)
        seconds = time.perf_counter() - started
        after = backend.stats.as_dict()
        verdicts = _verdicts(run.results)
        if save is not None:  # a run directory `localjudge report` reads
            manifest = evaluation.run_manifest(
                resolved,
                judges,
                thresholds,
                mode,
                True,
                0,
                backend.threads,
                backend.n_ctx,
                backend.batch_size,
                evaluation.input_info(name, rows),
            )
            summary = {**api.summarise(run.results, judges), "manifest": manifest}
            result = evaluation.Result(run.results, summary, manifest)
            result.save(save / f"{name}-{str(mode).lower()}")
        if reference is None:
            reference = verdicts
        rationales = sum(
            (1 if isinstance(v, str) else sum(1 for x in v if x) if isinstance(v, list) else 0)
            for r in run.results
            for k, v in r.items()
            if k.endswith(("/rationale", "/rationales")) and v
        )
        out["modes"][str(mode).lower()] = {
            "seconds": round(seconds, 2),
            "rationales": rationales,
            "same_verdicts_as_no_rationale": verdicts == reference,
            **{k: after[k] - before[k] for k in after},
        }
        print(f"{name} {mode}: {seconds:.1f} s", file=sys.stderr)
    modes = out["modes"]
    out["failing_saves_vs_all"] = round(
        1 - modes["failing"]["seconds"] / modes["true"]["seconds"], 3
    )
    return out


def cpu_model() -> str:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return platform.processor()
    for line in text.splitlines():
        if line.startswith("Model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model id or path (default: the default)")
    parser.add_argument("--bench-rows", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--save-runs", type=Path, help="save each run as a run directory here")
    args = parser.parse_args(argv)
    resolved = resolve_for_eval(args.model)
    entry = resolved.entry
    thresholds = dict(entry.thresholds) if entry else {}
    backend = evaluation.load_backend(
        resolved,
        ctx=4096,
        threads=physical_cores(),
        batch_size=512,
        seed=0,
        prompt_cache=True,
        verbose=False,
    )
    try:
        results = [
            measure(
                "example",
                read_records(REPO / "examples" / "rag_eval.jsonl").rows,
                backend,
                thresholds,
                resolved,
                args.save_runs,
            ),
            measure(
                f"bench-{args.bench_rows}",
                list(workload(args.bench_rows)),
                backend,
                thresholds,
                resolved,
                args.save_runs,
            ),
        ]
    finally:
        backend.close()
    report = {
        "model": resolved.id,
        "threads": backend.threads,
        "cpu": cpu_model(),
        "command": "scripts/rationale_cost.py " + " ".join(argv or sys.argv[1:]),
        "results": results,
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
