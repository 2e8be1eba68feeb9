"""The checks every model file passes: its size, its GGUF header, its SHA-256."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from localjudge.errors import ModelError

_CHUNK = 1 << 20
_GGUF_MAGIC = b"GGUF"
# llama.cpp reads GGUF versions 1 to 3; a few later versions are let through so that a newer
# file fails in llama.cpp with its own message rather than here as "implausible".
_GGUF_MAX_VERSION = 15


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
