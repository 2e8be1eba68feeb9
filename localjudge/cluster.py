"""Judging on a Ray cluster: the same rows, the same judging code, the same bytes.

The driver (the `eval` process) reads the rows, sends them in blocks to a pool of Ray
actors, and yields their results in input order to the same writer as a local run. Each
actor loads the model once and judges a block with `evaluation.iter_rows`, the code path of
a local run: every row starts from the system text alone, so which worker judged a row
changes nothing in its result.

Models: a worker resolves the model from its own node's store (or the path given with
--model, or a copy shipped earlier) and checks its SHA-256 against the driver's. When a
node lacks it, the driver ships the file through Ray's object store in chunks and the
worker verifies it before loading (unless shipping is off: then a clear error names the
node). No worker downloads anything from the Hub.

Faults: an actor whose process dies is restarted by Ray and its block run again; results
come back per block, in order, so nothing is lost or written twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge import evaluation
from localjudge.engine.base import Backend, BackendStats
from localjudge.errors import LocalJudgeError, ModelError, ModelNotFoundError, UsageError
from localjudge.judges import Judge, JudgeOptions
from localjudge.records import BadRecord, Record

INSTALL = 'pip install "localjudge[ray]"'
# Rows sent to a worker at once (fewer when the run is short, so every worker gets some).
BLOCK_ROWS = 8
# Blocks queued per worker beyond the one it is judging: keeps workers busy, memory bounded.
QUEUED_PER_WORKER = 2
# Bytes per object-store chunk when shipping a model file to a node that lacks it.
SHIP_CHUNK = 64 * 2**20
# Seconds to wait for the workers to start (they queue while the cluster's CPUs are taken).
START_TIMEOUT = 300.0
# How often Ray may restart a worker whose process died, and retry its block.
RESTARTS = 4


def import_ray() -> Any:
    """The ray module, or UsageError (exit 2) naming the command that installs it."""
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"--ray needs Ray, an optional dependency: {INSTALL} (or pip install 'ray[data]')"
        ) from None
    return ray


@dataclass(frozen=True)
class ModelFile:
    """The model as the driver resolved it: what every worker must load, byte for byte."""

    spec: str | None  # as given to --model (None: the default model)
    sha256: str
    path: Path  # on the driver's machine


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs to judge rows exactly as a local run would."""

    model: ModelFile
    make_backend: Callable[[Path], Backend]
    judges: Sequence[Judge]
    options: JudgeOptions
    failing_rationale: bool = False  # --rationale failing


@dataclass
class ClusterInfo:
    """What the run learnt about the cluster, for the summary's timings."""

    address: str
    workers: int
    nodes: int = 0
    connect_seconds: float = 0.0
    shipped_to: int = 0


def connect(address: str, *, verbose: bool = False) -> Any:
    """Connect to the Ray cluster at `address` ("auto": RAY_ADDRESS if set, else a local
    Ray started on this machine for this run) and return the ray module."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    target = os.environ.get("RAY_ADDRESS") if address == "auto" else address
    if not verbose:  # Ray logs (e.g. its token-authentication notice) before init's level
        logging.getLogger("ray").setLevel(logging.ERROR)
    kwargs: dict[str, Any] = {
        "logging_level": logging.INFO if verbose else logging.ERROR,
        "log_to_driver": verbose,
    }
    host = target.rpartition(":")[0] if target else ""
    if host.startswith("127."):
        # A cluster on this machine's loopback: the driver is a node of it at that address.
        kwargs["_node_ip_address"] = host
    try:
        if target:
            ray.init(address=target, **kwargs)
        else:
            ray.init(include_dashboard=False, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as err:
        where = target or "a local Ray instance"
        raise UsageError(f"--ray: cannot connect to {where}: {err}") from None
    return ray


def node_name() -> str:
    """This process's Ray node, as a message names it: id prefix and IP address."""
    ray = import_ray()

    node_id = ray.get_runtime_context().get_node_id()
    return f"node {node_id[:12]} ({ray.util.get_node_ip_address()})"


