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

With --overhead N it measures instead what Ray itself costs, without a model: N
model-free rows judged in-process and through 2 workers on a local Ray (per row), and the
start of Ray and of the workers (per run).
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
from raycluster import CLUSTER_ENV, REPO, ray_cluster  # noqa: E402
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


def no_model(path: Path) -> Any:
    """A backend that is never asked (document_recall needs no verdict)."""
    from localjudge.engine.fake import FakeBackend

    return FakeBackend()


def overhead(n: int) -> dict[str, Any]:
    """Ray's own cost, without a model: n model-free rows (document_recall) judged locally
    and through 2 workers on a local Ray of 2 CPUs (ray.init), and the workers' start."""
    import ray
    from stream_bench import synthetic_row

    from localjudge import api, cluster
    from localjudge.engine.base import BackendStats
    from localjudge.judges import JudgeOptions, select
    from localjudge.records import validate_row

    rng = __import__("random").Random(0)
    rows = [validate_row(i + 1, synthetic_row(i, rng)) for i in range(n)]
    judges = select(["document_recall"])
    started = time.perf_counter()
    local = list(api.iter_results(rows, no_model(Path()), judges, JudgeOptions()))
    local_s = time.perf_counter() - started
    stand_in = Path(tempfile.mkdtemp()) / "stand-in.gguf"
    stand_in.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + bytes(16))
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        init_s = time.perf_counter() - started
        model = cluster.ModelFile(str(stand_in), cluster.sha256_file(stand_in), stand_in)
        spec = cluster.WorkerSpec(model, no_model, judges, JudgeOptions())
        info = cluster.ClusterInfo(address="local", workers=2)
        started = time.perf_counter()
        workers = cluster.start_workers(spec, 2, 1, ship=False, info=info)
        start_s = time.perf_counter() - started
        started = time.perf_counter()
        block = cluster.block_rows(n, 2)
        remote = list(cluster.iter_results(rows, workers, block, BackendStats()))
        ray_s = time.perf_counter() - started
        cluster.stop_workers(workers)
    finally:
        ray.shutdown()
    assert remote == local
    return {
        "rows": n,
        "block_rows": block,
        "local_rows_per_second": round(n / local_s),
        "ray_rows_per_second": round(n / ray_s),
        "ray_overhead_ms_per_row": round((ray_s - local_s / 2) / n * 1000, 3),
        "local_ray_init_seconds": round(init_s, 2),
        "worker_start_seconds": round(start_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument(
        "--overhead",
        type=int,
        metavar="N",
        help="instead: Ray's own cost per row and per run on N model-free rows (no model)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if args.overhead:
        print(json.dumps(overhead(args.overhead), indent=2))
        return 0
    work = Path(tempfile.mkdtemp(prefix="localjudge-ray-bench-"))
    data = work / "rows.jsonl"
    data.write_text("".join(json.dumps(obj) + "\n" for _, obj in workload_rows(args.rows)))
    env = {**os.environ, **CLUSTER_ENV}
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
