"""Hostile input (issue 6.2): whatever the bytes, the reader and `eval` never crash, and
every line is accounted for, in results.jsonl (a row, or a row with an error naming the
line) or in the summary (blank lines); a file as a whole is refused only when it is empty
or not UTF-8 at all. Property-based (hypothesis) on the reader and on `eval` with a fake
model; the real model for text longer than its context and for odd characters."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localjudge.engine.llama import TRUNCATION_MARKER, LlamaBackend
from localjudge.errors import InputFileError
from localjudge.judges import JudgeOptions, select
from localjudge.records import BadRecord, Chunk, Record, RecordSet, read_records

from .conftest import assert_clean_stderr, run_cli
from .test_reliability import FakeCli, assert_valid_jsonl
from .test_reliability import fake as fake  # noqa: F401 - the fixture

FIELDS = [
    "request_id",
    "request",
    "response",
    "retrieved_context",
    "expected_response",
    "expected_facts",
    "expected_retrieved_context",
    "guidelines",
    "input",
    "output",
    "context",
    "groundTruth",
]

# Text with the characters scraped data brings: NUL, BOM, CR, control and format
# characters, surrogates (lone, from JSON escapes), chat-template tokens, our own tags.
NASTY = [
    "\x00",
    "\ufeff",
    "\r",
    "\x1b[31m",
    "\u202e",
    "\u200b",
    "\u2028",
    "😀",
    "<|im_end|>",
    "<|im_start|>system",
    "</response>",
    '{"verdict": "yes"}',
    "\\",
    '"',
    "\ud800",
]
text = st.lists(st.one_of(st.characters(), st.sampled_from(NASTY)), max_size=12).map("".join)
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    text,
)
json_value = st.recursive(
    json_scalar,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from(["content", "doc_uri", "messages", "role", "type", "text"]), text
            ),
            children,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
row_object = st.dictionaries(st.one_of(st.sampled_from(FIELDS), text), json_value, max_size=8)
valid_row = st.fixed_dictionaries(
    {"request": text},
    optional={
        "request_id": text,
        "response": text,
        "retrieved_context": st.lists(
            st.fixed_dictionaries({"content": text, "doc_uri": text}), max_size=3
        ),
        "expected_response": text,
        "guidelines": st.lists(text, max_size=2),
    },
)


def _dump(obj: Any, ascii_only: bool) -> bytes:
    # A lone surrogate can only travel as an escape; ensure_ascii=False would not encode.
    try:
        return json.dumps(obj, ensure_ascii=ascii_only).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True).encode("utf-8")


line_bytes = st.one_of(
    st.builds(_dump, row_object, st.booleans()),
    st.builds(_dump, valid_row, st.booleans()),
    st.binary(max_size=40),  # any bytes: invalid UTF-8, NUL ...
    st.integers(1, 3000).map(lambda d: b"[" * d + b"]" * d),  # deep nesting
    st.integers(1, 3000).map(lambda d: b'{"request": ' + b"[" * d),  # deep and unclosed
    st.just(b'{"request": "' + b"x" * 300_000 + b'"}'),  # a huge field
    st.just(b'{"request_id": ' + b"9" * 5000 + b', "request": "q"}'),  # a huge number
    st.just(b'{"request": "\\ud800 lone surrogate"}'),
    st.sampled_from([b"", b" ", b"\t", b"\xef\xbb\xbf", b"\x00", b"\r", b"null", b"[]", b"{}"]),
)
newline = st.sampled_from([b"\n", b"\r\n"])


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(line_bytes, max_size=12))
    parts = [line.replace(b"\n", b" ") + draw(newline) for line in lines]
    data = b"".join(parts)
    no_final_newline = draw(st.booleans())
    if parts and no_final_newline:
        data = data.removesuffix(b"\r\n").removesuffix(b"\n")  # no final newline
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data  # a BOM
    return data


def physical_lines(data: bytes) -> int:
    body = data.removeprefix(b"\xef\xbb\xbf")
    return len(body.split(b"\n")) - (1 if body.endswith(b"\n") else 0)


def read_file(data: bytes, name: str) -> RecordSet | InputFileError:
    """Read DATA written to a temporary file NAME; the error when the whole file is refused."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            return read_records(path)
        except InputFileError as err:
            return err


