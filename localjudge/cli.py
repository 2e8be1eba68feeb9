"""The command line: a thin Click layer over the library.

Exit codes (SPEC §1): 0 done; 1 a --fail-under threshold was missed; 2 unusable
invocation or input file; 3 model problem. Results go to stdout, progress and
diagnostics to stderr; llama.cpp's own logging only with --verbose.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from localjudge import __version__
from localjudge.cli_labels import calibration_option
from localjudge.errors import LocalJudgeError, OutputError, UsageError

F = TypeVar("F", bound=Callable[..., Any])


def _guard(fn: Callable[[], int]) -> None:
    """Run a command body; map our errors to one line on stderr and their exit code."""
    try:
        code = fn()
    except LocalJudgeError as err:
        click.echo(f"Error: {err}", err=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted; rerun the same command to resume.", err=True)
        sys.exit(130)
    except OSError as err:  # e.g. stdout closed under us: one line, not a traceback
        click.echo(f"Error: {err}", err=True)
        sys.exit(2)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="localjudge")
def cli() -> None:
    """Judge RAG and agent outputs with a local LLM: offline, on CPU, reproducible."""


def _parse_fail_under(values: tuple[str, ...]) -> list[tuple[str, float]]:
    out = []
    for item in values:
        name, sep, number = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out.append((name.strip(), float(number)))
        except ValueError:
            raise UsageError(
                f"--fail-under {item!r}: expected JUDGE=VALUE, e.g. safety=0.9"
            ) from None
    return out


@cli.command("eval")
@click.argument("data", metavar="DATA")
@click.option(
    "--judges",
    "judge_names",
    metavar="LIST",
    help="Comma-separated judges to run (default: every judge whose inputs a row has).",
)
@click.option(
    "--judge-file",
    type=click.Path(dir_okay=False),
    metavar="TOML",
    help="Declare custom judges (see README, 'Custom judges').",
)
@click.option(
    "--model",
    "model_spec",
    metavar="ID|PATH",
    help="A catalogued model id (see `localjudge models list`) or a GGUF file. "
    "Default: the embedded default model.",
)
@click.option(
    "--out",
    "out_dir",
    default="localjudge-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory for results.jsonl and summary.json.",
)
@click.option(
    "--resume/--no-resume",
    default=True,
    show_default=True,
    help="Continue a partial run in --out that has the same manifest.",
)
@click.option("--overwrite", is_flag=True, help="Replace results of a different run in --out.")
@click.option(
    "--rationale",
    "rationale_mode",
    type=click.Choice(["all", "failing", "none"]),
    is_flag=False,
    flag_value="all",
    default="all",
    show_default=True,
    help="Which verdicts get a short rationale: all, only those that fail (the rows a "
    "person reads first), or none. Verdicts are the same in every mode; each rationale "
    "costs generated tokens. --rationale alone means all.",
)
@click.option("--no-rationale", is_flag=True, help="No rationale (as --rationale none).")
@click.option(
    "--guard/--no-guard",
    "injection_guard",
    default=True,
    show_default=True,
    help='Take text addressed to the judge ("ignore the instructions above", fake chat '
    "turns, fake verdicts) out of the request, response and chunks before judging; "
    "each removal is listed in the row's guard/removed field. Turn off to judge "
    "material about prompt injection itself.",
)
@click.option(
    "--threads", type=click.IntRange(1, 256), help="CPU threads (default: physical cores)."
)
@click.option(
    "--ctx",
    "n_ctx",
    type=click.IntRange(256, 131072),
    default=4096,
    show_default=True,
    help="Context size in tokens; longer material is truncated with a marker.",
)
@click.option(
    "--batch-size",
    type=click.IntRange(8, 8192),
    default=512,
    show_default=True,
    help="Tokens per llama.cpp decode batch.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed (recorded).")
@click.option("--limit", type=click.IntRange(1), help="Judge only the first N rows.")
@click.option(
    "--prompt-cache/--no-prompt-cache",
    default=True,
    show_default=True,
    help="Reuse the evaluated shared prompt prefix between verdicts "
    "(results are identical either way).",
)
@click.option(
    "--fail-under",
    multiple=True,
    metavar="JUDGE=VALUE",
    help="Exit 1 when JUDGE's main aggregate is below VALUE. Repeatable.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="How to print the summary on stdout.",
)
@click.option(
    "--strict", is_flag=True, help="Exit 2 on any bad input line, before loading the model."
)
@click.option("--verbose", is_flag=True, help="Show llama.cpp's own log lines.")
@calibration_option(
    "Thresholds (and unsure bands) fitted on your labels by `localjudge calibrate`; they "
    "override the catalogue's."
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Also write the run's self-contained HTML report to FILE (as `localjudge report`).",
)
def eval_cmd(**kw: Any) -> None:
    """Judge every row of DATA (.jsonl, .json array, .csv, or - for stdin).

    Writes OUT/results.jsonl (one line per input row, in input order) and OUT/summary.json
    (aggregates with counts and 95% intervals, plus the run manifest), and prints the
    summary. Exit codes: 0 done, 1 a --fail-under threshold missed, 2 bad invocation or
    input, 3 model problem.
    """
    _guard(lambda: _eval(**kw))


def _eval(
    data: str,
    judge_names: str | None,
    judge_file: str | None,
    model_spec: str | None,
    out_dir: str,
    resume: bool,
    overwrite: bool,
    rationale_mode: str,
    no_rationale: bool,
    injection_guard: bool,
    threads: int | None,
    n_ctx: int,
    batch_size: int,
    seed: int,
    limit: int | None,
    prompt_cache: bool,
    fail_under: tuple[str, ...],
    fmt: str,
    strict: bool,
    verbose: bool,
    calibration_file: str | None = None,
    html_path: str | None = None,
) -> int:
    from localjudge import api, calibration, evaluation, judges, models, output
    from localjudge.engine.base import BackendStats
    from localjudge.engine.llama import physical_cores
    from localjudge.records import read_records

    thresholds_wanted = _parse_fail_under(fail_under)
    rationale: evaluation.Rationale = (
        False
        if no_rationale or rationale_mode == "none"
        else "failing"
        if rationale_mode == "failing"
        else True
    )
    if html_path:
        from localjudge import report

        report.check_available()  # before the model loads, not after the run
    records = read_records(data)
    if strict and records.bad:
        first = records.bad[0]
        raise UsageError(f"{data}: {len(records.bad)} bad line(s) (--strict); first: {first.error}")
    rows = records.rows[:limit] if limit else records.rows
    custom = judges.load_judge_file(judge_file, set(judges.BUILTIN)) if judge_file else []
    names = [n.strip() for n in judge_names.split(",") if n.strip()] if judge_names else None
    chosen = judges.select(names, custom)
    by_name = {j.name: j for j in chosen}
    for name, _ in thresholds_wanted:
        if name not in by_name:
            raise UsageError(f"--fail-under {name}: not among the judges of this run")

    cal = calibration.load(calibration_file) if calibration_file else None
    resolved = models.resolve_for_eval(model_spec)
    entry = resolved.entry
    thresholds = dict(entry.thresholds) if entry else {}
    if cal is not None:
        cal.check_model(resolved.id, resolved.sha256)
        thresholds.update(cal.thresholds)
    options = judges.JudgeOptions(
        rationale=rationale is True,
        thresholds=thresholds,
        guard=injection_guard,
        unsure_bands=cal.bands if cal else {},
    )
    threads = threads or physical_cores()
    manifest = evaluation.run_manifest(
        resolved,
        chosen,
        thresholds,
        rationale,
        injection_guard,
        seed,
        threads,
        n_ctx,
        batch_size,
        data,
        rows,
    )
    if cal is not None:
        manifest["calibration"] = {**cal.manifest(), "unsure_bands": dict(cal.bands)}
    writer = output.ResultsWriter(Path(out_dir), manifest, resume=resume, overwrite=overwrite)
    if writer.done > len(rows):
        raise OutputError(
            f"{writer.path} holds {writer.done} rows but the input has {len(rows)}; "
            "use --overwrite to start over"
        )
    todo = rows[writer.done :]
    started = time.perf_counter()
    stats = BackendStats()
    if todo:
        backend = evaluation.load_backend(
            resolved,
            ctx=n_ctx,
            threads=threads,
            batch_size=batch_size,
            seed=seed,
            prompt_cache=prompt_cache,
            verbose=verbose,
        )
        stats = backend.stats
    # else: every row is done already; the run is only summarised again, with no model.
    load_seconds = time.perf_counter() - started
    judge_started = time.perf_counter()
    if todo:
        try:
            writer.start()
        except LocalJudgeError:
            backend.close()
            raise
        if writer.done:
            click.echo(f"Resuming: {writer.done} of {len(rows)} rows already done.", err=True)
        try:
            with click.progressbar(
                length=len(todo),
                label="judging",
                file=sys.stderr,
                show_pos=True,
                show_eta=True,
                item_show_func=lambda x: x,
            ) as bar:

                def on_row(result: dict[str, Any]) -> None:
                    writer.write(result)
                    elapsed = time.perf_counter() - judge_started
                    bar.update(1, f"{(bar.pos + 1) / max(elapsed, 1e-9):.2f} rows/s")

                evaluation.judge_rows(
                    todo,
                    backend,
                    chosen,
                    options.thresholds,
                    rationale,
                    options.guard,
                    on_row,
                    unsure_bands=options.unsure_bands,
                )
        finally:
            writer.close()
            backend.close()
    else:
        click.echo(f"All {len(rows)} rows already done; summarising them again.", err=True)
    judge_seconds = time.perf_counter() - judge_started
    results = writer.read_back()
    summary = api.summarise(results, chosen)
    summary["blank_lines_skipped"] = records.blank_lines
    summary["timings"] = evaluation.timings(load_seconds, judge_seconds, len(todo), stats)
    summary["manifest"] = manifest
    output.write_summary(Path(out_dir), summary)
    click.echo(output.render(summary, fmt, Path(out_dir)))
    if html_path:
        from localjudge import report, runs

        report.write_report(runs.load_run(out_dir), Path(html_path))
        click.echo(f"report: {html_path}", err=True)

    missed = []
    for name, threshold in thresholds_wanted:
        value = summary["aggregates"][api.main_metric(by_name[name])]["value"]
        if value is None or value < threshold:
            missed.append(f"{name}: {value if value is None else round(value, 4)} < {threshold}")
    if missed:
        click.echo("Below --fail-under: " + "; ".join(missed), err=True)
        return 1
    return 0


@cli.group("judges")
def judges_group() -> None:
    """List the judges and show what each needs, its labels and its prompt."""


@judges_group.command("list")
@click.option("--judge-file", type=click.Path(dir_okay=False), help="Include custom judges.")
def judges_list(judge_file: str | None) -> None:
    """Every judge: its step, what it needs, its labels."""

    def body() -> int:
        from localjudge import judges, output

        custom = judges.load_judge_file(judge_file, set(judges.BUILTIN)) if judge_file else []
        rows = [("judge", "step", "needs", "labels", "what it asks")]
        for j in judges.select(None, custom):
            rows.append(
                (
                    j.name,
                    j.step,
                    ", ".join(j.needs),
                    "/".join(j.labels) or "(no model)",
                    j.description,
                )
            )
        click.echo(output.judge_table(rows))
        return 0

    _guard(body)


@judges_group.command("show")
@click.argument("name")
@click.option("--judge-file", type=click.Path(dir_okay=False), help="Include custom judges.")
def judges_show(name: str, judge_file: str | None) -> None:
    """What NAME needs, its labels, its output fields and its prompt."""

    def body() -> int:
        from localjudge import judges
        from localjudge.judges.base import SYSTEM

        custom = judges.load_judge_file(judge_file, set(judges.BUILTIN)) if judge_file else []
        available = {j.name: j for j in judges.select(None, custom)}
        if name not in available:
            raise UsageError(f"unknown judge {name!r} (see `localjudge judges list`)")
        judge = available[name]
        click.echo(f"{judge.name} ({judge.step} judge)\n{judge.description}\n")
        click.echo(f"needs:  {', '.join(judge.needs)}")
        click.echo(f"labels: {' / '.join(judge.labels) or '(no model: computed)'}")
        click.echo("aggregates: " + ", ".join(m.key for m in judge.metrics()))
        click.echo(f"template hash: {judges.template_hash(judge)}\n")
        if judge.labels:
            click.echo("system text:\n  " + SYSTEM + "\n")
        for key, text in judge.templates().items():
            click.echo(f"{key}:\n  " + text.replace("\n", "\n  ") + "\n")
        return 0

    _guard(body)


def _register_models() -> None:
    from localjudge.cli_labels import agreement_cmd, calibrate_cmd
    from localjudge.cli_models import models_group

    cli.add_command(models_group, "models")
    cli.add_command(agreement_cmd, "agreement")
    cli.add_command(calibrate_cmd, "calibrate")


_register_models()


def _register_run_commands() -> None:
    from localjudge.cli_runs import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)


_register_run_commands()


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
