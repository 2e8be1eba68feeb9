"""localjudge: judge RAG and agent outputs with a local LLM, offline, on CPU."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("localjudge")
except PackageNotFoundError:  # running from a checkout that is not installed
    __version__ = "0.0.0+checkout"

__all__ = ["__version__"]
