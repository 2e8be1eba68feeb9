"""One self-contained HTML page of a run (`localjudge report`, `eval --html`).

The page holds everything inline (styles, a small script, the plots as SVG), so it opens
from a file on an air-gapped machine and loads nothing from the network. Its parts: the run
manifest, each judge's aggregate with its 95% interval and count, one plot per judge of the
distribution of its P(yes) (or score) split by verdict, and a table of every row that can be
filtered to failing rows and sorted by probability, least sure first.

The page is a Jinja2 template (templates/report.html.j2, autoescaped: row text is data and
may hold anything); the plots are drawn by matplotlib to SVG. Both come with the `report`
extra and are imported only here.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localjudge.errors import OutputError, UsageError
from localjudge.judges import Judge
from localjudge.runs import RunDir, judge_prefix, recorded_judges, summary_of

TEMPLATE = "report.html.j2"
# Text longer than this is cut in the table cell; the whole text is one click away.
PREVIEW_CHARS = 240


@dataclass(frozen=True)
class Unit:
    """One verdict of a list judge (a chunk or a statement)."""

    label: str | None
    probability: float | None
    rationale: str | None
    error: str | None


@dataclass(frozen=True)
class Cell:
    """What the table shows for one judge on one row."""

    verdict: str | None = None  # "yes" / "no" / None; for list judges "k/n yes"
    probability: float | None = None  # of the verdict; for list judges the least sure unit
    score: float | None = None  # the judge's per-row value when it is not a rating
    rationale: str | None = None
    error: str | None = None
    failing: bool = False
    units: list[Unit] = field(default_factory=list)
    skipped: bool = False


@dataclass(frozen=True)
class JudgeView:
    name: str
    metric: str  # the main aggregate's key in summary.json
    field: str  # the per-row field it averages
    prefix: str
    kind: str  # "rating", "list" (a verdict per chunk/statement) or "score"
    threshold: float | None


def judge_view(judge: Judge, thresholds: Mapping[str, Any]) -> JudgeView:
    metric = judge.metrics()[0]
    if metric.kind == "rating":
        kind = "rating"
    elif judge.labels:
        kind = "list"
    else:
        kind = "score"
    t = thresholds.get(judge.name)
    threshold = float(t) if isinstance(t, int | float) else None
    return JudgeView(judge.name, metric.key, metric.field, judge_prefix(judge), kind, threshold)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _at(values: list[Any], i: int) -> Any:
    return values[i] if i < len(values) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def cell(row: Mapping[str, Any], view: JudgeView) -> Cell:
    """The judge's verdict on the row, as shown in the table."""
    p = view.prefix
    if view.name in (row.get("judges_skipped") or ()):
        return Cell(skipped=True)
    if view.kind == "rating":
        verdict = row.get(f"{p}/rating")
        return Cell(
            verdict=verdict if isinstance(verdict, str) else None,
            probability=_float(row.get(f"{p}/probability")),
            rationale=row.get(f"{p}/rationale"),
            error=row.get(f"{p}/error_message"),
            failing=verdict == "no",
        )
    if view.kind == "list":
        labels = _list(row.get(f"{p}/ratings"))
        probs = _list(row.get(f"{p}/probabilities"))
        rationales = _list(row.get(f"{p}/rationales"))
        errors = _list(row.get(f"{p}/error_messages"))
        units = [
            Unit(label, _float(_at(probs, i)), _at(rationales, i), _at(errors, i))
            for i, label in enumerate(labels)
        ]
        known = [u.probability for u in units if u.probability is not None]
        score = row.get(view.field)
        yes = sum(1 for u in units if u.label == "yes")
        return Cell(
            verdict=f"{yes}/{len(units)} yes" if units else None,
            probability=min(known) if known else None,
            score=_float(score),
            error=next((e for e in errors if e), None),
            failing=any(u.label == "no" for u in units),
            units=units,
        )
    return Cell(score=_float(row.get(view.field)))


def p_yes(label: Any, probability: Any) -> float | None:
    """P(yes) from a verdict and the probability of its label (yes/no verdicts)."""
    prob = _float(probability)
    if prob is None or label not in ("yes", "no"):
        return None
    return prob if label == "yes" else 1.0 - prob


