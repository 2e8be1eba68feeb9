"""Catalogue, store, verification, import, remove and list: no network, tmp dirs only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from localjudge import models
from localjudge.cli_models import models_group
from localjudge.errors import (
    ChecksumError,
    ModelError,
    ModelNotFoundError,
    UsageError,
)
from localjudge.models import checks as models_checks
from localjudge.models import deliver as models_deliver
from localjudge.models import resolve as models_resolve
from localjudge.models import store as models_store
from tests.hubserver import isolate, make_gguf, model_table, sha256, store_files, write_catalogue

TINY = make_gguf(4096, seed=1)
OTHER = make_gguf(4096, seed=2)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An isolated store and a catalogue of: a pinned model with PyPI parts, an unpinned one."""
    root = isolate(monkeypatch, tmp_path)
    catalogue = write_catalogue(
        tmp_path / "catalogue.toml",
        {
            "tiny": model_table(
                "tiny.gguf",
                TINY,
                pypi={"packages": ["tiny-part1==1.0"], "members": ["tiny_part1/data/part1.bin"]},
                thresholds={"groundedness": 0.4},
            ),
            "loose": model_table("loose.gguf", None),
        },
        default="tiny",
    )
    monkeypatch.setenv("LOCALJUDGE_CATALOGUE", str(catalogue))
    return root


def invoke(*args: str) -> Result:
    return CliRunner().invoke(models_group, list(args))


def put(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


# --------------------------------------------------------------------------- catalogue


def test_shipped_catalogue_loads_and_names_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCALJUDGE_CATALOGUE", raising=False)
    catalogue = models.load_catalogue()
    default = catalogue[models.default_model_id()]
    assert default.id == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert default.pinned and default.size == 1117320768
    assert len(default.pypi_packages) == len(default.pypi_members) == 22
    assert all(0.0 < t < 1.0 for t in default.thresholds.values())
    small = catalogue["qwen2.5-coder-0.5b-instruct-q4_k_m"]
    assert small.pinned and small.size == 491400064 and len(small.pypi_members) == 6
    assert not catalogue["qwen2.5-7b-instruct-q4_k_m"].pinned
    assert all(e.file.endswith(".gguf") and e.context_length > 0 for e in catalogue.values())


def test_catalogue_entry_fields_and_thresholds(store: Path) -> None:
    entry = models.load_catalogue()["tiny"]
    assert entry.sha256 == sha256(TINY) and entry.size == len(TINY)
    assert entry.pypi_packages == ("tiny-part1==1.0",)
    assert entry.pypi_members == ("tiny_part1/data/part1.bin",)
    assert dict(entry.thresholds) == {"groundedness": 0.4}
    assert models.default_model_id() == "tiny"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("sha256", "abc", "64 hexadecimal digits"),
        ("size", -3, "positive integer"),
        ("file", "dir/x.gguf", "plain file name"),
        ("thresholds", {"safety": 2}, "between 0 and 1"),
    ],
)
def test_bad_catalogue_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, field: str, value: Any, message: str
) -> None:
    table = model_table("x.gguf", TINY)
    table[field] = value
    path = write_catalogue(tmp_path / f"bad-{field}.toml", {"x": table})
    monkeypatch.setenv("LOCALJUDGE_CATALOGUE", str(path))
    with pytest.raises(UsageError, match=message):
        models.load_catalogue()


def test_catalogue_default_must_exist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = write_catalogue(tmp_path / "c.toml", {"x": model_table("x.gguf", TINY)}, default="y")
    monkeypatch.setenv("LOCALJUDGE_CATALOGUE", str(path))
    with pytest.raises(UsageError, match="'default'"):
        models.default_model_id()


# --------------------------------------------------------------------------- store location


