"""`localjudge agreement`, `calibrate` and `eval --calibration` end to end through llama.cpp
on the small model (useless as a judge: these check the machinery, not the figures), on
tests/data/labelled_small.jsonl (8 labelled rows, plain cases labelled by reading)."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO, SMALL_MODEL, assert_clean_stderr, run_cli

LABELLED = REPO / "tests" / "data" / "labelled_small.jsonl"
JUDGES = "relevance_to_query,correctness,chunk_relevance"


@pytest.mark.model
def test_agreement_through_llama_cpp(small_model: Path) -> None:
    result = run_cli(
        "agreement", LABELLED, "--model", SMALL_MODEL, "--judges", JUDGES, "--format", "json"
    )
    assert result.code == 0, result.stderr
    assert_clean_stderr(result.stderr)
    report = json.loads(result.stdout)
    assert report["model"] == SMALL_MODEL
    assert report["labelled"]["rows"] == 8 and report["labelled"]["rows_without_labels"] == 1
    assert set(report["judges"]) == set(JUDGES.split(","))
    rows = [json.loads(line) for line in LABELLED.read_text().splitlines()]
    labels = {r["request_id"]: r.get("labels", {}) for r in rows}
    for name, r in report["judges"].items():
        expected = 12 if name == "chunk_relevance" else 8
        assert r["n"] + r["verdict_errors"] == expected
        for key in ("balanced_accuracy", "kappa", "auc", "false_yes_rate", "false_no_rate"):
            value = r[key]["value"]
            assert value is None or -1.0 <= value <= 1.0
        for d in r["disagreements"]:
            assert d["label"] != d["verdict"]
            label = labels[d["request_id"]][name]
            assert d["label"] == (label[d["chunk"]] if d["chunk"] is not None else label)
        assert set(r["by_source"]) == {"plain capitals", "plain science", "plain baking"}
    table = run_cli("agreement", LABELLED, "--model", SMALL_MODEL, "--judges", "correctness")
    assert table.code == 0 and "correctness" in table.stdout and "disagreement" in table.stdout


@pytest.mark.model
def test_calibrate_then_eval_through_llama_cpp(small_model: Path, tmp_path: Path) -> None:
    cal = tmp_path / "calibration.toml"
    result = run_cli(
        "calibrate",
        LABELLED,
        "--model",
        SMALL_MODEL,
        "--judges",
        JUDGES,
        "--out",
        cal,
        "--unsure-target",
        "0.9",
    )
    assert result.code == 0, result.stderr
    assert_clean_stderr(result.stderr)
    written = tomllib.loads(cal.read_text())
    assert written["model"] == SMALL_MODEL
    assert written["model_sha256"] == hashlib.sha256(small_model.read_bytes()).hexdigest()
    for name, entry in written["judges"].items():
        assert 0.0 <= entry["threshold"] <= 1.0
        assert entry["n"] == (12 if name == "chunk_relevance" else 8)
        if "unsure_low" in entry:
            assert entry["unsure_low"] <= entry["threshold"] <= entry["unsure_high"]
    out = tmp_path / "run"
    run = run_cli(
        "eval",
        LABELLED,
        "--model",
        SMALL_MODEL,
        "--judges",
        JUDGES,
        "--no-rationale",
        "--calibration",
        cal,
        "--out",
        out,
    )
    assert run.code == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    manifest = summary["manifest"]
    assert manifest["calibration"]["sha256"] == hashlib.sha256(cal.read_bytes()).hexdigest()
    for name, entry in written["judges"].items():
        assert manifest["thresholds"][name] == entry["threshold"]
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    key = "response/llm_judged/correctness"
    if "unsure_low" in written["judges"].get("correctness", {}):
        unsure = sum(1 for r in results if r.get(f"{key}/rating") == "unsure")
        assert summary["judges"]["correctness"]["rows_unsure"] == unsure
    # The same file is refused for another model: the default one.
    other = run_cli("eval", LABELLED, "--calibration", cal, "--out", tmp_path / "other")
    assert other.code == 2 and f"fitted for model {SMALL_MODEL}" in other.stderr