def shipped_path(sha256: str) -> Path:
    """Where a node keeps a model file shipped to it by a driver: beside its model store."""
    from localjudge.models import store_dir

    return store_dir().parent / "shipped" / f"{sha256}.gguf"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def versions() -> dict[str, str]:
    """The versions that decide a row's bytes: localjudge's and llama-cpp-python's."""
    from importlib.metadata import PackageNotFoundError, version

    from localjudge import __version__

    try:
        llama = version("llama-cpp-python")
    except PackageNotFoundError:
        llama = "not installed"
    return {"localjudge": __version__, "llama-cpp-python": llama}


def _versions_text(found: dict[str, str]) -> str:
    return ", ".join(f"{name} {v}" for name, v in found.items())


def local_model(model: ModelFile) -> Path | None:
    """The model file on this node, checked against the driver's SHA-256; None when the
    node has no copy (or only a different file under the same name)."""
    from localjudge.models import resolve_for_eval

    with contextlib.suppress(LocalJudgeError, OSError):
        resolved = resolve_for_eval(model.spec)
        if resolved.sha256 == model.sha256:
            return resolved.path
    shipped = shipped_path(model.sha256)
    if shipped.is_file() and sha256_file(shipped) == model.sha256:
        return shipped
    return None


class JudgeWorker:
    """A Ray actor: one loaded model, judging blocks of rows with the local code path.

    The model is loaded on the first block (and again after Ray restarts a dead worker),
    so `prepare` and `receive` can bring the file to the node first."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.backend: Backend | None = None

    def prepare(self) -> tuple[str, bool, dict[str, str]]:
        """This node's name, whether it has the model, and its software versions."""
        return node_name(), local_model(self.spec.model) is not None, versions()

    def receive(self, chunks: list[Any]) -> None:
        """Write the model from object-store chunks to this node, verify its SHA-256, and
        only then move it where `local_model` finds it."""
        ray = import_ray()

        target = shipped_path(self.spec.model.sha256)
        if local_model(self.spec.model) is not None:
            return  # another worker on this node received it first
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                for ref in chunks:
                    data = ray.get(ref)
                    digest.update(data)
                    f.write(data)
            if digest.hexdigest() != self.spec.model.sha256:
                raise ModelError(
                    f"{node_name()}: the model shipped by the driver arrived with SHA-256 "
                    f"{digest.hexdigest()}, not {self.spec.model.sha256}"
                )
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def load(self) -> None:
        """Load the model from this node's verified copy (once per worker process)."""
        if self.backend is not None:
            return
        path = local_model(self.spec.model)
        if path is None:
            raise ModelNotFoundError(
                f"{node_name()} has no copy of the model (SHA-256 {self.spec.model.sha256})"
            )
        self.backend = self.spec.make_backend(path)

    def judge_block(self, rows: list[Record | BadRecord]) -> tuple[list[dict[str, Any]], Any]:
        """The results of `rows`, in order, and the backend's work counters for them.
        A worker Ray restarted after its process died loads the model here."""
        self.load()
        assert self.backend is not None
        before = dict(self.backend.stats.as_dict())
        results = list(
            evaluation.iter_rows(
                rows,
                self.backend,
                self.spec.judges,
                self.spec.options,
                self.spec.failing_rationale,
            )
        )
        after = self.backend.stats.as_dict()
        return results, {k: after[k] - before[k] for k in after}

    def pid(self) -> int:
        return os.getpid()


class ClusterError(LocalJudgeError, RuntimeError):
    """A worker failed in a way Ray could not recover from (its process died more than
    RESTARTS times on the same block, or the cluster went away)."""

    exit_code = 3


def _cause(ray: Any, err: Exception) -> Exception:
    """The localjudge error inside a Ray error, else a ClusterError saying what failed."""
    cause = getattr(err, "cause", None)
    if isinstance(err, ray.exceptions.RayTaskError) and isinstance(cause, LocalJudgeError):
        return cause
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return ClusterError(
        f"--ray: a worker failed ({type(err).__name__}: {first}); what was written stays "
        "valid: rerun the same command to resume"
    )


def _ship(ray: Any, model: ModelFile, workers: Sequence[Any]) -> None:
    """Put the model file into the object store in chunks; each worker writes and verifies
    it. The chunk references are dropped afterwards, which frees the store."""
    chunks = []
    with model.path.open("rb") as f:
        while data := f.read(SHIP_CHUNK):
            chunks.append(ray.put(data))
    ray.get([w.receive.remote(chunks) for w in workers])


