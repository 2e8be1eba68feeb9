"""``models pull`` from the Hub, against a local stand-in for the Hub's download endpoints."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner, Result
from huggingface_hub import constants as hf_constants

from localjudge import models
from localjudge.cli_models import models_group
from tests.hubserver import (
    HubStub,
    closed_port_url,
    isolate,
    make_gguf,
    model_table,
    serve_hub,
    sha256,
    store_files,
    write_catalogue,
)

REPO = "test-org/tiny-GGUF"
DATA = make_gguf(300_000, seed=7)
# huggingface_hub writes what it receives in chunks of DOWNLOAD_CHUNK_SIZE (10 MiB) and resumes
# from the last whole chunk, so the file cut midway must be larger than one chunk.
BIG = make_gguf(hf_constants.DOWNLOAD_CHUNK_SIZE + 2_000_000, seed=8)
CUT = hf_constants.DOWNLOAD_CHUNK_SIZE + 1_000_000


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Isolated store and HF cache; a catalogue with pinned, wrong-hash and unpinned entries."""
    root = isolate(monkeypatch, tmp_path)
    wrong = model_table("tiny.gguf", DATA, sha256="0" * 64)
    catalogue = {
        "tiny": model_table("tiny.gguf", DATA),
        "big": model_table("big.gguf", BIG),
        "wrong-hash": wrong,
        "unpinned": model_table("tiny.gguf", DATA, pinned=False),
        "size-wrong": model_table("tiny.gguf", DATA, pinned=False, size=len(DATA) + 1),
        "absent": model_table("absent.gguf", None),
    }
    path = write_catalogue(tmp_path / "catalogue.toml", catalogue, default="tiny")
    monkeypatch.setenv("LOCALJUDGE_CATALOGUE", str(path))
    return root


@pytest.fixture
def hub(env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubStub]:
    with serve_hub(HubStub(files={(REPO, "tiny.gguf"): DATA, (REPO, "big.gguf"): BIG})) as stub:
        monkeypatch.setenv("HF_ENDPOINT", stub.url)
        yield stub


def pull(*args: str) -> Result:
    return CliRunner().invoke(models_group, ["pull", *args])


def hf_cache_files(tmp_path: Path) -> list[str]:
    return [f for f in store_files(tmp_path / "hf") if "/blobs/" in f or f.endswith(".incomplete")]


def test_pull_downloads_verifies_and_stores(hub: HubStub, env: Path) -> None:
    result = pull("tiny")
    assert result.exit_code == 0, result.output
    stored = env / "tiny" / "tiny.gguf"
    assert stored.read_bytes() == DATA
    assert result.stdout == f"tiny  {stored}  sha256:{sha256(DATA)}\n"
    meta = json.loads((env / "tiny" / "meta.json").read_text())
    assert (meta["source"], meta["pinned"], meta["sha256"]) == ("hub", True, sha256(DATA))
    assert models.resolve_for_eval("tiny").path == stored
    assert [r.path for r in hub.gets()] == [f"/{REPO}/resolve/main/tiny.gguf"]

    again = pull("tiny")
    assert again.exit_code == 0 and "already present and verified" in again.stderr
    assert len(hub.gets()) == 1  # nothing downloaded the second time


def test_cut_download_is_resumed_with_a_range_request(hub: HubStub, env: Path) -> None:
    hub.cut_first_get_after = CUT
    result = pull("big")
    assert result.exit_code == 0, result.output
    first, second = hub.gets()
    assert "range" not in first.headers
    assert second.headers["range"] == f"bytes={hf_constants.DOWNLOAD_CHUNK_SIZE}-"
    assert models.verify_model("big").sha256 == sha256(BIG)


