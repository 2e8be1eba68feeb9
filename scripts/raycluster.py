"""A local Ray cluster for tests and benchmarks: a head node and a second node started
with `ray start` on a loopback address (127.0.0.2, see LOOPBACK), one CPU each by
default, stopped (every process of theirs, by id) when the `with` block ends, also on
failure.

    with ray_cluster() as cluster:
        subprocess.run([..., "eval", DATA, "--ray", cluster.address])
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RAY = Path(sys.executable).parent / "ray"
START_TIMEOUT = 120.0
# A loopback address: nothing is reachable from outside the machine. Not 127.0.0.1:
# Ray replaces "127.0.0.1" and "localhost" with the machine's outward IP address, which
# a sandbox may not let a process connect to.
LOOPBACK = "127.0.0.2"
# The environment of the nodes, and of a driver that connects to them: this repository's
# localjudge, no usage reports, no token authentication (the cluster is loopback-only).
CLUSTER_ENV = {"PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Cluster:
    """A Ray cluster of processes this test started; `stop` ends them by their ids."""

    address: str
    temp_dir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    start_seconds: float = 0.0

    def stop(self) -> None:
        """End every process of the nodes' sessions (each `ray start` began its own, and
        Ray's daemons and workers stay in it): SIGTERM, then SIGKILL what is left."""
        sessions = {proc.pid for proc in self.procs}
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            for pid in _session_pids(sessions):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + grace
            while _session_pids(sessions) and time.monotonic() < deadline:
                time.sleep(0.2)
        for proc in self.procs:
            proc.wait(timeout=10)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _session_pids(sessions: set[int]) -> list[int]:
    """Live processes (not zombies) whose session id is one of `sessions`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[3]) in sessions:
                found.append(int(entry.name))
    return found


def pids_mentioning(text: str) -> list[int]:
    """Processes whose command line holds `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _alive_nodes(address: str, env: dict[str, str]) -> int:
    code = (
        f"import ray, logging; ray.init(address={address!r}, logging_level=logging.ERROR, "
        f"log_to_driver=False, _node_ip_address={LOOPBACK!r}); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    return int(proc.stdout.strip() or 0) if proc.returncode == 0 else 0


def _wait_nodes(address: str, env: dict[str, str], n: int, started: float) -> None:
    while _alive_nodes(address, env) < n:
        if time.monotonic() - started > START_TIMEOUT:
            raise TimeoutError(f"Ray: {n} node(s) did not start within {START_TIMEOUT:.0f} s")
        time.sleep(0.5)


@contextlib.contextmanager
def ray_cluster(
    second_node_env: dict[str, str] | None = None, *, nodes: int = 2, cpus: int = 1
) -> Iterator[Cluster]:
    """`nodes` nodes (1 or 2) on 127.0.0.1 with `cpus` CPUs each, the second one with
    `second_node_env` added to its environment; stopped when the block ends."""
    port = _free_port()
    temp_dir = Path(tempfile.mkdtemp(prefix="ljray", dir="/tmp"))
    env = {**os.environ, **CLUSTER_ENV}
    env.pop("RAY_ADDRESS", None)
    common = [
        "--block",
        f"--num-cpus={cpus}",
        f"--node-ip-address={LOOPBACK}",
        "--disable-usage-stats",
        f"--object-store-memory={256 * 2**20}",
    ]
    cluster = Cluster(address=f"{LOOPBACK}:{port}", temp_dir=temp_dir)
    started = time.monotonic()
    try:
        head = [str(RAY), "start", "--head", f"--port={port}", "--include-dashboard=false"]
        head.append(f"--temp-dir={temp_dir}")
        cluster.procs.append(
            subprocess.Popen(
                [*head, *common],
                env=env,
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        _wait_nodes(cluster.address, env, 1, started)
        if nodes < 2:
            cluster.start_seconds = time.monotonic() - started
            yield cluster
            return
        node = [str(RAY), "start", f"--address={cluster.address}"]
        cluster.procs.append(
            subprocess.Popen(
                [*node, *common],
                env={**env, **(second_node_env or {})},
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        _wait_nodes(cluster.address, env, 2, started)
        cluster.start_seconds = time.monotonic() - started
        yield cluster
    finally:
        cluster.stop()
