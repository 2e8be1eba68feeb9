#!/usr/bin/env python3
"""A PNG screenshot of a run's HTML report, as headless Chromium renders it from a file://
path with the network cut (scripts/browser.py): the picture in the README.

    .venv/bin/python scripts/report_screenshot.py RUN_DIR docs/report-screenshot.png \
        --failing --sort _least
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import browser  # noqa: E402

from localjudge import report, runs  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--failing", action="store_true", help="tick 'failing rows only'")
    parser.add_argument("--sort", default="", help="a judge name, or _least (any judge)")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args(argv)
    page_path = report.write_report(runs.load_run(args.run_dir), args.run_dir / "report.html")
    with browser.Browser() as b:
        page = b.open(page_path)
        if page.errors:
            raise SystemExit(f"console errors: {page.errors}")
        if args.failing:
            page.evaluate("document.getElementById('failing-only').click()")
        if args.sort:
            page.evaluate(
                "(s => { const o = document.getElementById('sort-by'); o.value = s;"
                f" o.dispatchEvent(new Event('change')); }})({args.sort!r})"
            )
        page.screenshot(args.png, args.width, args.height)
    print(args.png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
