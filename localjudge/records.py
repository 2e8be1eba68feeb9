"""Reading and validating input rows (SPEC §2): JSONL, JSON array, CSV and standard input.

A file that cannot be read, is empty or is not UTF-8 raises InputFileError. A single bad
line never stops the run: it becomes a BadRecord that keeps its place, with an error naming
the line, the field and what was expected.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge.errors import InputFileError, InvalidRecordError

# Mastra-style alias -> Databricks field.
ALIASES: Mapping[str, str] = {
    "input": "request",
    "output": "response",
    "context": "retrieved_context",
    "groundTruth": "expected_response",
}

# Fields whose CSV cells hold JSON (lists or objects).
_JSON_CELL_FIELDS = frozenset(
    {"retrieved_context", "context", "expected_facts", "expected_retrieved_context", "guidelines"}
)


@dataclass(frozen=True)
class Chunk:
    """One retrieved chunk, in retrieval order."""

    content: str | None
    doc_uri: str | None


@dataclass(frozen=True)
class Record:
    """A valid input row. Absent fields are None."""

    line: int
    request_id: str
    request: str
    response: str | None = None
    retrieved_context: tuple[Chunk, ...] | None = None
    expected_response: str | None = None
    expected_facts: tuple[str, ...] | None = None
    expected_retrieved_context: tuple[str, ...] | None = None
    guidelines: tuple[str, ...] | None = None

    def expected_text(self) -> str | None:
        """The ground truth as one text: expected_response, else the expected facts as a list."""
        if self.expected_response is not None:
            return self.expected_response
        if self.expected_facts:
            return "\n".join(f"- {fact}" for fact in self.expected_facts)
        return None


@dataclass(frozen=True)
class BadRecord:
    """An unusable input row, kept in place so that nothing is lost."""

    line: int
    request_id: str
    field: str | None
    error: str


@dataclass(frozen=True)
class RecordSet:
    """Every row of an input file, in input order, plus what was skipped as blank."""

    rows: list[Record | BadRecord]
    blank_lines: int
    format: str

    @property
    def bad(self) -> list[BadRecord]:
        return [r for r in self.rows if isinstance(r, BadRecord)]


def read_records(source: str | Path, *, stdin: io.BufferedIOBase | None = None) -> RecordSet:
    """Read every row of `source` ("-" for standard input). Raises InputFileError."""
    name = str(source)
    data = _read_bytes(name, stdin)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"{name}: not UTF-8 (invalid byte at offset {exc.start}); re-encode it as UTF-8"
        ) from None
    if not text.strip():
        raise InputFileError(f"{name}: the file is empty")
    fmt = _detect_format(name, text)
    if fmt == "json":
        rows, blank = _parse_json_array(name, text), 0
    elif fmt == "csv":
        rows, blank = _parse_csv(text)
    else:
        rows, blank = _parse_jsonl(text)
    if not rows:
        raise InputFileError(f"{name}: no rows (only blank lines)")
    return RecordSet(rows, blank, fmt)


def _read_bytes(name: str, stdin: io.BufferedIOBase | None) -> bytes:
    if name == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        return stream.read()
    path = Path(name)
    try:
        if path.is_dir():
            raise InputFileError(f"{name}: is a directory, not a data file")
        return path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{name}: no such file") from None
    except PermissionError:
        raise InputFileError(f"{name}: permission denied") from None
    except OSError as exc:
        raise InputFileError(f"{name}: cannot be read ({exc.strerror or exc})") from None


def _detect_format(name: str, text: str) -> str:
    lower = name.lower()
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".jsonl") or lower.endswith(".ndjson"):
        return "jsonl"
    if lower.endswith(".json"):
        return "json"
    # Standard input or an unknown extension: a JSON array starts with "[".
    return "json" if text.lstrip().startswith("[") else "jsonl"


def _parse_jsonl(text: str) -> tuple[list[Record | BadRecord], int]:
    rows: list[Record | BadRecord] = []
    blank = 0
    # splitlines() would also split on \x0b, \x1c, U+2028 ...; JSONL lines end in \n only.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            blank += 1
            continue
        rows.append(_parse_json_line(number, line))
    # A final newline leaves one empty piece after it: that is not a blank line.
    if text.endswith("\n"):
        blank -= 1
    return rows, blank


def _parse_json_line(number: int, line: str) -> Record | BadRecord:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return _bad(number, None, None, f"not valid JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return _bad(number, None, None, "not valid JSON (nested too deeply)")
    return _validate_or_bad(number, obj)


def _parse_json_array(name: str, text: str) -> list[Record | BadRecord]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"{name}: not a valid JSON array ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise InputFileError(f"{name}: not a valid JSON array (nested too deeply)") from None
    if not isinstance(data, list):
        raise InputFileError(f"{name}: a .json file must hold an array of row objects")
    return [_validate_or_bad(i, obj) for i, obj in enumerate(data, start=1)]


def _parse_csv(text: str) -> tuple[list[Record | BadRecord], int]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[Record | BadRecord] = []
    blank = 0
    line = 1
    try:
        for row in reader:
            line = reader.line_num
            if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
                blank += 1
                continue
            rows.append(_csv_row(line, row))
    except csv.Error as exc:
        rows.append(_bad(reader.line_num or line, None, None, f"not valid CSV ({exc})"))
    return rows, blank


def _csv_row(line: int, row: Mapping[str | None, Any]) -> Record | BadRecord:
    if None in row:
        return _bad(line, None, None, "more cells than header columns")
    obj: dict[str, Any] = {}
    for key, cell in row.items():
        if key is None or cell is None or cell == "":
            continue
        if key in _JSON_CELL_FIELDS:
            try:
                obj[key] = json.loads(cell)
            except (json.JSONDecodeError, RecursionError):
                return _bad(line, None, key, "expected a JSON list in this CSV cell")
        else:
            obj[key] = cell
    return _validate_or_bad(line, obj)


def _bad(line: int, obj: Any, field: str | None, message: str) -> BadRecord:
    rid = str(line)
    if isinstance(obj, dict):
        value = obj.get("request_id")
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            rid = str(value)
    err = InvalidRecordError(line, field, message)
    return BadRecord(line=line, request_id=rid, field=field, error=str(err))


def _validate_or_bad(line: int, obj: Any) -> Record | BadRecord:
    try:
        return validate_row(line, obj)
    except InvalidRecordError as err:
        return _bad(line, obj, err.field, err.reason)


def validate_row(line: int, obj: Any) -> Record:
    """Turn one parsed JSON value into a Record, or raise InvalidRecordError."""
    if not isinstance(obj, dict):
        raise InvalidRecordError(line, None, f"expected a JSON object, got {_kind(obj)}")
    fields = dict(obj)
    for alias, canonical in ALIASES.items():
        if alias in fields:
            if canonical in fields and fields[canonical] is not None:
                raise InvalidRecordError(
                    line, alias, f"both '{alias}' and '{canonical}' are given; use one"
                )
            fields[canonical] = fields.pop(alias)

    rid_value = fields.get("request_id")
    if rid_value is None:
        request_id = str(line)
    elif isinstance(rid_value, (str, int)) and not isinstance(rid_value, bool):
        request_id = str(rid_value)
    else:
        raise InvalidRecordError(line, "request_id", f"expected a string, got {_kind(rid_value)}")

    return Record(
        line=line,
        request_id=request_id,
        request=_request(line, fields.get("request")),
        response=_optional_str(line, "response", fields.get("response")),
        retrieved_context=_chunks(line, fields.get("retrieved_context")),
        expected_response=_optional_str(line, "expected_response", fields.get("expected_response")),
        expected_facts=_str_list(line, "expected_facts", fields.get("expected_facts")),
        expected_retrieved_context=_doc_uris(line, fields.get("expected_retrieved_context")),
        guidelines=_guidelines(line, fields.get("guidelines")),
    )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _request(line: int, value: Any) -> str:
    expected = 'a string or a chat object {"messages": [...]}'
    if value is None:
        raise InvalidRecordError(line, "request", f"missing; expected {expected}")
    if isinstance(value, str):
        return value
    messages = value.get("messages") if isinstance(value, dict) else value
    if not isinstance(messages, list):
        raise InvalidRecordError(line, "request", f"expected {expected}, got {_kind(value)}")
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _message_text(line, message.get("content"))
    raise InvalidRecordError(line, "request", "the chat messages hold no user message")


def _message_text(line: int, content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        if parts:
            return "\n".join(parts)
    raise InvalidRecordError(
        line, "request", "the last user message has no text content (expected a string)"
    )


def _optional_str(line: int, field: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidRecordError(line, field, f"expected a string, got {_kind(value)}")


def _str_list(line: int, field: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidRecordError(line, field, f"expected a list of strings, got {_kind(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidRecordError(line, f"{field}[{i}]", f"expected a string, got {_kind(item)}")
    return tuple(value)


def _guidelines(line: int, value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, dict):
        # Databricks also accepts named guidelines: {"name": ["...", ...]}.
        out: list[str] = []
        for name, items in value.items():
            out.extend(_str_list(line, f"guidelines.{name}", items) or ())
        return tuple(out)
    return _str_list(line, "guidelines", value)


def _chunks(line: int, value: Any) -> tuple[Chunk, ...] | None:
    if value is None:
        return None
    expected = 'a list of {"content": str, "doc_uri": str} objects (or of strings)'
    if not isinstance(value, list):
        raise InvalidRecordError(
            line, "retrieved_context", f"expected {expected}, got {_kind(value)}"
        )
    chunks: list[Chunk] = []
    for i, item in enumerate(value):
        where = f"retrieved_context[{i}]"
        if isinstance(item, str):
            chunks.append(Chunk(content=item, doc_uri=None))
            continue
        if not isinstance(item, dict):
            raise InvalidRecordError(line, where, f"expected an object, got {_kind(item)}")
        content = _optional_str(line, f"{where}.content", item.get("content"))
        doc_uri = _optional_str(line, f"{where}.doc_uri", item.get("doc_uri"))
        if content is None and doc_uri is None:
            raise InvalidRecordError(line, where, "expected 'content' or 'doc_uri'")
        chunks.append(Chunk(content=content, doc_uri=doc_uri))
    return tuple(chunks)


def _doc_uris(line: int, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidRecordError(
            line,
            "expected_retrieved_context",
            f'expected a list of {{"doc_uri": str}} objects, got {_kind(value)}',
        )
    uris: list[str] = []
    for i, item in enumerate(value):
        where = f"expected_retrieved_context[{i}]"
        uri = item.get("doc_uri") if isinstance(item, dict) else item
        if not isinstance(uri, str):
            raise InvalidRecordError(line, where, 'expected {"doc_uri": str}')
        uris.append(uri)
    return tuple(uris)


def iter_valid(records: RecordSet) -> Iterator[Record]:
    """The valid rows, in order."""
    return (r for r in records.rows if isinstance(r, Record))
