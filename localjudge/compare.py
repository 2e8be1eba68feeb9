"""Compare two finished runs of the same judges over the same rows (`localjudge compare`).

Rows are matched by `request_id`. For each judge both runs have, the difference of its
main aggregate is taken over the rows both runs scored (B minus A: positive is better for
every aggregate localjudge reports), with a paired bootstrap 95% interval: the per-row
differences are resampled together (scoring.bootstrap_interval over b_i - a_i), so the
interval reflects how the same rows moved, not two independent samples. A judge is
"worse" when the whole interval is below 0 and "better" when it is above; with fewer than
scoring.MIN_ROWS_FOR_INTERVAL paired rows there is no interval and no claim.

Runs of different models or thresholds judge differently by construction; comparing them
is refused unless asked for (`--allow-different-models`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from localjudge import scoring
from localjudge.errors import UsageError
from localjudge.judges import Judge
from localjudge.runs import RunDir, judge_prefix, recorded_judges

WORSE, BETTER, SAME, TOO_FEW = "worse", "better", "no clear change", "too few rows"


@dataclass(frozen=True)
class JudgeDiff:
    """One judge's main aggregate in both runs over the paired rows, and B - A."""

    judge: str
    metric: str
    paired_rows: int
    a: float | None
    b: float | None
    difference: float | None
    ci95_low: float | None
    ci95_high: float | None
    verdict: str


@dataclass(frozen=True)
class ChangedRow:
    """A row whose verdict for `judge` differs between the runs."""

    request_id: str
    judge: str
    a: Any
    b: Any
    probability_a: Any
    probability_b: Any


@dataclass
class Comparison:
    run_a: str
    run_b: str
    judges: list[JudgeDiff]
    changed: list[ChangedRow]
    rows_only_in_a: list[str]
    rows_only_in_b: list[str]
    judges_only_in_a: list[str] = field(default_factory=list)
    judges_only_in_b: list[str] = field(default_factory=list)
    manifest_differences: list[str] = field(default_factory=list)
    prompts_changed: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[JudgeDiff]:
        return [d for d in self.judges if d.verdict == WORSE]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "regressions": [d.judge for d in self.regressions]}


def _value(row: Mapping[str, Any], field_name: str, kind: str) -> float | None:
    if row.get("error") is not None:
        return None
    value = row.get(field_name)
    if kind == "rating":
        return None if value not in ("yes", "no") else (1.0 if value == "yes" else 0.0)
    return float(value) if isinstance(value, int | float) else None


def _by_id(run: RunDir) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in run.results:
        rid = str(row.get("request_id"))
        if rid in out:
            raise UsageError(
                f"{run.path}: request_id {rid!r} appears more than once, so rows cannot be "
                "matched between the runs; give every row a unique request_id"
            )
        out[rid] = row
    return out


def manifest_differences(a: RunDir, b: RunDir) -> list[str]:
    """What makes the two runs judge differently: the model file and the thresholds."""
    if a.manifest is None or b.manifest is None:
        missing = a.path if a.manifest is None else b.path
        return [f"{missing} has no manifest.json, so its model and thresholds are unknown"]
    out = []
    ma, mb = a.manifest.get("model") or {}, b.manifest.get("model") or {}
    key_a = ma.get("sha256") or ma.get("id")
    key_b = mb.get("sha256") or mb.get("id")
    if key_a != key_b:
        out.append(f"model: {ma.get('id')} ({ma.get('file')}) vs {mb.get('id')} ({mb.get('file')})")
    ta, tb = a.manifest.get("thresholds") or {}, b.manifest.get("thresholds") or {}
    if ta != tb:
        names = sorted(k for k in set(ta) | set(tb) if ta.get(k) != tb.get(k))
        out.append("thresholds: " + ", ".join(f"{n} {ta.get(n)} vs {tb.get(n)}" for n in names))
    return out


