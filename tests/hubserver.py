"""Helpers for the model tests: a stand-in for the Hub's download endpoints, small GGUF-looking
files, test catalogues, and an environment isolated from the real model store.

``HubStub`` serves HEAD and GET on ``/{repo}/resolve/{revision}/{file}`` on 127.0.0.1 with the
headers huggingface_hub's ``get_hf_file_metadata`` and ``http_get`` read (X-Repo-Commit, ETag
and X-Linked-Etag, X-Linked-Size, Content-Length, Accept-Ranges), answers ``Range: bytes=N-``
with 206, and can cut a GET after a number of bytes to simulate a dropped connection.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import struct
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_gguf(size: int, seed: int = 0) -> bytes:
    """``size`` bytes with a plausible GGUF v3 header followed by seeded random bytes."""
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, 1)
    return header + random.Random(seed).randbytes(size - len(header))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def write_catalogue(
    path: Path, models: Mapping[str, Mapping[str, Any]], default: str | None = None
) -> Path:
    """Write a catalogue TOML; a dict value inside a model becomes a sub-table (pypi, ...)."""
    lines = [f"default = {_toml_value(default or next(iter(models)))}", ""]
    for model_id, table in models.items():
        lines.append(f"[models.{_toml_value(model_id)}]")
        subtables = {k: v for k, v in table.items() if isinstance(v, Mapping)}
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if k not in subtables]
        for name, sub in subtables.items():
            lines.append(f"[models.{_toml_value(model_id)}.{name}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in sub.items()]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def model_table(
    file: str, data: bytes | None, *, pinned: bool = True, **extra: Any
) -> dict[str, Any]:
    """A catalogue entry for ``file``; size and sha256 come from ``data`` when given."""
    table: dict[str, Any] = {
        "repo": "test-org/tiny-GGUF",
        "file": file,
        "revision": "main",
        "license": "Apache-2.0",
        "context_length": 2048,
        "template": "chatml",
        "description": "test model",
    }
    if data is not None:
        table["size"] = len(data)
        if pinned:
            table["sha256"] = sha256(data)
    table.update(extra)
    return table


def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Point the store and the HF cache into ``tmp_path``; returns the store directory."""
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in (
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "HF_ENDPOINT",
        "HF_HUB_OFFLINE",
        "HF_TOKEN",
        "XDG_DATA_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return tmp_path / "home" / "models"


def store_files(root: Path) -> list[str]:
    """Every file under ``root``, relative, sorted (empty when ``root`` does not exist)."""
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""


@dataclass
class HubStub:
    """The Hub's resolve endpoint for a few files; records every request it sees."""

    files: dict[tuple[str, str], bytes] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)
    cut_first_get_after: int | None = None
    """The first GET sends this many bytes of the body, then the connection is closed."""
    drop_later_gets: bool = False
    """Every GET after the first closes the connection without answering."""
    url: str = ""

    def gets(self) -> list[Seen]:
        """The GET requests for files (huggingface_hub also fetches a registry of its own)."""
        return [r for r in self.requests if r.method == "GET" and "/resolve/" in r.path]


def _handler(stub: HubStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _headers(self) -> dict[str, str]:
            return {name.lower(): value for name, value in self.headers.items()}

        def _lookup(self) -> bytes | None:
            repo, sep, rest = self.path.partition("/resolve/")
            revision, _, file = rest.partition("/")
            data = stub.files.get((repo.lstrip("/"), file)) if sep else None
            if data is None or revision not in ("main", COMMIT):
                known_repo = any(r == repo.lstrip("/") for r, _ in stub.files)
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound" if known_repo else "RepoNotFound")
                self.send_header("X-Error-Message", "not found")
                if known_repo:
                    self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            return data

        def _common_headers(self, data: bytes) -> None:
            digest = sha256(data)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{digest}"')
            self.send_header("X-Linked-Etag", f'"{digest}"')
            self.send_header("X-Linked-Size", str(len(data)))
            self.send_header("Accept-Ranges", "bytes")

        def do_HEAD(self) -> None:
            stub.requests.append(Seen("HEAD", self.path, self._headers()))
            data = self._lookup()
            if data is None:
                return
            self.send_response(200)
            self._common_headers(data)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()

        def do_GET(self) -> None:
            stub.requests.append(Seen("GET", self.path, self._headers()))
            first = len(stub.gets()) == 1
            if not first and stub.drop_later_gets:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            data = self._lookup()
            if data is None:
                return
            start = 0
            range_header = self.headers.get("Range")
            if range_header and range_header.startswith("bytes=") and range_header.endswith("-"):
                start = int(range_header[len("bytes=") : -1])
            body = data[start:]
            self.send_response(206 if start else 200)
            self._common_headers(data)
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if first and stub.cut_first_get_after is not None:
                self.wfile.write(body[: stub.cut_first_get_after])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(body)

    return Handler


@contextmanager
def serve_hub(stub: HubStub) -> Iterator[HubStub]:
    """Run ``stub`` on a free port of 127.0.0.1 for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def closed_port_url() -> str:
    """The URL of a port on 127.0.0.1 that nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
