"""Bounded memory at any row count (issue 15, item 0): rows streamed in, the summary in
one pass, bootstrap intervals from histograms. Unit tests, no model."""

from __future__ import annotations

import hashlib
import io
import json
import math
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from localjudge import api, scoring
from localjudge.judges import select
from localjudge.records import BadRecord, open_input, read_records


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_scan_counts_hashes_and_validates(tmp_path: Path) -> None:
    lines = [json.dumps({"request": f"q{i}", "response": "r"}) for i in range(5)]
    lines.insert(2, "{not json")
    path = write(tmp_path / "a.jsonl", "\n".join(lines) + "\n\n")
    with open_input(path) as data:
        scan = data.scan()
        checked = data.scan(validate=True)
        limited = data.scan(limit=3, validate=True)
    assert scan.rows == 6 and scan.blank_lines == 1
    # The hash covers the row lines' bytes (blank lines are not rows).
    rows_bytes = "".join(line + "\n" for line in lines).encode()
    assert scan.sha256 == checked.sha256 == hashlib.sha256(rows_bytes).hexdigest()
    assert checked.bad == 1 and "not valid JSON" in (checked.first_bad or "")
    # --limit hashes only the rows judged, but --strict still sees every bad line.
    first3 = "".join(line + "\n" for line in lines[:3]).encode()
    assert limited.rows == 3 and limited.sha256 == hashlib.sha256(first3).hexdigest()
    assert limited.bad == 1
    # Blank lines added between rows change nothing: they are not rows.
    spaced = write(tmp_path / "b.jsonl", "\n\n".join(lines) + "\n")
    with open_input(spaced) as data:
        assert data.scan().sha256 == scan.sha256


def test_rows_can_be_read_twice_from_stdin(tmp_path: Path) -> None:
    stdin = io.BytesIO(b'{"request": "q1"}\n\n{"request": "q2"}\n')
    with open_input("-", stdin=stdin) as data:  # type: ignore[arg-type]
        first = list(data.rows())
        second = list(data.rows())
        spool = data.path
        assert spool.exists()
    assert first == second and [r.line for r in first] == [1, 3]
    assert not spool.exists()  # the spooled copy of stdin is removed on close


def test_streamed_rows_equal_whole_file_rows(tmp_path: Path) -> None:
    """Line numbers, blank lines, BOMs and bad bytes are the same as a whole-file read."""
    content = (
        b"\xef\xbb\xbf" + b'{"request": "q1"}\r\n'
        b"\n   \n"
        b'{"request": "bad \xff byte"}\n'
        b"\xef\xbb\xbf" + b'{"request": "q2"}'
    )
    path = tmp_path / "a.jsonl"
    path.write_bytes(content)
    rows = read_records(path)
    assert [r.line for r in rows.rows] == [1, 4, 5] and rows.blank_lines == 2
    assert isinstance(rows.rows[1], BadRecord) and "not UTF-8" in rows.rows[1].error


def test_summary_of_a_stream_equals_summary_of_a_list() -> None:
    rng = random.Random(1)
    results: list[dict[str, Any]] = []
    for i in range(40):
        if i % 7 == 0:
            results.append({"request_id": str(i), "error": "bad line"})
            continue
        results.append(
            {
                "request_id": str(i),
                "error": None,
                "judges_skipped": [],
                "retrieval/ground_truth/document_recall": rng.choice([0.0, 0.5, 1.0, None]),
            }
        )
    judges = select(["document_recall"])
    from_list = api.summarise(results, judges)
    from_stream = api.summarise(iter(results), judges)
    assert from_list == from_stream
    agg = from_list["aggregates"]["retrieval/ground_truth/document_recall/average"]
    key = "retrieval/ground_truth/document_recall"
    present = [r[key] for r in results if r["error"] is None and r[key] is not None]
    assert agg["count"] == len(present)
    assert agg["value"] == pytest.approx(sum(present) / len(present))
    assert from_list["rows_read"] == 40 and from_list["rows_with_input_errors"] == 6


def test_mean_is_the_correctly_rounded_sum_over_the_count() -> None:
    values = [0.1] * 10 + [1e16, 1.0, -1e16] + [1 / 3] * 7
    agg = scoring.aggregate(values)
    exact = sum(Fraction(v) for v in values)
    assert agg.value == float(exact) / len(values)
    assert agg.count == len(values)


def test_interval_does_not_depend_on_row_order() -> None:
    values = [0.0, 0.25, 0.5, 1.0] * 10
    shuffled = values[:]
    random.Random(3).shuffle(shuffled)
    assert scoring.aggregate(values) == scoring.aggregate(shuffled)


def test_bootstrap_of_ratings_matches_the_binomial_interval() -> None:
    """On 0/1 values the bootstrap mean is Binomial(n, p)/n: its 95% interval is close to
    p ± 1.96·sqrt(p(1-p)/n)."""
    n, yes = 400, 120
    low, high = scoring.bootstrap_interval([1.0] * yes + [0.0] * (n - yes))
    p = yes / n
    half = 1.96 * math.sqrt(p * (1 - p) / n)
    assert low == pytest.approx(p - half, abs=0.01)
    assert high == pytest.approx(p + half, abs=0.01)


def test_bootstrap_is_deterministic_and_exact_for_a_constant() -> None:
    values = np.linspace(0, 1, 50)
    assert scoring.bootstrap_interval(values) == scoring.bootstrap_interval(values)
    assert scoring.bootstrap_interval([0.25] * 30) == (0.25, 0.25)


def test_many_distinct_values_keep_memory_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond MAX_DISTINCT distinct values the histogram is coarsened: its size stays
    bounded and the interval moves by at most half the grid step."""
    monkeypatch.setattr(scoring, "MAX_DISTINCT", 64)
    rng = np.random.default_rng(0)
    values = rng.random(5000)
    acc = scoring.MeanAccumulator()
    for v in values:
        acc.add(float(v))
    assert len(acc._histogram) <= 64
    coarse = acc.result()
    exact_low, exact_high = scoring.bootstrap_interval(values)
    assert coarse.value == pytest.approx(float(values.mean()), abs=1e-12)
    assert coarse.count == 5000
    step = acc._step
    assert 0 < step <= 1 / 32
    assert coarse.ci_low == pytest.approx(exact_low, abs=step / 2 + 0.01)
    assert coarse.ci_high == pytest.approx(exact_high, abs=step / 2 + 0.01)


def test_results_file_is_read_back_as_a_stream(tmp_path: Path) -> None:
    from localjudge import output

    writer = output.ResultsWriter(tmp_path, {"m": 1}, resume=False, overwrite=False)
    writer.start()
    for i in range(3):
        writer.write({"request_id": str(i)})
    writer.close()
    rows = writer.rows()
    assert next(rows) == {"request_id": "0"}  # a generator, not a list
    assert [r["request_id"] for r in rows] == ["1", "2"]
