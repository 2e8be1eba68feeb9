"""Finished runs on disk: reading a run directory and summarising it from its results alone.

A run directory is what `eval --out DIR` writes: results.jsonl (one line per input row),
manifest.json and summary.json. `summary`, `report` and `compare` read it back here. The
judges of a run are recovered from the field names of its rows (and the rows'
`judges_skipped`), so results.jsonl alone is enough to summarise it the way `eval` did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge import api
from localjudge.engine.base import Verdict, VerdictRequest
from localjudge.errors import InputFileError, UsageError
from localjudge.judges import BUILTIN, Judge, JudgeOptions, Metric
from localjudge.judges.base import YES_NO
from localjudge.output import MANIFEST, RESULTS, SUMMARY
from localjudge.records import Record

# The second part of a judged field's name: response/llm_judged/NAME/..., and
# retrieval/ground_truth/document_recall.
_JUDGED = ("llm_judged", "ground_truth")


@dataclass(frozen=True)
class RunDir:
    """A run read back from disk. `manifest` is None when manifest.json is absent."""

    path: Path
    results: list[dict[str, Any]]
    manifest: dict[str, Any] | None


def _read_json_object(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InputFileError(f"{path}: cannot read it ({exc})") from None
    return data if isinstance(data, dict) else None


def load_run(path: str | Path) -> RunDir:
    """Read a run directory (or its results.jsonl). Exits 2 through InputFileError or
    UsageError when there is no run there or a line is not a JSON object."""
    given = Path(path)
    folder, results_path = (given.parent, given) if given.is_file() else (given, given / RESULTS)
    if not results_path.is_file():
        raise UsageError(
            f"{given}: not a run directory (no {RESULTS}); `localjudge eval DATA --out DIR` "
            "writes one"
        )
    rows: list[dict[str, Any]] = []
    try:
        with open(results_path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    row = None
                if not isinstance(row, dict):
                    raise InputFileError(
                        f"{results_path}, line {number}: not a JSON object (a run cut off "
                        "mid-line? rerun its eval to resume it)"
                    )
                rows.append(row)
    except (OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, InputFileError):
            raise
        raise InputFileError(f"{results_path}: cannot read it ({exc})") from None
    manifest = _read_json_object(folder / MANIFEST)
    if manifest is None:  # an older layout kept the manifest only in summary.json
        summary = _read_json_object(folder / SUMMARY)
        found = summary.get("manifest") if summary else None
        manifest = found if isinstance(found, dict) else None
    return RunDir(folder, rows, manifest)


@dataclass(frozen=True)
class RecordedJudge:
    """A judge known only from its fields in results.jsonl (a custom judge whose file is
    not at hand): enough to summarise and compare it, not to judge with."""

    name: str
    step: str
    kind: str  # "rating" (one yes/no a row) or "precision" (one verdict a chunk)
    labels: tuple[str, ...] = YES_NO
    needs: tuple[str, ...] = ()
    description: str = "custom judge, read back from results.jsonl"

    @property
    def prefix(self) -> str:
        return f"{self.step}/llm_judged/{self.name}"

    def missing(self, record: Record) -> list[str]:
        return []

    def requests(self, record: Record, options: JudgeOptions) -> list[VerdictRequest]:
        raise UsageError(f"judge {self.name!r} is known only from its results; it cannot judge")

    def fields(
        self, record: Record, verdicts: Sequence[Verdict], options: JudgeOptions
    ) -> dict[str, Any]:
        raise UsageError(f"judge {self.name!r} is known only from its results; it cannot judge")

    def metrics(self) -> list[Metric]:
        if self.kind == "rating":
            return [Metric(f"{self.prefix}/rating/percentage", f"{self.prefix}/rating", "rating")]
        return [Metric(f"{self.prefix}/precision/average", f"{self.prefix}/precision", "mean")]

    def templates(self) -> dict[str, str]:
        return {}


def judge_prefix(judge: Judge) -> str:
    """The start of a judge's per-row field names, e.g. response/llm_judged/safety."""
    return judge.metrics()[0].field.rsplit("/", 1)[0]


def recorded_judges(results: Sequence[Mapping[str, Any]]) -> list[Judge]:
    """The judges of a run, in the order `eval` lists them (built-ins in registry order,
    then custom judges as first seen), from the rows' field names and `judges_skipped`.

    A custom judge that was skipped on every row left no field to tell its kind by, and
    is left out (it has no value to report)."""
    seen: dict[str, set[str]] = {}
    steps: dict[str, str] = {}
    for row in results:
        for key in row:
            parts = key.split("/")
            if len(parts) >= 3 and parts[1] in _JUDGED:
                steps.setdefault(parts[2], parts[0])
                seen.setdefault(parts[2], set()).add("/".join(parts[3:]))
        for name in row.get("judges_skipped") or ():
            if isinstance(name, str):
                seen.setdefault(name, set())
    chosen: list[Judge] = [j for name, j in BUILTIN.items() if name in seen]
    for name, suffixes in seen.items():
        if name in BUILTIN or name not in steps:
            continue
        if "rating" in suffixes:
            chosen.append(RecordedJudge(name, steps[name], "rating"))
        elif "precision" in suffixes:
            chosen.append(RecordedJudge(name, steps[name], "precision"))
    return chosen


def summary_of(run: RunDir) -> dict[str, Any]:
    """The summary `eval` printed, computed from results.jsonl alone (api.summarise over
    the recovered judges); the manifest is attached when the run has one. Timings are not
    in results.jsonl, so they are not part of it."""
    summary = api.summarise(run.results, recorded_judges(run.results))
    if run.manifest is not None:
        summary["manifest"] = run.manifest
    return summary
