"""Memory and speed of `localjudge eval` at many rows, with a model-free judge.

Generates a synthetic JSONL file of N small rows (a request, a response, three retrieved
chunks with doc_uris, two expected doc_uris: about 1 KB a row), runs

    localjudge eval FILE --judges document_recall --out DIR

in a subprocess for each N, and reports its wall time, rows per second and peak RSS
(the child's ru_maxrss). A 1-row run first gives the fixed cost (interpreter, llama.cpp,
the model as loaded): the growth over it is what the rows cost.

    .venv/bin/python scripts/stream_bench.py --rows 10000,100000,1000000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
WORDS = [
    *("policy", "refund", "order", "account", "shipping", "invoice", "warranty", "delivery"),
    *("return", "customer", "payment", "support", "contract", "renewal", "discount"),
    *("product", "service", "region", "store", "price"),
]


def synthetic_row(i: int, rng: random.Random) -> dict[str, Any]:
    """One small row with retrieval ground truth, about 1 KB as JSON."""

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    docs = [f"doc://kb/{rng.randrange(1000)}" for _ in range(3)]
    return {
        "request_id": f"r{i}",
        "request": text(12) + "?",
        "response": text(30) + ".",
        "retrieved_context": [{"content": text(25), "doc_uri": d} for d in docs],
        "expected_retrieved_context": [{"doc_uri": d} for d in (docs[0], f"doc://kb/{i % 997}")],
    }


def write_rows(path: Path, n: int, seed: int = 0) -> int:
    """Write n synthetic rows to `path`; return the file's size in bytes."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps(synthetic_row(i, rng)) + "\n")
    return path.stat().st_size


def measure(data: Path, out: Path, model: str | None) -> dict[str, Any]:
    """Run eval on `data`; its wall time, exit code and peak RSS (MiB)."""
    cmd = [sys.executable, "-m", "localjudge.cli", "eval", str(data)]
    cmd += ["--judges", "document_recall", "--out", str(out), "--overwrite", "--format", "json"]
    if model:
        cmd += ["--model", model]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    # wait4 rather than Popen.wait: it reports the child's own peak RSS (KiB on Linux).
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"eval failed ({code}): {stderr.decode()[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "wall_seconds": round(wall, 2),
        "judge_seconds": summary["timings"]["judge_seconds"],
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "rows_read": summary["rows_read"],
    }


def cpu_model() -> str:
    """The CPU's model name (Linux), for the record beside the figures."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="10000,100000,1000000", help="comma-separated N")
    parser.add_argument("--model", help="model id or path (default: the default model)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.rows.split(",")]
    work = Path(tempfile.mkdtemp(prefix="localjudge-stream-bench-"))
    report: dict[str, Any] = {"runs": []}
    try:
        for n in [1, *sizes]:
            data = work / f"rows-{n}.jsonl"
            size = write_rows(data, n)
            run = {"rows": n, "file_mib": round(size / 2**20, 1)}
            run |= measure(data, work / "out", args.model)
            run["rows_per_second"] = round(n / run["wall_seconds"], 1)
            report["runs"].append(run)
            data.unlink()
            print(json.dumps(run), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    first = report["runs"][0]
    for run in report["runs"][1:]:
        run["rss_over_1_row_mib"] = round(run["peak_rss_mib"] - first["peak_rss_mib"], 1)
        # Rows per second beyond the fixed cost (start-up, model load) of the 1-row run.
        extra = run["wall_seconds"] - first["wall_seconds"]
        run["marginal_rows_per_second"] = round((run["rows"] - 1) / extra) if extra > 0 else None
    report["cpu"] = cpu_model()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("rows  file MiB  wall s  rows/s  marginal rows/s  peak RSS MiB  over 1 row")
        for r in report["runs"]:
            print(
                f"{r['rows']}  {r['file_mib']}  {r['wall_seconds']}  {r['rows_per_second']}  "
                f"{r.get('marginal_rows_per_second', '-')}  {r['peak_rss_mib']}  "
                f"{r.get('rss_over_1_row_mib', '-')}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
