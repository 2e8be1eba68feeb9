"""``models list``: every catalogue entry and every store entry, with its state, without hashing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from localjudge.models.catalogue import CatalogueEntry, default_model_id, load_catalogue
from localjudge.models.store import _read_meta, _store_ids, store_dir


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
