"""Labelled files: rows that also carry human labels, and the judge's agreement with them.

A labelled file is an input file (.jsonl or .json array) whose rows also carry
`"labels": {"<judge>": "yes" | "no" | ["yes", "no", ...]}` (one label per retrieved chunk
for chunk judges; null for a unit left unlabelled), and optionally a `source` naming where
the row comes from. Labels and source are read here only: the judges get the Record,
which has neither (records.validate_row ignores unknown fields).

Each labelled verdict is a *unit* (a row, or a chunk); `collect_units` pairs the result
rows of a run (api.evaluate) with the labels, and `report` measures agreement
(localjudge.agreement) per judge, per source and lists the disagreeing units.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge import agreement
from localjudge.errors import InputFileError, UsageError
from localjudge.judges import Judge
from localjudge.judges.base import in_band, p_yes
from localjudge.judges.kinds import ChunkJudge
from localjudge.records import Record, read_records

Label = str | None
Labels = Mapping[str, Label | tuple[Label, ...]]

# A word that ends a source name: a path, key=value, a parenthesised note, a number ...
_STOP = re.compile(r"[/=()\[\]]|^\d+$")
# ... or a bare file name ("NQ.json"), whose stem is the last word of the name.
_FILE = re.compile(r"^([\w-]+)\.[A-Za-z][A-Za-z0-9]{0,4}$")
NO_SOURCE = "(no source)"


def source_name(source: Any) -> str:
    """The source a row belongs to, from its free-text `source` field: the leading words,
    up to the first word that is a path, a key=value pair, a parenthesised note or a
    number (that word and the rest point to the row within the source), a bare file name
    ending the name with its stem. "SummEdits samsum" -> "SummEdits samsum",
    "FaithBench data_for_release/batch_6.json sample_id=39" -> "FaithBench",
    "EVOUNA NQ.json index=978" -> "EVOUNA NQ", "HotpotQA dev (distractor setting)
    _id=5a8" -> "HotpotQA dev". A row without one is in NO_SOURCE."""
    words: list[str] = []
    for word in str(source or "").split():
        if _STOP.search(word):
            break
        file = _FILE.match(word)
        if file:
            words.append(file.group(1))
            break
        words.append(word)
    return " ".join(words) or NO_SOURCE


@dataclass(frozen=True)
class LabelledRow:
    record: Record
    labels: Labels
    source: str  # source_name of the row's source field


@dataclass(frozen=True)
class LabelledSet:
    """The labelled rows of a file, in order; what was left out is counted."""

    path: str
    sha256: str
    rows: list[LabelledRow]
    unlabelled: int  # valid rows without labels
    bad: list[str]  # errors of rows that could not be read (they cannot be judged)

    def judges(self) -> list[str]:
        """Every judge some row has a label for, in first-seen order."""
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row.labels))
        return list(seen)


def _label(value: Any, where: str) -> Label:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return value.strip().lower()
    raise UsageError(f'{where}: expected "yes", "no" or null, got {json.dumps(value)}')


def _labels(value: Any, where: str) -> Labels:
    if not isinstance(value, dict):
        raise UsageError(f"{where}: 'labels' must be an object of judge name: label")
    out: dict[str, Label | tuple[Label, ...]] = {}
    for judge, v in value.items():
        at = f"{where}, labels.{judge}"
        out[judge] = tuple(_label(x, at) for x in v) if isinstance(v, list) else _label(v, at)
    return out


def _raw_objects(name: str, data: bytes, fmt: str) -> dict[int, Any]:
    """The parsed rows by the line number records.read_records gives them."""
    if fmt == "jsonl":
        out = {}
        for number, raw in enumerate(data.split(b"\n"), start=1):
            try:
                out[number] = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
            except (ValueError, RecursionError):
                continue  # blank or bad: read_records has it as blank or as a BadRecord
        return out
    if fmt == "json":
        items = json.loads(data.decode("utf-8-sig"))
        return dict(enumerate(items, start=1))
    raise InputFileError(
        f"{name}: a labelled file must be .jsonl or a .json array (labels are objects)"
    )


