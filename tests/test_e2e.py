"""End to end through llama.cpp on real GGUF files: every judge, bad lines, --strict, the
exit codes, --fail-under, a clean terminal, and results that do not depend on the prompt
cache or on whether rationales were asked for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge import scoring
from localjudge.engine.llama import default_extra_buffers
from localjudge.records import Record, read_records

from .conftest import EXAMPLE, LLAMA_NOISE, Result, assert_clean_stderr, run_cli

pytestmark = pytest.mark.model

LLM_FIELDS = {
    "relevance_to_query": (
        "response/llm_judged/relevance_to_query/rating",
        ("request", "response"),
    ),
    "safety": ("response/llm_judged/safety/rating", ("request", "response")),
    "groundedness": ("response/llm_judged/groundedness/rating", ("request", "response", "context")),
    "correctness": ("response/llm_judged/correctness/rating", ("request", "response", "expected")),
    "guideline_adherence": (
        "response/llm_judged/guideline_adherence/rating",
        ("request", "response", "guidelines"),
    ),
    "answer_relevancy": ("response/llm_judged/answer_relevancy/score", ("request", "response")),
    "chunk_relevance": ("retrieval/llm_judged/chunk_relevance/ratings", ("request", "context")),
    "context_position": ("retrieval/llm_judged/context_position/score", ("request", "context")),
    "context_precision": ("retrieval/llm_judged/context_precision/score", ("request", "context")),
    "context_sufficiency": (
        "retrieval/llm_judged/context_sufficiency/rating",
        ("request", "context", "expected"),
    ),
}


def has(record: Record, need: str) -> bool:
    if need == "context":
        return bool(record.retrieved_context)
    if need == "expected":
        return record.expected_text() is not None
    return bool(getattr(record, need))


def read_results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def example_run(small_model: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    out = tmp_path_factory.mktemp("example")
    result = run_cli("eval", EXAMPLE, "--model", small_model, "--out", out)
    return result, out


def test_example_every_judge_on_every_row_that_has_its_inputs(
    example_run: tuple[Result, Path],
) -> None:
    result, out = example_run
    assert result.code == 0, result.stderr
    assert_clean_stderr(result.stderr)
    records = read_records(EXAMPLE).rows
    results = read_results(out)
    assert len(results) == len(records)  # one line per input row, in input order
    for rec, row in zip(records, results, strict=True):
        assert row["line"] == rec.line and row["request_id"] == rec.request_id
        if not isinstance(rec, Record):
            continue
        for judge, (field, needs) in LLM_FIELDS.items():
            if all(has(rec, n) for n in needs):
                assert row.get(field) is not None, (rec.request_id, judge)
                assert judge not in row["judges_skipped"]
            else:
                assert field not in row and judge in row["judges_skipped"], (rec.request_id, judge)
        for key, value in row.items():
            if key.endswith("/rating") and value is not None:
                assert value in ("yes", "no")
                prob = row[key.replace("/rating", "/probability")]
                assert 0.5 <= prob <= 1.0  # the chosen label's share of the label mass
                assert isinstance(row[key.replace("/rating", "/rationale")], str)


def test_example_bad_lines_reported_in_place(example_run: tuple[Result, Path]) -> None:
    result, out = example_run
    results = read_results(out)
    bad = [r for r in results if r["error"] is not None]
    assert [r["request_id"] for r in bad] == ["bad-types", "10"]
    assert "line 9, field 'response'" in bad[0]["error"] and "expected a string" in bad[0]["error"]
    assert bad[1]["error"].startswith("line 10:") and "not valid JSON" in bad[1]["error"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rows_read"] == 13
    assert summary["rows_with_input_errors"] == 2
    assert "rows read: 13" in result.stdout


def test_example_scores_recompute_from_reported_ratings(example_run: tuple[Result, Path]) -> None:
    _, out = example_run
    records = {r.request_id: r for r in read_records(EXAMPLE).rows if isinstance(r, Record)}
    checked = 0
    for row in read_results(out):
        ratings = row.get("retrieval/llm_judged/chunk_relevance/ratings")
        if ratings:
            v = [1 if r == "yes" else 0 for r in ratings]
            assert row["retrieval/llm_judged/chunk_relevance/precision"] == scoring.precision(v)
            assert row["retrieval/llm_judged/context_position/score"] == pytest.approx(
                scoring.context_position(v)
            )
            assert row["retrieval/llm_judged/context_precision/score"] == pytest.approx(
                scoring.context_precision(v)
            )
            checked += 1
        if "retrieval/ground_truth/document_recall" in row:
            rec = records[row["request_id"]]
            expected = set(rec.expected_retrieved_context or ())
            retrieved = {c.doc_uri for c in rec.retrieved_context or ()}
            assert row["retrieval/ground_truth/document_recall"] == len(expected & retrieved) / len(
                expected
            )
    assert checked >= 4


def test_example_summary_and_manifest(example_run: tuple[Result, Path], small_model: Path) -> None:
    _, out = example_run
    summary = json.loads((out / "summary.json").read_text())
    agg = summary["aggregates"]
    for key in (
        "response/llm_judged/groundedness/rating/percentage",
        "response/llm_judged/safety/rating/average",
        "retrieval/llm_judged/chunk_relevance/precision/average",
        "retrieval/llm_judged/context_position/score/average",
        "retrieval/ground_truth/document_recall/average",
        "response/llm_judged/answer_relevancy/score/average",
    ):
        assert agg[key]["count"] >= 1, key
    manifest = summary["manifest"]
    assert manifest["model"]["file"] == small_model.name
    assert len(manifest["model"]["sha256"]) == 64
    assert set(manifest["judges"]) >= set(LLM_FIELDS)
    assert manifest["llama_cpp_python"] != "not installed"
    assert manifest["extra_buffers"] is default_extra_buffers()
    assert summary["timings"]["verdicts"] > 0


def test_no_rationale_gives_the_same_verdicts(
    example_run: tuple[Result, Path], small_model: Path, tmp_path: Path
) -> None:
    _, with_rationale = example_run
    result = run_cli("eval", EXAMPLE, "--model", small_model, "--out", tmp_path, "--no-rationale")
    assert result.code == 0, result.stderr
    for a, b in zip(read_results(with_rationale), read_results(tmp_path), strict=True):
        for key, value in a.items():
            if key.endswith(("/rating", "/ratings", "/probability", "/probabilities", "/score")):
                assert b[key] == value, key
            if key.endswith("/rationale"):
                assert b[key] is None


def test_results_identical_with_and_without_prompt_cache(small_model: Path, tmp_path: Path) -> None:
    outs = []
    for flag in ("--prompt-cache", "--no-prompt-cache"):
        out = tmp_path / flag
        result = run_cli(
            "eval", EXAMPLE, "--model", small_model, "--out", out, flag, "--limit", "8"
        )
        assert result.code == 0, result.stderr
        outs.append((out / "results.jsonl").read_bytes())
    assert outs[0] == outs[1]


def test_strict_exits_2_before_loading_the_model(tmp_path: Path) -> None:
    not_a_model = tmp_path / "missing.gguf"
    result = run_cli("eval", EXAMPLE, "--strict", "--model", not_a_model, "--out", tmp_path)
    assert result.code == 2
    assert "--strict" in result.stderr and "line 9" in result.stderr
    assert_clean_stderr(result.stderr)
    assert not (tmp_path / "results.jsonl").exists()


@pytest.mark.parametrize(
    ("content", "words"),
    [(None, "no such file"), (b"", "empty"), (b"\xff\xfe{}", "not UTF-8")],
)
def test_unusable_input_exits_2(tmp_path: Path, content: bytes | None, words: str) -> None:
    data = tmp_path / "data.jsonl"
    if content is not None:
        data.write_bytes(content)
    result = run_cli("eval", data, "--out", tmp_path / "out")
    assert result.code == 2
    assert str(data) in result.stderr and words in result.stderr
    assert_clean_stderr(result.stderr)


def test_corrupt_models_exit_3(small_model: Path, tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(small_model.read_bytes()[:2_000_000])
    not_gguf = tmp_path / "not-gguf.gguf"
    not_gguf.write_bytes(b"this is not a model\n" * 1000)
    for bad in (truncated, not_gguf, tmp_path / "absent.gguf"):
        result = run_cli("eval", EXAMPLE, "--model", bad, "--out", tmp_path / f"out-{bad.name}")
        assert result.code == 3, (bad, result.stderr)
        assert_clean_stderr(result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_fail_under(small_model: Path, tmp_path: Path) -> None:
    args = (
        "eval",
        EXAMPLE,
        "--model",
        small_model,
        "--no-rationale",
        "--judges",
        "document_recall,safety",
        "--limit",
        "3",
    )
    missed = run_cli(*args, "--out", tmp_path / "a", "--fail-under", "document_recall=1.01")
    assert missed.code == 1
    assert "document_recall" in missed.stderr
    met = run_cli(
        *args,
        "--out",
        tmp_path / "b",
        "--fail-under",
        "document_recall=0.5",
        "--fail-under",
        "safety=0",
    )
    assert met.code == 0, met.stderr
    bad = run_cli(*args, "--out", tmp_path / "c", "--fail-under", "safety")
    assert bad.code == 2


def test_custom_judge_file_and_stdin(small_model: Path, tmp_path: Path) -> None:
    judges = tmp_path / "judges.toml"
    judges.write_text("""
