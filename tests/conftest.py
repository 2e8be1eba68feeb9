"""Shared fixtures: the real GGUF models the end-to-end tests run on, and a CLI runner
that goes through a real subprocess, so that what llama.cpp writes to file descriptor 2
is seen exactly as a user's terminal would see it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

# No timed assertions: hypothesis's per-example deadline fails a property test on a busy
# machine (a CI runner sharing its cores), which says nothing about the property.
settings.register_profile("localjudge", deadline=None)
settings.load_profile("localjudge")

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "rag_eval.jsonl"
SMALL_MODEL = "smollm2-135m-instruct-q4_1"

# Lines llama.cpp or ggml print when they are not silenced.
LLAMA_NOISE = (
    "llama_",
    "ggml_",
    "load_tensors",
    "llm_load",
    "gguf_",
    "print_info",
    "load:",
    "system_info",
    "CPU :",
    "llama_context",
    "Llama.generate",
)


def _model_path(model_id: str) -> Path:
    from localjudge.errors import ModelNotFoundError
    from localjudge.models import resolve_for_eval

    try:
        return resolve_for_eval(model_id).path
    except ModelNotFoundError as err:
        pytest.fail(f"{err} (scripts/setup.sh --dev installs the test models)")


@pytest.fixture(scope="session")
def small_model() -> Path:
    """SmolLM2 135M: fast, for machinery tests (useless as a judge)."""
    return _model_path(SMALL_MODEL)


@pytest.fixture(scope="session")
def default_model() -> Path:
    from localjudge.models import default_model_id

    return _model_path(default_model_id())


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def run_cli(
    *args: str | Path,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Result:
    """Run `localjudge ARGS` in a subprocess (stdin not a TTY, as in CI)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "localjudge.cli", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or REPO,
        timeout=1800,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def load_script(name: str) -> ModuleType:
    """Import scripts/NAME.py (NAME may be "experiments/x") as a module named after its file;
    scripts/ is on the path, for their own imports (the experiments import agreement)."""
    if str(REPO / "scripts") not in sys.path:
        sys.path.insert(0, str(REPO / "scripts"))
    path = REPO / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


def run_script(script: Path, *args: str | Path) -> Result:
    """Run one of scripts/*.py with ARGS in a subprocess, from the repository root."""
    proc = subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=1800,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_clean_stderr(stderr: str) -> None:
    """No traceback and no llama.cpp log line reached the terminal."""
    assert "Traceback" not in stderr, stderr
    for line in stderr.splitlines():
        assert not line.lstrip().startswith(LLAMA_NOISE), f"llama.cpp noise: {line!r}"
