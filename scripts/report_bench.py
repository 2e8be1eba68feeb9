#!/usr/bin/env python3
"""How fast the HTML report of a large run opens: a run of ROWS rows (the shipped example's
valid rows repeated with fresh request_ids, every judge, rationales on) is judged on the
fake backend (answers hashed from the prompt: the page does not care who judged), its page
written by `localjudge report`, and opened LOADS times in Debian's headless Chromium from a
file:// path with the network cut (scripts/browser.py). Reported: the time to write the
page, its size, the time from navigation to the load event (the page parsed, laid out and
its script run), and in-page times of the failing-rows filter and of a sort by probability.

    .venv/bin/python scripts/report_bench.py --rows 1000 --json docs/runs/report-speed.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import browser  # noqa: E402

import localjudge  # noqa: E402
from localjudge import report, runs  # noqa: E402
from localjudge.engine.base import VerdictRequest  # noqa: E402
from localjudge.engine.fake import FakeBackend  # noqa: E402

Answer = tuple[str, float]

# In-page: click the failing-rows filter, then sort least sure first; time each.
INTERACT = """(() => {
  const t0 = performance.now();
  document.getElementById('failing-only').click();
  const t1 = performance.now();
  const s = document.getElementById('sort-by'); s.value = '_least';
  s.dispatchEvent(new Event('change'));
  const t2 = performance.now();
  return {filter_ms: t1 - t0, sort_ms: t2 - t1,
          shown: document.getElementById('shown-count').textContent};
})()"""


def hashed_rule(seed: str) -> Callable[[VerdictRequest], Answer]:
    """A label and a probability in [0.5, 1) from the SHA-256 of seed + prompt."""

    def answer(request: VerdictRequest) -> Answer:
        h = hashlib.sha256((seed + request.prompt.user_text()).encode("utf-8")).digest()
        label = request.labels[0] if h[1] % 3 else request.labels[1]
        return label, 0.5 + h[0] / 520

    return answer


def rows(n: int) -> list[dict[str, Any]]:
    """n input rows: the example's valid rows, repeated with fresh request_ids."""
    base = []
    for line in (REPO / "examples" / "rag_eval.jsonl").read_text().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("request"), str | dict):
            base.append(obj)
    return [{**base[i % len(base)], "request_id": f"row-{i + 1}"} for i in range(n)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", type=Path, help="keep the run directory here")
    args = parser.parse_args(argv)
    if args.keep:
        return bench(args, args.keep, argv)
    with tempfile.TemporaryDirectory(prefix="localjudge-report-bench-") as tmp:
        return bench(args, Path(tmp), argv)


def bench(args: argparse.Namespace, folder: Path, argv: Sequence[str] | None) -> int:
    """Judge, write and open the report in `folder` (see the module docstring)."""
    result = localjudge.evaluate(
        rows(args.rows), rationale=True, backend=FakeBackend(rule=hashed_rule("bench"))
    )
    result.save(folder)
    started = time.perf_counter()
    page_path = report.write_report(runs.load_run(folder), folder / "report.html")
    write_seconds = time.perf_counter() - started
    loads = []
    with browser.Browser() as b:
        for _ in range(args.loads):
            page = b.open(page_path)
            if page.errors:
                raise SystemExit(f"console errors: {page.errors}")
            ready = page.evaluate("document.body.getAttribute('data-ready')")
            nav = page.evaluate(
                "(() => { const e = performance.getEntriesByType('navigation')[0];"
                " return {dom_content_loaded_ms: e.domContentLoadedEventEnd,"
                " load_ms: e.loadEventEnd}; })()"
            )
            loads.append(
                {
                    "load_seconds": round(page.load_seconds, 3),
                    "ready": ready == "1",
                    **nav,
                    **page.evaluate(INTERACT),
                }
            )
    figures = {
        "rows": args.rows,
        "html_bytes": page_path.stat().st_size,
        "write_seconds": round(write_seconds, 2),
        "median_load_seconds": round(statistics.median(x["load_seconds"] for x in loads), 3),
        "loads": loads,
        "cpu": _cpu(),
        "chromium": _chromium(),
        "command": "scripts/report_bench.py " + " ".join(argv or sys.argv[1:]),
    }
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


def _cpu() -> str:
    import subprocess

    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    return next(
        (ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")),
        "unknown",
    )


def _chromium() -> str:
    import subprocess

    out = subprocess.run(
        [browser.CHROMIUM, "--version"], capture_output=True, text=True, check=False
    ).stdout
    return out.strip()


if __name__ == "__main__":
    raise SystemExit(main())
