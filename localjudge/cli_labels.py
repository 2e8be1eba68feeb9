"""`localjudge agreement` and `localjudge calibrate`: the judges against the user's labels.

Both run the judges that a labelled file has labels for through api.evaluate on the
llama.cpp backend (as `eval` does; no rationale: verdicts are the same either way), then
measure (labelled.judge_report) or fit (calibration.fit_judge). The labels never reach
the judges: they are not part of a Record.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from localjudge.errors import UsageError

if TYPE_CHECKING:
    from localjudge.calibration import Calibration
    from localjudge.judges import Judge
    from localjudge.labelled import LabelledSet
    from localjudge.models import ResolvedModel

F = TypeVar("F", bound=Callable[..., Any])


def _run_options(fn: F) -> F:
    """The options `agreement` and `calibrate` share (how to run the judges)."""
    options = [
        click.argument("labelled_path", metavar="LABELLED"),
        click.option(
            "--judges",
            "judge_names",
            metavar="LIST",
            help="Comma-separated judges (default: every judge the file has labels for).",
        ),
        click.option(
            "--judge-file",
            type=click.Path(dir_okay=False),
            metavar="TOML",
            help="Custom judges, for labels of custom judges.",
        ),
        click.option(
            "--model",
            "model_spec",
            metavar="ID|PATH",
            help="A catalogued model id or a GGUF file (default: the default model).",
        ),
        click.option(
            "--threads", type=click.IntRange(1, 256), help="CPU threads (default: physical cores)."
        ),
        click.option(
            "--ctx",
            "n_ctx",
            type=click.IntRange(256, 131072),
            default=4096,
            show_default=True,
            help="Context size in tokens.",
        ),
        click.option(
            "--batch-size",
            type=click.IntRange(8, 8192),
            default=512,
            show_default=True,
            help="Tokens per llama.cpp decode batch.",
        ),
        click.option(
            "--guard/--no-guard",
            "injection_guard",
            default=True,
            show_default=True,
            help="Remove text aimed at the judge before judging, as eval does.",
        ),
        click.option("--seed", type=int, default=0, show_default=True, help="Random seed."),
        click.option("--verbose", is_flag=True, help="Show llama.cpp's own log lines."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def calibration_option(help_text: str) -> Callable[[F], F]:
    """--calibration FILE (eval, agreement)."""
    return click.option(
        "--calibration",
        "calibration_file",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help=help_text + " Refused for another model file.",
    )


def _format_option(what: str) -> Callable[[F], F]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "markdown", "json"]),
        default="table",
        show_default=True,
        help=f"How to print {what} on stdout.",
    )


@dataclass
class LabelledRun:
    labelled: LabelledSet
    judges: list[Judge]  # the judges measured
    model: ResolvedModel
    thresholds: dict[str, float]  # every judge's threshold in this run
    results: list[dict[str, Any]]
    seconds: float


def _run_labelled(
    labelled_path: str,
    judge_names: str | None,
    judge_file: str | None,
    model_spec: str | None,
    threads: int | None,
    n_ctx: int,
    batch_size: int,
    injection_guard: bool,
    seed: int,
    verbose: bool,
    calibration: Calibration | None = None,
) -> LabelledRun:
    """Read LABELLED, choose the judges, check the model (and calibration), and judge."""
    from localjudge import api, judges, labelled
    from localjudge.engine.llama import LlamaBackend, physical_cores
    from localjudge.models import resolve_for_eval

    data = labelled.read_labelled(labelled_path)
    for error in data.bad[:3]:
        click.echo(f"Skipped a labelled row that cannot be read: {error}", err=True)
    if len(data.bad) > 3:
        click.echo(f"... and {len(data.bad) - 3} more unreadable labelled row(s)", err=True)
    custom = judges.load_judge_file(judge_file, set(judges.BUILTIN)) if judge_file else []
    available = {j.name: j for j in judges.select(None, custom)}
    have = data.judges()
    names = [n.strip() for n in judge_names.split(",") if n.strip()] if judge_names else have
    for name in names:
        if name not in available:
            what = "unknown judge" if judge_names else "labels for unknown judge"
            raise UsageError(
                f"{what} '{name}' (see `localjudge judges list`; custom judges need "
                "--judge-file; --judges chooses which labels to use)"
            )
        if not labelled.comparable(available[name]):
            raise UsageError(
                f"{name} gives no yes/no verdict to compare with labels; "
                "choose others with --judges"
            )
        if name not in have:
            raise UsageError(f"{labelled_path}: no row has a label for {name}")
    chosen = [available[n] for n in names]
    model = resolve_for_eval(model_spec)
    thresholds = dict(model.entry.thresholds) if model.entry else {}
    if calibration is not None:
        calibration.check_model(model.id, model.sha256)
        thresholds.update(calibration.thresholds)
    options = judges.JudgeOptions(rationale=False, thresholds=thresholds, guard=injection_guard)
    backend = LlamaBackend(
        model.path,
        template=model.entry.template if model.entry else None,
        n_ctx=n_ctx,
        threads=threads or physical_cores(),
        batch_size=batch_size,
        seed=seed,
        verbose=verbose,
    )
    started = time.perf_counter()
    try:
        with click.progressbar(
            length=len(data.rows), label="judging", file=sys.stderr, show_pos=True, show_eta=True
        ) as bar:
            run = api.evaluate(
                [r.record for r in data.rows],
                backend,
                chosen,
                options,
                on_row=lambda _: bar.update(1),
            )
    finally:
        backend.close()
    return LabelledRun(data, chosen, model, thresholds, run.results, time.perf_counter() - started)


def _header(run: LabelledRun) -> dict[str, Any]:
    data = run.labelled
    return {
        "model": run.model.id,
        "model_sha256": run.model.sha256,
        "labelled": {
            "path": data.path,
            "sha256": data.sha256,
            "rows": len(data.rows),
            "rows_without_labels": data.unlabelled,
            "rows_unreadable": len(data.bad),
        },
        "seconds": round(run.seconds, 3),
    }


@click.command("agreement")
@_run_options
@calibration_option(
    "Apply the thresholds and unsure bands a `localjudge calibrate` file holds, as eval "
    "would (coverage then reports the share of units decided)."
)
@_format_option("the report")
def agreement_cmd(calibration_file: str | None, fmt: str, **kw: Any) -> None:
    """How often the judges agree with the labels in LABELLED.

    LABELLED is a .jsonl (or .json array) file of input rows that also carry
    "labels": {"<judge>": "yes"|"no"} (a list, one per chunk, for chunk_relevance). The
    judges never see the labels. Prints per judge: units, balanced accuracy, Cohen's kappa,
    ROC AUC of P(yes), false-yes rate (human no, judge yes) and false-no rate (human yes,
    judge no), each with a 95% bootstrap interval, coverage, per source when rows carry
    several `source`s, and the disagreeing rows.
    """
    from localjudge.cli import _guard

    def body() -> int:
        from localjudge import calibration, labelled

        cal = calibration.load(calibration_file) if calibration_file else None
        run = _run_labelled(**kw, calibration=cal)
        report = _header(run)
        report["calibration"] = cal.manifest() if cal else None
        report["judges"] = {}
        for judge in run.judges:
            units, skipped = labelled.collect_units(run.labelled, run.results, judge)
            band = cal.bands.get(judge.name) if cal else None
            threshold = run.thresholds.get(judge.name, 0.5)
            report["judges"][judge.name] = labelled.judge_report(units, skipped, threshold, band)
        click.echo(labelled.render(report, fmt))
        return 0

    _guard(body)


@click.command("calibrate")
@_run_options
@click.option(
    "--out",
    "out_file",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Where to write the calibration (TOML), for eval --calibration FILE.",
)
@click.option(
    "--unsure-target",
    type=click.FloatRange(0.5, 1.0),
    metavar="ACC",
    help="Also fit, per judge, a band around the threshold inside which a row is rated "
    "unsure, chosen to reach this balanced accuracy on the decided rows (e.g. 0.9). "
    "Off unless given.",
)
@click.option(
    "--folds",
    type=click.IntRange(2, 20),
    default=5,
    show_default=True,
    help="Folds of the cross-validated estimate.",
)
@_format_option("what was fitted")
def calibrate_cmd(
    out_file: str, unsure_target: float | None, folds: int, fmt: str, **kw: Any
) -> None:
    """Fit per-judge thresholds for your model on the labels in LABELLED.

    Runs the judges LABELLED has labels for, fits each judge's threshold on P(yes) (the
    one with the best balanced accuracy), estimates the agreement it buys by stratified
    cross-validation (fixed seed) beside the current threshold's, and writes FILE for
    `localjudge eval --calibration FILE`. FILE records the model and its SHA-256: it is
    refused for any other model file. Label 50-100 rows, both yes and no, per judge.
    """
    from localjudge.cli import _guard

    def body() -> int:
        from localjudge import __version__, calibration, labelled
        from localjudge.judges.kinds import ChunkJudge

        run = _run_labelled(**kw)
        fits: dict[str, dict[str, Any]] = {}
        for judge in run.judges:
            units, _ = labelled.collect_units(run.labelled, run.results, judge)
            scored = [u for u in units if u.p_yes is not None]
            fits[judge.name] = calibration.fit_judge(
                [u.label for u in scored],
                [float(u.p_yes) for u in scored if u.p_yes is not None],
                [u.row for u in scored],
                run.thresholds.get(judge.name, 0.5),
                None if isinstance(judge, ChunkJudge) else unsure_target,
                folds,
            )
            if unsure_target is not None and isinstance(judge, ChunkJudge):
                fits[judge.name]["notes"].append(
                    "no unsure band: bands apply to a row's rating, not to chunk ratings"
                )
        fitted = {name: f for name, f in fits.items() if "threshold" in f}
        for name, f in fits.items():
            for note in f["notes"]:
                click.echo(f"{name}: {note}", err=True)
        if not fitted:
            raise UsageError("no judge could be fitted; see the notes above")
        header = _header(run)
        text = calibration.dumps(
            {
                "model": run.model.id,
                "model_sha256": run.model.sha256,
                "labelled": run.labelled.path,
                "labelled_sha256": run.labelled.sha256,
                "localjudge": __version__,
                "unsure_target": unsure_target,
            },
            {name: calibration.judge_entry(f) for name, f in fitted.items()},
            "Written by `localjudge calibrate`; apply with `localjudge eval --calibration FILE`.\n"
            "Thresholds on P(yes) fitted on your labels for this model file only.",
        )
        calibration.write(Path(out_file), text)
        click.echo(calibration_table(header, fits, fmt, out_file))
        return 0

    _guard(body)


def calibration_table(
    header: dict[str, Any], fits: dict[str, dict[str, Any]], fmt: str, out_file: str
) -> str:
    """What calibrate fitted, for stdout."""
    import json

    from localjudge.labelled import fmt_estimate, table

    if fmt == "json":
        return json.dumps({**header, "out": out_file, "judges": fits}, indent=2)
    head = [
        "judge",
        "units (yes)",
        "current t",
        "bal. acc. at current",
        "fitted t",
        "cv bal. acc. at fitted",
        "cv gain",
        "unsure band",
        "cv coverage",
        "cv bal. acc. decided",
    ]
    rows: list[Sequence[str]] = []
    for name, f in fits.items():
        band = f.get("unsure_band")
        banded = f.get("cv_banded") or {}
        rows.append(
            [
                name,
                f"{f['n']} ({f['n_yes']})",
                f"{f['current_threshold']:.3f}",
                fmt_estimate(f["current"].get("balanced_accuracy")),
                f"{f['threshold']:.3f}" if "threshold" in f else "-",
                fmt_estimate((f.get("cv") or {}).get("balanced_accuracy")),
                fmt_estimate((f.get("cv") or {}).get("gain"), signed=True),
                f"[{band[0]:.3f}, {band[1]:.3f})" if band else "-",
                fmt_estimate(banded.get("coverage")),
                fmt_estimate(banded.get("balanced_accuracy")),
            ]
        )
    lines = [
        f"model {header['model']}; {header['labelled']['rows']} labelled rows; "
        "cv: stratified k-fold, each fold decided by the threshold fitted on the others",
        "",
        *table(head, rows, fmt == "markdown"),
        "",
        f"written: {out_file}",
    ]
    return "\n".join(lines)