def prompts_changed(a: RunDir, b: RunDir) -> list[str]:
    """Judges whose prompt templates differ between the runs (another localjudge version,
    or a changed custom judge): their differences mix the change under test with that."""
    ha = (a.manifest or {}).get("judges") or {}
    hb = (b.manifest or {}).get("judges") or {}
    return [name for name in ha if name in hb and ha[name] != hb[name]]


def _verdict_fields(judge: Judge) -> tuple[str, str] | None:
    """The per-row verdict field and its probability field, for judges that have one."""
    prefix = judge_prefix(judge)
    metric = judge.metrics()[0]
    if metric.kind == "rating":
        return f"{prefix}/rating", f"{prefix}/probability"
    if judge.labels:  # one verdict per chunk or statement
        return f"{prefix}/ratings", f"{prefix}/probabilities"
    return None


def judge_diff(judge: Judge, pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> JudgeDiff:
    """B - A of the judge's main aggregate over the rows both runs scored."""
    metric = judge.metrics()[0]
    a_vals, b_vals = [], []
    for ra, rb in pairs:
        va, vb = _value(ra, metric.field, metric.kind), _value(rb, metric.field, metric.kind)
        if va is not None and vb is not None:
            a_vals.append(va)
            b_vals.append(vb)
    if not a_vals:
        return JudgeDiff(judge.name, metric.key, 0, None, None, None, None, None, TOO_FEW)
    arr_a, arr_b = np.asarray(a_vals), np.asarray(b_vals)
    diffs = arr_b - arr_a
    low = high = None
    verdict = TOO_FEW
    if diffs.size >= scoring.MIN_ROWS_FOR_INTERVAL:
        low, high = scoring.bootstrap_interval(diffs)
        verdict = WORSE if high < 0 else BETTER if low > 0 else SAME
    return JudgeDiff(
        judge.name,
        metric.key,
        int(diffs.size),
        float(arr_a.mean()),
        float(arr_b.mean()),
        float(diffs.mean()),
        low,
        high,
        verdict,
    )


def compare(a: RunDir, b: RunDir, *, allow_different_models: bool = False) -> Comparison:
    """Compare run B against run A (see the module docstring). Raises UsageError (exit 2)
    for runs of different models or thresholds unless `allow_different_models`."""
    differences = manifest_differences(a, b)
    if differences and not allow_different_models:
        raise UsageError(
            f"{a.path} and {b.path} were not judged by the same model and thresholds ("
            + "; ".join(differences)
            + "); their verdicts are not comparable. Pass --allow-different-models to "
            "compare them anyway"
        )
    rows_a, rows_b = _by_id(a), _by_id(b)
    common = [rid for rid in rows_a if rid in rows_b]
    pairs = [(rows_a[rid], rows_b[rid]) for rid in common]
    judges_a = {j.name: j for j in recorded_judges(a.results)}
    judges_b = {j.name: j for j in recorded_judges(b.results)}
    shared = [j for name, j in judges_a.items() if name in judges_b]
    changed: list[ChangedRow] = []
    for judge in shared:
        fields = _verdict_fields(judge)
        if fields is None:
            continue
        verdict_field, prob_field = fields
        for rid, (ra, rb) in zip(common, pairs, strict=True):
            va, vb = ra.get(verdict_field), rb.get(verdict_field)
            if va != vb:
                changed.append(
                    ChangedRow(rid, judge.name, va, vb, ra.get(prob_field), rb.get(prob_field))
                )
    return Comparison(
        run_a=str(a.path),
        run_b=str(b.path),
        judges=[judge_diff(j, pairs) for j in shared],
        changed=changed,
        rows_only_in_a=[rid for rid in rows_a if rid not in rows_b],
        rows_only_in_b=[rid for rid in rows_b if rid not in rows_a],
        judges_only_in_a=[n for n in judges_a if n not in judges_b],
        judges_only_in_b=[n for n in judges_b if n not in judges_a],
        manifest_differences=differences,
        prompts_changed=prompts_changed(a, b),
    )


# -- rendering ---------------------------------------------------------------------------

# Rows listed in a table or a markdown comment; --format json lists every one.
SHOWN_ROWS = 50


def _num(value: Any, signed: bool = False) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:+.3f}" if signed else f"{value:.3f}"
    if isinstance(value, list):
        return "[" + ", ".join(_num(v) for v in value) + "]"
    return str(value)


