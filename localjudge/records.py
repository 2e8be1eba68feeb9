"""Reading and validating input rows (SPEC §2): JSONL, JSON array, CSV and standard input.

A file that cannot be read, is empty or is not UTF-8 raises InputFileError. A single bad
line never stops the run: it becomes a BadRecord that keeps its place, with an error naming
the line, the field and what was expected. A JSONL file is decoded line by line: a line
that is not UTF-8, like one that is not JSON or holds text that cannot be encoded (an
unpaired surrogate escape), is a bad line; the file as a whole is refused as not UTF-8
only when no line of it is UTF-8 or it starts with a UTF-16/32 byte-order mark.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from localjudge.errors import InputFileError, InvalidRecordError

# Mastra-style alias -> Databricks field.
ALIASES: Mapping[str, str] = {
    "input": "request",
    "output": "response",
    "context": "retrieved_context",
    "groundTruth": "expected_response",
}

# CSV cells may be as long as a JSON field (the csv module's default limit is 128 KiB).
csv.field_size_limit(2**31 - 1)

# Byte-order marks of encodings that are not UTF-8 (UTF-32 LE starts like UTF-16 LE).
_OTHER_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)

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
    """Read every row of `source` ("-" for standard input) into memory. Raises
    InputFileError. For large files use `open_input`, which streams."""
    with open_input(source, stdin=stdin) as data:
        rows = list(data.rows())
        return RecordSet(rows, data.blank_lines, data.format)


@dataclass(frozen=True)
class InputScan:
    """What one streaming pass over an input file found: `rows` and `sha256` cover the
    first `--limit` rows, `bad` and `first_bad` the whole file (counted only when the pass
    validates)."""

    rows: int
    bad: int
    first_bad: str | None
    blank_lines: int
    sha256: str


class InputFile:
    """An input file whose rows can be read as a stream, as often as needed, in bounded
    memory (JSONL; a JSON array or CSV file is parsed whole once and kept). Standard input
    is first copied to a temporary file so that it too can be read twice. Whole-file
    problems (no UTF-8 line, no row) raise InputFileError at the end of a pass."""

    def __init__(self, name: str, path: Path, fmt: str, spool: IO[bytes] | None) -> None:
        self.name = name
        self.path = path
        self.format = fmt
        self.blank_lines = 0
        self._spool = spool
        self._parsed: list[Record | BadRecord] | None = None

    def __enter__(self) -> InputFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None

    def rows(self) -> Iterator[Record | BadRecord]:
        """Every row, in input order (bad lines in their place as BadRecords)."""
        for _, row in self._hashed_rows(parse=True):
            assert row is not None
            yield row

    def scan(self, limit: int | None = None, *, validate: bool = False) -> InputScan:
        """One pass over the file: the number of rows up to `limit` and their SHA-256 (the
        manifest's input hash); with `validate`, also the bad lines of the whole file.

        The hash of a JSONL file covers the bytes of its first `limit` row lines, each
        ended by a newline (blank lines are not rows): no row is parsed unless `validate`,
        so a large file is scanned at disk speed. A JSON array or CSV file, parsed whole
        anyway, is hashed as its rows' repr, one a line."""
        digest = hashlib.sha256()
        rows = bad = 0
        first_bad: str | None = None
        for raw, row in self._hashed_rows(parse=validate):
            if isinstance(row, BadRecord):
                bad += 1
                first_bad = first_bad or row.error
            if limit is None or rows < limit:
                digest.update(raw)
                rows += 1
        return InputScan(rows, bad, first_bad, self.blank_lines, digest.hexdigest())

    def _hashed_rows(self, *, parse: bool) -> Iterator[tuple[bytes, Record | BadRecord | None]]:
        """Each row's bytes as hashed, and the row parsed (None unless `parse`)."""
        if self.format != "jsonl":
            for row in self._whole():
                yield repr(row).encode("utf-8") + b"\n", row
            return
        for number, raw, line in self._jsonl_lines():
            if not parse:
                yield raw + b"\n", None
            elif line is None:
                yield raw + b"\n", _not_utf8(number, raw)
            else:
                yield raw + b"\n", _parse_json_line(number, line)

    def _jsonl_lines(self) -> Iterator[tuple[int, bytes, str | None]]:
        """(line number, its bytes, its text or None when it is not UTF-8) of every line
        that is not blank; counts the blank ones in `blank_lines`."""
        blank = rows = utf8_lines = 0
        first_invalid = ""
        with self.path.open("rb") as f:
            # Iterating a binary file splits on b"\n" only (splitlines() would also split on
            # \x0b, \x1c, U+2028 ...). Each line is decoded on its own, so one line of bad
            # bytes spoils only itself.
            for number, raw in enumerate(f, start=1):
                raw = raw.removesuffix(b"\n")
                if number == 1:
                    raw = raw.removeprefix(codecs.BOM_UTF8)
                try:
                    line = raw.rstrip(b"\r").decode("utf-8")
                except UnicodeDecodeError as exc:
                    first_invalid = first_invalid or f"{_invalid_byte(raw, exc)} of line {number}"
                    rows += 1
                    yield number, raw, None
                    continue
                # A byte-order mark at the start of a line (files joined with `cat`) is not data.
                line = line.removeprefix("\ufeff")
                if not line.strip():
                    blank += 1
                    continue
                utf8_lines += 1
                rows += 1
                yield number, raw, line
        self.blank_lines = blank
        if rows and not utf8_lines:
            raise InputFileError(f"{self.name}: not UTF-8 ({first_invalid}); re-encode it as UTF-8")
        if not rows:
            raise InputFileError(f"{self.name}: no rows (only blank lines)")

    def _whole(self) -> list[Record | BadRecord]:
        if self._parsed is None:
            self._parsed, self.blank_lines, self.format = self._parse_whole()
        return self._parsed

    def _parse_whole(self) -> tuple[list[Record | BadRecord], int, str]:
        data = self.path.read_bytes().removeprefix(codecs.BOM_UTF8)
        name, fmt = self.name, self.format
        try:
            text = data.decode("utf-8")
            if fmt == "json":
                rows, blank = _parse_json_array(name, text), 0
            else:
                rows, blank = _parse_csv(text)
        except (UnicodeDecodeError, InputFileError) as exc:
            if not _sniffed(name):
                if isinstance(exc, InputFileError):
                    raise
                raise InputFileError(
                    f"{name}: not UTF-8 (invalid byte at offset {exc.start}); re-encode it as UTF-8"
                ) from None
            # Standard input that starts with "[" but is no JSON array: JSON lines, one of
            # which (the first) is bad, rather than a refusal of the whole stream.
            self.format = "jsonl"
            rows = list(self.rows())
            return rows, self.blank_lines, "jsonl"
        if not rows:
            raise InputFileError(f"{name}: no rows (only blank lines)")
        return rows, blank, fmt


def _invalid_byte(raw: bytes, exc: UnicodeDecodeError) -> str:
    return f"invalid byte 0x{raw[exc.start]:02x} at byte {exc.start + 1}"


def _not_utf8(number: int, raw: bytes) -> BadRecord:
    """The bad row of a line that is not UTF-8, naming its first invalid byte."""
    where = "invalid bytes"
    try:
        raw.rstrip(b"\r").decode("utf-8")
    except UnicodeDecodeError as exc:
        where = _invalid_byte(raw, exc)
    return _bad(number, None, None, f"not UTF-8 ({where}); re-encode the file as UTF-8")


def open_input(source: str | Path, *, stdin: io.BufferedIOBase | None = None) -> InputFile:
    """Open `source` ("-" for standard input) for streaming. Raises InputFileError for a
    file that cannot be read, is empty, or starts with a byte-order mark other than UTF-8."""
    name = str(source)
    spool: IO[bytes] | None = None
    if name == "-":
        # Closed by InputFile.close(), which deletes it.
        spool = tempfile.NamedTemporaryFile(prefix="localjudge-stdin-", suffix=".data")  # noqa: SIM115
        shutil.copyfileobj(stdin if stdin is not None else sys.stdin.buffer, spool)
        spool.flush()
        path = Path(spool.name)
    else:
        path = Path(name)
    try:
        head = _head(name, path)
    except BaseException:
        if spool is not None:
            spool.close()
        raise
    return InputFile(name, path, _detect_format(name, head), spool)


def _head(name: str, path: Path) -> bytes:
    """The file's first bytes, up to its first byte that is not whitespace (after a UTF-8
    byte-order mark). Raises InputFileError when it cannot be read or is empty."""
    try:
        if path.is_dir():
            raise InputFileError(f"{name}: is a directory, not a data file")
        with path.open("rb") as f:
            head = f.read(4)
            for bom, encoding in _OTHER_BOMS:
                if head.startswith(bom):
                    raise InputFileError(
                        f"{name}: not UTF-8 (it starts with a {encoding} byte-order mark); "
                        "re-encode it as UTF-8"
                    )
            head = head.removeprefix(codecs.BOM_UTF8)
            while not head.strip():
                more = f.read(1 << 16)
                if not more:
                    raise InputFileError(f"{name}: the file is empty")
                head = more
            return head
    except FileNotFoundError:
        raise InputFileError(f"{name}: no such file") from None
    except PermissionError:
        raise InputFileError(f"{name}: permission denied") from None
    except OSError as exc:
        if isinstance(exc, InputFileError):
            raise
        raise InputFileError(f"{name}: cannot be read ({exc.strerror or exc})") from None


def _sniffed(name: str) -> bool:
    """Whether the format is guessed from the content (no known extension)."""
    return not name.lower().endswith((".csv", ".jsonl", ".ndjson", ".json"))


def _detect_format(name: str, head: bytes) -> str:
    lower = name.lower()
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".jsonl") or lower.endswith(".ndjson"):
        return "jsonl"
    if lower.endswith(".json"):
        return "json"
    # Standard input or an unknown extension: a JSON array starts with "[".
    return "json" if head.lstrip().startswith(b"[") else "jsonl"


