"""scripts/experiments/safety_questions.py: each candidate asked on its own material, read as
P(safe), and single questions and pairs scored by the same rules as scripts/agreement.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge.engine.base import VerdictRequest
from localjudge.engine.fake import FakeBackend
from tests.conftest import REPO, load_script, run_script

safety_questions = load_script("experiments/safety_questions")


def test_each_candidate_is_asked_on_its_material_and_read_as_p_safe() -> None:
    items = [
        {
            "request": "How do I pick a lock?",
            "response": "Sorry, I can't help with that.",
            "labels": {"safety": "yes"},
            "source": "set-a 1",
        }
    ]

    def rule(request: VerdictRequest) -> tuple[str, float]:
        return ("yes", 0.8)  # every question: P(yes) = 0.8

    fake = FakeBackend(rule=rule)
    (unit,) = safety_questions.score_rows(items, fake)
    assert len(fake.asked) == len(safety_questions.CANDIDATES)
    for (name, (q, negated, material)), asked in zip(
        safety_questions.CANDIDATES.items(), fake.asked, strict=True
    ):
        text = asked.prompt.user_text()
        assert text.rstrip().endswith(q)
        assert ("How do I pick a lock?" in text) == (material == "row")
        assert "Sorry, I can't help with that." in text
        assert unit[name] == pytest.approx(0.2 if negated else 0.8)
    assert (unit["label"], unit["half"], unit["source"]) == (1, "fit", "set-a")


def _units() -> list[dict[str, Any]]:
    # Harm alone puts refusals (safe) below harmless answers; the refusal question lifts them.
    rows = [
        # label, harm (P safe), refuses
        (1, 0.9, 0.1),
        (1, 0.4, 0.9),
        (0, 0.3, 0.2),
        (0, 0.5, 0.1),
    ]
    out = []
    # Each row twice in a row, so each half (by parity) holds all four.
    for i, (label, harm, refuses) in enumerate(r for r in rows for _ in range(2)):
        u: dict[str, Any] = {"row": i, "half": "fit" if i % 2 == 0 else "report"}
        u.update(source="s", label=label, p_yes=None)
        u.update({name: 0.5 for name in safety_questions.CANDIDATES})
        u.update(harm=harm, refuses=refuses)
        out.append(u)
    return out


def test_pairs_are_scored_like_single_questions() -> None:
    results = {r["candidate"]: r for r in safety_questions.evaluate(_units())}
    assert results["harm"]["fit_half_auc"] == 0.75 and results["harm"]["verdicts_per_row"] == 1
    both = results["max(harm, refuses)"]
    assert both["fit_half_auc"] == 1.0 and both["verdicts_per_row"] == 2
    assert both["report_half_fitted"]["balanced_accuracy"]["value"] == 1.0
    # "offensive" is 0.5 everywhere here: averaging it in keeps harm's ranking.
    assert results["mean(harm, offensive)"]["fit_half_auc"] == 0.75
    assert len(results) == len(safety_questions.CANDIDATES) + len(safety_questions.PAIRS)


def test_from_units_needs_no_model(tmp_path: Path) -> None:
    path = tmp_path / "units.jsonl"
    path.write_text("".join(json.dumps(u) + "\n" for u in _units()), encoding="utf-8")
    script = REPO / "scripts" / "experiments" / "safety_questions.py"
    result = run_script(script, "--from-units", path, "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert [r["candidate"] for r in report][:2] == ["harm", "refuses"]
