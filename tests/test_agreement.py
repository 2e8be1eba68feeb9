"""scripts/agreement.py: the statistics it reports, the catalogue thresholds it writes, the
unsure-band measurement of answer_relevancy, and one real run through llama.cpp."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import LLAMA_NOISE, REPO, SMALL_MODEL, load_script, run_script

SCRIPT = REPO / "scripts" / "agreement.py"


agreement = load_script("agreement")


@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])),
        min_size=2,
        max_size=30,
    )
)
def test_roc_auc_is_the_share_of_correctly_ordered_pairs(pairs: list[tuple[int, float]]) -> None:
    y = np.array([p[0] for p in pairs], dtype=np.float64)
    s = np.array([p[1] for p in pairs], dtype=np.float64)
    pos = [b for a, b in pairs if a == 1]
    neg = [b for a, b in pairs if a == 0]
    if not pos or not neg:
        assert agreement.roc_auc(y, s) is None
        return
    counted = [1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)]
    assert agreement.roc_auc(y, s) == pytest.approx(sum(counted) / len(counted))


def test_classify_by_hand() -> None:
    # tp 3, fn 1, tn 4, fp 2
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=np.float64)
    pred = np.array([1, 1, 1, 0, 0, 0, 0, 0, 1, 1], dtype=np.float64)
    got = agreement.classify(y, pred)
    assert got["accuracy"] == pytest.approx(0.7)
    assert got["balanced_accuracy"] == pytest.approx((3 / 4 + 4 / 6) / 2)
    pe = (5 * 4 + 5 * 6) / 100
    assert got["kappa"] == pytest.approx((0.7 - pe) / (1 - pe))


def _unit(label: int, p: float | None, half: str = "fit", **extra: Any) -> dict[str, Any]:
    return {"row": 0, "half": half, "source": "s", "label": label, "p_yes": p, **extra}


def test_fit_threshold_separates_when_it_can_and_prefers_one_near_half() -> None:
    units = [_unit(1, p) for p in (0.3, 0.35, 0.9)] + [_unit(0, p) for p in (0.05, 0.1, 0.2)]
    t = agreement.fit_threshold(units)
    assert 0.2 < t <= 0.3
    # Perfectly separated at 0.5 already: 0.5 stays.
    assert agreement.fit_threshold([_unit(1, 0.8), _unit(0, 0.2)]) == 0.5
    assert agreement.fit_threshold([_unit(1, None)]) == 0.5


def test_write_thresholds_merges_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.toml"
    path.write_text(
        "# comment kept\n"
        '[models."m"]\n'
        'file = "m.gguf"\n'
        "\n"
        '[models."m".thresholds]\n'
        "safety = 0.6000\n"
        "correctness = 0.4000\n"
        "\n"
        '[models."other"]\n'
        'file = "o.gguf"\n'
    )
    agreement.write_thresholds(path, "m", {"correctness": 0.55, "chunk_relevance": 0.7})
    agreement.write_thresholds(path, "new", {"safety": 0.5})
    text = path.read_text()
    assert text.startswith("# comment kept\n")
    assert (
        '[models."m".thresholds]\nchunk_relevance = 0.7000\ncorrectness = 0.5500\n'
        "safety = 0.6000\n\n" in text
    )
    assert '[models."other"]\nfile = "o.gguf"\n' in text
    assert text.endswith('[models."new".thresholds]\nsafety = 0.5000\n')


def test_unsure_bands_rescore_answer_relevancy_from_statement_probabilities() -> None:
    units = [
        _unit(1, None, "fit", statement_p=[0.9, 0.6]),
        _unit(0, None, "fit", statement_p=[0.2, 0.45]),
        _unit(1, None, "report", statement_p=[0.8, 0.7]),
        _unit(0, None, "report", statement_p=[0.1, 0.55]),
        _unit(0, None, "report", statement_p=[None]),
    ]
    bands = {b["band"]: b for b in agreement.unsure_bands(units, 0.5, 0.3)}
    assert set(bands) == {*agreement.BANDS, None}
    # No band: nothing unsure; 0.15: 0.6, 0.45, 0.55 are unsure (3 of 8 statements);
    # 0.25: 0.7 too.
    assert bands[0.0]["unsure_share"] == 0.0
    assert bands[0.15]["unsure_share"] == pytest.approx(3 / 8)
    assert bands[0.25]["unsure_share"] == pytest.approx(4 / 8)
    assert bands[None]["unsure_share"] is None and bands[None]["score"] == "mean P(yes)"
    for b in bands.values():
        # The failed row is counted as an error, not scored.
        assert b["report_half_fitted"]["n"] == 2 and b["report_half_fitted"]["errors"] == 1
        assert b["auc_all_rows"]["value"] == 1.0


@pytest.mark.model
def test_agreement_script_runs_through_llama_cpp(small_model: Path, tmp_path: Path) -> None:
    units_path = tmp_path / "units.jsonl"
    proc = run_script(
        SCRIPT,
        "--model",
        SMALL_MODEL,
        "--rows",
        "4",
        "--judges",
        "correctness,chunk_relevance,answer_relevancy,document_recall",
        "--units",
        units_path,
        "--json",
    )
    assert proc.code == 0, proc.stderr
    assert not any(line.startswith(LLAMA_NOISE) for line in proc.stderr.splitlines())
    report = json.loads(proc.stdout)
    assert report["model"] == SMALL_MODEL and report["rows_per_set"] == 4
    judges = report["judges"]
    assert set(judges) == {"correctness", "chunk_relevance", "answer_relevancy", "document_recall"}
    # Halves by parity: rows 0 and 2 fit, 1 and 3 report.
    assert judges["correctness"]["report_half_fitted"]["n"] == 2
    assert judges["correctness"]["all_rows_argmax"]["n"] == 4
    assert 0.0 <= judges["correctness"]["threshold"] <= 1.0
    # document_recall needs no model and agrees with its labels by construction.
    assert judges["document_recall"]["all_rows_argmax"]["accuracy"]["value"] == 1.0
    units = [json.loads(line) for line in units_path.read_text().splitlines()]
    chunks = [u for u in units if u["judge"] == "chunk_relevance"]
    assert len(chunks) > 4  # one unit per chunk
    assert all(0.0 <= u["p_yes"] <= 1.0 for u in units if u["p_yes"] is not None)
    relevancy = judges["answer_relevancy"]
    rated = sum(relevancy["statement_ratings"].values())
    assert rated == sum(len(u["statement_p"]) for u in units if u["judge"] == "answer_relevancy")
    assert [b["band"] for b in relevancy["unsure_bands"]] == [*agreement.BANDS, None]