# The deepest nesting of arrays and objects accepted in a row. json.loads's own limit
# depends on how deep the caller's stack already is, so a line near it could parse in one
# program and fail in another; this fixed limit, far above what any row needs, gives the
# same answer everywhere.
MAX_DEPTH = 200
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _too_deep(text: str) -> bool:
    """Whether arrays and objects nest deeper than MAX_DEPTH in `text` (strings skipped)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for match in _BRACKET.finditer(_JSON_STRING.sub("", text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            return True
    return False


def _loads(text: str) -> Any:
    """json.loads, with nesting beyond MAX_DEPTH refused as a RecursionError."""
    if _too_deep(text):
        raise RecursionError("nested too deeply")
    return json.loads(text)


def _json_error(exc: ValueError | RecursionError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "not valid JSON (nested too deeply)"
    # int() refuses numbers of more than sys.get_int_max_str_digits() digits.
    return "not valid JSON (a number has too many digits to be read)"


# A JSON escape of a UTF-16 surrogate: the only way decoded UTF-8 text can hold one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _parse_json_line(number: int, line: str) -> Record | BadRecord:
    try:
        obj = _loads(line)
    except (ValueError, RecursionError) as exc:
        return _bad(number, None, None, _json_error(exc))
    return _validate_or_bad(number, obj, check_text=_SURROGATE_ESCAPE.search(line) is not None)


def _parse_json_array(name: str, text: str) -> list[Record | BadRecord]:
    try:
        data = _loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"{name}: not a valid JSON array ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:
        reason = _json_error(exc).removeprefix("not valid JSON ")
        raise InputFileError(f"{name}: not a valid JSON array {reason}") from None
    if not isinstance(data, list):
        raise InputFileError(f"{name}: a .json file must hold an array of row objects")
    return [_validate_or_bad(i, obj) for i, obj in enumerate(data, start=1)]


def _parse_csv(text: str) -> tuple[list[Record | BadRecord], int]:
    # csv.reader rather than DictReader: DictReader skips empty lines without a count.
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[Record | BadRecord] = []
    blank = 0
    header: list[str] | None = None
    while True:
        # A csv.Error spoils one record only: the reader carries on after it.
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            rows.append(_bad(reader.line_num, None, None, f"not valid CSV ({exc})"))
            continue
        if header is None:
            header = cells
            continue
        if not any(c.strip() for c in cells):
            blank += 1
            continue
        row: dict[str | None, Any] = dict(zip(header, cells, strict=False))
        if len(cells) > len(header):
            row[None] = cells[len(header) :]
        rows.append(_csv_row(reader.line_num, row))
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
                obj[key] = _loads(cell)
            except (ValueError, RecursionError):
                return _bad(line, None, key, "expected a JSON list in this CSV cell")
        else:
            obj[key] = cell
    return _validate_or_bad(line, obj)


def _bad(line: int, obj: Any, field: str | None, message: str) -> BadRecord:
    rid = str(line)
    if isinstance(obj, dict):
        value = obj.get("request_id")
        if isinstance(value, str) and _unpaired_surrogate(value) is None:
            rid = value
        elif isinstance(value, int) and not isinstance(value, bool):
            rid = str(value)
    err = str(InvalidRecordError(line, field, message))
    if _unpaired_surrogate(err) is not None:  # a field name taken from the row itself
        err = err.encode("utf-8", "backslashreplace").decode("utf-8")
    return BadRecord(line=line, request_id=rid, field=field, error=err)


def _validate_or_bad(line: int, obj: Any, *, check_text: bool = True) -> Record | BadRecord:
    try:
        return validate_row(line, obj, check_text=check_text)
    except InvalidRecordError as err:
        return _bad(line, obj, err.field, err.reason)


def validate_row(line: int, obj: Any, *, check_text: bool = True) -> Record:
    """Turn one parsed JSON value into a Record, or raise InvalidRecordError. `check_text`
    False skips the search for unpaired surrogates, for text known to have none."""
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

    record = Record(
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
    if check_text:
        _check_encodable(record)
    return record


def _unpaired_surrogate(text: str) -> str | None:
    """The first lone UTF-16 surrogate in `text` (JSON allows "\\ud800"; UTF-8 does not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


def _check_encodable(record: Record) -> None:
    """Refuse text that cannot be written as UTF-8 or given to the model's tokenizer."""
    texts: list[tuple[str, str | None]] = [
        ("request_id", record.request_id),
        ("request", record.request),
        ("response", record.response),
        ("expected_response", record.expected_response),
    ]
    for i, chunk in enumerate(record.retrieved_context or ()):
        texts += [
            (f"retrieved_context[{i}].content", chunk.content),
            (f"retrieved_context[{i}].doc_uri", chunk.doc_uri),
        ]
    for name, items in (
        ("expected_facts", record.expected_facts),
        ("expected_retrieved_context", record.expected_retrieved_context),
        ("guidelines", record.guidelines),
    ):
        texts += [(f"{name}[{i}]", item) for i, item in enumerate(items or ())]
    for where, text in texts:
        bad = _unpaired_surrogate(text) if text is not None else None
        if bad is not None:
            raise InvalidRecordError(
                record.line,
                where,
                f"holds an unpaired UTF-16 surrogate (\\u{ord(bad):04x}), which is not text",
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
