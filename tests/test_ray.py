"""`eval --ray` on a real local Ray cluster (issue 15): a head node and a second node
started with `ray start` on the loopback (127.0.0.2), one CPU each, SmolLM2 135M, a
dozen rows.

Every test starts its own cluster and stops it at the end, also on failure. The model
tests run two llama.cpp processes at once by nature: run them under `flock
/tmp/cpu.lock`, as every model test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from localjudge import cli

from .conftest import REPO, SMALL_MODEL, assert_clean_stderr, load_script, run_cli

raycluster = load_script("raycluster")

ray_cluster = raycluster.ray_cluster
_pids_mentioning = raycluster.pids_mentioning
JUDGES = "relevance_to_query,chunk_relevance,context_position,document_recall"


ROWS: list[dict[str, Any] | str] = [
    {
        "request_id": f"r{i}",
        "request": question,
        "response": answer,
        "retrieved_context": [
            {"content": answer, "doc_uri": f"d{i}"},
            {"content": "The weather was mild all week.", "doc_uri": "noise"},
        ],
        "expected_retrieved_context": [{"doc_uri": f"d{i}"}],
    }
    for i, (question, answer) in enumerate(
        [
            ("What is the capital of France?", "Paris is the capital of France."),
            ("How many legs does a spider have?", "A spider has eight legs."),
            ("Who wrote Hamlet?", "Hamlet was written by William Shakespeare."),
            ("What is the boiling point of water?", "Water boils at 100 degrees Celsius."),
            ("Which planet is the largest?", "Jupiter is the largest planet."),
            ("What gas do plants absorb?", "Plants absorb carbon dioxide."),
            ("How many days are in a leap year?", "A leap year has 366 days."),
            ("What is the chemical symbol for gold?", "The symbol for gold is Au."),
            ("Who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa."),
            ("What is the fastest land animal?", "The cheetah is the fastest land animal."),
            ("How many continents are there?", "There are seven continents."),
        ]
    )
]
ROWS.insert(5, "{not json: a bad row keeps its place")


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ray-data") / "rows.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _eval(data: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    args: list[str | Path] = [
        "eval", data, "--model", SMALL_MODEL, "--judges", JUDGES, "--threads", "1",
        "--out", out, "--format", "json", *extra,
    ]  # fmt: skip
    return run_cli(*args, env=env)


@pytest.fixture(scope="module")
def reference(data: Path, tmp_path_factory: pytest.TempPathFactory, small_model: Path) -> Path:
    """The single-process run (1 thread) every Ray run must reproduce byte for byte."""
    out = tmp_path_factory.mktemp("reference")
    run = _eval(data, out)
    assert run.code == 0, run.stderr
    return out


def _cli_env(cluster: Any) -> dict[str, str]:
    return {**raycluster.CLUSTER_ENV, "RAY_ADDRESS": cluster.address}


@pytest.mark.model
def test_same_bytes_on_two_nodes_and_the_model_shipped_to_the_node_without_it(
    data: Path, reference: Path, tmp_path: Path
) -> None:
    empty_home = tmp_path / "empty-home"
    empty_home.mkdir()
    with ray_cluster({"LOCALJUDGE_HOME": str(empty_home)}) as cluster:
        env = _cli_env(cluster)
        no_ship = ("--ray", "--workers", "2", "--ray-no-ship")
        refused = _eval(data, tmp_path / "noship", *no_ship, env=env)
        assert refused.code == 3, refused.stderr
        assert "lack(s) the model" in refused.stderr and "node " in refused.stderr

        out = tmp_path / "ray"
        run = _eval(data, out, "--ray", "--workers", "2", env=env)
        assert run.code == 0, run.stderr
        assert_clean_stderr(run.stderr)
    assert (out / "results.jsonl").read_bytes() == (reference / "results.jsonl").read_bytes()
    summary = json.loads((out / "summary.json").read_text())
    expected = json.loads((reference / "summary.json").read_text())
    assert summary["aggregates"] == expected["aggregates"]
    assert summary["rows_with_input_errors"] == 1
    assert summary["cluster"]["nodes"] == 2 and summary["cluster"]["shipped_to"] == 1
    sha = expected["manifest"]["model"]["sha256"]
    assert (empty_home / "shipped" / f"{sha}.gguf").is_file()
    same_run = {**expected["manifest"], "command_line": summary["manifest"]["command_line"]}
    assert summary["manifest"] == same_run  # a run may be resumed with or without --ray


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _wait_for(predicate: Any, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.model
def test_a_killed_worker_is_replaced_and_its_block_judged_again(
    data: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ray"
    with ray_cluster() as cluster:
        args = [
            sys.executable, "-m", "localjudge.cli", "eval", str(data), "--model", SMALL_MODEL,
            "--judges", JUDGES, "--threads", "1", "--out", str(out), "--format", "json",
            "--ray", "--workers", "2",
        ]  # fmt: skip
        driver = subprocess.Popen(
            args,
            env={**os.environ, **_cli_env(cluster)},
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            _wait_for(lambda: _lines(out / "results.jsonl") >= 1, "the first result")
            victims = _pids_mentioning("ray::JudgeWorker")
            written = _lines(out / "results.jsonl")
            assert victims and written < len(ROWS), "the run ended before a worker was killed"
            os.kill(victims[0], signal.SIGKILL)
            _, stderr = driver.communicate(timeout=600)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
        assert driver.returncode == 0, stderr.decode()
    assert (out / "results.jsonl").read_bytes() == (reference / "results.jsonl").read_bytes()


@pytest.mark.model
def test_resume_after_the_driver_is_killed(data: Path, reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "ray"
    with ray_cluster() as cluster:
        env = {**os.environ, **_cli_env(cluster)}
        args = [
            sys.executable, "-m", "localjudge.cli", "eval", str(data), "--model", SMALL_MODEL,
            "--judges", JUDGES, "--threads", "1", "--out", str(out), "--format", "json",
            "--ray", "--workers", "2",
        ]  # fmt: skip
        driver = subprocess.Popen(
            args, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            _wait_for(lambda: _lines(out / "results.jsonl") >= 2, "the first results")
            driver.kill()
            driver.wait()
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
        partial = _lines(out / "results.jsonl")
        assert partial < len(ROWS), "the run ended before the driver was killed"
        resumed = _eval(data, out, "--ray", "--workers", "2", env=_cli_env(cluster))
        assert resumed.code == 0, resumed.stderr
        assert f"Resuming: {partial} of {len(ROWS)} rows already done." in resumed.stderr
    assert (out / "results.jsonl").read_bytes() == (reference / "results.jsonl").read_bytes()
    summary = json.loads((out / "summary.json").read_text())
    expected = json.loads((reference / "summary.json").read_text())
    assert summary["aggregates"] == expected["aggregates"]


def test_ray_not_installed_exits_2_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    data = tmp_path / "d.jsonl"
    data.write_text('{"request": "q"}\n')
    result = CliRunner().invoke(cli.cli, ["eval", str(data), "--ray", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert 'pip install "localjudge[ray]"' in result.output


def test_workers_without_ray_is_a_usage_error(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"request": "q"}\n')
    result = CliRunner().invoke(cli.cli, ["eval", str(data), "--workers", "2"])
    assert result.exit_code == 2 and "go with --ray" in result.output
