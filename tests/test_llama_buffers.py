"""llama.cpp's extra buffer types: off on a CPU with AMX (whose kernel crashes the process),
on elsewhere, LOCALJUDGE_EXTRA_BUFFERS deciding instead; recorded in the backend's
description."""

from __future__ import annotations

from pathlib import Path

import pytest

from localjudge.engine import llama
from localjudge.errors import ModelError

SAPPHIRE_RAPIDS = frozenset({"avx2", "avx512f", "amx_bf16", "amx_int8", "amx_tile"})
EPYC = frozenset({"avx2", "avx512f", "avx512_bf16"})


def test_extra_buffers_off_on_an_amx_cpu_and_on_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(llama.EXTRA_BUFFERS_ENV, raising=False)
    assert llama.default_extra_buffers(SAPPHIRE_RAPIDS) is False
    assert llama.default_extra_buffers(EPYC) is True
    assert llama.default_extra_buffers(frozenset()) is True


@pytest.mark.parametrize(("setting", "expected"), [("0", False), ("1", True), (" 1 ", True)])
def test_the_environment_decides_over_the_cpu(
    monkeypatch: pytest.MonkeyPatch, setting: str, expected: bool
) -> None:
    monkeypatch.setenv(llama.EXTRA_BUFFERS_ENV, setting)
    assert llama.default_extra_buffers(SAPPHIRE_RAPIDS) is expected
    assert llama.default_extra_buffers(EPYC) is expected


def test_a_bad_setting_is_an_error_that_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(llama.EXTRA_BUFFERS_ENV, "yes")
    with pytest.raises(ModelError, match="LOCALJUDGE_EXTRA_BUFFERS must be 0 or 1"):
        llama.default_extra_buffers(EPYC)


def test_cpu_flags_read_from_proc_cpuinfo() -> None:
    flags = llama.cpu_flags()
    if not Path("/proc/cpuinfo").exists():
        assert flags == frozenset()
    else:
        text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
        first = next(line for line in text.splitlines() if line.startswith("flags"))
        assert flags == frozenset(first.partition(":")[2].split())


def test_model_params_set_while_the_model_is_built_and_restored_after() -> None:
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params
    for value in (False, True):
        with llama.extra_buffers_set(value):
            assert lib.llama_model_default_params().use_extra_bufts is value
        assert lib.llama_model_default_params is original
    with pytest.raises(RuntimeError), llama.extra_buffers_set(False):
        raise RuntimeError("llama.cpp failed")
    assert lib.llama_model_default_params is original


@pytest.mark.model
def test_backend_without_extra_buffers_judges_and_says_so(small_model: Path) -> None:
    from localjudge.engine.base import VerdictRequest
    from localjudge.judges.base import YES_NO, make_prompt, question

    backend = llama.LlamaBackend(small_model, n_ctx=1024, threads=2, extra_buffers=False)
    try:
        assert backend.describe()["extra_buffers"] is False
        # A prompt of well over a few tokens: one batch through the matrix multiply that
        # crashes with AMX's buffers.
        text = "Is the sky blue on a clear day? " * 30 + "Answer yes or no."
        (verdict,) = backend.judge([VerdictRequest(make_prompt([question(text)]), YES_NO)])
        assert verdict.label in YES_NO
        assert sum(verdict.probabilities.values()) == pytest.approx(1.0)
    finally:
        backend.close()
    auto = llama.LlamaBackend(small_model, n_ctx=512)
    try:
        assert auto.describe()["extra_buffers"] is llama.default_extra_buffers()
    finally:
        auto.close()
