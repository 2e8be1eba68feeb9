"""Run directories made on the fake backend, for the tests of summary, compare and report.

A run is judged through localjudge.evaluate (the public API) with a FakeBackend whose
answers are a deterministic function of the prompt and a seed, and saved as `eval --out`
lays a run out; so each test reads back a real run, only without a model."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import localjudge
from localjudge.engine.base import VerdictRequest
from localjudge.engine.fake import FakeBackend

from .conftest import EXAMPLE, load_script

Answer = tuple[str, float]


def hashed_rule(seed: str) -> Callable[[VerdictRequest], Answer]:
    """A label and a probability in [0.5, 1) from the SHA-256 of seed + prompt (the rule
    scripts/report_bench.py judges its large run with)."""
    rule: Callable[[VerdictRequest], Answer] = load_script("report_bench").hashed_rule(seed)
    return rule


def always_no_for(question: str, seed: str) -> Callable[[VerdictRequest], Answer]:
    """hashed_rule, except that prompts containing `question` are answered no (0.9)."""
    base = hashed_rule(seed)

    def answer(request: VerdictRequest) -> Answer:
        if question in request.prompt.user_text():
            return "no", 0.9
        return base(request)

    return answer


def make_run(
    out: Path,
    rule: Callable[[VerdictRequest], Answer],
    data: Any = EXAMPLE,
    manifest: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> localjudge.Result:
    """Judge `data` on the fake backend and save the run in `out`; `manifest` entries
    replace the saved manifest's (e.g. another model)."""
    result = localjudge.evaluate(data, backend=FakeBackend(rule=rule), **kwargs)
    result.manifest.update(manifest or {})
    result.summary["manifest"] = result.manifest
    result.save(out)
    return result


def read_rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
