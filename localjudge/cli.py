"""The command line: a thin Click layer over the library.

Exit codes (SPEC §1): 0 done; 1 a --fail-under threshold was missed; 2 unusable
invocation or input file; 3 model problem. Results go to stdout, progress and
diagnostics to stderr; llama.cpp's own logging only with --verbose.
"""

from __future__ import annotations

import functools
import itertools
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from localjudge import __version__
from localjudge.cli_labels import calibration_option
from localjudge.errors import LocalJudgeError, OutputError, UsageError

if TYPE_CHECKING:
    from localjudge.records import InputFile

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
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="auto",
    default=None,
    metavar="[ADDRESS]",
    help="Judge on a Ray cluster (needs localjudge[ray]): ADDRESS of its head, or 'auto' "
    "(the default with a bare --ray): RAY_ADDRESS, else a local Ray on this machine. "
    "Results are the same bytes as without --ray. See README, 'Large runs'.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 4096),
    help="With --ray: workers, each loading the model once with --threads threads "
    "(default: the cluster's CPUs / --threads).",
)
@click.option(
    "--ray-no-ship",
    is_flag=True,
    help="With --ray: do not ship the model to a node that lacks it (fail, naming the node).",
)
def eval_cmd(**kw: Any) -> None:
    """Judge every row of DATA (.jsonl, .json array, .csv, or - for stdin).

    Writes OUT/results.jsonl (one line per input row, in input order) and OUT/summary.json
    (aggregates with counts and 95% intervals, plus the run manifest), and prints the
    summary. Exit codes: 0 done, 1 a --fail-under threshold missed, 2 bad invocation or
    input, 3 model problem.
    """
    _guard(lambda: _eval(**kw))


def _eval(data: str, **kw: Any) -> int:
    from localjudge.records import open_input

    with open_input(data) as source:
        return _eval_input(source, **kw)


def _eval_input(
    source: InputFile,
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
    calibration_file: str | None,
    html_path: str | None,
    ray_address: str | None,
    workers: int | None,
    ray_no_ship: bool,
) -> int:
    from localjudge import api, calibration, evaluation, judges, models, output
    from localjudge.engine.base import BackendStats
    from localjudge.engine.llama import physical_cores

    data = source.name
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
    if ray_address is None and (workers is not None or ray_no_ship):
        raise UsageError("--workers and --ray-no-ship go with --ray")
    if ray_address is not None:
        from localjudge.cluster import import_ray

        import_ray()  # exit 2 with the install command before anything else
    # One streaming pass: counts, the input hash and the bad lines, before the model loads.
    scan = source.scan(limit, validate=strict)
    if strict and scan.bad:
        raise UsageError(f"{data}: {scan.bad} bad line(s) (--strict); first: {scan.first_bad}")
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
    # The rows' bytes (JSONL) or their parsed form identify the input (records.scan).
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
        {"path": data, "rows": scan.rows, "sha256": scan.sha256},
    )
    if cal is not None:
        manifest["calibration"] = {**cal.manifest(), "unsure_bands": dict(cal.bands)}
    writer = output.ResultsWriter(Path(out_dir), manifest, resume=resume, overwrite=overwrite)
    if writer.done > scan.rows:
        raise OutputError(
            f"{writer.path} holds {writer.done} rows but the input has {scan.rows}; "
            "use --overwrite to start over"
        )
    todo = scan.rows - writer.done
    started = time.perf_counter()
    stats = BackendStats()
    make_backend = evaluation.backend_factory(
        resolved,
        ctx=n_ctx,
        threads=threads,
        batch_size=batch_size,
        seed=seed,
        prompt_cache=prompt_cache,
        verbose=verbose,
    )
    cluster: dict[str, Any] | None = None
    if todo and ray_address is None:
        backend = make_backend(resolved.path)
        stats = backend.stats
        close: Callable[[], None] = backend.close
        judge_rows: Callable[[Iterable[Any]], Iterator[dict[str, Any]]] = functools.partial(
            evaluation.iter_rows,
            backend=backend,
            judges=chosen,
            options=options,
            failing_rationale=rationale == "failing",
        )

    elif todo:
        judge_rows, close, cluster = _start_cluster(
            ray_address or "auto",
            workers,
            threads,
            todo,
            stats,
            ship=not ray_no_ship,
            model_spec=model_spec,
            resolved=resolved,
            make_backend=make_backend,
            judges=chosen,
            options=options,
            failing_rationale=rationale == "failing",
            verbose=verbose,
        )
    # else: every row is done already; the run is only summarised again, with no model.
    load_seconds = time.perf_counter() - started
    judge_started = time.perf_counter()
    if todo:
        try:
            writer.start()
        except LocalJudgeError:
            close()
            raise
        if writer.done:
            click.echo(f"Resuming: {writer.done} of {scan.rows} rows already done.", err=True)
        try:
            with click.progressbar(
                length=todo,
                label="judging",
                file=sys.stderr,
                show_pos=True,
                show_eta=True,
                item_show_func=lambda x: x,
            ) as bar:
                rows = itertools.islice(source.rows(), writer.done, scan.rows)
                for result in judge_rows(rows):
                    writer.write(result)
                    elapsed = time.perf_counter() - judge_started
                    bar.update(1, f"{(bar.pos + 1) / max(elapsed, 1e-9):.2f} rows/s")
        finally:
            writer.close()
            close()
    else:
        click.echo(f"All {scan.rows} rows already done; summarising them again.", err=True)
    judge_seconds = time.perf_counter() - judge_started
    summary = api.summarise(writer.rows(), chosen)
    summary["blank_lines_skipped"] = scan.blank_lines
    summary["timings"] = evaluation.timings(load_seconds, judge_seconds, todo, stats)
    if cluster is not None:
        summary["cluster"] = cluster
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


def _start_cluster(
    address: str,
    workers: int | None,
    threads: int,
    todo: int,
    stats: Any,
    *,
    ship: bool,
    model_spec: str | None,
    resolved: Any,
    make_backend: Callable[..., Any],
    judges: Any,
    options: Any,
    failing_rationale: bool,
    verbose: bool,
) -> tuple[Callable[[Iterable[Any]], Iterator[dict[str, Any]]], Callable[[], None], dict[str, Any]]:
    """Connect to Ray and start the workers: how to judge rows there, how to stop, and
    what to report about the cluster in the summary."""
    from localjudge import cluster

    started = time.perf_counter()
    ray = cluster.connect(address, verbose=verbose)
    n = workers or max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
    info = cluster.ClusterInfo(address=address, workers=n)
    info.connect_seconds = round(time.perf_counter() - started, 3)
    model = cluster.ModelFile(model_spec, resolved.sha256, resolved.path)
    spec = cluster.WorkerSpec(model, make_backend, judges, options, failing_rationale)
    pool = cluster.start_workers(spec, n, threads, ship=ship, info=info)
    block = cluster.block_rows(todo, n)

    def judge_rows(rows: Iterable[Any]) -> Iterator[dict[str, Any]]:
        return cluster.iter_results(rows, pool, block, stats)

    return judge_rows, lambda: cluster.stop_workers(pool), vars(info) | {"block_rows": block}


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
