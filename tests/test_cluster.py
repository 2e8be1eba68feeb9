"""localjudge.cluster on a local Ray instance (ray.init, 2 CPUs) with a fake backend:
order, shipping, a refused shipment, a killed worker. No llama.cpp: the model file is a
stand-in with a GGUF header, and each verdict is a hash of its prompt."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localjudge import api, cluster
from localjudge.engine.base import BackendStats, VerdictRequest
from localjudge.engine.fake import FakeBackend
from localjudge.errors import ModelNotFoundError
from localjudge.judges import JudgeOptions, select
from localjudge.records import BadRecord, Record, read_records

JUDGES = ["relevance_to_query", "chunk_relevance", "context_position", "document_recall"]


def hashed_verdict(request: VerdictRequest) -> tuple[str, float]:
    """A deterministic answer that depends on the prompt alone (as a real model's)."""
    digest = hashlib.sha256(repr(request.prompt).encode()).digest()
    return request.labels[digest[0] % len(request.labels)], 0.5 + digest[1] / 512


def fake_backend(path: Path) -> FakeBackend:
    assert path.is_file()
    return FakeBackend(rule=hashed_verdict)


@pytest.fixture(scope="module")
def ray_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local Ray instance whose workers see LOCALJUDGE_HOME=<empty dir>; shut down at
    the end, also on failure."""
    ray = pytest.importorskip("ray")
    home = tmp_path_factory.mktemp("worker-home")
    old = os.environ.get("LOCALJUDGE_HOME")
    os.environ["LOCALJUDGE_HOME"] = str(home)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield home
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("LOCALJUDGE_HOME", None)
        else:
            os.environ["LOCALJUDGE_HOME"] = old


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    """A file with a GGUF header: enough for the store's checks, never loaded."""
    path = tmp_path / "stand-in.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + os.urandom(3 * 2**20))
    return path


def rows(tmp_path: Path, n: int = 30) -> list[Record | BadRecord]:
    lines = [
        json.dumps(
            {
                "request": f"question {i}?",
                "response": f"answer {i}.",
                "retrieved_context": [
                    {"content": f"passage {i}", "doc_uri": f"d{i}"},
                    {"content": "noise", "doc_uri": "x"},
                ],
                "expected_retrieved_context": [{"doc_uri": f"d{i}"}],
            }
        )
        for i in range(n)
    ]
    lines[7] = "{bad json"
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return read_records(path).rows


def spec(model: cluster.ModelFile) -> cluster.WorkerSpec:
    return cluster.WorkerSpec(model, fake_backend, select(JUDGES), JudgeOptions())


def local_results(data: list[Record | BadRecord]) -> list[dict[str, Any]]:
    return list(api.iter_results(data, FakeBackend(rule=hashed_verdict), select(JUDGES)))


def test_results_in_input_order_and_the_model_shipped(
    ray_home: Path, model_file: Path, tmp_path: Path
) -> None:
    sha = cluster.sha256_file(model_file)
    # The workers' path to the model does not exist on their "node": they lack it.
    model = cluster.ModelFile(str(tmp_path / "elsewhere" / "m.gguf"), sha, model_file)
    info = cluster.ClusterInfo(address="local", workers=2)
    workers = cluster.start_workers(spec(model), 2, 1, ship=True, info=info)
    try:
        data = rows(tmp_path)
        stats = BackendStats()
        got = list(cluster.iter_results(data, workers, cluster.block_rows(len(data), 2), stats))
    finally:
        cluster.stop_workers(workers)
    assert got == local_results(data)
    assert stats.verdicts > 0
    assert info.shipped_to == 2 and info.nodes == 1
    shipped = ray_home / "shipped" / f"{sha}.gguf"
    assert shipped.read_bytes() == model_file.read_bytes()
    assert not list(shipped.parent.glob("*.part"))  # nothing half-written left behind


def test_no_ship_names_the_node(ray_home: Path, model_file: Path, tmp_path: Path) -> None:
    model = cluster.ModelFile(str(tmp_path / "nowhere.gguf"), "0" * 64, model_file)
    info = cluster.ClusterInfo(address="local", workers=1)
    with pytest.raises(ModelNotFoundError, match=r"node [0-9a-f]{12} \(.*\) lack"):
        cluster.start_workers(spec(model), 1, 1, ship=False, info=info)


def test_a_corrupt_shipment_is_refused(ray_home: Path, model_file: Path, tmp_path: Path) -> None:
    """The worker checks what arrived against the driver's SHA-256 before keeping it."""
    model = cluster.ModelFile(str(tmp_path / "nowhere.gguf"), "f" * 64, model_file)
    info = cluster.ClusterInfo(address="local", workers=1)
    with pytest.raises(Exception, match="arrived with SHA-256"):
        cluster.start_workers(spec(model), 1, 1, ship=True, info=info)
    assert not (ray_home / "shipped" / f"{'f' * 64}.gguf").exists()


def test_too_many_workers_for_the_cluster(ray_home: Path, model_file: Path) -> None:
    model = cluster.ModelFile(str(model_file), cluster.sha256_file(model_file), model_file)
    info = cluster.ClusterInfo(address="local", workers=3)
    with pytest.raises(Exception, match="need 6 CPUs; the cluster has 2"):
        cluster.start_workers(spec(model), 3, 2, ship=True, info=info)


def test_a_killed_worker_is_restarted_and_nothing_is_lost_or_doubled(
    ray_home: Path, model_file: Path, tmp_path: Path
) -> None:
    import ray

    model = cluster.ModelFile(str(model_file), cluster.sha256_file(model_file), model_file)
    info = cluster.ClusterInfo(address="local", workers=2)
    workers = cluster.start_workers(spec(model), 2, 1, ship=True, info=info)
    try:
        pids = ray.get([w.pid.remote() for w in workers])
        data = rows(tmp_path, 60)
        stream = cluster.iter_results(data, workers, 2, BackendStats())
        got = [next(stream)]  # blocks are in flight on both workers now
        os.kill(pids[0], signal.SIGKILL)
        got.extend(stream)
        after = ray.get([w.pid.remote() for w in workers])
    finally:
        cluster.stop_workers(workers)
    assert after[0] != pids[0]  # Ray replaced the process
    assert got == local_results(data)


def test_block_rows() -> None:
    assert cluster.block_rows(12, 2) == 2  # a dozen rows: every worker gets several blocks
    assert cluster.block_rows(10**6, 8) == cluster.BLOCK_ROWS
    assert cluster.block_rows(1, 4) == 1


def test_same_make_backend_partial_pickles() -> None:
    """The CLI sends functools.partial(LlamaBackend, ...) to the workers."""
    import pickle

    from localjudge.engine.llama import LlamaBackend

    make = functools.partial(LlamaBackend, n_ctx=512, threads=1)
    assert pickle.loads(pickle.dumps(make)).keywords == make.keywords


def test_a_node_with_other_versions_is_refused(
    ray_home: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver compares its versions with each worker's (a driver-side change is
    enough to make them differ here)."""
    real = cluster.versions()
    monkeypatch.setattr(cluster, "versions", lambda: {**real, "localjudge": "0.0.0-driver"})
    model = cluster.ModelFile(str(model_file), cluster.sha256_file(model_file), model_file)
    info = cluster.ClusterInfo(address="local", workers=1)
    with pytest.raises(Exception, match=r"node .* runs localjudge .*, the driver localjudge 0.0.0"):
        cluster.start_workers(spec(model), 1, 1, ship=True, info=info)


def dying_verdict(request: VerdictRequest) -> tuple[str, float]:
    """Kills the worker's process on a 'poison' row, every time it is judged."""
    if "poison" in repr(request.prompt):
        os._exit(1)
    return hashed_verdict(request)


def dying_backend(path: Path) -> FakeBackend:
    return FakeBackend(rule=dying_verdict)


def test_a_block_that_always_kills_its_worker_ends_the_run_with_a_clear_error(
    ray_home: Path, model_file: Path, tmp_path: Path
) -> None:
    model = cluster.ModelFile(str(model_file), cluster.sha256_file(model_file), model_file)
    worker_spec = cluster.WorkerSpec(model, dying_backend, select(JUDGES), JudgeOptions())
    info = cluster.ClusterInfo(address="local", workers=1)
    workers = cluster.start_workers(worker_spec, 1, 1, ship=True, info=info)
    path = tmp_path / "poison.jsonl"
    fine, poison = {"request": "fine?", "response": "y"}, {"request": "poison?", "response": "n"}
    path.write_text(json.dumps(fine) + "\n" + json.dumps(poison) + "\n")
    try:
        stream = cluster.iter_results(read_records(path).rows, workers, 1, BackendStats())
        assert next(stream)["request"] == "fine?"  # the rows before it are delivered
        with pytest.raises(cluster.ClusterError, match="a worker failed .* rerun"):
            next(stream)
    finally:
        cluster.stop_workers(workers)