[[judges]]
name = "polite"
assessment_type = "ANSWER"
instruction = "Is the response {response} polite?"

[[judges]]
name = "mentions_year"
assessment_type = "RETRIEVAL"
instruction = "Does the passage {context} mention a year?"
""")
    data = EXAMPLE.read_text().splitlines()[0] + "\n"
    result = run_cli(
        "eval",
        "-",
        "--model",
        small_model,
        "--out",
        tmp_path / "o",
        "--judge-file",
        judges,
        "--judges",
        "polite,mentions_year",
        "--no-rationale",
        stdin=data,
    )
    assert result.code == 0, result.stderr
    (row,) = read_results(tmp_path / "o")
    assert row["response/llm_judged/polite/rating"] in ("yes", "no")
    assert len(row["retrieval/llm_judged/mentions_year/ratings"]) == 2
    assert row["retrieval/llm_judged/mentions_year/precision"] is not None


def test_verbose_shows_llama_logs(small_model: Path, tmp_path: Path) -> None:
    result = run_cli(
        "eval",
        EXAMPLE,
        "--model",
        small_model,
        "--out",
        tmp_path,
        "--judges",
        "safety",
        "--limit",
        "1",
        "--no-rationale",
        "--verbose",
    )
    assert result.code == 0
    assert any(line.startswith(LLAMA_NOISE) for line in result.stderr.splitlines())


def test_default_model_end_to_end(default_model: Path, tmp_path: Path) -> None:
    """`eval` without --model runs the embedded default, offline."""
    result = run_cli("eval", EXAMPLE, "--out", tmp_path, "--limit", "1", "--no-rationale")
    assert result.code == 0, result.stderr
    assert_clean_stderr(result.stderr)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["manifest"]["model"]["file"] == default_model.name
    (row,) = read_results(tmp_path)
    assert row["response/llm_judged/correctness/rating"] in ("yes", "no")
