"""results.jsonl, summary.json, the run manifest, resume, and the terminal table.

results.jsonl is written row by row and flushed, one line per input row in input order.
The manifest (manifest.json) is written once the model has loaded, after results.jsonl has
been emptied for a fresh run, so that a later run with `--resume` can check it continues
the same run: a half-written last line is dropped and redone. A write that fails (disk
full, file-size limit) is cut back to the last complete line, so what was written stays
valid JSONL and a later resume completes it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from localjudge.errors import OutputError

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
MANIFEST = "manifest.json"

# Manifest keys that may differ between two invocations of the same run.
_VOLATILE = frozenset({"command_line"})


def dumps_row(row: Mapping[str, Any]) -> str:
    """One result row as a JSON line: stable key order, no NaN, UTF-8 kept as is."""
    return json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n"


def encode_row(row: Mapping[str, Any]) -> bytes:
    """`dumps_row` as UTF-8 bytes. Text that cannot be UTF-8 (an unpaired surrogate from a
    JSON escape such as "\\ud800") is written as a JSON escape instead of failing."""
    try:
        return dumps_row(row).encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(row, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")


def _fail(path: Path, exc: OSError, doing: str, *, resumable: bool = True) -> OutputError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "the disk is full"
    elif exc.errno == errno.EFBIG:
        why = "the disk is full or the file-size limit was reached"
    elif exc.errno == errno.EROFS:
        why = "read-only file system"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        why = "permission denied"
    else:
        why = exc.strerror or str(exc)
    then = (
        "what was written stays valid: rerun with --resume to finish"
        if resumable
        else "choose another --out"
    )
    return OutputError(f"{path}: cannot {doing} ({why}); {then}")


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
            raise _fail(out_dir, exc, "create the output directory", resumable=False) from None
        if not os.access(out_dir, os.W_OK):
            raise OutputError(
                f"{out_dir}: the output directory is not writable; choose another --out"
            )
        try:
            # An empty results file holds nothing to protect (a fresh start may have been
            # cut off between emptying it and writing the new manifest).
            has_results = self.path.exists() and self.path.stat().st_size > 0
            previous = self._previous_manifest(overwrite) if has_results else None
            if previous is not None:
                same = comparable(previous) == comparable(manifest)
                if resume and same:
                    self.done = self._complete_rows()
                elif not overwrite and not same:
                    raise OutputError(
                        f"{out_dir} holds results of a different run (model, judges, prompts, "
                        "input or options differ); use --overwrite to replace them or choose "
                        "another --out"
                    )
            elif has_results and not overwrite:
                raise OutputError(
                    f"{self.path} exists but has no manifest.json; use --overwrite to replace "
                    "it or choose another --out"
                )
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise _fail(self.path, exc, "read the previous results", resumable=False) from None
        self._manifest = dict(manifest)
        self._fd: int | None = None
        self._offset = 0

    def start(self) -> None:
        """Open results.jsonl (appending when resuming) and write the manifest.

        A fresh run empties results.jsonl and removes a stale summary.json before it writes
        its manifest, so no crash can pair the new manifest with another run's rows.
        """
        # O_APPEND: after a failed write is cut back, nothing can land beyond the end.
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if self.done else os.O_TRUNC)
        try:
            self._fd = os.open(self.path, flags, 0o666)
            self._offset = os.fstat(self._fd).st_size
            if not self.done:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.dir / SUMMARY)
            _write_json(self.dir / MANIFEST, self._manifest)
        except OSError as exc:
            raise _fail(self.path, exc, "write") from None

    def _previous_manifest(self, overwrite: bool) -> dict[str, Any] | None:
        """The manifest in the directory; None when there is none. A manifest that is not
        a JSON object is refused (or, with --overwrite, treated as a different run)."""
        path = self.dir / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:  # not JSON, or not UTF-8
            data = None
        if isinstance(data, dict):
            return data
        if overwrite:
            return {}
        raise OutputError(
            f"{path} is not a readable run manifest; use --overwrite to replace the run in "
            f"{self.dir} or choose another --out"
        )

    def _complete_rows(self) -> int:
        """Count complete lines, streaming; cut off a half-written last line (or anything
        after the first line that is not JSON) so it is redone."""
        good = 0
        offset = 0
        with open(self.path, "rb") as f:
            for line in f:
                if not line.endswith(b"\n"):
                    break
                try:
                    json.loads(line)
                except ValueError:
                    break
                good += 1
                offset += len(line)
        if offset != self.path.stat().st_size:
            with open(self.path, "r+b") as f:
                f.truncate(offset)
        return good

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row. On failure the file is cut back to its last complete line."""
        if self._fd is None:
            raise RuntimeError("ResultsWriter.start() was not called")
        data = memoryview(encode_row(row))
        written = 0
        try:
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._offset)
            raise _fail(self.path, exc, "write") from None
        self._offset += written

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def rows(self) -> Iterator[dict[str, Any]]:
        """The rows of results.jsonl, read back one at a time (bounded memory)."""
        try:
            with open(self.path, "rb") as f:
                for line in f:
                    try:
                        yield json.loads(line)
                    except ValueError:
                        raise OutputError(
                            f"{self.path} was changed during the run (a line is not JSON); "
                            "rerun to resume"
                        ) from None
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise _fail(self.path, exc, "read back") from None

    def read_back(self) -> list[dict[str, Any]]:
        return list(self.rows())


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write JSON atomically: a temporary file, fsynced, renamed over `path`. On failure
    the temporary file is removed and `path` is left as it was."""
    tmp = path.with_name(path.name + ".tmp")
    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    try:
        payload = text.encode("utf-8")
    except UnicodeEncodeError:
        payload = (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("ascii")
    try:
        with open(tmp, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
    judges = summary.get("judges", {})
    unsure = {k: v["rows_unsure"] for k, v in judges.items() if "rows_unsure" in v}
    if unsure:  # rows inside a calibration's unsure band: left out of the rates above
        footer += "\nrated unsure (not in the rates): " + ", ".join(
            f"{k} {n}" for k, n in unsure.items()
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