def start_workers(
    spec: WorkerSpec, n: int, threads: int, *, ship: bool, info: ClusterInfo
) -> list[Any]:
    """Start `n` workers of `threads` CPUs each and make sure each has the model on its
    node (shipping it there unless `ship` is off). Raises UsageError when the cluster has
    too few CPUs, ModelNotFoundError naming the node that lacks the model."""
    ray = import_ray()

    cpus = int(ray.cluster_resources().get("CPU", 0))
    info.nodes = len([node for node in ray.nodes() if node.get("Alive")])
    if n * threads > cpus:
        raise UsageError(
            f"--ray: {n} worker(s) x {threads} thread(s) need {n * threads} CPUs; the "
            f"cluster has {cpus}. Lower --workers or --threads, or add nodes."
        )
    actor: Any = ray.remote(num_cpus=threads, max_restarts=RESTARTS, max_task_retries=RESTARTS)(
        JudgeWorker
    )
    workers = [actor.remote(spec) for _ in range(n)]
    try:
        try:
            lacking = ray.get([w.prepare.remote() for w in workers], timeout=START_TIMEOUT)
        except ray.exceptions.GetTimeoutError:
            raise UsageError(
                f"--ray: {n} worker(s) did not start within {START_TIMEOUT:.0f} s; the "
                "cluster's CPUs may be taken by another job"
            ) from None
        ours = versions()
        for name, _, theirs in lacking:
            if theirs != ours:
                raise UsageError(
                    f"--ray: {name} runs {_versions_text(theirs)}, the driver "
                    f"{_versions_text(ours)}; install the same versions on every node "
                    "(results would not be the same bytes)"
                )
        missing = [w for w, (_, has, _) in zip(workers, lacking, strict=True) if not has]
        if missing and not ship:
            names = sorted({name for name, has, _ in lacking if not has})
            raise ModelNotFoundError(
                f"{', '.join(names)} lack(s) the model (SHA-256 {spec.model.sha256}) and "
                "--ray-no-ship is set; copy it into that node's store (`localjudge models "
                "import FILE --as ID`) or drop --ray-no-ship"
            )
        if missing:
            _ship(ray, spec.model, missing)
            info.shipped_to = len(missing)
        ray.get([w.load.remote() for w in workers])
    except ray.exceptions.RayError as err:
        stop_workers(workers)
        raise _cause(ray, err) from None
    except BaseException:
        stop_workers(workers)
        raise
    return workers


def stop_workers(workers: Iterable[Any]) -> None:
    ray = import_ray()

    for w in workers:
        with contextlib.suppress(Exception):  # already dead: nothing left to stop
            ray.kill(w)


def block_rows(todo: int, workers: int) -> int:
    """Rows per block: BLOCK_ROWS, fewer when the run is short so that every worker gets
    several blocks."""
    return max(1, min(BLOCK_ROWS, math.ceil(todo / (workers * (1 + QUEUED_PER_WORKER)))))


def iter_results(
    rows: Iterable[Record | BadRecord],
    workers: Sequence[Any],
    block: int,
    stats: BackendStats,
) -> Iterator[dict[str, Any]]:
    """Results of `rows` judged on `workers`, in input order, as soon as each block (and
    every block before it) is done. At most (1 + QUEUED_PER_WORKER) blocks per worker
    are in flight, so memory stays bounded whatever the number of rows."""
    ray = import_ray()
    pool = ray.util.ActorPool(list(workers))
    in_flight = 0

    def next_block() -> Iterator[dict[str, Any]]:
        try:
            results, counts = pool.get_next()
        except ray.exceptions.RayError as err:
            raise _cause(ray, err) from None
        for key, value in counts.items():
            setattr(stats, key, getattr(stats, key) + value)
        return iter(results)

    pending: list[Record | BadRecord] = []
    for row in rows:
        pending.append(row)
        if len(pending) < block:
            continue
        pool.submit(lambda w, b: w.judge_block.remote(b), pending)
        pending = []
        in_flight += 1
        if in_flight >= len(workers) * (1 + QUEUED_PER_WORKER):
            yield from next_block()
            in_flight -= 1
    if pending:
        pool.submit(lambda w, b: w.judge_block.remote(b), pending)
    while pool.has_next():
        yield from next_block()
