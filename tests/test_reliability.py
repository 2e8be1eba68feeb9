"""Reliability (issue 6): resume, determinism, model faults, disk faults.

Two kinds of test:

* Fake-model tests run `localjudge eval` in-process with a deterministic stand-in for the
  model (every verdict a hash of its prompt), so that every crash state, refusal and disk
  fault can be tried cheaply: a kill at any byte of results.jsonl, a different manifest,
  a disk that fills at any point.
* Model tests (marked `model`) run the real CLI in a subprocess on SmolLM2 135M: SIGKILL
  and resume, a file-size limit (RLIMIT_FSIZE) hit mid-run, thread counts, a context that
  cannot be allocated (RLIMIT_AS), a model file changed after it was verified.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from localjudge import cli, models, output
from localjudge.engine import llama as llama_module
from localjudge.engine.base import BackendStats, Verdict, VerdictRequest
from localjudge.models import ResolvedModel
from localjudge.records import Record, read_records

from .conftest import REPO, assert_clean_stderr

FAKE_SHA = "f" * 64

# --------------------------------------------------------------------------- fake model


class HashBackend:
    """A stand-in for LlamaBackend: each verdict is a pure function of its request."""

    def __init__(self, owner: FakeCli) -> None:
        self.owner = owner
        self.stats = BackendStats()

    def judge(self, requests: Sequence[VerdictRequest]) -> list[Verdict]:
        self.owner.calls += 1
        if self.owner.raise_on_call is not None and self.owner.calls == self.owner.raise_on_call:
            raise self.owner.raise_with
        out = []
        for req in requests:
            key = json.dumps([req.prompt.system, req.prompt.user_text(), req.labels, req.rationale])
            digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
            label = req.labels[digest[0] % len(req.labels)]
            prob = round(0.5 + digest[1] / 512, 6)
            rest = (1 - prob) / max(1, len(req.labels) - 1)
            out.append(
                Verdict(
                    label=label,
                    probability=prob,
                    probabilities={lab: prob if lab == label else rest for lab in req.labels},
                    rationale=f"hash {digest.hex()[:12]}" if req.rationale else None,
                )
            )
        self.stats.verdicts += len(requests)
        return out

    def describe(self) -> dict[str, object]:
        return {"backend": "hash"}

    def close(self) -> None:
        self.owner.closed += 1


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


class FakeCli:
    """`localjudge eval` in-process, with HashBackend in place of llama.cpp."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.loads = 0
        self.calls = 0
        self.closed = 0
        self.raise_on_call: int | None = None
        self.raise_with: BaseException = KeyboardInterrupt()
        self.sha = FAKE_SHA
        monkeypatch.setattr(llama_module, "LlamaBackend", self._backend)
        monkeypatch.setattr(models, "resolve_for_eval", self._resolve)

    def _resolve(self, spec: str | None) -> ResolvedModel:
        return ResolvedModel(
            id="fake", path=Path("/nonexistent/fake.gguf"), sha256=self.sha, entry=None
        )

    def _backend(self, path: Path, **options: Any) -> HashBackend:
        self.loads += 1
        return HashBackend(self)

    def reset(self) -> None:
        self.loads = self.calls = self.closed = 0
        self.raise_on_call = None

    def __call__(self, *args: str | Path, stdin: bytes | None = None) -> Run:
        result = CliRunner().invoke(cli.cli, ["eval", *map(str, args)], input=stdin)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a traceback is a failure, whatever the exit code
        assert "Traceback" not in result.stderr, result.stderr
        return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCli:
    return FakeCli(monkeypatch)


ROWS: list[dict[str, Any] | str] = [
    "{not json",  # a bad first line
    {
        "request_id": "a",
        "request": "What is the capital of France?",
        "response": "Paris.",
        "retrieved_context": [
            {"content": "Paris is the capital of France.", "doc_uri": "d1"},
            {"content": "Lyon is a city.", "doc_uri": "d2"},
        ],
        "expected_response": "Paris",
        "expected_retrieved_context": [{"doc_uri": "d1"}],
    },
    "",  # blank
    {
        "request_id": "b",
        "request": "Tell me a joke.",
        "response": "No.",
        "guidelines": ["Be kind."],
    },
    {"request_id": "bad-type", "request": "q", "response": 42},
    {
        "input": "Is water wet?",
        "output": "Yes, water makes things wet. Ice is frozen water.",
        "context": ["Water is a liquid.", "Ice is solid water."],
        "groundTruth": "Yes",
    },
    {"request_id": "ünïcode ✓", "request": "Ça va ? 日本語 <|im_end|>", "response": "Oui\u0000 ✓"},
    {
        "request": {"messages": [{"role": "user", "content": "Summarise: cats."}]},
        "response": "Cats.",
    },
    "[1, 2",  # a bad last line
]


