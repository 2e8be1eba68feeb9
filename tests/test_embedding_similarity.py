"""scripts/experiments/embedding_similarity.py: unit ids read as the collectors wrote them,
and the cosine column leaves the shipped signals' figures as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import load_script

es = load_script("experiments/embedding_similarity")
gs = load_script("experiments/groundedness_support")

REPO = Path(__file__).resolve().parents[1]


def test_a_chunk_id_pairs_the_request_with_that_chunk() -> None:
    rows = (REPO / "tests/data/plain/chunk_relevance.jsonl").read_text().splitlines()
    item = json.loads(rows[0])
    request, text = es.pair("plain/chunk_relevance.jsonl:0:1")
    assert request == es.srf.request_text(item)
    assert text == item["retrieved_context"][1]["content"]


def test_a_row_id_pairs_the_request_with_the_response() -> None:
    rows = (REPO / "tests/data/plain/relevance_to_query.jsonl").read_text().splitlines()
    item = json.loads(rows[2])
    assert es.pair("plain/relevance_to_query.jsonl:2") == (
        es.srf.request_text(item),
        item["response"],
    )


def test_the_shipped_signals_figures_do_not_depend_on_the_cosine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    units, dev, shipped, _ = es.STUDIES["chunk_relevance"]
    monkeypatch.setattr(es, "STUDIES", {"chunk_relevance": (units, dev, shipped, ("shipped+cos",))})
    result = es.analyse(REPO / "docs/runs/issue13-r27-minilm-cosine.json")
    plain = gs.analyse(units, {shipped: (shipped,)})[shipped]["groups"][dev]
    ours = result["chunk_relevance"][shipped]
    assert ours["dev_held_out"] == plain["loso"]
    assert ours["dev_report_half"] == plain["report_half"]
    assert set(result["chunk_relevance"]) == {shipped, "shipped+cos"}
    assert result["chunk_relevance"]["shipped+cos"]["plain_sets"] == 13
