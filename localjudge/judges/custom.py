"""Custom judges declared in a TOML file (`--judge-file`).

```toml
[[judges]]
name = "cites_sources"
assessment_type = "ANSWER"          # or RETRIEVAL: asked once per chunk, ratings + precision
instruction = "Does the response {response} cite a source for its answer to {request}?"

[[judges.examples]]                 # optional few-shot examples
request = "..."
response = "..."
verdict = "yes"
```

Placeholders: {request}, {response}, {context}, {expected_response}. An unknown
placeholder is an error when the file is loaded, never an empty string in a prompt. Each
placeholder is replaced by the row's text fenced as data; for a RETRIEVAL judge {context}
is the chunk being judged, for an ANSWER judge it is every retrieved chunk.
"""

from __future__ import annotations

import re
import string
import tomllib
from pathlib import Path
from typing import Any

from localjudge.engine.base import Part
from localjudge.errors import UsageError
from localjudge.judges.base import Judge, expected_part, fence, passage_part, passages
from localjudge.judges.kinds import ChunkJudge, RowJudge
from localjudge.records import Chunk, Record

PLACEHOLDERS = ("request", "response", "context", "expected_response")
_NEEDS = {
    "request": "request",
    "response": "response",
    "context": "retrieved_context",
    "expected_response": "expected",
}
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def _pieces(path: str, name: str, instruction: str) -> list[tuple[str, str | None]]:
    """The instruction as (literal text, placeholder or None) pairs; checks placeholders."""
    try:
        parsed = list(string.Formatter().parse(instruction))
    except ValueError as exc:
        raise UsageError(f"{path}: judge '{name}': bad instruction template ({exc})") from None
    out: list[tuple[str, str | None]] = []
    for literal, field_name, spec, conv in parsed:
        if field_name is not None and (field_name not in PLACEHOLDERS or spec or conv):
            raise UsageError(
                f"{path}: judge '{name}': unknown placeholder {{{field_name}}} "
                f"(allowed: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
            )
        out.append((literal, field_name))
    return out


def _examples_part(path: str, name: str, examples: Any) -> Part | None:
    if examples is None:
        return None
    if not isinstance(examples, list):
        raise UsageError(f"{path}: judge '{name}': examples must be a list of tables")
    blocks = []
    for i, ex in enumerate(examples, start=1):
        if not isinstance(ex, dict) or ex.get("verdict") not in ("yes", "no"):
            raise UsageError(f'{path}: judge \'{name}\': example {i} needs verdict = "yes" or "no"')
        unknown = set(ex) - set(PLACEHOLDERS) - {"verdict", "rationale"}
        if unknown:
            raise UsageError(
                f"{path}: judge '{name}': example {i} has unknown keys {sorted(unknown)}"
            )
        lines = [f"{k}: {ex[k]}" for k in PLACEHOLDERS if k in ex]
        lines.append(f"verdict: {ex['verdict']}")
        blocks.append(f"Example {i}:\n" + "\n".join(lines))
    return Part("Examples of correct verdicts:\n" + "\n\n".join(blocks) + "\n\n")


def load_judge_file(path: str | Path, reserved: set[str]) -> list[Judge]:
    """Parse a judge file; raises UsageError naming the file, the judge and the problem."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{p}: no such judge file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: cannot read the judge file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{p}: not valid TOML ({exc})") from None
    entries = data.get("judges", data.get("judge"))
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{p}: declare judges as [[judges]] tables")
    judges: list[Judge] = []
    seen: set[str] = set()
    for entry in entries:
        judges.append(_one(str(p), entry, reserved | seen))
        seen.add(judges[-1].name)
    return judges


def _one(path: str, entry: Any, taken: set[str]) -> Judge:
    if not isinstance(entry, dict):
        raise UsageError(f"{path}: each [[judges]] entry must be a table")
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise UsageError(f"{path}: judge name {name!r} must match [a-z][a-z0-9_]*")
    if name in taken:
        raise UsageError(f"{path}: judge name '{name}' is already taken")
    kind = entry.get("assessment_type", "ANSWER")
    if kind not in ("ANSWER", "RETRIEVAL"):
        raise UsageError(f"{path}: judge '{name}': assessment_type must be ANSWER or RETRIEVAL")
    instruction = entry.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise UsageError(f"{path}: judge '{name}': instruction is missing")
    unknown = set(entry) - {"name", "assessment_type", "instruction", "examples", "description"}
    if unknown:
        raise UsageError(f"{path}: judge '{name}': unknown keys {sorted(unknown)}")
    pieces = _pieces(path, name, instruction)
    used = [f for _, f in pieces if f is not None]
    examples = _examples_part(path, name, entry.get("examples"))
    needs = tuple(dict.fromkeys(["request", *(_NEEDS[f] for f in used)]))
    description = str(entry.get("description", instruction.strip().splitlines()[0]))
    fixed = {
        "instruction": instruction,
        "kind": kind,
        "examples": examples.text if examples else "",
    }

    def render(record: Record, chunk: tuple[int, Chunk] | None) -> list[Part]:
        parts: list[Part] = [examples] if examples else []
        for literal, field_name in pieces:
            if literal:
                parts.append(Part(literal))
            if field_name == "request":
                parts.append(fence("request", record.request))
            elif field_name == "response":
                parts.append(fence("response", record.response or ""))
            elif field_name == "expected_response":
                parts.append(expected_part(record))
            elif field_name == "context":
                if chunk is not None:
                    parts.append(passage_part(*chunk))
                else:
                    parts.extend(passages(record))
        parts.append(Part("\nAnswer yes or no.\n"))
        return parts

    if kind == "RETRIEVAL":
        if "retrieved_context" not in needs:
            needs = (*needs, "retrieved_context")
        return ChunkJudge(
            name=name,
            needs=needs,
            description=description,
            parts=lambda r, i, c: render(r, (i, c)),
            fixed_texts=fixed,
        )
    return RowJudge(
        name=name,
        step="response",
        needs=needs,
        description=description,
        parts=lambda r: render(r, None),
        fixed_texts=fixed,
    )