def test_store_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "lj"))
    assert models.store_dir() == tmp_path / "lj" / "models"
    monkeypatch.delenv("LOCALJUDGE_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert models.store_dir() == tmp_path / "xdg" / "localjudge" / "models"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert models.store_dir() == tmp_path / "user" / ".local" / "share" / "localjudge" / "models"


# --------------------------------------------------------------------------- resolve


def test_missing_model_names_the_exact_commands(store: Path) -> None:
    with pytest.raises(ModelNotFoundError) as caught:
        models.resolve_for_eval(None)
    message = str(caught.value)
    assert "`localjudge models pull tiny --via pypi`" in message
    assert "`localjudge models pull tiny`" in message
    assert "`localjudge models import FILE --as tiny`" in message
    assert "\n" not in message
    with pytest.raises(ModelNotFoundError, match="pull loose`") as caught:
        models.resolve_for_eval("loose")
    assert "--via pypi" not in str(caught.value)


def test_unknown_id_points_at_models_list(store: Path) -> None:
    with pytest.raises(UsageError, match="`localjudge models list`"):
        models.resolve_for_eval("no-such-model")


def test_store_copy_resolves_and_records_its_hash(store: Path) -> None:
    path = put(store / "tiny" / "tiny.gguf", TINY)
    model = models.resolve_for_eval("tiny")
    assert (model.id, model.path, model.sha256) == ("tiny", path, sha256(TINY))
    assert model.entry is not None and model.entry.id == "tiny"
    meta = json.loads((store / "tiny" / "meta.json").read_text())
    assert meta["sha256"] == sha256(TINY) and meta["size"] == len(TINY)
    assert meta["mtime_ns"] == path.stat().st_mtime_ns


def test_verified_hash_is_reused_while_the_file_is_unchanged(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(store / "tiny" / "tiny.gguf", TINY)
    models.resolve_for_eval("tiny")

    def no_hashing(path: Path) -> str:
        raise AssertionError(f"rehashed {path}")

    monkeypatch.setattr(models_resolve, "_sha256_file", no_hashing)
    assert models.resolve_for_eval("tiny").sha256 == sha256(TINY)


def test_truncated_file_is_refused(store: Path) -> None:
    put(store / "tiny" / "tiny.gguf", TINY[:1000])
    with pytest.raises(ModelError, match=f"truncated: 1000 of {len(TINY)} bytes"):
        models.resolve_for_eval("tiny")


def test_non_gguf_file_is_refused(store: Path, tmp_path: Path) -> None:
    put(store / "tiny" / "tiny.gguf", b"PK\x03\x04" + TINY[4:])
    with pytest.raises(ModelError, match="not a GGUF file"):
        models.resolve_for_eval("tiny")
    bad_header = put(tmp_path / "odd.gguf", b"GGUF" + b"\xff" * 60)
    with pytest.raises(ModelError, match="implausible GGUF header"):
        models.resolve_for_eval(str(bad_header))


def test_swapped_file_fails_the_checksum(store: Path) -> None:
    put(store / "tiny" / "tiny.gguf", OTHER)
    with pytest.raises(ChecksumError, match="corrupt or was replaced") as caught:
        models.resolve_for_eval("tiny")
    assert sha256(OTHER) in str(caught.value) and sha256(TINY) in str(caught.value)


def test_file_modified_after_verification_is_rehashed_and_refused(store: Path) -> None:
    path = put(store / "tiny" / "tiny.gguf", TINY)
    models.resolve_for_eval("tiny")
    with path.open("r+b") as f:  # same size, one byte flipped
        f.seek(2000)
        f.write(bytes([TINY[2000] ^ 0xFF]))
    bump_mtime(path)
    with pytest.raises(ChecksumError):
        models.resolve_for_eval("tiny")


def test_unpinned_entry_keeps_its_first_recorded_hash(store: Path) -> None:
    path = put(store / "loose" / "loose.gguf", TINY)
    assert models.resolve_for_eval("loose").sha256 == sha256(TINY)
    path.write_bytes(OTHER)
    bump_mtime(path)
    with pytest.raises(ChecksumError, match="recorded"):
        models.resolve_for_eval("loose")


def test_plain_path_is_hashed_once_and_cached(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = put(tmp_path / "mine" / "judge.gguf", TINY)
    model = models.resolve_for_eval(str(path))
    assert (model.id, model.path, model.sha256) == ("judge.gguf", path, sha256(TINY))
    assert model.entry is not None and model.entry.id == "tiny"  # same bytes as a pinned entry
    cache = json.loads((store.parent / "verified-files.json").read_text())
    assert cache["files"][str(path)]["sha256"] == sha256(TINY)

    calls: list[Path] = []
    real = models_checks._sha256_file

    def counting(p: Path) -> str:
        calls.append(p)
        return real(p)

    monkeypatch.setattr(models_resolve, "_sha256_file", counting)
    models.resolve_for_eval(str(path))
    assert calls == []
    path.write_bytes(OTHER)
    bump_mtime(path)
    changed = models.resolve_for_eval(str(path))
    assert calls == [path] and changed.sha256 == sha256(OTHER) and changed.entry is None


def test_missing_path_is_model_not_found(store: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="not found"):
        models.resolve_for_eval(str(tmp_path / "absent.gguf"))


def test_path_into_the_store_is_checked_as_that_entry(store: Path) -> None:
    path = put(store / "tiny" / "tiny.gguf", OTHER)
    with pytest.raises(ChecksumError):
        models.resolve_for_eval(str(path))


def test_resolve_never_touches_the_network(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network connection attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    put(store / "tiny" / "tiny.gguf", TINY)
    assert models.resolve_for_eval("tiny").sha256 == sha256(TINY)
    with pytest.raises(ModelNotFoundError):
        models.resolve_for_eval("loose")


def test_resolving_does_not_import_huggingface_hub(store: Path) -> None:
    put(store / "tiny" / "tiny.gguf", TINY)
    code = (
        "import sys; from localjudge import models; models.resolve_for_eval('tiny'); "
        "print(sorted(m for m in ('huggingface_hub', 'httpx', 'httpx2', 'requests') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert out.stdout.strip() == "[]"


def test_read_only_store_still_verifies(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put(store / "tiny" / "tiny.gguf", TINY)

    def refuse(path: Path, record: object) -> None:
        raise PermissionError(13, "Read-only file system", str(path))

    monkeypatch.setattr(models_store, "_write_json_atomic", refuse)
    assert models.resolve_for_eval("tiny").sha256 == sha256(TINY)
    assert not (store / "tiny" / "meta.json").exists()


# --------------------------------------------------------------------------- import


def test_import_into_an_unwritable_store_is_a_model_error(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = put(tmp_path / "not-a-dir", b"")
    monkeypatch.setenv("LOCALJUDGE_HOME", str(blocker))
    source = put(tmp_path / "carried.gguf", TINY)
    result = invoke("import", str(source), "--as", "tiny")
    assert result.exit_code == 3 and result.stderr.startswith("Error: cannot create")


def test_import_matching_file(store: Path, tmp_path: Path) -> None:
    source = put(tmp_path / "carried" / "whatever-name.gguf", TINY)
    result = invoke("import", str(source), "--as", "tiny")
    assert result.exit_code == 0, result.output
    assert (store / "tiny" / "tiny.gguf").read_bytes() == TINY
    assert json.loads((store / "tiny" / "meta.json").read_text())["source"] == "import"
    assert source.read_bytes() == TINY  # copied, not moved
    assert models.resolve_for_eval("tiny").sha256 == sha256(TINY)
    again = invoke("import", str(source), "--as", "tiny")
    assert again.exit_code == 2 and "--force" in again.stderr
    assert invoke("import", str(source), "--as", "tiny", "--force").exit_code == 0


@pytest.mark.parametrize("data", [OTHER, TINY[:3000]], ids=["other-bytes", "truncated"])
def test_import_mismatching_file_leaves_nothing(store: Path, tmp_path: Path, data: bytes) -> None:
    source = put(tmp_path / "carried.gguf", data)
    result = invoke("import", str(source), "--as", "tiny")
    assert result.exit_code == 3
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert store_files(store) == []


def test_import_uncatalogued_id_is_recorded_unpinned(store: Path, tmp_path: Path) -> None:
    source = put(tmp_path / "my-judge.Q8_0.gguf", OTHER)
    assert invoke("import", str(source), "--as", "my-judge").exit_code == 0
    model = models.resolve_for_eval("my-judge")
    assert model.path == store / "my-judge" / "my-judge.Q8_0.gguf" and model.entry is None
    meta = json.loads((store / "my-judge" / "meta.json").read_text())
    assert meta["pinned"] is False and meta["sha256"] == sha256(OTHER)
    listed = json.loads(invoke("list", "--json").stdout)
    row = next(r for r in listed if r["id"] == "my-judge")
    assert row["catalogued"] is False and row["present"] and row["verified"]


def test_import_refuses_non_gguf(store: Path, tmp_path: Path) -> None:
    source = put(tmp_path / "notes.gguf", b"hello, not a model" * 100)
    result = invoke("import", str(source), "--as", "notes")
    assert result.exit_code == 3 and "not a GGUF file" in result.stderr
    assert store_files(store) == []


def test_interrupted_import_leaves_nothing(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = put(tmp_path / "carried.gguf", TINY)
    checks = iter([None])  # the check of the source passes; the one of the copy is interrupted

    def interrupt(path: Path, label: str) -> None:
        if next(checks, KeyboardInterrupt) is KeyboardInterrupt:
            raise KeyboardInterrupt

    monkeypatch.setattr(models_deliver, "_check_gguf_header", interrupt)
    with pytest.raises(KeyboardInterrupt):
        models.import_model(source, "tiny")
    assert store_files(store) == []


# --------------------------------------------------------------------------- commands


def test_path_command(store: Path) -> None:
    missing = invoke("path", "tiny")
    assert missing.exit_code == 3 and "localjudge models pull tiny --via pypi" in missing.stderr
    assert missing.stdout == ""
    put(store / "tiny" / "tiny.gguf", TINY)
    found = invoke("path", "tiny")
    assert found.exit_code == 0 and found.stdout == f"{store / 'tiny' / 'tiny.gguf'}\n"


def test_verify_command_rehashes(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = put(store / "tiny" / "tiny.gguf", TINY)
    ok = invoke("verify", "tiny")
    assert ok.exit_code == 0 and ok.stdout.startswith("OK  tiny") and sha256(TINY) in ok.stdout
    # Same size and mtime, different bytes: only a rehash that ignores the cache notices.
    stat = path.stat()
    path.write_bytes(OTHER)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert models.resolve_for_eval("tiny").sha256 == sha256(TINY)  # the cache is trusted
    bad = invoke("verify", "tiny")
    assert bad.exit_code == 3 and "SHA-256" in bad.stderr
    assert invoke("verify", "nope").exit_code == 2


def test_remove_command(store: Path) -> None:
    put(store / "tiny" / "tiny.gguf", TINY)
    models.resolve_for_eval("tiny")
    result = invoke("remove", "tiny")
    assert result.exit_code == 0 and "removed tiny" in result.stdout
    assert not (store / "tiny").exists()
    again = invoke("remove", "tiny")
    assert again.exit_code == 2 and "nothing to remove" in again.stderr
    assert invoke("remove", "../escape").exit_code == 2


def test_list_table_and_json(store: Path) -> None:
    put(store / "tiny" / "tiny.gguf", TINY)
    models.resolve_for_eval("tiny")
    put(store / "loose" / "loose.gguf", OTHER)
    models.resolve_for_eval("loose")
    table = invoke("list")
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["ID", "SIZE", "LICENCE", "PRESENT", "VERIFIED", "PIN"]
    tiny = next(line for line in lines if line.startswith("tiny *"))
    assert tiny.split() == ["tiny", "*", "4.1", "kB", "Apache-2.0", "yes", "yes", "pinned"]
    loose = next(line for line in lines if line.startswith("loose"))
    assert f"unpinned (recorded sha256 {sha256(OTHER)[:12]}…)" in loose
    rows = {r["id"]: r for r in json.loads(invoke("list", "--json").stdout)}
    tiny_row = rows["tiny"]
    assert (tiny_row["present"], tiny_row["verified"], tiny_row["pinned"]) == (True, True, True)
    assert tiny_row["default"] is True and tiny_row["sha256"] == sha256(TINY)
    assert tiny_row["size"] == len(TINY) and tiny_row["path"] == str(store / "tiny" / "tiny.gguf")
    assert rows["loose"]["pinned"] is False and rows["loose"]["recorded"] is True


def test_list_shows_absent_and_unverified(store: Path) -> None:
    path = put(store / "tiny" / "tiny.gguf", TINY)
    models.resolve_for_eval("tiny")
    bump_mtime(path)
    rows = {r["id"]: r for r in json.loads(invoke("list", "--json").stdout)}
    assert rows["tiny"]["present"] and not rows["tiny"]["verified"]
    assert not rows["loose"]["present"] and not rows["loose"]["verified"]