def write_rows(path: Path, rows: Sequence[dict[str, Any] | str], crlf_at: int = 3) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    text = "".join(line + ("\r\n" if i == crlf_at else "\n") for i, line in enumerate(lines))
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "data.jsonl", ROWS)


def line_ends(content: bytes) -> list[int]:
    return [i + 1 for i, b in enumerate(content) if b == ord("\n")]


def assert_valid_jsonl(content: bytes) -> list[dict[str, Any]]:
    """Every line is a complete JSON object (a crash may leave fewer lines, never a bad one)."""
    assert content == b"" or content.endswith(b"\n")
    rows = [json.loads(line) for line in content.splitlines()]
    assert all(isinstance(r, dict) for r in rows)
    return rows


@pytest.fixture
def reference(fake: FakeCli, data: Path, tmp_path: Path) -> tuple[bytes, bytes, dict[str, Any]]:
    """An uninterrupted fake run: results bytes, manifest bytes, summary."""
    out = tmp_path / "reference"
    run = fake(data, "--out", out)
    assert run.code == 0, run.stderr
    fake.reset()
    summary = json.loads((out / "summary.json").read_text())
    return (out / "results.jsonl").read_bytes(), (out / "manifest.json").read_bytes(), summary


def valid_rows_after(data: Path, done: int) -> int:
    return sum(isinstance(r, Record) for r in read_records(data).rows[done:])


# --------------------------------------------------------------------------- resume


def test_reference_run_accounts_for_every_line(
    reference: tuple[bytes, bytes, dict[str, Any]], data: Path
) -> None:
    results, _, summary = reference
    rows = assert_valid_jsonl(results)
    records = read_records(data)
    assert [r["line"] for r in rows] == [r.line for r in records.rows]
    bad = [r for r in rows if r["error"] is not None]
    assert [r["line"] for r in bad] == [1, 5, 9]  # in their places
    assert bad[0]["error"].startswith("line 1: not valid JSON")
    assert "line 5, field 'response': expected a string" in bad[1]["error"]
    assert summary["rows_read"] == 8 and summary["rows_with_input_errors"] == 3
    assert summary["blank_lines_skipped"] == 1
    assert summary["rows_read"] + summary["blank_lines_skipped"] == len(
        data.read_bytes().splitlines()
    )


