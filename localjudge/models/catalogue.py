"""The model catalogue: ``models/catalogue.toml`` parsed into frozen entries, one per model id.

Which file is read: $LOCALJUDGE_CATALOGUE, else the copy shipped in the wheel
(``localjudge/_catalogue``), else the checkout's ``models/catalogue.toml``. The parsed file is
cached per path; a malformed catalogue is a UsageError naming the table and key at fault.
"""

from __future__ import annotations

import importlib.resources
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from localjudge.errors import UsageError

CATALOGUE_ENV = "LOCALJUDGE_CATALOGUE"

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHA_RE = re.compile(r"[0-9a-f]{64}")
_REQ_NAME_RE = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*([^\s;,]+))?")


@dataclass(frozen=True)
class CatalogueEntry:
    """One ``[models.ID]`` table of the catalogue: a GGUF file and how to get and check it."""

    id: str
    repo: str
    file: str
    revision: str
    size: int | None
    sha256: str | None
    license: str
    context_length: int
    template: str
    description: str
    pypi_packages: tuple[str, ...] = ()
    pypi_members: tuple[str, ...] = ()
    thresholds: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )

    @property
    def pinned(self) -> bool:
        """True when the catalogue gives the file's SHA-256."""
        return self.sha256 is not None


def catalogue_source() -> Path:
    """The catalogue file in use: $LOCALJUDGE_CATALOGUE, the wheel's copy, or the checkout's."""
    override = os.environ.get(CATALOGUE_ENV)
    if override:
        return Path(override).expanduser()
    packaged = importlib.resources.files("localjudge") / "_catalogue" / "catalogue.toml"
    if isinstance(packaged, Path) and packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "models" / "catalogue.toml"


def load_catalogue() -> dict[str, CatalogueEntry]:
    """All catalogue entries by id (a fresh dict; the parsed file is cached per path)."""
    return dict(_parsed_catalogue(str(catalogue_source()))[1])


def default_model_id() -> str:
    """The catalogue's ``default`` model id."""
    return _parsed_catalogue(str(catalogue_source()))[0]


@lru_cache(maxsize=8)
def _parsed_catalogue(path: str) -> tuple[str, Mapping[str, CatalogueEntry]]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise UsageError(f"cannot read the model catalogue {path}: {err.strerror or err}") from err
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise UsageError(f"model catalogue {path} is not valid TOML: {err}") from err
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise UsageError(f"model catalogue {path}: no [models.ID] tables")
    entries: dict[str, CatalogueEntry] = {}
    for model_id, table in models.items():
        if not _ID_RE.fullmatch(model_id):
            raise UsageError(f"model catalogue {path}: '{model_id}' is not a usable model id")
        if not isinstance(table, dict):
            raise UsageError(f"model catalogue {path}: models.{model_id} is not a table")
        entries[model_id] = _parse_entry(model_id, table, f"model catalogue {path}")
    default = data.get("default")
    if not isinstance(default, str) or default not in entries:
        raise UsageError(f"model catalogue {path}: 'default' must name one of its models")
    return default, MappingProxyType(entries)


def _parse_entry(model_id: str, table: Mapping[str, Any], where: str) -> CatalogueEntry:
    def fail(key: str, expected: str) -> UsageError:
        return UsageError(f"{where}: models.{model_id}.{key}: expected {expected}")

    def text(key: str, default: str | None = None) -> str:
        value = table.get(key, default)
        if not isinstance(value, str) or not value:
            raise fail(key, "a non-empty string")
        return value

    def optional_int(key: str) -> int | None:
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise fail(key, "a positive integer")
        return value

    file_name = text("file")
    if "/" in file_name or "\\" in file_name or file_name.startswith("."):
        raise fail("file", "a plain file name")
    sha256 = table.get("sha256")
    if sha256 is not None:
        if not isinstance(sha256, str) or not _SHA_RE.fullmatch(sha256.lower()):
            raise fail("sha256", "64 hexadecimal digits")
        sha256 = sha256.lower()
    context_length = optional_int("context_length")
    if context_length is None:
        raise fail("context_length", "a positive integer")

    pypi = table.get("pypi", {})
    if not isinstance(pypi, dict):
        raise fail("pypi", "a table")
    packages = pypi.get("packages", [])
    members = pypi.get("members", [])
    for key, value in (("packages", packages), ("members", members)):
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise fail(f"pypi.{key}", "a list of non-empty strings")
    if members and len(members) != len(packages):
        raise fail("pypi.members", f"one member per package ({len(packages)})")
    for requirement in packages:
        if _REQ_NAME_RE.fullmatch(requirement) is None:
            raise fail("pypi.packages", f"'name' or 'name==version', not '{requirement}'")

    thresholds_table = table.get("thresholds", {})
    if not isinstance(thresholds_table, dict):
        raise fail("thresholds", "a table of judge name = number")
    thresholds: dict[str, float] = {}
    for judge, value in thresholds_table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise fail(f"thresholds.{judge}", "a number between 0 and 1")
        thresholds[judge] = float(value)

    return CatalogueEntry(
        id=model_id,
        repo=text("repo"),
        file=file_name,
        revision=text("revision", "main"),
        size=optional_int("size"),
        sha256=sha256,
        license=text("license"),
        context_length=context_length,
        template=text("template"),
        description=str(table.get("description", "")),
        pypi_packages=tuple(packages),
        pypi_members=tuple(members),
        thresholds=MappingProxyType(thresholds),
    )


def _catalogued(model_id: str) -> CatalogueEntry:
    entry = load_catalogue().get(model_id)
    if entry is None:
        raise UsageError(
            f"unknown model '{model_id}': not in the catalogue; see `localjudge models list`"
        )
    return entry