def test_download_cut_for_good_leaves_nothing_behind(
    hub: HubStub, env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import file_download

    # huggingface_hub waits a second between its resume attempts; the test need not.
    monkeypatch.setattr(file_download, "time", SimpleNamespace(sleep=lambda seconds: None))
    hub.cut_first_get_after = CUT
    hub.drop_later_gets = True
    result = pull("big")
    assert result.exit_code == 3
    assert result.stderr.startswith("Error: cannot download") and result.stderr.count("\n") == 1
    assert store_files(env) == []
    assert hf_cache_files(tmp_path) == []


def test_checksum_mismatch_deletes_the_download(hub: HubStub, env: Path, tmp_path: Path) -> None:
    result = pull("wrong-hash")
    assert result.exit_code == 3
    assert "does not match the catalogue's" in result.stderr
    assert "deleted from the Hugging Face cache" in result.stderr
    assert result.stderr.count("\n") == 1
    assert store_files(env) == []
    assert hf_cache_files(tmp_path) == []


def test_not_found_on_the_hub(hub: HubStub, env: Path) -> None:
    result = pull("absent")
    assert result.exit_code == 3
    assert "not found (HTTP 404)" in result.stderr and result.stderr.count("\n") == 1
    assert store_files(env) == []


def test_server_down(env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    url = closed_port_url()
    monkeypatch.setenv("HF_ENDPOINT", url)
    result = pull("tiny")
    assert result.exit_code == 3
    assert f"cannot download {REPO}/tiny.gguf (revision main) from {url}" in result.stderr
    assert "`localjudge models import FILE --as tiny`" in result.stderr
    assert result.stderr.count("\n") == 1
    assert store_files(env) == []
    assert hf_cache_files(tmp_path) == []


def test_offline_mode_uses_the_hf_cache_only(
    hub: HubStub, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    refused = pull("tiny")
    assert refused.exit_code == 3 and "HF_HUB_OFFLINE is set" in refused.stderr
    assert [r for r in hub.requests if "/resolve/" in r.path] == []

    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert pull("tiny").exit_code == 0
    assert models.remove_model("tiny") == env / "tiny"
    served = len(hub.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from_cache = pull("tiny")  # the HF cache still has it: delivered without a request
    assert from_cache.exit_code == 0, from_cache.output
    assert hub.requests[served:] == []
    assert (env / "tiny" / "tiny.gguf").read_bytes() == DATA


def test_unpinned_entry_records_its_first_hash(hub: HubStub, env: Path) -> None:
    assert pull("unpinned").exit_code == 0
    meta = json.loads((env / "unpinned" / "meta.json").read_text())
    assert (meta["pinned"], meta["sha256"]) == (False, sha256(DATA))
    rows = {row.id: row for row in models.list_models()}
    assert rows["unpinned"].pin == f"unpinned (recorded sha256 {sha256(DATA)[:12]}…)"
    listed = CliRunner().invoke(models_group, ["list"]).stdout
    assert f"unpinned (recorded sha256 {sha256(DATA)[:12]}…)" in listed


def test_pull_force_fetches_again(hub: HubStub, env: Path) -> None:
    assert pull("tiny").exit_code == 0
    stored = env / "tiny" / "tiny.gguf"
    stored.write_bytes(b"GGUF" + bytes(len(DATA) - 4))  # damage the store copy
    result = pull("tiny")  # the damaged copy fails its check, so it is delivered again
    assert result.exit_code == 0 and "fails its check" in result.stderr
    assert stored.read_bytes() == DATA
    assert pull("tiny", "--force").exit_code == 0


def test_pypi_options_are_refused_for_the_hub(env: Path) -> None:
    result = pull("tiny", "--find-links", "/nowhere")
    assert result.exit_code == 2 and "--via pypi" in result.stderr


def test_size_mismatch_is_refused_before_downloading(hub: HubStub, env: Path) -> None:
    result = pull("size-wrong")
    assert result.exit_code == 3 and f"the catalogue says {len(DATA) + 1}" in result.stderr
    assert hub.gets() == [] and store_files(env) == []


def test_hf_token_is_read_at_call_time(
    hub: HubStub, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_testtoken")
    assert pull("tiny").exit_code == 0
    resolve_requests = [r for r in hub.requests if "/resolve/" in r.path]
    assert resolve_requests
    assert all(r.headers.get("authorization") == "Bearer hf_testtoken" for r in resolve_requests)