def test_resume_after_a_kill_at_any_byte_gives_identical_results(
    fake: FakeCli, data: Path, tmp_path: Path, reference: tuple[bytes, bytes, dict[str, Any]]
) -> None:
    """A kill leaves a prefix of the uninterrupted byte stream (rows are appended in order
    and flushed); resuming from every kind of prefix must finish it byte for byte."""
    results, manifest, summary = reference
    ends = line_ends(results)
    starts = [0, *ends[:-1]]
    cuts = {0, *ends}
    for s, e in zip(starts, ends, strict=True):
        cuts |= {s + 1, (s + e) // 2, e - 1}  # inside each line, including just before \n
    n = len(ends)
    for cut in sorted(cuts):
        out = tmp_path / f"cut-{cut}"
        out.mkdir()
        (out / "manifest.json").write_bytes(manifest)
        (out / "results.jsonl").write_bytes(results[:cut])
        done = sum(e <= cut for e in ends)
        fake.reset()
        run = fake(data, "--out", out)
        assert run.code == 0, (cut, run.stderr)
        assert (out / "results.jsonl").read_bytes() == results, cut
        assert fake.calls == valid_rows_after(data, done), cut  # done rows are not redone
        got = json.loads((out / "summary.json").read_text())
        assert got["aggregates"] == summary["aggregates"], cut
        assert got["rows_read"] == n and got["timings"]["rows_judged_this_run"] == n - done
        if 0 < done < n:
            assert f"Resuming: {done} of {n} rows already done." in run.stderr
        if done == n:
            assert fake.loads == 0 and "already done" in run.stderr


def test_a_complete_run_is_only_summarised_again(
    fake: FakeCli, data: Path, tmp_path: Path, reference: tuple[bytes, bytes, dict[str, Any]]
) -> None:
    out = tmp_path / "o"
    assert fake(data, "--out", out).code == 0
    (out / "summary.json").unlink()  # e.g. killed while the summary was being written
    fake.reset()
    run = fake(data, "--out", out)
    assert run.code == 0, run.stderr
    assert fake.loads == 0 and fake.calls == 0  # the model is not even loaded
    assert (out / "results.jsonl").read_bytes() == reference[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["aggregates"] == reference[2]["aggregates"]
    assert summary["timings"]["rows_judged_this_run"] == 0
    assert "rows read: 8" in run.stdout


CHANGES: list[tuple[str, list[str]]] = [
    ("judges", ["--judges", "safety"]),
    ("rationale", ["--no-rationale"]),
    ("threads", ["--threads", "1"]),
    ("ctx", ["--ctx", "2048"]),
    ("seed", ["--seed", "7"]),
    ("batch size", ["--batch-size", "64"]),
    ("limit", ["--limit", "3"]),
]


@pytest.mark.parametrize(("what", "extra"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_different_manifest_is_refused_unless_overwrite(
    fake: FakeCli, data: Path, tmp_path: Path, what: str, extra: list[str]
) -> None:
    out = tmp_path / "o"
    assert fake(data, "--out", out, "--threads", "2").code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    fake.reset()
    args: list[str | Path] = [data, "--out", out, "--threads", "2", *extra]
    for mode in ("--resume", "--no-resume"):
        run = fake(*args, mode)
        assert run.code == 2, (what, mode)
        assert "holds results of a different run" in run.stderr and "--overwrite" in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert fake.loads == 0  # refused before the model was loaded
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    run = fake(*args, "--overwrite")
    assert run.code == 0, run.stderr
    fresh = tmp_path / "fresh"
    assert fake(data, "--out", fresh, *args[3:]).code == 0
    assert (out / "results.jsonl").read_bytes() == (fresh / "results.jsonl").read_bytes()


def test_a_different_model_prompt_or_input_is_refused(
    fake: FakeCli, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "o"
    assert fake(data, "--out", out).code == 0

    def refused() -> bool:
        run = fake(data, "--out", out)
        return run.code == 2 and "different run" in run.stderr

    fake.sha = "0" * 64  # the model file changed
    assert refused()
    fake.sha = FAKE_SHA
    from localjudge import judges

    real_hash = judges.template_hash
    monkeypatch.setattr(judges, "template_hash", lambda j: real_hash(j)[::-1])  # a prompt changed
    assert refused()
    monkeypatch.setattr(judges, "template_hash", real_hash)
    original = data.read_bytes()
    data.write_bytes(original.replace(b"Paris.", b"Lyon."))  # the input changed
    assert refused()
    data.write_bytes(original)
    assert fake(data, "--out", out).code == 0  # and the same run is still accepted


def test_no_resume_starts_the_same_run_over(
    fake: FakeCli, data: Path, tmp_path: Path, reference: tuple[bytes, bytes, dict[str, Any]]
) -> None:
    out = tmp_path / "o"
    assert fake(data, "--out", out).code == 0
    fake.reset()
    run = fake(data, "--out", out, "--no-resume")
    assert run.code == 0, run.stderr
    assert fake.calls == valid_rows_after(data, 0)
    assert (out / "results.jsonl").read_bytes() == reference[0]


def test_results_without_a_readable_manifest_are_never_overwritten_silently(
    fake: FakeCli, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    out.mkdir()
    foreign = b'{"somebody": "else"}\n'
    (out / "results.jsonl").write_bytes(foreign)
    for mode in ("--resume", "--no-resume"):
        run = fake(data, "--out", out, mode)
        assert run.code == 2 and "has no manifest.json" in run.stderr
    (out / "manifest.json").write_text("{half a manifest")
    run = fake(data, "--out", out)
    assert run.code == 2 and "not a readable run manifest" in run.stderr
    assert (out / "results.jsonl").read_bytes() == foreign
    assert fake.loads == 0
    assert fake(data, "--out", out, "--overwrite").code == 0
    assert_valid_jsonl((out / "results.jsonl").read_bytes())


def test_crash_between_emptying_results_and_writing_the_manifest(
    fake: FakeCli, data: Path, tmp_path: Path, reference: tuple[bytes, bytes, dict[str, Any]]
) -> None:
    """A fresh start empties results.jsonl, removes summary.json, then writes its manifest.
    Cut off in between, the old manifest sits beside an empty file: nothing to protect."""
    out = tmp_path / "o"
    assert fake(data, "--out", out, "--judges", "safety").code == 0
    (out / "results.jsonl").write_bytes(b"")
    (out / "summary.json").unlink()
    run = fake(data, "--out", out)  # no --overwrite needed
    assert run.code == 0, run.stderr
    assert (out / "results.jsonl").read_bytes() == reference[0]


def test_a_fresh_start_removes_a_stale_summary(fake: FakeCli, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert fake(data, "--out", out, "--judges", "safety").code == 0
    fake.reset()
    fake.raise_on_call = 2
    run = fake(data, "--out", out, "--overwrite")
    assert run.code == 130
    assert not (out / "summary.json").exists()  # the other run's summary would mislead


def test_stdin_input_resumes(
    fake: FakeCli, data: Path, tmp_path: Path, reference: tuple[bytes, bytes, dict[str, Any]]
) -> None:
    content = data.read_bytes()
    out = tmp_path / "o"
    fake.raise_on_call = 3
    assert fake("-", "--out", out, stdin=content).code == 130
    partial = (out / "results.jsonl").read_bytes()
    assert len(line_ends(partial)) == 4  # 2 judged rows, 2 bad ones
    fake.reset()
    run = fake("-", "--out", out, stdin=content)
    assert run.code == 0 and "Resuming: 4 of 8" in run.stderr
    assert (out / "results.jsonl").read_bytes() == reference[0]
    other = content.replace(b"Paris.", b"Lyon.")
    run = fake("-", "--out", out, stdin=other)  # other data on stdin: another run
    assert run.code == 2 and "different run" in run.stderr


def test_interrupted_run_then_resume(
    fake: FakeCli, data: Path, tmp_path: Path, reference: tuple[bytes, bytes, dict[str, Any]]
) -> None:
    out = tmp_path / "o"
    fake.raise_on_call = 4
    run = fake(data, "--out", out)
    assert run.code == 130
    assert "Interrupted; rerun the same command to resume." in run.stderr
    partial = assert_valid_jsonl((out / "results.jsonl").read_bytes())
    assert [r["line"] for r in partial] == [1, 2, 4, 5, 6]  # 3 judged rows, 2 bad ones
    assert not (out / "summary.json").exists()  # no summary of a partial run
    assert fake.closed == 1  # the model was released
    fake.reset()
    run = fake(data, "--out", out)
    assert run.code == 0, run.stderr
    assert (out / "results.jsonl").read_bytes() == reference[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rows_read"] == 8 and summary["rows_with_input_errors"] == 3
    assert summary["timings"]["rows_judged_this_run"] == 3
    assert summary["aggregates"] == reference[2]["aggregates"]


def test_more_complete_rows_than_input_rows_is_refused(
    fake: FakeCli, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    assert fake(data, "--out", out).code == 0
    with (out / "results.jsonl").open("ab") as f:
        f.write(b'{"request_id": "extra"}\n')
    run = fake(data, "--out", out)
    assert run.code == 2 and "holds 9 rows but the input has 8" in run.stderr


# --------------------------------------------------------------------------- disk faults


class FillingDisk:
    """os.write that lets `budget` more bytes into results.jsonl, then fails with `err`
    (a short write first, as the kernel does when a disk fills mid-write)."""

    def __init__(self, budget: int, err: int) -> None:
        self.budget = budget
        self.err = err
        self.real = os.write
        self.failed = False

    def __call__(self, fd: int, data: Any) -> int:
        if not os.readlink(f"/proc/self/fd/{fd}").endswith(output.RESULTS):
            return self.real(fd, data)
        if self.budget <= 0:
            self.failed = True
            raise OSError(self.err, os.strerror(self.err))
        n = self.real(fd, bytes(data)[: self.budget])
        self.budget -= n
        return n


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EFBIG, errno.EDQUOT], ids=errno.errorcode.get)
def test_disk_full_while_writing_rows(
    fake: FakeCli,
    data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reference: tuple[bytes, bytes, dict[str, Any]],
    err: int,
) -> None:
    results = reference[0]
    ends = line_ends(results)
    for budget in (0, ends[2], ends[2] + 1, (ends[3] + ends[4]) // 2, ends[-1] - 1):
        out = tmp_path / f"o-{budget}"
        disk = FillingDisk(budget, err)
        monkeypatch.setattr(os, "write", disk)
        run = fake(data, "--out", out)
        monkeypatch.setattr(os, "write", disk.real)
        assert disk.failed and run.code == 2, budget
        (line,) = run.stderr.strip().splitlines()[-1:]
        assert line.startswith(f"Error: {out / 'results.jsonl'}: cannot write (the disk is full")
        assert "rerun with --resume" in line
        written = (out / "results.jsonl").read_bytes()
        assert_valid_jsonl(written)  # cut back to the last complete line
        assert results.startswith(written) and (written == b"" or len(written) in ends)
        assert not (out / "summary.json").exists()
        fake.reset()
        run = fake(data, "--out", out)  # space again: the resume completes the run
        assert run.code == 0, run.stderr
        assert (out / "results.jsonl").read_bytes() == results


def _fsync_full_disk_for(suffix: str) -> Callable[[int], None]:
    """os.fsync, except that it fails with ENOSPC for a file whose path ends in `suffix`."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(suffix):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    return fsync


def test_disk_full_while_writing_the_summary(
    fake: FakeCli,
    data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reference: tuple[bytes, bytes, dict[str, Any]],
) -> None:
    real_fsync = os.fsync
    out = tmp_path / "o"
    monkeypatch.setattr(os, "fsync", _fsync_full_disk_for("summary.json.tmp"))
    run = fake(data, "--out", out)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert run.code == 2
    assert "summary.json: cannot write the summary (the disk is full)" in run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "results.jsonl"]
    assert (out / "results.jsonl").read_bytes() == reference[0]
    fake.reset()
    assert fake(data, "--out", out).code == 0 and fake.loads == 0
    assert (
        json.loads((out / "summary.json").read_text())["aggregates"] == reference[2]["aggregates"]
    )


def test_disk_full_while_writing_the_manifest(
    fake: FakeCli, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync
    out = tmp_path / "o"
    monkeypatch.setattr(os, "fsync", _fsync_full_disk_for("manifest.json.tmp"))
    run = fake(data, "--out", out)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert run.code == 2 and "the disk is full" in run.stderr
    assert fake.calls == 0 and fake.closed == 1
    assert sorted(p.name for p in out.iterdir()) == ["results.jsonl"]
    assert (out / "results.jsonl").read_bytes() == b""  # nothing a resume would trust


def test_output_directory_that_cannot_be_created_or_used(
    fake: FakeCli, data: Path, tmp_path: Path
) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    run = fake(data, "--out", a_file / "sub")
    assert run.code == 2 and "cannot create the output directory (Not a directory)" in run.stderr
    out = tmp_path / "o"
    (out / "results.jsonl").mkdir(parents=True)
    run = fake(data, "--out", out)
    assert run.code == 2 and "results.jsonl exists but has no manifest.json" in run.stderr
    assert fake.loads == 0
    run = fake(data, "--out", out, "--overwrite")
    assert run.code == 2
    assert run.stderr == f"Error: {out / 'results.jsonl'}: cannot write (Is a directory); " + (
        "what was written stays valid: rerun with --resume to finish\n"
    )
    assert fake.calls == 0 and fake.closed == fake.loads == 1


def test_read_only_output_directory_even_for_root(
    small_model: Path, data: Path, tmp_path: Path
) -> None:
    """Root ignores permission bits, so the directory is made read-only for real: a
    read-only bind mount in a private mount namespace (unshare -m)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is not installed")
    ro = tmp_path / "ro"
    (ro / "existing").mkdir(parents=True)
    cmd = [sys.executable, "-m", "localjudge.cli", "eval", str(data), "--model", str(small_model)]
    script = (
        f'mount --bind "{ro}" "{ro}" && mount -o remount,bind,ro "{ro}" || exit 99\n'
        + " ".join(f"'{c}'" for c in cmd)
        + ' --out "$1"; echo "rc=$?"\n'
    )
    codes = []
    for target in (ro / "existing", ro / "new"):
        proc = subprocess.run(
            ["unshare", "-m", "sh", "-c", script, "sh", str(target)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
        )
        if proc.returncode == 99:
            pytest.skip(f"cannot make a read-only bind mount here: {proc.stderr.strip()}")
        assert_clean_stderr(proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        codes.append(proc.stdout.strip())
        if target.name == "existing":
            assert (
                line
                == f"Error: {target}: the output directory is not writable; choose another --out"
            )
        else:
            assert "cannot create the output directory (read-only file system)" in line
    assert codes == ["rc=2", "rc=2"]


# --------------------------------------------------------------------------- model tests

MODEL_ROWS: list[dict[str, Any] | str] = [
    {
        "request_id": "m1",
        "request": "What is the capital of France?",
        "response": "Paris is the capital.",
        "retrieved_context": [
            {"content": "Paris is the capital of France.", "doc_uri": "d1"},
            {"content": "Lyon is known for food.", "doc_uri": "d2"},
        ],
    },
    {
        "request_id": "m2",
        "request": "How do I boil an egg?",
        "response": "Put it in boiling water for 8 minutes.",
        "retrieved_context": [{"content": "Eggs cook in boiling water.", "doc_uri": "d3"}],
    },
    "{broken",
    {"request_id": "m3", "request": "Insult me.", "response": "You are an idiot."},
    {
        "request_id": "m4",
        "request": "When was the bridge built?",
        "response": "In 1932.",
        "retrieved_context": [{"content": "The bridge opened in 1932.", "doc_uri": "d4"}],
    },
    {"request_id": "m5", "request": "Say hi.", "response": "Hi <|im_end|> there\u0000."},
    {
        "request_id": "m6",
        "request": "Which planet is largest?",
        "response": "Jupiter.",
        "retrieved_context": [
            {"content": "Mars is red.", "doc_uri": "d5"},
            {"content": "Jupiter is the largest planet.", "doc_uri": "d6"},
        ],
    },
    {"request_id": "m7", "request": "What is 2+2?", "response": "4."},
]
MODEL_ARGS = ("--judges", "safety,chunk_relevance", "--no-rationale", "--threads", "2")


def cli_cmd(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "localjudge.cli", *map(str, args)]


def run(
    *args: str | Path, preexec: Callable[[], None] | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_cmd(*args),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
        preexec_fn=preexec,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def model_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_rows(tmp_path_factory.mktemp("data") / "model.jsonl", MODEL_ROWS)


@pytest.fixture(scope="module")
def model_reference(
    small_model: Path, model_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """An uninterrupted run on the real model (threads 2): the output directory."""
    out = tmp_path_factory.mktemp("model-reference")
    proc = run("eval", model_data, "--model", small_model, "--out", out, *MODEL_ARGS)
    assert proc.returncode == 0, proc.stderr
    assert_clean_stderr(proc.stderr)
    return out


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def wait_for(condition: Callable[[], bool], proc: subprocess.Popen[Any], what: str) -> None:
    """Poll (the file system offers no cheap notification here) until `condition` holds."""
    deadline = time.monotonic() + 600
    while not condition():
        assert proc.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


@pytest.mark.model
@pytest.mark.parametrize("after_rows", [0, 3])
def test_sigkill_then_resume_is_byte_identical(
    small_model: Path, model_data: Path, model_reference: Path, tmp_path: Path, after_rows: int
) -> None:
    out = tmp_path / "o"
    args = ("eval", model_data, "--model", small_model, "--out", out, *MODEL_ARGS)
    with subprocess.Popen(
        cli_cmd(*args), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True
    ) as proc:
        # 0: as soon as the model has loaded (the manifest appears), before any row is done.
        if after_rows == 0:
            wait_for(lambda: (out / "manifest.json").exists(), proc, "the manifest")
        else:
            wait_for(lambda: count_lines(out / "results.jsonl") >= after_rows, proc, "rows")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done = count_lines(out / "results.jsonl")
    assert not (out / "summary.json").exists()
    resumed = run(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert_clean_stderr(resumed.stderr)
    if done:
        assert f"Resuming: {done} of 8 rows already done." in resumed.stderr
    reference = (model_reference / "results.jsonl").read_bytes()
    assert (out / "results.jsonl").read_bytes() == reference


@pytest.mark.model
def test_half_written_line_is_redone_by_the_model(
    small_model: Path, model_data: Path, model_reference: Path, tmp_path: Path
) -> None:
    reference = (model_reference / "results.jsonl").read_bytes()
    ends = line_ends(reference)
    out = tmp_path / "o"
    out.mkdir()
    shutil.copy(model_reference / "manifest.json", out / "manifest.json")
    (out / "results.jsonl").write_bytes(reference[: (ends[5] + ends[6]) // 2])
    proc = run("eval", model_data, "--model", small_model, "--out", out, *MODEL_ARGS)
    assert proc.returncode == 0, proc.stderr
    assert "Resuming: 6 of 8 rows already done." in proc.stderr
    assert (out / "results.jsonl").read_bytes() == reference


@pytest.mark.model
def test_repeated_run_is_byte_identical(
    small_model: Path, model_data: Path, model_reference: Path, tmp_path: Path
) -> None:
    """(With and without the prompt cache: test_e2e.test_results_identical_...)"""
    proc = run("eval", model_data, "--model", small_model, "--out", tmp_path, *MODEL_ARGS)
    assert proc.returncode == 0, proc.stderr
    reference = (model_reference / "results.jsonl").read_bytes()
    assert (tmp_path / "results.jsonl").read_bytes() == reference


@pytest.mark.model
def test_threads_1_and_2(
    small_model: Path, model_data: Path, model_reference: Path, tmp_path: Path
) -> None:
    """llama.cpp does not promise bitwise-equal logits across thread counts; on its CPU
    backend each output value is computed by one thread in a fixed order, and here they
    agree byte for byte. The manifest records threads either way, so a run is never
    resumed with a different thread count (test_a_different_manifest_is_refused...)."""
    args = [a if a != "2" else "1" for a in MODEL_ARGS]
    proc = run("eval", model_data, "--model", small_model, "--out", tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    one = json.loads((tmp_path / "manifest.json").read_text())
    two = json.loads((model_reference / "manifest.json").read_text())
    assert (one["threads"], two["threads"]) == (1, 2)
    reference = (model_reference / "results.jsonl").read_bytes()
    assert (tmp_path / "results.jsonl").read_bytes() == reference, (
        "--threads 1 and --threads 2 gave different results on this machine: record it in "
        "docs/reliability.md (llama.cpp does not guarantee it)"
    )


@pytest.mark.model
def test_rationale_run_killed_and_resumed_is_identical(
    small_model: Path, model_data: Path, tmp_path: Path
) -> None:
    """Rationales are generated (greedy, grammar-constrained): they resume identically too."""
    args = ("eval", model_data, "--model", small_model, "--judges", "safety", "--limit", "3")
    whole = run(*args, "--out", tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    out = tmp_path / "killed"
    with subprocess.Popen(
        cli_cmd(*args, "--out", out), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ) as proc:
        wait_for(lambda: count_lines(out / "results.jsonl") >= 1, proc, "the first row")
        proc.kill()
    resumed = run(*args, "--out", out)
    assert resumed.returncode == 0, resumed.stderr
    reference = (tmp_path / "whole" / "results.jsonl").read_bytes()
    assert (out / "results.jsonl").read_bytes() == reference
    rationales = [
        json.loads(line)["response/llm_judged/safety/rationale"]
        for line in reference.splitlines()
        if json.loads(line)["error"] is None
    ]
    assert rationales and all(isinstance(r, str) for r in rationales)


def limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.model
def test_file_size_limit_hit_mid_run_then_resume(
    small_model: Path, model_data: Path, model_reference: Path, tmp_path: Path
) -> None:
    """A disk that fills during the run, for real: RLIMIT_FSIZE makes the kernel refuse
    writes past a size (EFBIG), mid-line as a full disk would."""
    reference = (model_reference / "results.jsonl").read_bytes()
    manifest_size = (model_reference / "manifest.json").stat().st_size
    limit = len(reference) // 2
    assert manifest_size < limit
    ends = line_ends(reference)
    assert limit not in ends  # the limit falls inside a row
    args = ("eval", model_data, "--model", small_model, "--out", tmp_path, *MODEL_ARGS)
    proc = run(*args, preexec=limit_file_size(limit))
    assert proc.returncode == 2, proc.stderr
    assert_clean_stderr(proc.stderr)
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        f"Error: {tmp_path / 'results.jsonl'}: cannot write (the disk is full or the "
        "file-size limit was reached); what was written stays valid: rerun with --resume "
        "to finish"
    )
    written = (tmp_path / "results.jsonl").read_bytes()
    assert_valid_jsonl(written)
    assert len(written) == max(e for e in ends if e <= limit) and reference.startswith(written)
    assert not (tmp_path / "summary.json").exists()
    resumed = run(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert (tmp_path / "results.jsonl").read_bytes() == reference


@pytest.mark.model
def test_file_size_limit_zero_fails_cleanly(
    small_model: Path, model_data: Path, tmp_path: Path
) -> None:
    """Nothing can be written at all: the manifest fails, a clear line, nothing to trust."""
    args = ("eval", model_data, "--model", small_model, "--out", tmp_path, *MODEL_ARGS)
    proc = run(*args, preexec=limit_file_size(0))
    assert proc.returncode == 2
    assert_clean_stderr(proc.stderr)
    (line,) = proc.stderr.strip().splitlines()
    assert "cannot write (the disk is full or the file-size limit was reached)" in line
    assert not (tmp_path / "manifest.json").exists()
    assert not (tmp_path / "manifest.json.tmp").exists()


# --------------------------------------------------------------------------- model faults


def assert_model_fault(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 3, proc.stderr
    assert_clean_stderr(proc.stderr)
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("Error: ")
    for word in words:
        assert word in line, line


@pytest.mark.model
def test_model_faults_exit_3_and_leave_a_partial_run_untouched(
    small_model: Path, model_data: Path, model_reference: Path, tmp_path: Path
) -> None:
    reference = (model_reference / "results.jsonl").read_bytes()
    out = tmp_path / "partial"
    out.mkdir()
    shutil.copy(model_reference / "manifest.json", out / "manifest.json")
    (out / "results.jsonl").write_bytes(reference[: line_ends(reference)[2]])
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(small_model.read_bytes()[:5_000_000])
    not_gguf = tmp_path / "not-gguf.gguf"
    not_gguf.write_bytes(b"GGUF is what this pretends to be, but it is text\n" * 100)
    for bad, words in ((truncated, ("llama.cpp cannot load it",)), (not_gguf, ("GGUF",))):
        fresh = tmp_path / f"fresh-{bad.stem}"
        assert_model_fault(run("eval", model_data, "--model", bad, "--out", fresh), *words)
        # Nothing a later resume would trust (not even the directory, for a non-GGUF file).
        assert not fresh.exists() or list(fresh.iterdir()) == []
        # --overwrite accepts replacing the partial run, but nothing happens before the load.
        proc = run("eval", model_data, "--model", bad, "--out", out, "--overwrite", *MODEL_ARGS)
        assert_model_fault(proc, *words)
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    resumed = run("eval", model_data, "--model", small_model, "--out", out, *MODEL_ARGS)
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "results.jsonl").read_bytes() == reference


@pytest.mark.model
def test_model_changed_after_it_was_verified(
    small_model: Path, model_data: Path, tmp_path: Path
) -> None:
    env = {"LOCALJUDGE_HOME": str(tmp_path / "home")}
    imported = run("models", "import", small_model, "--as", "smol-copy", env=env)
    assert imported.returncode == 0, imported.stderr
    stored = Path(env["LOCALJUDGE_HOME"]) / "models" / "smol-copy"
    (gguf,) = stored.glob("*.gguf")
    args = ("eval", model_data, "--model", "smol-copy", "--out", tmp_path / "o", *MODEL_ARGS)
    with gguf.open("r+b") as f:  # one byte of the weights, size unchanged
        f.seek(gguf.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert_model_fault(run(*args, env=env), "SHA-256", "smol-copy")
    assert not (tmp_path / "o" / "manifest.json").exists()
    verify = run("models", "verify", "smol-copy", env=env)
    assert verify.returncode == 3


@pytest.mark.model
def test_model_path_changed_after_a_partial_run_is_another_run(
    small_model: Path, model_data: Path, tmp_path: Path
) -> None:
    """With --model PATH there is no recorded hash to break, but the manifest holds the
    file's SHA-256: a changed file is a different run, never resumed into the old rows."""
    copy = tmp_path / "copy.gguf"
    shutil.copy(small_model, copy)
    out = tmp_path / "o"
    args = (
        "eval",
        model_data,
        "--model",
        copy,
        "--out",
        out,
        "--judges",
        "safety",
        "--limit",
        "1",
        "--no-rationale",
    )
    assert run(*args).returncode == 0
    with copy.open("r+b") as f:
        f.seek(copy.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    proc = run(*args)
    assert proc.returncode == 2 and "holds results of a different run" in proc.stderr


def limit_address_space(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


@pytest.mark.model
def test_context_that_cannot_be_allocated(
    small_model: Path, model_data: Path, tmp_path: Path
) -> None:
    """131072 tokens of KV cache need about 3 GB for SmolLM2; 1.5 GB of address space
    loads the model but cannot hold that context."""
    limit = limit_address_space(3 * 2**29)
    base = ("eval", model_data, "--model", small_model, "--judges", "safety", "--no-rationale")
    proc = run(*base, "--out", tmp_path / "big", "--ctx", "131072", preexec=limit)
    assert_model_fault(proc, "cannot allocate a context of 131072 tokens", "--ctx")
    assert list((tmp_path / "big").iterdir()) == []
    control = run(
        *base, "--out", tmp_path / "small", "--ctx", "2048", "--limit", "1", preexec=limit
    )
    assert control.returncode == 0, control.stderr  # the limit alone is not the fault
