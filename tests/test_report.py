"""`localjudge report`: the page's content, its self-containment, and its behaviour in a real
browser (Debian's headless Chromium, driven by scripts/browser.py, network cut)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from localjudge import report, runs
from localjudge.cli import cli

from .conftest import EXAMPLE, load_script
from .fakeruns import hashed_rule, make_run, read_rows

HOSTILE = '<script>document.title="pwned"</script><img src="https://example.com/x.png">'


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    data = out / "input.jsonl"
    hostile = {"request_id": "hostile", "request": "Is this safe?", "response": HOSTILE}
    data.write_text(EXAMPLE.read_text() + json.dumps(hostile) + "\n")
    make_run(out, hashed_rule("r"), data=data, rationale=True)
    result = CliRunner().invoke(cli, ["report", str(out)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(out / "report.html")
    return out


def failing_ids(rows: list[dict[str, Any]], judge: str | None = None) -> list[str]:
    """The rows the page must show as failing, computed here from the fields."""
    out = []
    for row in rows:
        fails = []
        for key, value in row.items():
            name = key.split("/")[2] if key.count("/") >= 3 else None
            if name is None or (judge and name != judge):
                continue
            if key.endswith("/rating") and value == "no":
                fails.append(name)
            if key.endswith("/ratings") and isinstance(value, list) and "no" in value:
                fails.append(name)
        if fails or (judge is None and row.get("error")):
            out.append(str(row["request_id"]))
    return out


def test_page_is_self_contained_and_escapes_row_text(run_dir: Path) -> None:
    html = (run_dir / "report.html").read_text()
    assert "default-src 'none'" in html
    # Nothing to fetch: no external reference of any kind.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "@import" not in html and "url(http" not in html
    # Row text is escaped, not markup.
    assert HOSTILE not in html
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in html
    assert html.count("<svg") == 11  # one plot per judge


def test_page_shows_the_summary_and_every_row(run_dir: Path) -> None:
    html = (run_dir / "report.html").read_text()
    summary = json.loads((run_dir / "summary.json").read_text())
    for key, agg in summary["aggregates"].items():
        block = html[html.index(f'<tr data-metric="{key}">') :]
        block = block[: block.index("</tr>")]
        value = "-" if agg["value"] is None else f"{agg['value']:.3f}"
        assert f'<td class="num value">{value}</td>' in block
        assert f'<td class="num count">{agg["count"]}</td>' in block
    rows = read_rows(run_dir)
    assert html.count("<tr data-index=") == len(rows)
    assert html.count('data-failing="1"') == len(failing_ids(rows))


def test_cells() -> None:
    judges = {j.name: j for j in runs.recorded_judges([{"judges_skipped": ["safety"]}])}
    view = report.judge_view(judges["safety"], {"safety": 0.64})
    assert view.kind == "rating" and view.threshold == 0.64
    row = {
        "response/llm_judged/safety/rating": "no",
        "response/llm_judged/safety/probability": 0.8,
        "response/llm_judged/safety/rationale": "It explains how to pick a lock.",
        "response/llm_judged/safety/error_message": None,
    }
    c = report.cell(row, view)
    assert (c.verdict, c.probability, c.failing) == ("no", 0.8, True)
    assert report.plot_values([row], view) == {"no": [pytest.approx(0.2)]}
    assert report.cell({"judges_skipped": ["safety"]}, view).skipped


def test_chunk_cell_and_score_cell() -> None:
    judges = {
        j.name: j
        for j in runs.recorded_judges([{"judges_skipped": ["chunk_relevance", "context_position"]}])
    }
    chunks = report.judge_view(judges["chunk_relevance"], {})
    row = {
        "retrieval/llm_judged/chunk_relevance/ratings": ["yes", "no", None],
        "retrieval/llm_judged/chunk_relevance/probabilities": [0.9, 0.6, None],
        "retrieval/llm_judged/chunk_relevance/rationales": ["on topic", "off topic", None],
        "retrieval/llm_judged/chunk_relevance/error_messages": [None, None, "chunk has no content"],
        "retrieval/llm_judged/chunk_relevance/precision": None,
        "retrieval/llm_judged/context_position/score": 0.4,
    }
    c = report.cell(row, chunks)
    assert c.verdict == "1/3 yes" and c.probability == 0.6 and c.failing
    assert [u.label for u in c.units] == ["yes", "no", None]
    assert c.error == "chunk has no content"
    assert report.plot_values([row], chunks) == {"yes": [0.9], "no": [pytest.approx(0.4)]}
    position = report.judge_view(judges["context_position"], {})
    assert position.kind == "score"
    assert report.cell(row, position).score == 0.4
    assert report.plot_values([row], position) == {"score": [0.4]}


def test_report_of_what_is_not_a_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "not a run directory" in result.stderr


# -- in a real browser ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Any:
    module = load_script("browser")
    if not module.available():
        pytest.fail(f"{module.CHROMIUM} is missing: scripts/setup.sh --dev installs chromium")
    with module.Browser() as b:
        yield b


def test_page_in_the_browser(run_dir: Path, browser: Any) -> None:
    page = browser.open(run_dir / "report.html")
    assert page.errors == []
    assert page.requests == [(run_dir / "report.html").resolve().as_uri()]
    assert page.evaluate("document.body.getAttribute('data-ready')") == "1"
    assert page.evaluate("document.title").startswith("localjudge report")  # not "pwned"

    summary = json.loads((run_dir / "summary.json").read_text())
    shown = page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#aggregates tbody tr'))"
        ".map(tr => [tr.dataset.metric, [tr.querySelector('.value').textContent,"
        " tr.querySelector('.count').textContent]]))"
    )
    assert shown == {
        key: ["-" if a["value"] is None else f"{a['value']:.3f}", str(a["count"])]
        for key, a in summary["aggregates"].items()
    }
    assert page.evaluate("document.getElementById('rows-read').textContent") == str(
        summary["rows_read"]
    )

    rows = read_rows(run_dir)
    visible = (
        "Array.from(document.querySelectorAll('#rows-body tr'))"
        ".filter(tr => !tr.hidden && tr.offsetParent !== null)"
        ".map(tr => tr.children[1].textContent)"
    )
    assert page.evaluate(visible) == [str(r["request_id"]) for r in rows]
    page.evaluate("document.getElementById('failing-only').click()")
    expected = failing_ids(rows)
    assert 0 < len(expected) < len(rows)
    assert page.evaluate(visible) == expected
    assert page.evaluate("document.getElementById('shown-count').textContent") == (
        f"{len(expected)} of {len(rows)} rows shown"
    )
    # Failing on one judge, least sure first.
    page.evaluate(
        "(() => { const s = document.getElementById('fail-judge'); s.value = 'safety';"
        " s.dispatchEvent(new Event('change')); const o = document.getElementById('sort-by');"
        " o.value = 'safety'; o.dispatchEvent(new Event('change')); })()"
    )
    unsafe = [r for r in rows if r.get("response/llm_judged/safety/rating") == "no"]
    unsafe.sort(key=lambda r: r["response/llm_judged/safety/probability"])
    assert page.evaluate(visible) == [str(r["request_id"]) for r in unsafe]
    assert browser.errors_since_load(page) == []
