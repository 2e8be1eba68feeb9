"""The one-call Python API: `localjudge.evaluate(data, ...)`.

    import localjudge
    result = localjudge.evaluate("data.jsonl", judges=["groundedness", "safety"])
    result.summary["aggregates"]        # as in summary.json
    result.rows[0]                      # as a line of results.jsonl
    result.to_pandas()                  # one row per input row (needs pandas)

`data` is a path (.jsonl, .json, .csv), a list of dicts (the input fields of README
"Input"), or a pandas DataFrame with those columns. The model is resolved as `eval` resolves
it: from the local store only, never the network. Built on api.evaluate (records and a
backend), which stays the lower-level entry point.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from localjudge import __version__, api
from localjudge import judges as registry
from localjudge.engine.base import Backend, BackendStats
from localjudge.engine.llama import default_extra_buffers
from localjudge.errors import InvalidRecordError, UsageError
from localjudge.judges import Judge, JudgeOptions
from localjudge.records import BadRecord, Record, read_records, validate_row

if TYPE_CHECKING:
    from localjudge.engine.llama import LlamaBackend
    from localjudge.models import ResolvedModel

# A rationale is at most this many tokens: one sentence, and every token costs.
RATIONALE_TOKENS = 40

Rationale = bool | Literal["failing"]
Data = str | Path | Sequence[Mapping[str, Any]] | Any  # Any: a pandas DataFrame


@dataclass
class Result:
    """What `evaluate` returns: `rows` (one dict per input row, in input order, as the
    lines of results.jsonl), `summary` (as summary.json: aggregates, counts, timings and the
    run manifest)."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame, one row per input row, columns the result
        fields. Needs pandas (not a dependency of localjudge)."""
        try:
            import pandas as pd
        except ImportError:
            raise UsageError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.rows)

    def save(self, out_dir: str | Path) -> Path:
        """Write results.jsonl, manifest.json and summary.json into `out_dir`, the layout
        `eval --out` writes, so that `localjudge summary | report | compare` read it."""
        from localjudge import output

        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / output.RESULTS, "wb") as f:
            for row in self.rows:
                f.write(output.encode_row(row))
        (folder / output.MANIFEST).write_text(
            json.dumps(self.manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
        output.write_summary(folder, self.summary)
        return folder


def _clean(value: Any) -> Any:
    """A DataFrame cell as plain JSON data: NaN (pandas' missing value) becomes None."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def rows_of(data: Data) -> list[Record | BadRecord]:
    """The input rows of `data`: a path, a list of dicts, or a pandas DataFrame. A bad row
    is kept in place as a BadRecord (as a bad line of a file is)."""
    if isinstance(data, str | Path):
        return read_records(data).rows
    if hasattr(data, "to_json") and hasattr(data, "columns"):  # a pandas DataFrame
        objects = json.loads(data.to_json(orient="records", force_ascii=False))
    elif isinstance(data, Iterable) and not isinstance(data, bytes | Mapping):
        objects = list(data)
    else:
        raise UsageError(
            f"data: expected a path, a list of dicts or a pandas DataFrame, got "
            f"{type(data).__name__}"
        )
    if not objects:
        raise UsageError("data: no rows")
    out: list[Record | BadRecord] = []
    for number, obj in enumerate(objects, start=1):
        if isinstance(obj, Mapping):
            obj = {k: _clean(v) for k, v in obj.items() if _clean(v) is not None}
        try:
            out.append(validate_row(number, obj))
        except InvalidRecordError as err:
            rid = obj.get("request_id") if isinstance(obj, Mapping) else None
            out.append(
                BadRecord(number, str(rid if rid is not None else number), err.field, str(err))
            )
    return out


def choose_judges(
    names: Sequence[str] | str | None, judge_file: str | Path | None = None
) -> list[Judge]:
    """The judges to run: names (a list or a comma-separated string; None for every judge
    whose inputs a row has) among the built-ins and the custom judges of `judge_file`."""
    custom = registry.load_judge_file(str(judge_file), set(registry.BUILTIN)) if judge_file else []
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    return registry.select(list(names) if names is not None else None, custom)


def input_hash(rows: Sequence[Record | BadRecord]) -> str:
    """SHA-256 of the parsed rows (not the file bytes: stdin and lists have no file)."""
    return hashlib.sha256(repr(list(rows)).encode("utf-8")).hexdigest()


def llama_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        return "not installed"


def evaluate(
    data: Data,
    judges: Sequence[str] | str | None = None,
    model: str | Path | None = None,
    rationale: Rationale = False,
    *,
    judge_file: str | Path | None = None,
    guard_text: bool = True,
    threads: int | None = None,
    ctx: int = 4096,
    batch_size: int = 512,
    seed: int = 0,
    limit: int | None = None,
    prompt_cache: bool = True,
    verbose: bool = False,
    backend: Backend | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> Result:
    """Judge every row of `data` and summarise them.

    `judges`: names (default: every judge whose inputs a row has). `model`: a catalogued id
    or a GGUF path (default: the embedded default), resolved from local files only; a
    missing model raises ModelNotFoundError naming the command that fetches it.
    `rationale`: True, False, or "failing" (a rationale only for verdicts that fail).
    `backend`: judge with this backend instead of loading `model` (tests, custom engines).
    `on_row` is called with each result row as soon as it is ready.
    """
    import time

    from localjudge import models

    rows = rows_of(data)
    if limit is not None:
        rows = rows[:limit]
    chosen = choose_judges(judges, judge_file)
    resolved = (
        None
        if backend is not None
        else models.resolve_for_eval(None if model is None else str(model))
    )
    entry = resolved.entry if resolved else None
    thresholds = dict(entry.thresholds) if entry else {}
    if threads is None:
        from localjudge.engine.llama import physical_cores

        threads = physical_cores()
    manifest = run_manifest(
        resolved,
        chosen,
        thresholds,
        rationale,
        guard_text,
        seed,
        threads,
        ctx,
        batch_size,
        input_info(data if isinstance(data, str | Path) else None, rows),
    )
    if resolved is None:
        assert backend is not None
        manifest["model"] = {
            "id": None,
            "file": None,
            "sha256": None,
            "backend": backend.describe(),
        }
    started = time.perf_counter()
    own = backend is None
    if backend is None:
        assert resolved is not None
        backend = load_backend(
            resolved,
            ctx=ctx,
            threads=threads,
            batch_size=batch_size,
            seed=seed,
            prompt_cache=prompt_cache,
            verbose=verbose,
        )
    load_seconds = time.perf_counter() - started
    try:
        run = judge_rows(rows, backend, chosen, thresholds, rationale, guard_text, on_row)
    finally:
        if own:
            close = getattr(backend, "close", None)
            if close is not None:
                close()
    summary = api.summarise(run.results, chosen)
    judge_seconds = run.timings.get("judge_seconds", 0.0)
    summary["timings"] = timings(load_seconds, judge_seconds, len(rows), backend.stats)
    summary["manifest"] = manifest
    return Result(run.results, summary, manifest)


def timings(
    load_seconds: float, judge_seconds: float, rows: int, stats: BackendStats
) -> dict[str, Any]:
    """The `timings` of summary.json: model load, judging, rows per second, work counters."""
    return {
        "model_load_seconds": round(load_seconds, 3),
        "judge_seconds": round(judge_seconds, 3),
        "rows_judged_this_run": rows,
        "rows_per_second": round(rows / judge_seconds, 4) if judge_seconds > 0 else None,
        **stats.as_dict(),
    }


def input_info(path: str | Path | None, rows: Sequence[Record | BadRecord]) -> dict[str, Any]:
    """The manifest's `input` for rows held in memory: path, row count, SHA-256."""
    return {
        "path": None if path is None else str(path),
        "rows": len(rows),
        "sha256": input_hash(rows),
    }


def run_manifest(
    resolved: ResolvedModel | None,
    judges: Sequence[Judge],
    thresholds: Mapping[str, float],
    rationale: Rationale,
    guard_text: bool,
    seed: int,
    threads: int,
    ctx: int,
    batch_size: int,
    inputs: Mapping[str, Any],
) -> dict[str, Any]:
    """The run manifest (SPEC §6) of summary.json and manifest.json. `inputs`: the input's
    path, rows and SHA-256 (`input_info`, or the CLI's streaming scan of the file)."""
    model = (
        {"id": resolved.id, "file": resolved.path.name, "sha256": resolved.sha256}
        if resolved
        else {}
    )
    return {
        "localjudge": __version__,
        "llama_cpp_python": llama_version(),
        "model": model,
        "judges": {j.name: registry.template_hash(j) for j in judges},
        "thresholds": dict(thresholds),
        "rationale": rationale,
        "guard": registry.guard.FINGERPRINT if guard_text else None,
        "seed": seed,
        "threads": threads,
        "ctx": ctx,
        "batch_size": batch_size,
        "flash_attn": True,
        # llama.cpp's repacked-weight buffers: off on a CPU with AMX (engine/llama.py)
        "extra_buffers": default_extra_buffers(),
        "rationale_tokens": RATIONALE_TOKENS,
        "input": dict(inputs),
        "command_line": sys.argv,
    }


def backend_factory(
    resolved: ResolvedModel,
    *,
    ctx: int,
    threads: int,
    batch_size: int,
    seed: int,
    prompt_cache: bool,
    verbose: bool,
) -> Callable[[Path], LlamaBackend]:
    """How to build the llama.cpp backend for a model file with the run's settings (the
    model's chat template from its catalogue entry); a picklable callable, so that Ray
    workers build theirs the same way from their own copy of the file."""
    from localjudge.engine.llama import LlamaBackend

    entry = resolved.entry
    return functools.partial(
        LlamaBackend,
        template=entry.template if entry else None,
        n_ctx=ctx,
        threads=threads,
        batch_size=batch_size,
        seed=seed,
        prompt_cache=prompt_cache,
        verbose=verbose,
    )


def load_backend(
    resolved: ResolvedModel,
    *,
    ctx: int,
    threads: int,
    batch_size: int,
    seed: int,
    prompt_cache: bool,
    verbose: bool,
) -> LlamaBackend:
    """The llama.cpp backend for a resolved model (raises ModelError, exit 3)."""
    make = backend_factory(
        resolved,
        ctx=ctx,
        threads=threads,
        batch_size=batch_size,
        seed=seed,
        prompt_cache=prompt_cache,
        verbose=verbose,
    )
    return make(resolved.path)


def iter_rows(
    rows: Iterable[Record | BadRecord],
    backend: Backend,
    judges: Sequence[Judge],
    options: JudgeOptions,
    failing_rationale: bool = False,
) -> Iterator[dict[str, Any]]:
    """Result rows as each is computed (api.iter_results), with a rationale only for the
    failing verdicts when `failing_rationale` (localjudge.rationale). The CLI streams its
    rows through this, on one machine and on every Ray worker."""
    if not failing_rationale:
        return api.iter_results(rows, backend, judges, options)
    from localjudge import rationale as failing

    return failing.iter_results(rows, backend, judges, options)


def judge_rows(
    rows: Sequence[Record | BadRecord],
    backend: Backend,
    judges: Sequence[Judge],
    thresholds: Mapping[str, float],
    rationale: Rationale,
    guard_text: bool,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    unsure_bands: Mapping[str, tuple[float, float]] | None = None,
) -> api.Run:
    """api.evaluate with the run's options (and a calibration's unsure bands);
    `rationale="failing"` goes through localjudge.rationale."""
    options = JudgeOptions(
        rationale=rationale is True,
        thresholds=thresholds,
        guard=guard_text,
        unsure_bands=unsure_bands or {},
    )
    if rationale == "failing":
        from localjudge import rationale as failing

        return failing.evaluate(rows, backend, judges, options, on_row=on_row)
    return api.evaluate(rows, backend, judges, options, on_row=on_row)
