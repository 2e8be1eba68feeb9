"""Throughput of `eval` in one process and on a local Ray cluster, on the same rows.

Runs `localjudge eval` on the first N rows of scripts/bench.py's workload (every judge
applies) with the default model, in three ways:

  local      one process, --threads 2
  ray 1x2    --ray, 1 worker x 2 threads
  ray 2x1    --ray, 2 workers x 1 thread

on one Ray node of 2 CPUs started for the purpose (its start-up time is reported), and
reports each run's wall time, its model-load (for Ray: connect, start the workers, load
the model on each) and judging time, rows per second, and whether its results.jsonl is
byte-identical to the local run's. Run it alone (under flock /tmp/cpu.lock):

    flock /tmp/cpu.lock .venv/bin/python scripts/ray_bench.py --rows 8 --json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import workload_rows  # noqa: E402
from raycluster import REPO, ray_cluster  # noqa: E402
from stream_bench import cpu_model  # noqa: E402

CONFIGS: list[tuple[str, list[str]]] = [
    ("local 1 process x 2 threads", ["--threads", "2"]),
    ("ray 1 worker x 2 threads", ["--threads", "2", "--ray", "--workers", "1"]),
    ("ray 2 workers x 1 thread", ["--threads", "1", "--ray", "--workers", "2"]),
]


def run_eval(data: Path, out: Path, extra: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One `eval` run in a subprocess: its timings and results file."""
    cmd = [sys.executable, "-m", "localjudge.cli", "eval", str(data), "--no-rationale"]
    cmd += ["--out", str(out), "--format", "json", *extra]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"eval {' '.join(extra)} failed ({proc.returncode}): {proc.stderr}")
    summary = json.loads((out / "summary.json").read_text())
    timings = summary["timings"]
    rows = summary["rows_read"]
    return {
        "wall_seconds": round(wall, 2),
        "load_seconds": timings["model_load_seconds"],
        "judge_seconds": timings["judge_seconds"],
        "rows_per_second": round(rows / timings["judge_seconds"], 4),
        "verdicts": timings["verdicts"],
        "cluster": summary.get("cluster"),
        "results": (out / "results.jsonl").read_bytes(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="localjudge-ray-bench-"))
    data = work / "rows.jsonl"
    data.write_text("".join(json.dumps(obj) + "\n" for _, obj in workload_rows(args.rows)))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    report: dict[str, Any] = {"rows": args.rows, "cpu": cpu_model(), "runs": {}}
    with ray_cluster(nodes=1, cpus=2) as cluster:
        report["cluster_start_seconds"] = round(cluster.start_seconds, 2)
        env["RAY_ADDRESS"] = cluster.address
        for i, (name, extra) in enumerate(CONFIGS):
            run = run_eval(data, work / f"out{i}", extra, env)
            print(f"{name}: {run['rows_per_second']} rows/s", file=sys.stderr)
            report["runs"][name] = run
    reference = report["runs"][CONFIGS[0][0]]["results"]
    for run in report["runs"].values():
        run["same_bytes_as_local"] = run.pop("results") == reference
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"cluster start-up: {report['cluster_start_seconds']} s ({report['cpu']})")
        for name, run in report["runs"].items():
            print(
                f"{name}: wall {run['wall_seconds']} s, load {run['load_seconds']} s, judge "
                f"{run['judge_seconds']} s, {run['rows_per_second']} rows/s, "
                f"same bytes: {run['same_bytes_as_local']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
