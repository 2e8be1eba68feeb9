"""The local model store: where it is, its entries, and the meta.json each entry keeps.

Layout: ``store_dir()/ID/FILE`` plus ``store_dir()/ID/meta.json`` recording the file's
SHA-256, size, mtime_ns, source ("hub" | "pypi" | "import") and whether the hash came from the
catalogue (pinned) or was recorded at the first delivery (unpinned). meta.json is written
atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge.errors import ModelError, UsageError
from localjudge.models.catalogue import _ID_RE, _SHA_RE

HOME_ENV = "LOCALJUDGE_HOME"


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


def _write_meta(
    entry_dir: Path, file_name: str, sha256: str, stat: os.stat_result, *, source: str, pinned: bool
) -> None:
    """Record the entry's file as it stands (``stat``: its size and mtime_ns) in meta.json."""
    record = {
        "file": file_name,
        "sha256": sha256,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "source": source,
        "pinned": pinned,
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


def _make_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ModelError(f"cannot create {path}: {err.strerror or err}") from err


def remove_model(model_id: str) -> Path:
    """Delete the store entry of ``model_id``; returns the directory removed."""
    entry_dir = _entry_dir(model_id)
    if not entry_dir.is_dir():
        raise UsageError(f"nothing to remove: model '{model_id}' is not in the store ({entry_dir})")
    shutil.rmtree(entry_dir)
    return entry_dir
