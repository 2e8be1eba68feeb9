"""results.jsonl, summary.json, the run manifest, resume, and the terminal table.

results.jsonl is written row by row and flushed, one line per input row in input order.
The manifest is written first (manifest.json), so that a later run with `--resume` can
check it is continuing the same run: a half-written last line is dropped and redone.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from localjudge.errors import OutputError

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
MANIFEST = "manifest.json"

# Manifest keys that may differ between two invocations of the same run.
_VOLATILE = frozenset({"command_line"})


def dumps_row(row: Mapping[str, Any]) -> str:
    """One result row as a JSON line: stable key order, no NaN, UTF-8 kept as is."""
    return json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n"


def _fail(path: Path, exc: OSError, doing: str) -> OutputError:
    if exc.errno == errno.ENOSPC:
        why = "the disk is full"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = "permission denied"
    else:
        why = exc.strerror or str(exc)
    return OutputError(
        f"{path}: cannot {doing} ({why}); what was written stays valid: rerun "
        "with --resume to finish"
    )


def comparable(manifest: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in manifest.items() if k not in _VOLATILE}


class ResultsWriter:
    """Appends result rows to DIR/results.jsonl, flushing each; handles resume.

    Constructing it only checks (so a bad --out fails before the model loads); `start()`
    writes the manifest and opens the results file, once the model has loaded, so that a
    run that fails to load leaves nothing a later resume would trust.
    """

    def __init__(
        self, out_dir: Path, manifest: Mapping[str, Any], *, resume: bool, overwrite: bool
    ) -> None:
        self.dir = out_dir
        self.path = out_dir / RESULTS
        self.done = 0
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _fail(out_dir, exc, "create the output directory") from None
        if not os.access(out_dir, os.W_OK):
            raise OutputError(f"{out_dir}: the output directory is not writable")
        previous = self._previous_manifest()
        if previous is not None and self.path.exists():
            same = comparable(previous) == comparable(manifest)
            if resume and same:
                self.done = self._complete_rows()
            elif not overwrite and not same:
                raise OutputError(
                    f"{out_dir} holds results of a different run (model, judges, prompts, "
                    "input or options differ); use --overwrite to replace them or choose "
                    "another --out"
                )
        elif self.path.exists() and not overwrite and resume and self.path.stat().st_size:
            raise OutputError(
                f"{self.path} exists but has no manifest.json; use --overwrite to replace it"
            )
        self._manifest = dict(manifest)
        self._fh: IO[str] | None = None

    def start(self) -> None:
        """Write the manifest and open results.jsonl (appending when resuming)."""
        mode = "a" if self.done else "w"
        try:
            _write_json(self.dir / MANIFEST, self._manifest)
            self._fh = open(  # noqa: SIM115 - kept open for the whole run
                self.path, mode, encoding="utf-8", newline="\n"
            )
        except OSError as exc:
            raise _fail(self.path, exc, "write") from None

    def _previous_manifest(self) -> dict[str, Any] | None:
        path = self.dir / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _complete_rows(self) -> int:
        """Count complete lines; cut off a half-written last line so it is redone."""
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        good = 0
        offset = 0
        for line in data[:end].split(b"\n")[:-1]:
            try:
                json.loads(line)
            except ValueError:
                break
            good += 1
            offset += len(line) + 1
        if offset != len(data):
            with open(self.path, "r+b") as f:
                f.truncate(offset)
        return good

    def write(self, row: Mapping[str, Any]) -> None:
        if self._fh is None:
            raise RuntimeError("ResultsWriter.start() was not called")
        try:
            self._fh.write(dumps_row(row))
            self._fh.flush()
        except OSError as exc:
            raise _fail(self.path, exc, "write") from None

    def close(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()

    def read_back(self) -> list[dict[str, Any]]:
        rows = []
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                rows.append(json.loads(line))
        return rows


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=2, allow_nan=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_summary(out_dir: Path, summary: Mapping[str, Any]) -> Path:
    path = out_dir / SUMMARY
    try:
        _write_json(path, summary)
    except OSError as exc:
        raise _fail(path, exc, "write the summary") from None
    return path


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table_rows(summary: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    rows = []
    for key, agg in summary["aggregates"].items():
        ci = (
            f"[{_fmt(agg['ci95_low'])}, {_fmt(agg['ci95_high'])}]"
            if agg.get("ci95_low") is not None
            else "-"
        )
        rows.append((key, _fmt(agg["value"]), ci, str(agg["count"])))
    return rows


def render(summary: Mapping[str, Any], fmt: str, out_dir: Path | None = None) -> str:
    """The summary for stdout: a table, markdown, or JSON."""
    if fmt == "json":
        return json.dumps(summary, ensure_ascii=False, indent=2)
    header = ("metric", "value", "95% CI", "n")
    rows = table_rows(summary)
    footer = (
        f"rows read: {summary['rows_read']}  input errors: {summary['rows_with_input_errors']}"
        f"  verdict errors: {summary['verdicts_with_errors']}"
    )
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |", "|---|---:|---|---:|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines) + "\n\n" + footer
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append(
            "  ".join(
                [
                    r[0].ljust(widths[0]),
                    r[1].rjust(widths[1]),
                    r[2].ljust(widths[2]),
                    r[3].rjust(widths[3]),
                ]
            )
        )
    lines.append(footer)
    if out_dir is not None:
        lines.append(f"results: {out_dir / RESULTS}  summary: {out_dir / SUMMARY}")
    return "\n".join(lines)


def judge_table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
    return "\n".join(line.rstrip() for line in lines)
