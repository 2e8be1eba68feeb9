"""localjudge: judge RAG and agent outputs with a local LLM, offline, on CPU."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("localjudge")
except PackageNotFoundError:  # running from a checkout that is not installed
    __version__ = "0.0.0+checkout"

from localjudge.evaluation import Result, evaluate  # noqa: E402  (needs __version__)

__all__ = ["Result", "__version__", "evaluate"]