def plot_values(rows: Sequence[Mapping[str, Any]], view: JudgeView) -> dict[str, list[float]]:
    """What the judge's plot shows, by verdict: P(yes) of each verdict (a row's, or each
    chunk's or statement's), or the per-row score for judges without a verdict."""
    out: dict[str, list[float]] = {}
    p = view.prefix
    for row in rows:
        if row.get("error") is not None:
            continue
        if view.kind == "rating":
            pairs = [(row.get(f"{p}/rating"), row.get(f"{p}/probability"))]
        elif view.kind == "list":
            pairs = list(
                zip(
                    _list(row.get(f"{p}/ratings")),
                    _list(row.get(f"{p}/probabilities")),
                    strict=False,
                )
            )
        else:
            value = cell(row, view).score
            if value is not None:
                out.setdefault("score", []).append(value)
            continue
        for label, prob in pairs:
            # answer_relevancy's "unsure" is a verdict within 0.02 of its threshold.
            py = _float(prob) if label == "unsure" else p_yes(label, prob)
            if py is not None and isinstance(label, str):
                out.setdefault(label, []).append(py)
    return out


_COLOURS = {"yes": "#2e7d32", "no": "#c62828", "unsure": "#f9a825", "score": "#1565c0"}


def plot_svg(values: Mapping[str, Sequence[float]], view: JudgeView) -> str:
    """A histogram of `values` by verdict, stacked, as an inline <svg> element."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "localjudge"}):
        return _draw(Figure(figsize=(3.2, 2.0), dpi=100), values, view)


def _draw(fig: Any, values: Mapping[str, Sequence[float]], view: JudgeView) -> str:
    ax = fig.add_subplot()
    labels = [k for k in ("yes", "unsure", "no", "score") if values.get(k)]
    if labels:
        ax.hist(
            [list(values[k]) for k in labels],
            bins=20,
            range=(0.0, 1.0),
            stacked=True,
            color=[_COLOURS[k] for k in labels],
            label=[f"{k} ({len(values[k])})" for k in labels],
        )
        ax.legend(fontsize=7, frameon=False)
    else:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
    if view.threshold is not None:
        ax.axvline(view.threshold, color="#555", linestyle="--", linewidth=1)
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("score" if view.kind == "score" else "P(yes)", fontsize=8)
    ax.set_ylabel("rows" if view.kind != "list" else "verdicts", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    # Inline SVG: drop the XML prolog and doctype; keep the <svg> element.
    return svg[svg.index("<svg") :]


def check_available() -> None:
    """Raise UsageError (exit 2) when the `report` extra is not installed."""
    import importlib.util

    missing = [m for m in ("jinja2", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"the HTML report needs {' and '.join(missing)}: pip install 'localjudge[report]'"
        )


def _load_template() -> Any:
    check_available()
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("localjudge", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["preview"] = _preview
    return env.get_template(TEMPLATE)


def _num(value: Any, digits: int = 3) -> str:
    f = _float(value)
    return "-" if f is None else f"{f:.{digits}f}"


def _preview(text: Any) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= PREVIEW_CHARS else s[: PREVIEW_CHARS - 1].rstrip() + "\u2026"


def render(run: RunDir, timings: Mapping[str, Any] | None = None) -> str:
    """The report page of a run, as one HTML string."""
    template = _load_template()
    summary = summary_of(run)
    manifest = run.manifest or {}
    thresholds = manifest.get("thresholds") or {}
    views = [judge_view(j, thresholds) for j in recorded_judges(run.results)]
    table = []
    for index, row in enumerate(run.results):
        cells = [cell(row, v) for v in views]
        known = [c.probability for c in cells if c.probability is not None]
        table.append(
            {
                "index": index,
                "row": row,
                "cells": cells,
                "failing": row.get("error") is not None or any(c.failing for c in cells),
                "least_sure": min(known) if known else None,
            }
        )
    plots = {v.name: plot_svg(plot_values(run.results, v), v) for v in views}
    return str(
        template.render(
            title=f"localjudge report: {run.path}",
            run_path=str(run.path),
            manifest=manifest,
            manifest_json=json.dumps(manifest, ensure_ascii=False, indent=2),
            summary=summary,
            timings=timings or {},
            views=views,
            plots=plots,
            table=table,
        )
    )


def write_report(run: RunDir, target: Path) -> Path:
    """Render the run's page and write it to `target` (atomically: a temporary file first)."""
    timings = None
    summary_file = run.path / "summary.json"
    if summary_file.is_file():
        try:
            data = json.loads(summary_file.read_text(encoding="utf-8"))
            found = data.get("timings") if isinstance(data, dict) else None
            timings = found if isinstance(found, dict) else None
        except (OSError, ValueError):
            timings = None  # the timings are a nicety; the page is built from the results
    html = render(run, timings)
    tmp = target.with_name(target.name + ".tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write the report ({exc.strerror or exc})") from None
    return target
