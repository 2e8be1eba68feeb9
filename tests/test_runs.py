"""`localjudge summary` and `localjudge compare` over runs judged on the fake backend."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from localjudge import compare, output, runs, scoring
from localjudge.cli import cli
from localjudge.judges.response import CORRECTNESS_Q

from .fakeruns import always_no_for, hashed_rule, make_run, read_rows


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def run_a(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run_a")
    make_run(out, hashed_rule("a"), rationale=True)
    return out


# -- summary -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_summary_prints_what_eval_printed(run_a: Path, fmt: str) -> None:
    saved = json.loads((run_a / "summary.json").read_text())
    code, out, err = invoke("summary", run_a, "--format", fmt)
    assert code == 0, err
    assert out.rstrip("\n") == output.render(saved, fmt, run_a)


def test_summary_json_from_results_alone(run_a: Path, tmp_path: Path) -> None:
    saved = json.loads((run_a / "summary.json").read_text())
    alone = tmp_path / "results.jsonl"
    alone.write_bytes((run_a / "results.jsonl").read_bytes())
    code, out, err = invoke("summary", alone, "--format", "json")
    assert code == 0, err
    printed = json.loads(out)
    for key in (
        "rows_read",
        "rows_with_input_errors",
        "verdicts_with_errors",
        "aggregates",
        "judges",
        "rows_with_text_removed_by_guard",
    ):
        assert printed[key] == saved[key], key
    assert "manifest" not in printed  # there is none beside this results.jsonl
    assert printed["rows_read"] == 13 and printed["rows_with_input_errors"] == 2


def test_summary_of_a_subset_of_judges_and_a_custom_judge(tmp_path: Path) -> None:
    judge_file = tmp_path / "judges.toml"
    judge_file.write_text(
        '[[judges]]\nname = "cites"\nassessment_type = "ANSWER"\n'
        'instruction = "Does {response} cite a source?"\n'
        '[[judges]]\nname = "on_topic_chunk"\nassessment_type = "RETRIEVAL"\n'
        'instruction = "Is {context} about {request}?"\n'
    )
    out = tmp_path / "run"
    result = make_run(
        out, hashed_rule("c"), judges="safety,cites,on_topic_chunk", judge_file=judge_file
    )
    summary = runs.summary_of(runs.load_run(out))
    assert summary["aggregates"] == result.summary["aggregates"]
    assert list(summary["aggregates"]) == [
        "response/llm_judged/safety/rating/average",
        "response/llm_judged/cites/rating/percentage",
        "retrieval/llm_judged/on_topic_chunk/precision/average",
    ]


def test_summary_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    code, out, err = invoke("summary", tmp_path)
    assert code == 2 and out == ""
    assert "not a run directory" in err and "results.jsonl" in err
    (tmp_path / "results.jsonl").write_text('{"request_id": "1"}\n{"request_id": \n')
    code, _, err = invoke("summary", tmp_path)
    assert code == 2 and "line 2: not a JSON object" in err


# -- compare -----------------------------------------------------------------------------


def test_compare_a_run_with_itself_changes_nothing(run_a: Path) -> None:
    code, out, err = invoke("compare", run_a, run_a, "--fail-on-regression", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["changed"] == [] and data["regressions"] == []
    assert data["rows_only_in_a"] == data["rows_only_in_b"] == []
    for judge in data["judges"]:
        if judge["paired_rows"]:
            assert judge["difference"] == 0.0
            assert judge["verdict"] in (compare.SAME, compare.TOO_FEW)


def test_compare_finds_a_regression_and_gates_on_it(run_a: Path, tmp_path: Path) -> None:
    run_b = tmp_path / "b"
    # B: hashed like A, except that correctness is always no.
    make_run(run_b, always_no_for(CORRECTNESS_Q, "a"), rationale=True)
    result = compare.compare(runs.load_run(run_a), runs.load_run(run_b))
    diffs = {d.judge: d for d in result.judges}
    a_rows, b_rows = read_rows(run_a), read_rows(run_b)
    key = "response/llm_judged/correctness/rating"
    a_vals = [1.0 if r[key] == "yes" else 0.0 for r in a_rows if key in r]
    changed = {c.request_id for c in result.changed if c.judge == "correctness"}
    assert changed == {r["request_id"] for r in a_rows if r.get(key) == "yes"}
    assert all(r[key] == "no" for r in b_rows if key in r)
    d = diffs["correctness"]
    assert d.paired_rows == len(a_vals) and d.b == 0.0
    assert d.difference == pytest.approx(-float(np.mean(a_vals)))
    # Everything else is unchanged.
    assert {c.judge for c in result.changed} == {"correctness"}
    assert diffs["safety"].difference == 0.0

    code, out, err = invoke("compare", run_a, run_b, "--format", "markdown")
    assert code == 0, err
    assert out.startswith("### localjudge:") and "| metric | A | B |" in out
    assert "changed verdict(s)" in out


def test_paired_interval_and_fail_on_regression(tmp_path: Path) -> None:
    rows = [
        {"request_id": str(i), "request": f"Question {i}?", "response": f"Answer {i}."}
        for i in range(30)
    ]
    run_a, run_b = tmp_path / "a", tmp_path / "b"
    make_run(run_a, lambda r: ("no", 0.9), data=rows, judges=["relevance_to_query"])
    make_run(run_b, hashed_rule("b"), data=rows, judges=["relevance_to_query"])
    result = compare.compare(runs.load_run(run_a), runs.load_run(run_b))
    (d,) = result.judges
    b_vals = [
        1.0 if r["response/llm_judged/relevance_to_query/rating"] == "yes" else 0.0
        for r in read_rows(run_b)
    ]
    low, high = scoring.bootstrap_interval(np.asarray(b_vals) - 0.0)
    assert (d.ci95_low, d.ci95_high) == (low, high)
    assert d.verdict == compare.BETTER and low > 0
    # The other way round, B is worse beyond its interval: exit 1 with the flag only.
    code, out, err = invoke("compare", run_b, run_a, "--fail-on-regression")
    assert code == 1 and "relevance_to_query" in err
    assert "Worse beyond its interval: relevance_to_query" in out
    assert invoke("compare", run_b, run_a)[0] == 0


def test_compare_lists_rows_of_one_run_only(run_a: Path, tmp_path: Path) -> None:
    run_b = tmp_path / "b"
    make_run(run_b, hashed_rule("a"), rationale=True, limit=10)
    result = compare.compare(runs.load_run(run_a), runs.load_run(run_b))
    ids = [r["request_id"] for r in read_rows(run_a)]
    assert result.rows_only_in_a == ids[10:] and result.rows_only_in_b == []
    assert result.changed == []
    code, out, _ = invoke("compare", run_a, run_b)
    assert code == 0 and f"3 row(s) only in A: {', '.join(ids[10:])}" in out


@pytest.mark.parametrize(
    "change, words",
    [
        ({"model": {"id": "other", "file": "other.gguf", "sha256": "ab" * 32}}, "model: "),
        ({"thresholds": {"safety": 0.7}}, "thresholds: safety None vs 0.7"),
    ],
)
def test_compare_refuses_different_models_or_thresholds(
    run_a: Path, tmp_path: Path, change: dict[str, object], words: str
) -> None:
    run_b = tmp_path / "b"
    make_run(run_b, hashed_rule("a"), rationale=True, manifest=change)
    code, out, err = invoke("compare", run_a, run_b)
    assert code == 2 and out == ""
    assert "not judged by the same model and thresholds" in err and words in err
    assert "--allow-different-models" in err
    code, out, err = invoke("compare", run_a, run_b, "--allow-different-models")
    assert code == 0, err
    assert "Compared although they differ" in out


def test_compare_refuses_duplicate_request_ids(tmp_path: Path) -> None:
    rows = [{"request_id": "x", "request": "Q?", "response": "A."}] * 2
    make_run(tmp_path / "a", hashed_rule("a"), data=rows, judges=["safety"])
    code, _, err = invoke("compare", tmp_path / "a", tmp_path / "a")
    assert code == 2 and "request_id 'x' appears more than once" in err


def test_compare_notes_changed_prompts(run_a: Path, tmp_path: Path) -> None:
    run_b = tmp_path / "b"
    manifest = json.loads((run_a / "manifest.json").read_text())
    hashes = {**manifest["judges"], "safety": "0" * 64}
    make_run(run_b, hashed_rule("a"), rationale=True, manifest={"judges": hashes})
    result = compare.compare(runs.load_run(run_a), runs.load_run(run_b))
    assert result.prompts_changed == ["safety"]
    code, out, _ = invoke("compare", run_a, run_b)
    assert code == 0 and "the prompts of these judges differ" in out and "safety" in out