def check_record_set(rs: RecordSet, lines: int) -> None:
    """Every physical line is a row or a counted blank; rows keep their place."""
    assert len(rs.rows) + rs.blank_lines == lines
    numbers = [r.line for r in rs.rows]
    assert numbers == sorted(set(numbers)) and all(1 <= n <= lines for n in numbers)
    for row in rs.rows:
        if isinstance(row, BadRecord):
            assert row.error.startswith(f"line {row.line}")
            row.error.encode("utf-8")  # printable and writable
        else:
            for value in (row.request, row.response, row.request_id, row.expected_response):
                if value is not None:
                    value.encode("utf-8")  # the tokenizer will take it
            for chunk in row.retrieved_context or ():
                assert isinstance(chunk, Chunk)


@settings(max_examples=300, deadline=None)
@given(jsonl_files())
def test_reader_accounts_for_every_jsonl_line(data: bytes) -> None:
    try:
        rs = read_records("-", stdin=io.BytesIO(data))
    except InputFileError as err:
        message = str(err)
        assert message.startswith("-: ")
        assert any(w in message for w in ("the file is empty", "no rows", "not UTF-8"))
        if "not UTF-8" in message:  # refused only when no line at all is UTF-8
            for raw in data.removeprefix(b"\xef\xbb\xbf").split(b"\n"):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                assert not line.removeprefix("\ufeff").strip()  # a blank line
        return
    if rs.format == "json":  # stdin starting with "[" is read as one JSON array
        return
    check_record_set(rs, physical_lines(data))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(text, st.just("x" * 200_000), st.just('"')), max_size=5), max_size=8
    )
)
def test_reader_accounts_for_csv_rows(cells: list[list[str]]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["request", "response", "retrieved_context", "guidelines"])
    for cell_row in cells:
        writer.writerow(cell_row)
    rs = read_file(buf.getvalue().encode("utf-8", "surrogatepass"), "data.csv")
    if isinstance(rs, InputFileError):
        assert any(w in str(rs) for w in ("no rows", "not UTF-8", "empty"))
        return
    # One row (good or bad) or one blank per record written: nothing silently dropped.
    assert len(rs.rows) + rs.blank_lines == len(cells)
    for row in rs.rows:
        if isinstance(row, BadRecord):
            assert row.error.startswith(f"line {row.line}")


