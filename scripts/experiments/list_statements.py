#!/usr/bin/env python3
"""groundedness on responses written as lists (issue 13, eleventh round): should a list's
items be judged as one statement, with the line that introduces them ("You'll need:")?
Runs the localjudge CLI with groundedness's statements replaced:

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/list_statements.py join \
        agreement tests/data/plain-lists/groundedness.jsonl --judges groundedness --format json

The first argument is the variant: "shipped" (the judge's own statements), "join" (the
items of each list of two or more, with a lead-in line ending in a colon just before it,
joined into one statement: "Just three things: a pot; a tape measure; scissors.") or
"prefix" (each item its own statement, with the lead-in before it). The rest are the
CLI's arguments.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import localjudge.judges.response as response  # noqa: E402
from localjudge.judges.answer_relevancy import _BULLET, split_statements  # noqa: E402
from localjudge.judges.lexical import only_reply  # noqa: E402
from localjudge.records import Record  # noqa: E402

SHIPPED = response.statements


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """The response's lines: ("text", [line]) or ("list", [item, ...]) for bullet runs."""
    out: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        if _BULLET.match(raw):
            item = _BULLET.sub("", raw).strip()
            if out and out[-1][0] == "list":
                out[-1][1].append(item)
            else:
                out.append(("list", [item]))
        else:
            out.append(("text", [raw]))
    return out


def statements(variant: str, record: Record) -> list[str]:
    text = record.response or ""
    parts = blocks(text)
    if variant == "shipped" or not any(k == "list" and len(p) >= 2 for k, p in parts):
        return SHIPPED(record)
    pieces: list[str] = []
    for i, (kind, lines) in enumerate(parts):
        if kind == "text":
            pieces.extend(split_statements(lines[0]))
            continue
        lead = None
        if pieces and pieces[-1].rstrip().endswith(":") and parts[i - 1][0] == "text":
            lead = pieces.pop()
        items = [x.rstrip(" .;,") for x in lines]
        if variant == "join":
            body = "; ".join(items) + "."
            pieces.append(f"{lead} {body}" if lead else body)
        else:
            pieces.extend(f"{lead} {x}" if lead else x for x in items)
    out: list[str] = []
    for piece in pieces:  # a bare reply joined to the next, as the judge does
        if out and only_reply(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out or [text.strip()]


def main() -> None:
    variant = sys.argv[1]
    if variant not in ("shipped", "join", "prefix"):
        raise SystemExit("variant: shipped, join or prefix")

    def replaced(r: Record) -> list[str]:
        return statements(variant, r)

    response.statements = replaced
    from localjudge.cli import main as cli

    sys.argv = ["localjudge", *sys.argv[2:]]
    cli()


if __name__ == "__main__":
    main()
