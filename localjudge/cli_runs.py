"""``localjudge summary | report | compare``: commands over finished runs (a directory that
``eval --out DIR`` wrote). Each is a few lines over localjudge.runs, .report and .compare;
results on stdout, errors as ``Error: <message>`` on stderr with exit code 2."""

from __future__ import annotations

from pathlib import Path

import click

from localjudge.cli_models import run_guarded

FORMATS = click.Choice(["table", "json", "markdown"])


@click.command("summary")
@click.argument("run_dir", metavar="RUN_DIR")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def summary_cmd(run_dir: str, fmt: str) -> None:
    """Print the summary of a finished run, as `eval` printed it, from its results.jsonl.

    RUN_DIR is the --out directory of an eval (or its results.jsonl). The aggregates are
    recomputed from the rows, so they hold for a run that was cut off, too; timings are not
    in results.jsonl and are not shown.
    """
    from localjudge import output, runs

    def body() -> None:
        run = runs.load_run(run_dir)
        click.echo(output.render(runs.summary_of(run), fmt, run.path))

    run_guarded(body)


@click.command("compare")
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@click.option(
    "--format",
    "fmt",
    type=FORMATS,
    default="table",
    show_default=True,
    help="markdown is ready to post as a pull-request comment.",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when any judge of RUN_B is worse than in RUN_A beyond its paired 95% interval.",
)
@click.option(
    "--allow-different-models",
    is_flag=True,
    help="Compare runs of different models or thresholds (refused otherwise: "
    "their verdicts differ by construction).",
)
def compare_cmd(
    run_a: str, run_b: str, fmt: str, fail_on_regression: bool, allow_different_models: bool
) -> None:
    """Compare RUN_B against RUN_A: the same judges over the same rows, matched by
    request_id.

    For each judge: its main aggregate in both runs over the rows both scored, the
    difference B - A and its paired bootstrap 95% interval; then the rows whose verdicts
    changed and the rows present in only one run. Exit codes: 0 done, 1 a judge is worse
    beyond its interval (with --fail-on-regression), 2 bad invocation or runs that cannot
    be compared.
    """
    from localjudge import compare, runs

    def body() -> int:
        result = compare.compare(
            runs.load_run(run_a),
            runs.load_run(run_b),
            allow_different_models=allow_different_models,
        )
        click.echo(compare.render(result, fmt))
        if fail_on_regression and result.regressions:
            names = ", ".join(d.judge for d in result.regressions)
            click.echo(f"Worse beyond the interval: {names}", err=True)
            return 1
        return 0

    raise SystemExit(run_guarded(body))


@click.command("report")
@click.argument("run_dir", metavar="RUN_DIR")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Where to write the page (default: RUN_DIR/report.html).",
)
def report_cmd(run_dir: str, html_path: str | None) -> None:
    """Write one self-contained HTML page of a finished run: its manifest, each judge's
    aggregate with its interval, the distribution of each judge's probability split by
    verdict, and every row, filterable to failing rows and sortable by probability.

    The page loads nothing from the network. Needs the `report` extra
    (pip install 'localjudge[report]': Jinja2 and matplotlib).
    """
    from localjudge import report, runs

    def body() -> None:
        run = runs.load_run(run_dir)
        target = Path(html_path) if html_path else run.path / "report.html"
        report.write_report(run, target)
        click.echo(str(target))

    run_guarded(body)


COMMANDS = (summary_cmd, compare_cmd, report_cmd)
