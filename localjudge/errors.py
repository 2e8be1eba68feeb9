"""One base error for localjudge; each subclass also inherits the matching builtin.

The CLI maps these to exit codes (SPEC §1): 2 for unusable invocation or input,
3 for model problems. Messages are one line and say what to do next.
"""

from __future__ import annotations


class LocalJudgeError(Exception):
    """Base class of every error localjudge raises on purpose."""

    exit_code: int = 2


class UsageError(LocalJudgeError, ValueError):
    """The invocation cannot be carried out (bad option value, bad judge file)."""

    exit_code = 2


class InputFileError(LocalJudgeError, OSError):
    """The input file cannot be read, is empty, or is not UTF-8."""

    exit_code = 2


class InvalidRecordError(LocalJudgeError, ValueError):
    """One input line is unusable. Carries the line number and the field."""

    exit_code = 2

    def __init__(self, line: int, field: str | None, message: str) -> None:
        self.line = line
        self.field = field
        self.reason = message
        where = f"line {line}" + (f", field '{field}'" if field else "")
        super().__init__(f"{where}: {message}")


class ModelError(LocalJudgeError, RuntimeError):
    """A model problem: corrupt, truncated, not GGUF, cannot load."""

    exit_code = 3


class ModelNotFoundError(ModelError, FileNotFoundError):
    """The model is not in the local store; the message names the command that fixes it."""

    exit_code = 3


class ModelDownloadError(ModelError):
    """A download or PyPI delivery failed; nothing half-written is left in the store."""

    exit_code = 3


class ChecksumError(ModelError):
    """A model file's SHA-256 does not match the catalogue."""

    exit_code = 3


class OutputError(LocalJudgeError, OSError):
    """The output directory cannot be written, or holds a run that does not match."""

    exit_code = 2