def read_labelled(path: str) -> LabelledSet:
    """Read a labelled file ("-" for standard input). Rows without `labels` are counted
    and left out; a malformed label is an error (UsageError) naming the line and judge."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = b""  # read_records says what is wrong with the file
    records = read_records(path, stdin=io.BytesIO(data))
    raw = _raw_objects(path, data, records.format)
    rows: list[LabelledRow] = []
    unlabelled = 0
    bad: list[str] = []
    for rec in records.rows:
        obj = raw.get(rec.line)
        has_labels = isinstance(obj, dict) and obj.get("labels") is not None
        if not isinstance(rec, Record):
            if has_labels:
                bad.append(rec.error)
            continue
        if not has_labels:
            unlabelled += 1
            continue
        assert isinstance(obj, dict)
        labels = _labels(obj["labels"], f"{path}: line {rec.line}")
        rows.append(LabelledRow(rec, labels, source_name(obj.get("source"))))
    if not rows:
        raise InputFileError(
            f'{path}: no labelled rows (a labelled row carries "labels": {{"<judge>": "yes"|"no"}})'
        )
    return LabelledSet(path, hashlib.sha256(data).hexdigest(), rows, unlabelled, bad)


def comparable(judge: Judge) -> bool:
    """Whether a judge gives yes/no verdicts with a probability to compare with labels:
    row judges with a rating, and chunk judges."""
    return (
        isinstance(judge, ChunkJudge)
        or bool(judge.labels and judge.metrics())
        and (judge.metrics()[0].kind == "rating")
    )


@dataclass(frozen=True)
class Unit:
    """One labelled verdict: a row, or a chunk (`chunk`, 0-based) of a chunk judge."""

    judge: str
    row: int  # index in LabelledSet.rows: chunks of one row share it (resampled together)
    request_id: str
    line: int
    source: str
    chunk: int | None
    label: int  # 1 yes, 0 no
    p_yes: float | None  # None: the verdict could not be computed
    verdict: str | None  # the judge's rating by its threshold


def _prefix(judge: Judge) -> str:
    return f"{judge.step}/llm_judged/{judge.name}"


def collect_units(
    labelled: LabelledSet, results: Sequence[Mapping[str, Any]], judge: Judge
) -> tuple[list[Unit], int]:
    """`judge`'s labelled units from `results` (aligned with labelled.rows), and how many
    labelled rows the judge skipped (inputs missing)."""
    prefix = _prefix(judge)
    units: list[Unit] = []
    skipped = 0
    for i, (row, result) in enumerate(zip(labelled.rows, results, strict=True)):
        label = row.labels.get(judge.name)
        if label is None:
            continue
        if judge.name in result.get("judges_skipped", ()):
            skipped += 1
            continue
        line = row.record.line
        # (chunk, label, rating, probability) per unit of this row
        found: list[tuple[int | None, Label, Any, Any]]
        if isinstance(judge, ChunkJudge):
            ratings = result.get(f"{prefix}/ratings") or []
            probs = result.get(f"{prefix}/probabilities") or []
            if not isinstance(label, tuple) or len(label) != len(ratings):
                n = len(label) if isinstance(label, tuple) else "one"
                raise UsageError(
                    f"{labelled.path}: line {line}: labels.{judge.name} has {n} label(s) "
                    f"for {len(ratings)} chunk(s); give a list with one per chunk"
                )
            found = list(zip(range(len(label)), label, ratings, probs, strict=True))
        else:
            if isinstance(label, tuple):
                raise UsageError(
                    f"{labelled.path}: line {line}: labels.{judge.name} must be one label"
                )
            rating = result.get(f"{prefix}/threshold_rating", result.get(f"{prefix}/rating"))
            found = [(None, label, rating, result.get(f"{prefix}/probability"))]
        units += [
            Unit(
                judge=judge.name,
                row=i,
                request_id=row.record.request_id,
                line=line,
                source=row.source,
                chunk=chunk,
                label=1 if lab == "yes" else 0,
                p_yes=p_yes(rating, prob),
                verdict=rating if rating in ("yes", "no") else None,
            )
            for chunk, lab, rating, prob in found
            if lab is not None
        ]
    return units, skipped


def _arrays(units: Sequence[Unit]) -> tuple[list[int], list[float], list[float], list[int]]:
    """(labels, verdicts, P(yes), row groups) of the units with a verdict."""
    scored = [u for u in units if u.p_yes is not None and u.verdict is not None]
    return (
        [u.label for u in scored],
        [1.0 if u.verdict == "yes" else 0.0 for u in scored],
        [float(u.p_yes) for u in scored if u.p_yes is not None],
        [u.row for u in scored],
    )


def judge_report(
    units: Sequence[Unit],
    skipped: int,
    threshold: float,
    band: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Agreement of one judge's verdicts with the labels: the metrics with intervals,
    coverage (the share of units decided: outside the unsure band, 1 without one), per
    source when there are several, and every disagreeing unit."""
    scored = [u for u in units if u.p_yes is not None and u.verdict is not None]

    def measure(sub: Sequence[Unit]) -> dict[str, Any]:
        y, pred, p, groups = _arrays(sub)
        decided = [band is None or not in_band(x, band) for x in p]
        return agreement.agreement(y, pred, p, decided=decided, groups=groups)

    out: dict[str, Any] = {
        "threshold": threshold,
        "unsure_band": None if band is None else {"low": band[0], "high": band[1]},
        "units": len(units),
        "verdict_errors": len(units) - len(scored),
        "rows_skipped": skipped,
        **measure(scored),
    }
    sources = sorted({u.source for u in scored})
    if len(sources) > 1:
        out["by_source"] = {s: measure([u for u in scored if u.source == s]) for s in sources}
    out["disagreements"] = [
        {
            "request_id": u.request_id,
            "line": u.line,
            "chunk": u.chunk,
            "label": "yes" if u.label else "no",
            "verdict": "unsure" if band is not None and in_band(u.p_yes, band) else u.verdict,
            "p_yes": u.p_yes,
        }
        for u in scored
        if u.p_yes is not None
        and not (band is not None and in_band(u.p_yes, band))
        and (u.verdict == "yes") != (u.label == 1)
    ]
    return out


