"""Labelled files, `localjudge agreement`, `localjudge calibrate` and `eval --calibration`,
on the fake backend: the model answers P(yes) = the number written as "p=0.NN" in the
material it judges, so every figure below is worked by hand."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from localjudge import labelled
from localjudge.calibration import Calibration
from localjudge.cli import cli
from localjudge.engine.base import VerdictRequest
from localjudge.engine.fake import Answer, FakeBackend
from localjudge.errors import UsageError
from localjudge.judges.base import unsure_fields
from localjudge.models import ResolvedModel

SHA = "ab" * 32
P = re.compile(r"p=(0\.\d+)")
RESPONSE = re.compile(r"<response>(.*?)</response>", re.DOTALL)


def _answer(request: VerdictRequest) -> Answer:
    """P(yes) = the "p=0.NN" in the response when the prompt shows one (guideline_adherence's
    prompt also shows the passages), else the last in the prompt (a chunk prompt holds only
    its chunk)."""
    text = request.prompt.user_text()
    response = RESPONSE.search(text)
    found = P.findall(response.group(1) if response else "") or P.findall(text)
    p = float(found[-1])
    return ("yes", p) if p >= 0.5 else ("no", 1.0 - p)


class Fake(FakeBackend):
    made: list[Fake] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(rule=_answer)
        Fake.made.append(self)

    def close(self) -> None:
        pass


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ResolvedModel:
    import localjudge.engine.llama
    import localjudge.models

    model = ResolvedModel(id="fake-model", path=tmp_path / "fake.gguf", sha256=SHA, entry=None)
    monkeypatch.setattr(localjudge.models, "resolve_for_eval", lambda spec: model)
    monkeypatch.setattr(localjudge.engine.llama, "LlamaBackend", Fake)
    return model


# guideline_adherence (one question, so its P(yes) is the model's): labels and P(yes). At 0.5
# rows 3 (a yes at 0.4) and 5 (a no at 0.6) disagree: tp 2, fn 1, tn 2, fp 1.
ROWS = [("yes", 0.9), ("yes", 0.7), ("yes", 0.4), ("no", 0.2), ("no", 0.6), ("no", 0.1)]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def labelled_file(tmp_path: Path) -> Path:
    rows: list[dict[str, Any]] = [
        {
            "request_id": f"r{i}",
            "request": "What is the capital of France?",
            "response": f"An answer (p={p}).",
            "guidelines": ["Be brief."],
            "retrieved_context": [
                {"content": f"A passage (p={0.8 if i % 2 else 0.3})."},
                {"content": "Another passage (p=0.45)."},
            ],
            "labels": {"guideline_adherence": label, "chunk_relevance": ["yes", "no"]},
            "source": f"Set{i % 2} part.json line={i}",
        }
        for i, (label, p) in enumerate(ROWS, start=1)
    ]
    rows.insert(3, {"request": "unlabelled row", "response": "x"})
    return _write(tmp_path / "labelled.jsonl", rows)


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_source_names_stop_at_references() -> None:
    name = labelled.source_name
    assert name("SummEdits samsum") == "SummEdits samsum"
    assert name("FaithBench data_for_release/batch_6.json sample_id=39") == "FaithBench"
    assert name("BEGIN wow/begin_test_wow.tsv line 1922") == "BEGIN"
    assert name("EVOUNA NQ.json index=978 answer_gpt35") == "EVOUNA NQ"
    assert name("HotpotQA dev (distractor setting) _id=5a87") == "HotpotQA dev"
    assert name("DICES-990 (JUDGE-BENCH data/dices/dices_990.json) item_id=14") == "DICES-990"
    assert name("XSTest v2 model_completions/xstest_v2.csv") == "XSTest v2"
    assert name("plain paraphrase") == "plain paraphrase"
    assert name("SemEval-2015 Task 3 CQA-QL (devel) CID=Q2") == "SemEval-2015 Task"
    assert name("set-a 1") == "set-a"
    assert name(None) == name("") == labelled.NO_SOURCE


def test_read_labelled_keeps_labels_away_from_the_record(tmp_path: Path) -> None:
    data = labelled.read_labelled(str(labelled_file(tmp_path)))
    assert len(data.rows) == 6 and data.unlabelled == 1
    assert data.judges() == ["guideline_adherence", "chunk_relevance"]
    row = data.rows[0]
    assert row.labels["chunk_relevance"] == ("yes", "no") and row.source == "Set1 part"
    assert not hasattr(row.record, "labels")  # the judges get the Record only


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"safety": "maybe"}, 'line 1, labels.safety: expected "yes", "no" or null'),
        ("yes", "line 1: 'labels' must be an object"),
    ],
)
def test_bad_labels_are_refused_with_line_and_judge(
    tmp_path: Path, labels: Any, message: str
) -> None:
    path = _write(tmp_path / "l.jsonl", [{"request": "q", "response": "a", "labels": labels}])
    with pytest.raises(UsageError, match=re.escape(message)):
        labelled.read_labelled(str(path))


def test_agreement_by_hand(fake_model: ResolvedModel, tmp_path: Path) -> None:
    result = invoke("agreement", labelled_file(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["model"] == "fake-model" and report["labelled"]["rows"] == 6
    assert report["labelled"]["rows_without_labels"] == 1
    rel = report["judges"]["guideline_adherence"]
    assert rel["n"] == 6 and rel["threshold"] == 0.5 and rel["coverage"]["value"] == 1.0
    assert rel["balanced_accuracy"]["value"] == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert rel["kappa"]["value"] == pytest.approx((4 / 6 - 0.5) / 0.5)  # p_e = 18/36
    assert rel["auc"]["value"] == pytest.approx(8 / 9)
    assert rel["false_yes_rate"]["value"] == pytest.approx(1 / 3)
    assert rel["false_no_rate"]["value"] == pytest.approx(1 / 3)
    assert [(d["request_id"], d["label"], d["verdict"]) for d in rel["disagreements"]] == [
        ("r3", "yes", "no"),
        ("r5", "no", "yes"),
    ]
    assert rel["disagreements"][0]["p_yes"] == pytest.approx(0.4)
    assert set(rel["by_source"]) == {"Set0 part", "Set1 part"}
    # The judge saw neither labels nor sources.
    prompts = [r.prompt.user_text() for r in Fake.made[-1].asked]
    assert len(prompts) == 6 + 12
    assert not any("yes" in t.split("Question:")[0] or "Set1" in t for t in prompts)
    # chunk_relevance: 12 chunks; chunk 1 is labelled yes (P 0.8 or 0.3), chunk 2 no (0.45).
    chunks = report["judges"]["chunk_relevance"]
    assert chunks["n"] == 12
    assert chunks["false_no_rate"]["value"] == pytest.approx(0.5)
    assert chunks["false_yes_rate"]["value"] == 0.0
    assert {(d["request_id"], d["chunk"]) for d in chunks["disagreements"]} == {
        ("r2", 0),
        ("r4", 0),
        ("r6", 0),
    }


def test_agreement_table_and_markdown(fake_model: ResolvedModel, tmp_path: Path) -> None:
    path = labelled_file(tmp_path)
    table = invoke("agreement", path, "--judges", "guideline_adherence")
    assert table.exit_code == 0, table.output
    assert "guideline_adherence: 2 disagreement(s)" in table.stdout
    assert "0.67" in table.stdout and "chunk_relevance" not in table.stdout
    markdown = invoke("agreement", path, "--judges", "guideline_adherence", "--format", "markdown")
    assert "| judge | units | threshold | balanced acc." in markdown.stdout


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        ("safety", "no row has a label for safety"),
        ("nonsense", "unknown judge 'nonsense'"),
        ("document_recall", "document_recall gives no yes/no verdict"),
    ],
)
def test_agreement_refuses_judges_it_cannot_measure(
    fake_model: ResolvedModel, tmp_path: Path, judges: str, message: str
) -> None:
    result = invoke("agreement", labelled_file(tmp_path), "--judges", judges)
    assert result.exit_code == 2 and message in result.stderr


def test_labels_for_an_unknown_judge_exit_2(fake_model: ResolvedModel, tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl", [{"request": "q", "response": "a", "labels": {"tone": "yes"}}]
    )
    result = invoke("agreement", path)
    assert result.exit_code == 2 and "labels for unknown judge 'tone'" in result.stderr


def test_agreement_without_labelled_rows_exits_2(fake_model: ResolvedModel, tmp_path: Path) -> None:
    path = _write(tmp_path / "plain.jsonl", [{"request": "q", "response": "a"}])
    result = invoke("agreement", path)
    assert result.exit_code == 2 and "no labelled rows" in result.stderr


def _calibrate(tmp_path: Path, *extra: str) -> tuple[Result, Path]:
    out = tmp_path / "calibration.toml"
    result = invoke(
        "calibrate",
        labelled_file(tmp_path),
        "--judges",
        "guideline_adherence",
        "--out",
        out,
        *extra,
    )
    return result, out


def test_calibrate_fits_the_threshold_and_records_the_model(
    fake_model: ResolvedModel, tmp_path: Path
) -> None:
    result, out = _calibrate(tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    written = tomllib.loads(out.read_text())
    assert written["model"] == "fake-model" and written["model_sha256"] == SHA
    entry = written["judges"]["guideline_adherence"]
    # 0.65 and 0.3 both reach 5/6; 0.65 is nearer 0.5 (test_agreement_metrics).
    assert entry["threshold"] == pytest.approx(0.65)
    assert entry["n"] == 6 and entry["n_yes"] == 3
    assert entry["current_threshold"] == 0.5
    assert entry["current_balanced_accuracy"] == pytest.approx(2 / 3)
    assert entry["cv_folds"] == 3 and 0.0 <= entry["cv_balanced_accuracy"] <= 1.0
    assert entry["cv_gain"] == pytest.approx(
        entry["cv_balanced_accuracy"] - entry["current_balanced_accuracy"]
    )
    assert "unsure_low" not in entry
    assert "only 3 yes and 3 no labels" in result.stderr
    printed = json.loads(result.stdout)
    assert printed["judges"]["guideline_adherence"]["threshold"] == pytest.approx(0.65)


def test_calibrate_with_an_unsure_target_fits_a_band(
    fake_model: ResolvedModel, tmp_path: Path
) -> None:
    result, out = _calibrate(tmp_path, "--unsure-target", "0.9")
    assert result.exit_code == 0, result.output
    entry = tomllib.loads(out.read_text())["judges"]["guideline_adherence"]
    assert (entry["unsure_low"], entry["unsure_high"]) == pytest.approx((0.3, 0.65))
    assert "written:" in result.stdout and "[0.300, 0.650)" in result.stdout


def test_calibrate_one_class_only_exits_2(fake_model: ResolvedModel, tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {
                "request": "q",
                "response": "a p=0.7",
                "guidelines": ["Be brief."],
                "labels": {"guideline_adherence": "yes"},
            }
        ],
    )
    result = invoke("calibrate", path, "--out", tmp_path / "c.toml")
    assert result.exit_code == 2
    assert "one class only" in result.stderr and not (tmp_path / "c.toml").exists()


def _eval(tmp_path: Path, data: Path, *extra: str | Path) -> Result:
    return invoke(
        "eval",
        data,
        "--judges",
        "guideline_adherence",
        "--out",
        tmp_path / "out",
        "--no-rationale",
        *extra,
    )


def test_eval_applies_a_calibration_and_records_its_hash(
    fake_model: ResolvedModel, tmp_path: Path
) -> None:
    result, cal = _calibrate(tmp_path, "--unsure-target", "0.9")
    assert result.exit_code == 0, result.output
    data = _write(
        tmp_path / "data.jsonl",
        [
            {"request": "q", "response": f"a p={p}", "guidelines": ["Be brief."]}
            for p in (0.9, 0.6, 0.2, 0.4, 0.66)
        ],
    )
    run = _eval(tmp_path, data, "--calibration", cal)
    assert run.exit_code == 0, run.output
    rows = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    key = "response/llm_judged/guideline_adherence"
    # threshold 0.65, band [0.3, 0.65): 0.6 and 0.4 are unsure, 0.66 is yes.
    assert [r[f"{key}/rating"] for r in rows] == ["yes", "unsure", "no", "unsure", "yes"]
    assert [r[f"{key}/threshold_rating"] for r in rows] == ["yes", "no", "no", "no", "yes"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["judges"]["guideline_adherence"]["rows_unsure"] == 2
    assert "rated unsure (not in the rates): guideline_adherence 2" in run.stdout
    rate = summary["aggregates"][f"{key}/rating/percentage"]
    assert rate["value"] == pytest.approx(2 / 3) and rate["count"] == 3
    import hashlib

    manifest = summary["manifest"]
    assert manifest["calibration"]["sha256"] == hashlib.sha256(cal.read_bytes()).hexdigest()
    assert manifest["thresholds"]["guideline_adherence"] == pytest.approx(0.65)
    # Without the calibration: the catalogue's threshold (0.5 here), nothing unsure.
    plain = _eval(tmp_path, data, "--overwrite")
    assert plain.exit_code == 0
    rows = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert [r[f"{key}/rating"] for r in rows] == ["yes", "yes", "no", "no", "yes"]
    assert f"{key}/threshold_rating" not in rows[0]


def test_eval_refuses_a_calibration_for_another_model(
    fake_model: ResolvedModel, tmp_path: Path
) -> None:
    cal = tmp_path / "other.toml"
    cal.write_text(
        'model = "other-model"\nmodel_sha256 = "' + "cd" * 32 + '"\n\n'
        "[judges.guideline_adherence]\nthreshold = 0.6\n"
    )
    data = _write(
        tmp_path / "data.jsonl",
        [{"request": "q", "response": "a p=0.9", "guidelines": ["Be brief."]}],
    )
    result = _eval(tmp_path, data, "--calibration", cal)
    assert result.exit_code == 2
    assert "fitted for model other-model" in result.stderr and "fake-model" in result.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not toml [", "not a TOML file"),
        ('model = "m"\n', "expected model, model_sha256"),
        (
            'model = "m"\nmodel_sha256 = "x"\n[judges.safety]\nthreshold = 2\n',
            "judges.safety.threshold: expected a number between 0 and 1",
        ),
        (
            'model = "m"\nmodel_sha256 = "x"\n[judges.safety]\nthreshold = 0.5\n'
            "unsure_low = 0.6\nunsure_high = 0.7\n",
            "unsure_low <= threshold <= unsure_high",
        ),
    ],
)
def test_bad_calibration_files_exit_2(
    fake_model: ResolvedModel, tmp_path: Path, text: str, message: str
) -> None:
    cal = tmp_path / "c.toml"
    cal.write_text(text)
    data = _write(
        tmp_path / "data.jsonl",
        [{"request": "q", "response": "a p=0.9", "guidelines": ["Be brief."]}],
    )
    result = _eval(tmp_path, data, "--calibration", cal)
    assert result.exit_code == 2 and message in result.stderr


def test_unsure_fields_leave_failed_verdicts_alone() -> None:
    prefix = "response/llm_judged/x"
    failed = {f"{prefix}/rating": None, f"{prefix}/probability": None}
    assert unsure_fields(prefix, failed, (0.4, 0.6)) == {f"{prefix}/threshold_rating": None}
    no = {f"{prefix}/rating": "no", f"{prefix}/probability": 0.55}  # P(yes) 0.45
    assert unsure_fields(prefix, no, (0.4, 0.6))[f"{prefix}/rating"] == "unsure"
    assert f"{prefix}/rating" not in unsure_fields(prefix, no, (0.46, 0.6))


def test_calibration_check_model_accepts_the_same_file_under_another_name() -> None:
    cal = Calibration("c.toml", "h", "some-id", SHA, {"safety": 0.6})
    cal.check_model("file.gguf", SHA)
    with pytest.raises(UsageError, match="not for file.gguf"):
        cal.check_model("file.gguf", "cd" * 32)