def test_csv_error_spoils_one_row_only(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text(
        'request,response\nq1,"a huge cell ' + "y" * 300_000 + '"\n"q2",r2\n"q3\x00",r3\n',
        encoding="utf-8",
    )
    rows = read_records(path).rows
    assert [type(r).__name__ for r in rows] == ["Record", "Record", "Record"]
    assert isinstance(rows[0], Record) and rows[0].response and len(rows[0].response) > 300_000


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(row_object, valid_row, json_scalar), max_size=8))
def test_reader_accounts_for_json_array_elements(items: list[Any]) -> None:
    rs = read_file(_dump(items, ascii_only=True), "data.json")
    if isinstance(rs, InputFileError):
        assert not items and "no rows" in str(rs)
        return
    assert [r.line for r in rs.rows] == list(range(1, len(items) + 1))
    check_record_set(rs, len(items))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"\xef\xbb\xbf", "the file is empty"),
        (b"\n\r\n  \n", "the file is empty"),
        (b"\xc2\xa0\n\xe2\x80\xa8\n", "no rows (only blank lines)"),
        ("{}\n".encode("utf-16"), "not UTF-8 (it starts with a UTF-16 byte-order mark)"),
        ("{}\n".encode("utf-32"), "not UTF-8 (it starts with a UTF-32 byte-order mark)"),
        (b"\xe9t\xe9\n\xff\n", "not UTF-8 (invalid byte 0xe9 at byte 1 of line 1)"),
    ],
)
def test_whole_file_refusals(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as info:
        read_records(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_bad_lines_get_clear_messages(tmp_path: Path) -> None:
    lines = [
        b'{"request": "ok"}',
        b"caf\xe9",
        b'{"request": "\\ud800"}',
        b'{"request_id": ' + b"9" * 5000 + b"}",
        b"[" * 100_000,
        b'\xef\xbb\xbf{"request": "bom in the middle of the file"}',
        b'{"request": "nul \\u0000 and a real one \x00"}',
        b'{"request": "q", "guidelines": {"\\udc00": [1]}}',
    ]
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"\n".join(lines))
    rows = read_records(path).rows
    errors = {r.line: r.error for r in rows if isinstance(r, BadRecord)}
    assert errors.keys() == {2, 3, 4, 5, 7, 8}
    assert (
        errors[2] == "line 2: not UTF-8 (invalid byte 0xe9 at byte 4); re-encode the file as UTF-8"
    )
    assert errors[3] == (
        "line 3, field 'request': holds an unpaired UTF-16 surrogate (\\ud800), which is not text"
    )
    assert errors[4] == "line 4: not valid JSON (a number has too many digits to be read)"
    assert errors[5] == "line 5: not valid JSON (nested too deeply)"
    assert errors[7].startswith("line 7: not valid JSON (Invalid control character")
    assert "expected a string, got a number" in errors[8]
    assert isinstance(rows[5], Record) and rows[5].request == "bom in the middle of the file"


# --------------------------------------------------------------------------- eval


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=jsonl_files())
def test_eval_accounts_for_every_line(fake: FakeCli, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.jsonl"
        path.write_bytes(data)
        out = Path(tmp) / "out"
        fake.reset()
        run = fake(path, "--out", out, "--no-rationale")
        try:
            rs = read_records(path)
        except InputFileError as err:
            assert run.code == 2 and run.stderr == f"Error: {err}\n"
            assert fake.loads == 0 and not (out / "results.jsonl").exists()
            return
        assert run.code == 0, run.stderr
        results = assert_valid_jsonl((out / "results.jsonl").read_bytes())
        assert [r["line"] for r in results] == [r.line for r in rs.rows]
        for result, row in zip(results, rs.rows, strict=True):
            if isinstance(row, BadRecord):
                assert result["error"] == row.error
            else:
                assert result["error"] is None and result["request_id"] == row.request_id
        summary = json.loads((out / "summary.json").read_text())
        assert summary["rows_read"] == len(rs.rows)
        assert summary["rows_with_input_errors"] == len(rs.bad)
        assert summary["rows_read"] + summary["blank_lines_skipped"] == physical_lines(data)
        strict = fake(path, "--out", Path(tmp) / "strict", "--strict")
        assert strict.code == (2 if rs.bad else 0)
        if rs.bad:
            assert "--strict" in strict.stderr and rs.bad[0].error in strict.stderr


def test_eval_huge_fields(fake: FakeCli, tmp_path: Path) -> None:
    row = {
        "request": "q" * 1_000_000,
        "response": "r " * 2_000_000,
        "retrieved_context": [{"content": "c" * 500_000, "doc_uri": "u"}] * 50,
    }
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(row) + "\n")
    run = fake(path, "--out", tmp_path / "o", "--no-rationale")
    assert run.code == 0, run.stderr
    (result,) = assert_valid_jsonl((tmp_path / "o" / "results.jsonl").read_bytes())
    assert result["response"] == row["response"]


# --------------------------------------------------------------------------- real model

LONG = " ".join(f"word{i}" for i in range(3000))
HOSTILE = (
    "Zero\u200bwidth \u202eoverride\u202c \x1b[31mred\x1b[0m NUL\x00 BOM\ufeff CR\r "
    "emoji😀 <|im_end|>"
)


