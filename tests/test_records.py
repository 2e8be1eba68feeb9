"""Input parsing (SPEC §2): formats, aliases, chat form, every error path."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from localjudge.errors import InputFileError
from localjudge.records import MAX_DEPTH, BadRecord, Chunk, Record, read_records

T = TypeVar("T")


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def test_jsonl_databricks_fields(tmp_path: Path) -> None:
    row = {
        "request_id": "r1",
        "request": "What is X?",
        "response": "X is Y.",
        "retrieved_context": [{"content": "X is Y.", "doc_uri": "doc://1"}],
        "expected_response": "Y",
        "expected_facts": ["X is Y"],
        "expected_retrieved_context": [{"doc_uri": "doc://1"}],
        "guidelines": ["Be brief"],
    }
    rs = read_records(write(tmp_path, "a.jsonl", json.dumps(row) + "\n"))
    (rec,) = rs.rows
    assert isinstance(rec, Record)
    assert rec.request_id == "r1"
    assert rec.retrieved_context == (Chunk("X is Y.", "doc://1"),)
    assert rec.expected_retrieved_context == ("doc://1",)
    assert rec.guidelines == ("Be brief",)
    assert rec.expected_text() == "Y"


def test_mastra_aliases_and_default_id(tmp_path: Path) -> None:
    row = {"input": "q", "output": "a", "context": ["c1", "c2"], "groundTruth": "g"}
    rs = read_records(write(tmp_path, "a.jsonl", "\n" + json.dumps(row) + "\n"))
    (rec,) = rs.rows
    assert isinstance(rec, Record)
    assert rec.request_id == "2"  # the 1-based line number
    assert rec.request == "q" and rec.response == "a" and rec.expected_response == "g"
    assert rec.retrieved_context == (Chunk("c1", None), Chunk("c2", None))
    assert rs.blank_lines == 1


def test_alias_conflict_is_bad_line(tmp_path: Path) -> None:
    rs = read_records(write(tmp_path, "a.jsonl", json.dumps({"request": "q", "input": "p"})))
    (bad,) = rs.rows
    assert isinstance(bad, BadRecord) and bad.field == "input"


def test_chat_form_takes_last_user_message(tmp_path: Path) -> None:
    req = {
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "reply"},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ]
    }
    rs = read_records(write(tmp_path, "a.jsonl", json.dumps({"request": req})))
    (rec,) = rs.rows
    assert isinstance(rec, Record) and rec.request == "second"


def test_expected_facts_as_text(tmp_path: Path) -> None:
    rs = read_records(
        write(tmp_path, "a.jsonl", json.dumps({"request": "q", "expected_facts": ["a", "b"]}))
    )
    (rec,) = rs.rows
    assert isinstance(rec, Record) and rec.expected_text() == "- a\n- b"


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ({"response": "a"}, "request", "missing"),
        ({"request": 5}, "request", "got a number"),
        ({"request": "q", "response": ["a"]}, "response", "expected a string"),
        ({"request": "q", "retrieved_context": "c"}, "retrieved_context", "got a string"),
        ({"request": "q", "retrieved_context": [5]}, "retrieved_context[0]", "expected an object"),
        (
            {"request": "q", "retrieved_context": [{"content": 1}]},
            "retrieved_context[0].content",
            "expected a string",
        ),
        ({"request": "q", "expected_facts": [1]}, "expected_facts[0]", "expected a string"),
        (
            {"request": "q", "expected_retrieved_context": [{}]},
            "expected_retrieved_context[0]",
            "doc_uri",
        ),
        ({"request": "q", "guidelines": 3}, "guidelines", "list of strings"),
        (
            {"request": {"messages": [{"role": "system", "content": "s"}]}},
            "request",
            "no user message",
        ),
        ({"request": "q", "request_id": [1]}, "request_id", "expected a string"),
    ],
)
def test_wrong_types_name_line_and_field(
    tmp_path: Path, row: dict[str, object], field: str, words: str
) -> None:
    good = json.dumps({"request": "ok"})
    rs = read_records(write(tmp_path, "a.jsonl", good + "\n" + json.dumps(row) + "\n" + good))
    assert [type(r) for r in rs.rows] == [Record, BadRecord, Record]
    bad = rs.rows[1]
    assert isinstance(bad, BadRecord)
    assert bad.line == 2 and bad.field == field
    assert bad.error.startswith(f"line 2, field '{field}'")
    assert words in bad.error


def test_not_json_and_not_object(tmp_path: Path) -> None:
    rs = read_records(write(tmp_path, "a.jsonl", '{"request": "q"\n[1, 2]\n{"request": "ok"}\n'))
    assert isinstance(rs.rows[0], BadRecord) and "not valid JSON" in rs.rows[0].error
    assert isinstance(rs.rows[1], BadRecord) and "expected a JSON object" in rs.rows[1].error
    assert isinstance(rs.rows[2], Record)


def test_deep_nesting_is_a_bad_line(tmp_path: Path) -> None:
    deep = "[" * 100000 + "]" * 100000
    rs = read_records(write(tmp_path, "a.jsonl", deep + "\n" + json.dumps({"request": "q"})))
    assert isinstance(rs.rows[0], BadRecord)
    assert isinstance(rs.rows[1], Record)


def _at_stack_depth(depth: int, fn: Callable[[], T]) -> T:
    return fn() if depth == 0 else _at_stack_depth(depth - 1, fn)


@pytest.mark.parametrize("depth", [MAX_DEPTH, MAX_DEPTH + 1, 990])
def test_nesting_limit_does_not_depend_on_the_callers_stack(tmp_path: Path, depth: int) -> None:
    # json.loads alone accepts 990 levels from a shallow stack and refuses them from a deep
    # one; the fixed limit gives one answer everywhere.
    path = write(tmp_path, "a.jsonl", "[" * depth + "]" * depth + "\n")
    expected = (
        "line 1: expected a JSON object, got a list"
        if depth <= MAX_DEPTH
        else "line 1: not valid JSON (nested too deeply)"
    )
    for stack in (0, 400):
        (row,) = _at_stack_depth(stack, lambda: read_records(path)).rows
        assert isinstance(row, BadRecord) and row.error == expected


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    text = "[" * (MAX_DEPTH + 5) + '"] ' + '\\"' * 3 + '"'
    rs = read_records(write(tmp_path, "a.jsonl", json.dumps({"request": text}) + "\n"))
    (row,) = rs.rows
    assert isinstance(row, Record) and row.request == text


def test_bom_and_crlf(tmp_path: Path) -> None:
    content = "\ufeff" + json.dumps({"request": "q1"}) + "\r\n" + json.dumps({"request": "q2"})
    rs = read_records(write(tmp_path, "a.jsonl", content.encode("utf-8")))
    assert [r.request for r in rs.rows if isinstance(r, Record)] == ["q1", "q2"]


def test_json_array(tmp_path: Path) -> None:
    rs = read_records(write(tmp_path, "a.json", json.dumps([{"request": "q"}, {"response": 1}])))
    assert isinstance(rs.rows[0], Record)
    assert isinstance(rs.rows[1], BadRecord) and rs.rows[1].line == 2


def test_json_not_array(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="array"):
        read_records(write(tmp_path, "a.json", json.dumps({"request": "q"})))


def test_csv_with_json_cells(tmp_path: Path) -> None:
    content = (
        "request,response,retrieved_context,expected_facts\n"
        '"q, with comma",a,"[{""content"": ""c"", ""doc_uri"": ""u""}]","[""f""]"\n'
        "q2,a2,not json,\n"
    )
    rs = read_records(write(tmp_path, "a.csv", content))
    rec, bad = rs.rows
    assert isinstance(rec, Record)
    assert rec.request == "q, with comma"
    assert rec.retrieved_context == (Chunk("c", "u"),)
    assert rec.expected_facts == ("f",)
    assert isinstance(bad, BadRecord) and bad.field == "retrieved_context" and bad.line == 3


def test_stdin(tmp_path: Path) -> None:
    stream = io.BytesIO(b'{"request": "q"}\n')
    rs = read_records("-", stdin=stream)  # type: ignore[arg-type]
    assert isinstance(rs.rows[0], Record)
    rs = read_records("-", stdin=io.BytesIO(b'[{"request": "q"}]'))  # type: ignore[arg-type]
    assert rs.format == "json"


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"", "empty"), (b"\n\n  \n", "empty"), (b'{"request": "\xff"}', "not UTF-8")],
)
def test_unusable_files(tmp_path: Path, content: bytes, words: str) -> None:
    with pytest.raises(InputFileError, match=words) as info:
        read_records(write(tmp_path, "a.jsonl", content))
    assert str(tmp_path) in str(info.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        read_records(tmp_path / "nope.jsonl")
    with pytest.raises(InputFileError, match="directory"):
        read_records(tmp_path)


def test_nul_bytes_in_strings_are_kept(tmp_path: Path) -> None:
    rs = read_records(write(tmp_path, "a.jsonl", json.dumps({"request": "a\u0000b"})))
    (rec,) = rs.rows
    assert isinstance(rec, Record) and rec.request == "a\x00b"
