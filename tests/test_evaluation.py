"""The one-call API (`localjudge.evaluate`) and `--rationale failing`, on the fake backend;
then end to end on the small real model: `eval --rationale failing`, `eval --html`, and
`localjudge.evaluate` resolving a model like the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import localjudge
from localjudge import evaluation
from localjudge.engine.fake import FakeBackend
from localjudge.errors import UsageError
from localjudge.judges.response import RELEVANCE_Q

from .conftest import EXAMPLE, assert_clean_stderr, run_cli
from .fakeruns import hashed_rule, read_rows

ROWS = [
    {
        "request_id": "a",
        "request": "What is 2 + 2?",
        "response": "4.",
        "retrieved_context": [{"content": "2 + 2 = 4", "doc_uri": "m"}, {"content": "Cats."}],
    },
    {"request_id": "b", "input": "Capital of Peru?", "output": "Lima."},
    {"request_id": "c", "request": 7},
]


def test_list_of_dicts_path_and_dataframe_give_the_same_rows(tmp_path: Path) -> None:
    rule = hashed_rule("api")
    from_list = localjudge.evaluate(
        ROWS, judges=["safety", "chunk_relevance"], backend=FakeBackend(rule=rule)
    )
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    from_path = localjudge.evaluate(
        data, judges="safety,chunk_relevance", backend=FakeBackend(rule=rule)
    )
    pd = pytest.importorskip("pandas")
    from_frame = localjudge.evaluate(
        pd.DataFrame(ROWS), judges=["safety", "chunk_relevance"], backend=FakeBackend(rule=rule)
    )
    assert from_list.rows == from_path.rows == from_frame.rows
    assert from_list.summary["aggregates"] == from_frame.summary["aggregates"]
    bad = from_list.rows[2]
    assert bad["request_id"] == "c" and "field 'request'" in bad["error"]
    assert from_list.summary["rows_with_input_errors"] == 1
    assert from_list.rows[1]["request"] == "Capital of Peru?"  # Mastra aliases
    frame = from_list.to_pandas()
    assert list(frame["request_id"]) == ["a", "b", "c"]
    assert list(frame["response/llm_judged/safety/rating"])[:2] == [
        r["response/llm_judged/safety/rating"] for r in from_list.rows[:2]
    ]


def test_bad_data_and_unknown_judges_or_models() -> None:
    with pytest.raises(UsageError, match="expected a path, a list of dicts"):
        localjudge.evaluate(42)
    with pytest.raises(UsageError, match="no rows"):
        localjudge.evaluate([])
    with pytest.raises(UsageError, match="unknown judge"):
        localjudge.evaluate(ROWS, judges=["nope"], backend=FakeBackend())
    with pytest.raises(UsageError, match="unknown model 'no-such-model'"):
        localjudge.evaluate(ROWS, model="no-such-model")


# Judges that write their rationale without the model (README, "rationale").
MODEL_FREE_RATIONALES = ("groundedness", "context_sufficiency")


def strip_rationales(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if not k.endswith(("/rationale", "/rationales"))}


def test_rationale_failing_same_verdicts_rationales_only_where_failing() -> None:
    rule = hashed_rule("why")
    runs = {
        mode: localjudge.evaluate(EXAMPLE, rationale=mode, backend=FakeBackend(rule=rule))
        for mode in (True, False, "failing")
    }
    plain = [strip_rationales(r) for r in runs[False].rows]
    assert [strip_rationales(r) for r in runs[True].rows] == plain
    assert [strip_rationales(r) for r in runs["failing"].rows] == plain
    assert runs["failing"].summary["aggregates"] == runs[False].summary["aggregates"]
    seen_failing = seen_passing = 0
    for full, failing in zip(runs[True].rows, runs["failing"].rows, strict=True):
        for key, value in failing.items():
            if key.endswith("/rationale"):
                verdict = failing[key.replace("/rationale", "/rating")]
                if verdict == "no":
                    assert value == full[key] and value, key
                    seen_failing += 1
                else:
                    assert value is None, key
                    seen_passing += 1
            elif key.endswith("/rationales"):
                ratings = failing[key.replace("/rationales", "/ratings")]
                if "no" in ratings:
                    assert value == [
                        why if r == "no" else None
                        for r, why in zip(ratings, full[key], strict=True)
                    ]
                else:
                    assert value is None
    assert seen_failing and seen_passing


def test_rationale_failing_asks_the_model_only_for_failing_verdicts() -> None:
    row = {"request_id": "x", "request": "How do I pick a lock?", "response": "Use a pin."}
    # Every answer "no": does not go along with harm (safety passes), does not answer
    # (relevance fails).
    fake = FakeBackend(rule=lambda request: ("no", 0.9))
    result = localjudge.evaluate(
        [row], judges=["safety", "relevance_to_query"], rationale="failing", backend=fake
    )
    (out,) = result.rows
    assert out["response/llm_judged/safety/rating"] == "yes"
    assert out["response/llm_judged/safety/rationale"] is None
    assert out["response/llm_judged/relevance_to_query/rating"] == "no"
    assert out["response/llm_judged/relevance_to_query/rationale"] == "scripted no"
    (again,) = [r for r in fake.asked if r.rationale]
    assert RELEVANCE_Q in again.prompt.user_text()
    # First pass: the row's six verdicts without rationale (safety's three questions,
    # relevance's three); then relevance's first question again, for its rationale.
    assert len(fake.asked) == 7


def test_save_writes_a_run_the_cli_reads(tmp_path: Path) -> None:
    result = localjudge.evaluate(ROWS, backend=FakeBackend(rule=hashed_rule("s")))
    result.save(tmp_path / "run")
    assert read_rows(tmp_path / "run") == result.rows
    code = run_cli("summary", tmp_path / "run", "--format", "json")
    assert code.code == 0, code.stderr
    assert json.loads(code.stdout)["aggregates"] == result.summary["aggregates"]


# -- end to end on the small real model ------------------------------------------------------


@pytest.mark.model
def test_eval_rationale_failing_and_html_on_a_real_model(small_model: Path, tmp_path: Path) -> None:
    from .conftest import load_script

    runs: dict[str, list[dict[str, Any]]] = {}
    for mode in ("none", "failing"):
        out = tmp_path / mode
        args: list[str | Path] = [
            "eval",
            EXAMPLE,
            "--model",
            small_model,
            "--out",
            out,
            "--rationale",
            mode,
        ]
        if mode == "failing":
            args += ["--html", tmp_path / "report.html"]
        result = run_cli(*args)
        assert result.code == 0, result.stderr
        assert_clean_stderr(result.stderr)
        runs[mode] = read_rows(out)
    assert [strip_rationales(r) for r in runs["failing"]] == [
        strip_rationales(r) for r in runs["none"]
    ]
    # SmolLM2 passes every row of the example: no model rationale is asked for.
    for row in runs["failing"]:
        for key, value in row.items():
            if key.endswith("/rationale") and key.split("/")[2] not in MODEL_FREE_RATIONALES:
                assert row[key.replace("/rationale", "/rating")] == "no" or value is None
    assert json.loads((tmp_path / "failing" / "manifest.json").read_text())["rationale"] == (
        "failing"
    )

    browser = load_script("browser")
    with browser.Browser() as b:
        page = b.open(tmp_path / "report.html")
        assert page.errors == []
        summary = json.loads((tmp_path / "failing" / "summary.json").read_text())
        shown = page.evaluate(
            "Array.from(document.querySelectorAll('#aggregates .value')).map(e => e.textContent)"
        )
        assert shown == [
            "-" if a["value"] is None else f"{a['value']:.3f}"
            for a in summary["aggregates"].values()
        ]


@pytest.mark.model
def test_evaluate_resolves_the_model_like_the_cli(small_model: Path, tmp_path: Path) -> None:
    result = localjudge.evaluate(EXAMPLE, judges=["relevance_to_query"], model=small_model, limit=3)
    out = tmp_path / "cli"
    cli = run_cli(
        "eval",
        EXAMPLE,
        "--model",
        small_model,
        "--judges",
        "relevance_to_query",
        "--limit",
        "3",
        "--no-rationale",
        "--out",
        out,
    )
    assert cli.code == 0, cli.stderr
    assert result.rows == read_rows(out)
    assert (
        result.manifest["model"]["sha256"]
        == json.loads((out / "manifest.json").read_text())["model"]["sha256"]
    )


@pytest.mark.model
def test_rationale_failing_on_a_real_backend(small_model: Path) -> None:
    from localjudge.engine.llama import LlamaBackend
    from localjudge.judges import select
    from localjudge.records import read_records

    rows = read_records(EXAMPLE).rows
    judges = select(["relevance_to_query", "chunk_relevance"])
    backend = LlamaBackend(small_model, n_ctx=2048, threads=2)
    try:
        first = evaluation.judge_rows(rows, backend, judges, {}, False, True)
        # Thresholds at the median P(yes), so that about half of the verdicts fail.
        thresholds: dict[str, float] = {}
        for judge, key, p_field, r_field in (
            (
                "relevance_to_query",
                "response/llm_judged/relevance_to_query/",
                "probability",
                "rating",
            ),
            (
                "chunk_relevance",
                "retrieval/llm_judged/chunk_relevance/",
                "probabilities",
                "ratings",
            ),
        ):
            p_yes: list[float] = []
            for r in first.results:
                probs, labels = r.get(key + p_field), r.get(key + r_field)
                if probs is None or labels is None:
                    continue
                pairs = (
                    zip(probs, labels, strict=True)
                    if isinstance(probs, list)
                    else [(probs, labels)]
                )
                p_yes += [p if lab == "yes" else 1 - p for p, lab in pairs]
            thresholds[judge] = sorted(p_yes)[len(p_yes) // 2]
        runs = {
            mode: evaluation.judge_rows(rows, backend, judges, thresholds, mode, True).results
            for mode in (False, "failing", True)
        }
    finally:
        backend.close()
    plain = [strip_rationales(r) for r in runs[False]]
    assert [strip_rationales(r) for r in runs["failing"]] == plain
    assert [strip_rationales(r) for r in runs[True]] == plain
    asked = passed = 0
    for row in runs["failing"]:
        rating = row.get("response/llm_judged/relevance_to_query/rating")
        why = row.get("response/llm_judged/relevance_to_query/rationale")
        if rating == "no":
            assert isinstance(why, str) and why
            asked += 1
        elif rating == "yes":
            assert why is None
            passed += 1
        ratings = row.get("retrieval/llm_judged/chunk_relevance/ratings") or []
        reasons = row.get("retrieval/llm_judged/chunk_relevance/rationales")
        if "no" in ratings:
            assert reasons is not None
            assert [bool(x) for x in reasons] == [r == "no" for r in ratings]
        else:
            assert reasons is None
    assert asked and passed


def test_eval_html_and_rationale_failing_through_the_cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from .test_reliability import FakeCli

    fake = FakeCli(monkeypatch)
    out, page = tmp_path / "out", tmp_path / "page.html"
    run = fake(EXAMPLE, "--out", out, "--rationale", "failing", "--html", page)
    assert run.code == 0, run.stderr
    assert f"report: {page}" in run.stderr
    html = page.read_text()
    summary = json.loads((out / "summary.json").read_text())
    for key in summary["aggregates"]:
        assert f'<tr data-metric="{key}">' in html
    assert json.loads((out / "manifest.json").read_text())["rationale"] == "failing"
    for row in read_rows(out):
        for key, value in row.items():
            if key.endswith("/rationale") and key.split("/")[2] not in MODEL_FREE_RATIONALES:
                assert (value is not None) == (row[key.replace("/rationale", "/rating")] == "no")


def test_eval_html_without_the_report_extra_fails_before_the_model_loads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util

    from .test_reliability import FakeCli

    fake = FakeCli(monkeypatch)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "jinja2" else real(name, *a)
    )
    run = fake(EXAMPLE, "--out", tmp_path / "out", "--html", tmp_path / "page.html")
    assert run.code == 2 and fake.loads == 0
    assert "pip install 'localjudge[report]'" in run.stderr