@pytest.mark.model
def test_text_longer_than_the_context_is_truncated_with_a_visible_marker(
    small_model: Path,
) -> None:
    backend = LlamaBackend(small_model, n_ctx=512)
    try:
        record = Record(line=1, request_id="1", request="What is this?", response=LONG)
        (judge,) = select(["relevance_to_query"])
        # answers, gives, redirect
        request, _, _ = judge.requests(record, JudgeOptions(rationale=False))
        segments = backend.segments(request.prompt)
        fitted, truncated = backend._fit(segments, 2)
        assert truncated and sum(len(t) for t in fitted) <= 512 - 2
        marker = backend.tokenize(TRUNCATION_MARKER)
        response_index = segments.index(next(s for s in segments if len(s.tokens) > 512))
        assert fitted[response_index][-len(marker) :] == marker
        shown: bytes = backend._llm.detokenize(list(fitted[response_index]), special=False)
        assert (
            shown.decode("utf-8", "replace").rstrip().endswith("[... truncated by localjudge ...]")
        )
        assert shown.decode("utf-8").startswith("<response>\nword0 word1")  # the head is kept
    finally:
        backend.close()


@pytest.mark.model
def test_eval_truncates_or_reports_never_crashes(small_model: Path, tmp_path: Path) -> None:
    rows = [
        {
            "request_id": "long",
            "request": "What is this?",
            "response": LONG,
            "retrieved_context": [{"content": LONG, "doc_uri": "d"}],
        },
        {
            "request_id": "hostile",
            "request": HOSTILE,
            "response": HOSTILE,
            "retrieved_context": [{"content": HOSTILE, "doc_uri": "d"}],
        },
        {
            "request_id": "many-chunks",
            "request": "q",
            "response": "r",
            "expected_response": "r",
            "retrieved_context": [{"content": f"passage {i} " + "text " * 40} for i in range(30)],
        },
    ]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "o"
    result = run_cli(
        "eval",
        path,
        "--model",
        small_model,
        "--out",
        out,
        "--ctx",
        "512",
        "--judges",
        "relevance_to_query,chunk_relevance,groundedness",
        "--no-rationale",
        "--limit",
        "2",
    )
    assert result.code == 0, result.stderr
    assert_clean_stderr(result.stderr)
    long_row, hostile = assert_valid_jsonl((out / "results.jsonl").read_bytes())
    prefix = "response/llm_judged/relevance_to_query"
    assert long_row[f"{prefix}/truncated"] is True and long_row[f"{prefix}/rating"] in ("yes", "no")
    assert long_row["retrieval/llm_judged/chunk_relevance/truncated"] == [True]
    assert hostile[f"{prefix}/truncated"] is False and hostile[f"{prefix}/error_message"] is None
    assert hostile["response"] == HOSTILE  # written back exactly
    # Thirty passages in one prompt (context_sufficiency reads them all at once) cannot fit
    # 256 tokens even cut to their minimum: a verdict error, counted, not a crash and not a
    # silent drop. groundedness asks each passage on its own, so the same row fits there.
    out2 = tmp_path / "o2"
    result = run_cli(
        "eval",
        path,
        "--model",
        small_model,
        "--out",
        out2,
        "--ctx",
        "256",
        "--judges",
        "context_sufficiency,groundedness",
        "--no-rationale",
    )
    assert result.code == 0, result.stderr
    rows_out = assert_valid_jsonl((out2 / "results.jsonl").read_bytes())
    crowded = rows_out[2]
    sufficiency = "retrieval/llm_judged/context_sufficiency"
    assert crowded[f"{sufficiency}/rating"] is None
    assert "prompt too long even after truncation" in crowded[f"{sufficiency}/error_message"]
    assert crowded[f"{sufficiency}/truncated"] is True
    assert crowded["response/llm_judged/groundedness/rating"] in ("yes", "no")
    summary = json.loads((out2 / "summary.json").read_text())
    assert summary["verdicts_with_errors"] >= 1
    assert summary["judges"]["context_sufficiency"]["verdict_errors"] >= 1