def _judge_rows(c: Comparison) -> list[list[str]]:
    rows = []
    for d in c.judges:
        ci = (
            f"[{_num(d.ci95_low, True)}, {_num(d.ci95_high, True)}]"
            if d.ci95_low is not None
            else "-"
        )
        rows.append(
            [
                d.metric,
                _num(d.a),
                _num(d.b),
                _num(d.difference, True),
                ci,
                str(d.paired_rows),
                d.verdict,
            ]
        )
    return rows


def _changed_rows(c: Comparison) -> list[list[str]]:
    return [
        [
            r.request_id,
            r.judge,
            f"{_num(r.a)} ({_num(r.probability_a)})",
            f"{_num(r.b)} ({_num(r.probability_b)})",
        ]
        for r in c.changed[:SHOWN_ROWS]
    ]


def _notes(c: Comparison) -> list[str]:
    notes = []
    if c.manifest_differences:
        notes.append(
            "Compared although they differ (--allow-different-models): "
            + "; ".join(c.manifest_differences)
        )
    if c.prompts_changed:
        notes.append(
            "the prompts of these judges differ between the runs, so their differences "
            "are partly the prompts': " + ", ".join(c.prompts_changed)
        )
    for label, ids in (("only in A", c.rows_only_in_a), ("only in B", c.rows_only_in_b)):
        if ids:
            shown = ", ".join(ids[:SHOWN_ROWS]) + (" ..." if len(ids) > SHOWN_ROWS else "")
            notes.append(f"{len(ids)} row(s) {label}: {shown}")
    for label, names in (("only in A", c.judges_only_in_a), ("only in B", c.judges_only_in_b)):
        if names:
            notes.append(f"judge(s) {label}: {', '.join(names)}")
    more = len(c.changed) - SHOWN_ROWS
    if more > 0:
        notes.append(f"{more} more changed verdict(s) not shown (--format json lists all)")
    return notes


def _text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return lines


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return lines


JUDGE_HEADER = ("metric", "A", "B", "B - A", "95% CI (paired)", "n", "verdict")
CHANGED_HEADER = ("request_id", "judge", "A (probability)", "B (probability)")


def render(c: Comparison, fmt: str) -> str:
    """The comparison as a table, markdown (a pull-request comment) or JSON."""
    if fmt == "json":
        return json.dumps(c.as_dict(), ensure_ascii=False, indent=2)
    worse = ", ".join(d.judge for d in c.regressions)
    headline = (
        f"Worse beyond its interval: {worse}" if worse else "No judge is worse beyond its interval."
    )
    if fmt == "markdown":
        lines = [f"### localjudge: `{c.run_b}` (B) against `{c.run_a}` (A)", "", headline, ""]
        lines += _md_table(JUDGE_HEADER, _judge_rows(c))
        if c.changed:
            lines += ["", f"<details><summary>{len(c.changed)} changed verdict(s)</summary>", ""]
            lines += _md_table(CHANGED_HEADER, _changed_rows(c))
            lines += ["", "</details>"]
        notes = _notes(c)
        if notes:
            lines += [""] + [f"- {n}" for n in notes]
        return "\n".join(lines)
    lines = [f"A: {c.run_a}", f"B: {c.run_b}", ""]
    lines += _text_table(JUDGE_HEADER, _judge_rows(c))
    if c.changed:
        lines += ["", f"changed verdicts: {len(c.changed)}"]
        lines += _text_table(CHANGED_HEADER, _changed_rows(c))
    lines += ["", *_notes(c), headline]
    return "\n".join(lines)