def fmt_estimate(est: Mapping[str, Any] | None, digits: int = 2, signed: bool = False) -> str:
    """ "0.81 [0.72, 0.88]", the value alone without an interval, "-" without a value."""
    if not est or est.get("value") is None:
        return "-"
    sign = "+" if signed else ""
    low, high = est["ci95"]
    value = f"{est['value']:{sign}.{digits}f}"
    return value if low is None else f"{value} [{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]"


COLUMNS = (
    ("balanced acc.", "balanced_accuracy"),
    ("kappa", "kappa"),
    ("ROC AUC", "auc"),
    ("false-yes", "false_yes_rate"),
    ("false-no", "false_no_rate"),
    ("coverage", "coverage"),
)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return lines + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *map(line, rows)]


def render(report: Mapping[str, Any], fmt: str) -> str:
    """The agreement report for stdout: a table, markdown, or JSON."""
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2)
    markdown = fmt == "markdown"
    banded = any(r["unsure_band"] for r in report["judges"].values())
    columns = COLUMNS if banded else COLUMNS[:-1]  # coverage is 1 without a band
    header = ["judge", "units", "threshold", *(c for c, _ in columns)]
    rows = []
    for judge, r in report["judges"].items():
        rows.append(
            [
                judge,
                str(r["decided"]) if r["decided"] == r["n"] else f"{r['decided']}/{r['n']}",
                f"{r['threshold']:.3f}",
                *(fmt_estimate(r.get(k)) for _, k in columns),
            ]
        )
        for source, s in r.get("by_source", {}).items():
            rows.append(
                [f"  {source}", str(s["n"]), "", *(fmt_estimate(s.get(k)) for _, k in columns)]
            )
    lines = [
        f"model {report['model']}; {report['labelled']['rows']} labelled rows of "
        f"{report['labelled']['path']}; 95% bootstrap intervals from 10 units up",
        "",
        *table(header, rows, markdown),
    ]
    for judge, r in report["judges"].items():
        notes = []
        if r["verdict_errors"]:
            notes.append(f"{r['verdict_errors']} verdict error(s) left out")
        if r["rows_skipped"]:
            notes.append(f"{r['rows_skipped']} labelled row(s) skipped (inputs missing)")
        if r["unsure_band"]:
            band = r["unsure_band"]
            notes.append(
                f"unsure band [{band['low']:.3f}, {band['high']:.3f}): "
                f"{r['n'] - r['decided']} unit(s) unsure, left out of the agreement"
            )
        dis = r["disagreements"]
        lines += ["", f"{judge}: {len(dis)} disagreement(s)" + "".join(f"; {n}" for n in notes)]
        if dis:
            listed = [
                [
                    d["request_id"] + ("" if d["chunk"] is None else f" chunk {d['chunk'] + 1}"),
                    str(d["line"]),
                    d["label"],
                    d["verdict"],
                    f"{d['p_yes']:.3f}",
                ]
                for d in dis
            ]
            lines += table(["request_id", "line", "label", "verdict", "P(yes)"], listed, markdown)
    return "\n".join(lines)
