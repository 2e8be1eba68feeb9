"""Silence llama.cpp at the file-descriptor level.

llama.cpp and ggml write from C straight to file descriptor 2, bypassing sys.stderr, so
the only reliable way to keep the terminal clean is to point fd 2 at /dev/null while the
library runs, and restore it afterwards whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_stderr(enabled: bool = True) -> Iterator[None]:
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
