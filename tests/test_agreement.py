"""scripts/agreement.py: its fit/report halves, per source and leave one source out (the
statistics themselves are localjudge.agreement's, tested in test_agreement_metrics), the
catalogue thresholds it writes, the unsure-band measurement of answer_relevancy, and one
real run through llama.cpp."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LLAMA_NOISE, REPO, SMALL_MODEL, load_script, run_script

SCRIPT = REPO / "scripts" / "agreement.py"


agreement = load_script("agreement")


def _unit(label: int, p: float | None, half: str = "fit", **extra: Any) -> dict[str, Any]:
    return {"row": 0, "half": half, "source": "s", "label": label, "p_yes": p, **extra}


def test_fit_threshold_separates_when_it_can_and_prefers_one_near_half() -> None:
    units = [_unit(1, p) for p in (0.3, 0.35, 0.9)] + [_unit(0, p) for p in (0.05, 0.1, 0.2)]
    t = agreement.fit_threshold(units)
    assert 0.2 < t <= 0.3
    # Perfectly separated at 0.5 already: 0.5 stays.
    assert agreement.fit_threshold([_unit(1, 0.8), _unit(0, 0.2)]) == 0.5
    assert agreement.fit_threshold([_unit(1, None)]) == 0.5


def test_evaluate_judge_reports_halves_sources_and_leave_one_source_out() -> None:
    # Source a separates at 0.25, source b at 0.75 (as in test_agreement_metrics).
    units = [
        {**_unit(label, p, "fit" if k % 2 == 0 else "report"), "row": k, "source": src}
        for k, (label, p, src) in enumerate(
            [
                (1, 0.3, "a"),
                (0, 0.2, "a"),
                (1, 0.35, "a"),
                (0, 0.1, "a"),
                (1, 0.8, "b"),
                (0, 0.7, "b"),
                (1, 0.9, "b"),
                (0, 0.6, "b"),
            ]
        )
    ]
    result = agreement.evaluate_judge(units)
    assert result["report_half_fitted"]["n"] == 4
    assert set(result["by_source"]) == {"a", "b"}
    loso = result["leave_one_source_out"]
    assert loso["sources"]["a"]["threshold"] == pytest.approx(0.75)
    assert loso["sources"]["b"]["false_yes_rate"]["value"] == 1.0
    assert loso["pooled"]["n"] == 8
    text = agreement.render({"model": "m", "seconds": 1.0, "judges": {"j": result}})
    assert "| j | a (left out) | 4 | 0.750 |" in text and "left out, pooled" in text


def test_sets_for_adds_set_files_by_their_label_keys(tmp_path: Path) -> None:
    extra = tmp_path / "extra.jsonl"
    rows = [
        {
            "request": "q",
            "response": "a",
            "labels": {"groundedness": "yes", "safety": "no"},
            "source": "plain paraphrase",
        },
        {"request": "q", "response": "b", "labels": {"safety": "yes"}, "source": "plain refusal"},
    ]
    extra.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sets = agreement.sets_for(["groundedness", "safety", "correctness"], [extra], True, None)
    assert [len(d.rows) for d in sets["groundedness"]] == [2]
    assert [d.path for d in sets["safety"]] == [str(extra)]
    assert sets["correctness"] == []
    assert len(agreement.sets_for(["safety"], [extra], True, 1)["safety"][0].rows) == 1


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
        "--set",
        REPO / "tests" / "data" / "labelled_small.jsonl",
        "--json",
    )
    assert proc.code == 0, proc.stderr
    assert not any(line.startswith(LLAMA_NOISE) for line in proc.stderr.splitlines())
    report = json.loads(proc.stdout)
    assert report["model"] == SMALL_MODEL and report["rows_per_set"] == 4
    judges = report["judges"]
    assert set(judges) == {"correctness", "chunk_relevance", "answer_relevancy", "document_recall"}
    # Halves by parity within each set: rows 0 and 2 fit, 1 and 3 report; 4 rows of the
    # benchmark and 4 of the --set file, whose label keys add it to three judges.
    assert judges["correctness"]["report_half_fitted"]["n"] == 4
    assert judges["correctness"]["all_rows_argmax"]["n"] == 8
    assert len(report["sets"]["correctness"]) == 2 and report["sets"]["document_recall"] == [
        str(agreement.BENCHMARKS / "document_recall.jsonl")
    ]
    sources = {"EVOUNA NQ", "EVOUNA TQ", "plain capitals", "plain science"}
    assert set(judges["correctness"]["by_source"]) == sources
    loso = judges["correctness"]["leave_one_source_out"]
    assert set(loso["sources"]) == sources and loso["pooled"]["n"] <= 8
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


def test_script_measures_set_files_on_the_fake_backend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from localjudge.models import ResolvedModel
    from tests.test_labels import Fake, labelled_file

    model = ResolvedModel("fake-model", tmp_path / "fake.gguf", "ab" * 32, None)
    monkeypatch.setattr(agreement, "resolve_for_eval", lambda spec: model)
    monkeypatch.setattr(agreement, "LlamaBackend", Fake)
    path = labelled_file(tmp_path)
    code = agreement.main(
        ["--sets-only", "--set", str(path), "--judges", "guideline_adherence,safety", "--json"]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sets"] == {"guideline_adherence": [str(path)], "safety": []}
    rel = report["judges"]["guideline_adherence"]
    assert "safety" not in report["judges"]  # no labelled set: skipped
    # Labelled rows (P 0.9, 0.7, 0.4, 0.2, 0.6, 0.1); the even ones fit: 0.9 yes, 0.4 yes,
    # 0.6 no. At 0.5 two are wrong (0.25); at 0.75 only 0.4 (0.75).
    assert rel["threshold"] == pytest.approx(0.75)
    assert rel["all_rows_argmax"]["balanced_accuracy"]["value"] == pytest.approx(2 / 3)
    # Sources by row parity: "Set1 part" (rows 1, 3, 5), "Set0 part" (2, 4, 6).
    assert set(rel["leave_one_source_out"]["sources"]) == {"Set0 part", "Set1 part"}
    assert rel["leave_one_source_out"]["pooled"]["n"] == 6
