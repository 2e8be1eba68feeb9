"""The plain-cases sets (issue 13.2, tests/data/plain/, and the held-out
tests/data/plain-holdout/, plain-holdout-2/, plain-holdout-3/, plain-holdout-4/,
plain-holdout-5/, plain-holdout-6/ and plain-holdout-7/): short hand-labelled RAG rows, one file
per LLM judge.

Checks the set is well formed, not how a model rates it (that is measured by
scripts/agreement.py and reported in docs/): every row is read by localjudge's own
validator once its labels and source are taken off (as scripts/agreement.py does), carries
the fields its judge needs and a yes/no label for that judge (one per chunk for
chunk_relevance), ids are unique across the set, and each file is balanced (40-60% yes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from localjudge.judges import lexical
from localjudge.judges.response import yes_no_opening
from localjudge.records import Record, validate_row

from .conftest import REPO

DATA = REPO / "tests" / "data"
PLAIN = DATA / "plain"


def _set(name: str, prefix: str, chunk_rows: int, rows: int) -> tuple[Any, ...]:
    return (DATA / name, prefix, {"chunk_relevance": chunk_rows}, rows)


# Each set: its folder, the request_id and source prefix, and the rows per judge.
SETS = {
    "plain": _set("plain", "plain", 14, 24),
    "plain-holdout": _set("plain-holdout", "holdout", 8, 12),
    "plain-holdout-2": _set("plain-holdout-2", "holdout2", 8, 12),
    "plain-holdout-3": _set("plain-holdout-3", "holdout3", 8, 12),
    "plain-holdout-4": _set("plain-holdout-4", "holdout4", 10, 16),
    "plain-holdout-5": _set("plain-holdout-5", "holdout5", 8, 12),
    "plain-holdout-6": _set("plain-holdout-6", "holdout6", 8, 12),
    "plain-holdout-7": _set("plain-holdout-7", "holdout7", 8, 12),
    "plain-holdout-8": _set("plain-holdout-8", "holdout8", 8, 12),
    "plain-holdout-9": _set("plain-holdout-9", "holdout9", 8, 12),
    "plain-holdout-10": _set("plain-holdout-10", "holdout10", 8, 12),
    "plain-holdout-11": _set("plain-holdout-11", "holdout11", 8, 12),
    "plain-holdout-12": _set("plain-holdout-12", "holdout12", 8, 12),
    "plain-holdout-13": _set("plain-holdout-13", "holdout13", 8, 12),
    "plain-holdout-14": _set("plain-holdout-14", "holdout14", 8, 12),
    "plain-holdout-15": _set("plain-holdout-15", "holdout15", 8, 12),
    "plain-holdout-16": _set("plain-holdout-16", "holdout16", 8, 12),
    "plain-holdout-17": _set("plain-holdout-17", "holdout17", 8, 12),
    "plain-holdout-18": _set("plain-holdout-18", "holdout18", 8, 12),
    "plain-holdout-19": _set("plain-holdout-19", "holdout19", 8, 12),
    "plain-holdout-20": _set("plain-holdout-20", "holdout20", 8, 12),
    "plain-holdout-21": _set("plain-holdout-21", "holdout21", 8, 12),
    "plain-holdout-22": _set("plain-holdout-22", "holdout22", 8, 12),
    "plain-holdout-23": _set("plain-holdout-23", "holdout23", 8, 12),
    "plain-holdout-24": _set("plain-holdout-24", "holdout24", 8, 12),
    "plain-holdout-25": _set("plain-holdout-25", "holdout25", 8, 12),
    "plain-holdout-26": _set("plain-holdout-26", "holdout26", 8, 12),
    "plain-holdout-27": _set("plain-holdout-27", "holdout27", 8, 12),
    "plain-holdout-28": _set("plain-holdout-28", "holdout28", 8, 12),
}
# The fields each judge reads, besides the request; anything else would be noise in a row.
FIELDS = {
    "groundedness": {"response", "retrieved_context"},
    "safety": {"response"},
    "correctness": {"response", "expected_response"},
    "relevance_to_query": {"response"},
    "chunk_relevance": {"retrieved_context"},
    "context_sufficiency": {"expected_response", "retrieved_context"},
}


def load(judge: str, name: str = "plain") -> list[dict[str, Any]]:
    path = SETS[name][0] / f"{judge}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def valid_row(i: int, row: dict[str, Any], request_id: str, judge: str) -> Record:
    """Row `i` of a set as a record, once labels and source are off: valid, with the id
    `request_id` and only the judge's fields."""
    bare = {k: v for k, v in row.items() if k not in ("labels", "source")}
    record = validate_row(i, bare)
    assert isinstance(record, Record)
    assert record.request_id == request_id
    assert set(bare) == {"request_id", "request"} | FIELDS[judge], row["request_id"]
    if "retrieved_context" in bare:
        assert record.retrieved_context and all(c.doc_uri for c in record.retrieved_context)
    return record


def labels_of(judge: str, row: dict[str, Any]) -> list[str]:
    """The row's labels for its judge as a list (one entry, or one per chunk)."""
    value = row["labels"][judge]
    return list(value) if isinstance(value, list) else [value]


@pytest.mark.parametrize("name", sorted(SETS))
def test_one_file_per_judge_and_nothing_else(name: str) -> None:
    assert {p.stem for p in SETS[name][0].glob("*.jsonl")} == set(FIELDS)


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("judge", sorted(FIELDS))
def test_rows_are_valid_records_with_the_judges_fields(judge: str, name: str) -> None:
    _, prefix, min_rows, per_judge = SETS[name]
    rows = load(judge, name)
    assert len(rows) >= min_rows.get(judge, per_judge)
    for i, row in enumerate(rows, start=1):
        valid_row(i, row, f"{prefix}-{judge}-{i:02d}", judge)
        assert row["source"].startswith(f"{name} "), row["request_id"]


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("judge", sorted(FIELDS))
def test_every_row_is_labelled_for_its_judge(judge: str, name: str) -> None:
    for row in load(judge, name):
        assert set(row["labels"]) == {judge}, row["request_id"]
        labels = labels_of(judge, row)
        assert labels and set(labels) <= {"yes", "no"}, row["request_id"]
        if judge == "chunk_relevance":
            assert isinstance(row["labels"][judge], list)
            assert len(labels) == len(row["retrieved_context"]), row["request_id"]
        else:
            assert isinstance(row["labels"][judge], str)


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("judge", sorted(FIELDS))
def test_each_file_is_balanced(judge: str, name: str) -> None:
    labels = [label for row in load(judge, name) for label in labels_of(judge, row)]
    share = labels.count("yes") / len(labels)
    assert 0.4 <= share <= 0.6, f"{judge}: {share:.2f} yes"


def test_request_ids_are_unique_across_the_sets() -> None:
    ids = [row["request_id"] for name in SETS for judge in FIELDS for row in load(judge, name)]
    assert len(ids) == len(set(ids))


def test_the_sets_share_no_request() -> None:
    seen: set[str] = set()
    for name in SETS:
        requests = {row["request"] for judge in FIELDS for row in load(judge, name)}
        assert not seen & requests, name
        seen |= requests


def test_readme_table_matches_the_files() -> None:
    """The per-file table in tests/data/plain/README.md is the one the files give."""
    readme = (PLAIN / "README.md").read_text(encoding="utf-8")
    for judge in FIELDS:
        rows = load(judge)
        labels = [label for row in rows for label in labels_of(judge, row)]
        assert table_line(judge, rows, labels) in readme, judge


def table_line(judge: str, rows: list[dict[str, Any]], labels: list[str]) -> str:
    units = f" ({len(labels)} chunks)" if judge == "chunk_relevance" else ""
    return f"| {judge}.jsonl | {len(rows)}{units} | {labels.count('yes')} / {labels.count('no')} |"


GUIDELINES = REPO / "tests" / "data" / "plain-guidelines" / "guideline_adherence.jsonl"


def test_the_guideline_cases_are_valid_labelled_records() -> None:
    """tests/data/plain-guidelines/: every row a valid record with guidelines and a yes/no
    label, passages only where a guideline refers to them, ids in order, balanced, and no
    request shared with the other sets."""
    rows = [json.loads(line) for line in GUIDELINES.read_text(encoding="utf-8").splitlines()]
    others = {row["request"] for name in SETS for judge in FIELDS for row in load(judge, name)}
    for i, row in enumerate(rows, start=1):
        bare = {k: v for k, v in row.items() if k not in ("labels", "source")}
        record = validate_row(i, bare)
        assert record.guidelines, row["request_id"]
        assert record.request_id == f"plain-guidelines-guideline_adherence-{i:02d}"
        assert set(bare) - {"retrieved_context"} == {
            "request_id",
            "request",
            "response",
            "guidelines",
        }
        assert ("retrieved_context" in bare) == row["source"].endswith("content-passages")
        assert row["labels"] == {"guideline_adherence": row["labels"]["guideline_adherence"]}
        assert row["labels"]["guideline_adherence"] in ("yes", "no")
        assert row["request"] not in others, row["request_id"]
    share = sum(row["labels"]["guideline_adherence"] == "yes" for row in rows) / len(rows)
    assert len(rows) >= 24 and 0.4 <= share <= 0.6


def one_shape_rows(
    path: Path, id_prefix: str, source: str, also_others: Path | None = None
) -> list[dict[str, Any]]:
    """The rows of a set written for one shape (`path`, DATA/<set>/<judge>.jsonl, the set's
    only file): 24 rows, each valid_row with the id <id_prefix>-NN in file order, 12
    labelled yes and 12 no, a `source` that starts
    with `source` ("{label}" in it stands for the row's label), and no request shared with
    the other sets (nor with `also_others`)."""
    judge = path.stem
    assert [p.name for p in path.parent.glob("*.jsonl")] == [path.name]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 24
    others = {row["request"] for name in SETS for j in FIELDS for row in load(j, name)}
    if also_others is not None:
        lines = also_others.read_text(encoding="utf-8").splitlines()
        others |= {json.loads(line)["request"] for line in lines}
    for i, row in enumerate(rows, start=1):
        valid_row(i, row, f"{id_prefix}-{i:02d}", judge)
        assert row["labels"] == {judge: row["labels"][judge]}, row["request_id"]
        label = row["labels"][judge]
        assert label in ("yes", "no"), row["request_id"]
        assert row["source"].startswith(source.format(label=label)), row["request_id"]
        assert row["request"] not in others, row["request_id"]
    labels = [row["labels"][judge] for row in rows]
    assert labels.count("yes") == 12 and labels.count("no") == 12
    return rows


LISTS = DATA / "plain-lists" / "groundedness.jsonl"


def is_list_item(line: str) -> bool:
    """True for a line that starts a bulleted ("- ", "* ", "• ") or numbered ("1. ", "2) ")
    list item."""
    if line[:2] in ("- ", "* ", "• "):
        return len(line) > 2
    head, _, rest = line.partition(" ")
    return head[:-1].isdigit() and head[-1:] in (".", ")") and bool(rest.strip())


def test_plain_lists_set_is_well_formed() -> None:
    """tests/data/plain-lists/: 24 groundedness rows whose response is a list of two to six
    items, each on its own line (and one_shape_rows's checks)."""
    for row in one_shape_rows(LISTS, "lists-groundedness", "plain-lists "):
        items = [line for line in row["response"].splitlines() if is_list_item(line)]
        assert 2 <= len(items) <= 6, row["request_id"]


def test_is_list_item_reads_the_markers() -> None:
    for line in (
        "- Six guy lines",
        "* Ages: five to eleven",
        "• Hours: 1 pm",
        "1. Plug it in.",
        "2) No heading.",
    ):
        assert is_list_item(line), line
    for line in ("-5 degrees", "1.5 kg of flour", "2024 was busy.", "- ", "Total: 3"):
        assert not is_list_item(line), line


POLAR = DATA / "plain-polar" / "context_sufficiency.jsonl"


def test_plain_polar_set_is_well_formed() -> None:
    """tests/data/plain-polar/: 24 context_sufficiency rows whose expected answer starts
    with a yes or a no and goes on; valid records once labels and source are off, 12 yes
    and 12 no, and both Yes-led and No-led expected answers under each label."""
    rows = [json.loads(line) for line in POLAR.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 24
    ids = [row["request_id"] for row in rows]
    assert len(set(ids)) == len(ids) and all(i.startswith("polar-") for i in ids)
    leads: dict[str, set[str]] = {"yes": set(), "no": set()}
    for i, row in enumerate(rows, start=1):
        bare = {k: v for k, v in row.items() if k not in ("labels", "source")}
        record = validate_row(i, bare)
        assert isinstance(record, Record)
        assert set(bare) == {"request_id", "request"} | FIELDS["context_sufficiency"]
        assert record.retrieved_context and all(c.doc_uri for c in record.retrieved_context)
        assert row["source"].startswith("plain-polar "), row["request_id"]
        words = row["expected_response"].split()
        lead = words[0].rstrip(",.:;!").lower()
        assert lead in ("yes", "no") and len(words) > 1, row["request_id"]
        assert row["labels"] == {"context_sufficiency": row["labels"]["context_sufficiency"]}
        label = row["labels"]["context_sufficiency"]
        assert label in ("yes", "no"), row["request_id"]
        leads[label].add(lead)
    labels = [row["labels"]["context_sufficiency"] for row in rows]
    assert labels.count("yes") == 12 and labels.count("no") == 12
    assert leads == {"yes": {"yes", "no"}, "no": {"yes", "no"}}


HIDING = DATA / "plain-hiding" / "safety.jsonl"
# Word starts that, within four words after "without", make a request ask how to do something
# unnoticed ("without her noticing", "without the other counters seeing", "without the
# tenants catching on"). "work ... out" is checked apart: a word starting "work" within four
# words after "without", with "out" one or two words later ("without her solicitor working
# it out").
HIDDEN_FROM = (
    "notic",
    "know",
    "see",
    "saw",
    "find",
    "found",
    "hear",
    "spot",
    "realis",
    "realiz",
    "catch",
    "suspect",
    "discover",
)


def asks_unnoticed(request: str) -> bool:
    """True if "without" is followed within four words by a verb of noticing or finding out
    (see HIDDEN_FROM)."""
    words = "".join(c if c.isalpha() or c == "'" else " " for c in request.lower()).split()
    for i, word in enumerate(words):
        if word != "without":
            continue
        if any(w.startswith(HIDDEN_FROM) for w in words[i + 1 : i + 5]):
            return True
        for j in range(i + 1, i + 5):
            if j < len(words) and words[j].startswith("work") and "out" in words[j + 1 : j + 3]:
                return True
    return False


def test_plain_hiding_set_is_well_formed() -> None:
    """tests/data/plain-hiding/: 24 safety rows whose request asks how to do something
    without someone noticing (and one_shape_rows's checks)."""
    for row in one_shape_rows(HIDING, "hiding-safety", "plain-hiding "):
        assert asks_unnoticed(row["request"]), row["request_id"]


def test_asks_unnoticed_reads_the_phrase() -> None:
    assert asks_unnoticed("How can I wrap them without the kids seeing?")
    assert asks_unnoticed("How do I move it without her solicitor working it out?")
    assert not asks_unnoticed("How do I make bread without yeast?")
    assert not asks_unnoticed("Can I leave without paying, and will anyone notice?")


CANNOT_SAY = DATA / "plain-cannot-say" / "relevance_to_query.jsonl"


def test_plain_cannot_say_set_is_well_formed() -> None:
    """tests/data/plain-cannot-say/: 24 relevance_to_query rows whose response says it
    cannot give the answer, each row's kind (`source`) naming its label (one_shape_rows)."""
    one_shape_rows(CANNOT_SAY, "cannot-say-relevance_to_query", "plain-cannot-say {label}-")


CANNOT_SAY_2 = DATA / "plain-cannot-say-2" / "relevance_to_query.jsonl"


def test_plain_cannot_say_2_set_is_well_formed() -> None:
    """tests/data/plain-cannot-say-2/, the second set of that shape: as the first
    (one_shape_rows), and no request shared with it."""
    one_shape_rows(
        CANNOT_SAY_2,
        "cannot-say-2-relevance_to_query",
        "plain-cannot-say-2 {label}-",
        also_others=CANNOT_SAY,
    )


YES_NO = DATA / "plain-yes-no" / "relevance_to_query.jsonl"
YES_NO_2 = DATA / "plain-yes-no-2" / "relevance_to_query.jsonl"


@pytest.mark.parametrize(
    ("path", "id_prefix", "source", "other"),
    [
        (YES_NO, "yesno-relevance_to_query", "plain-yes-no {label}-", None),
        (YES_NO_2, "yesno2-relevance_to_query", "plain-yes-no-2 {label}-", YES_NO),
    ],
)
def test_plain_yes_no_sets_are_well_formed(
    path: Path, id_prefix: str, source: str, other: Path | None
) -> None:
    """tests/data/plain-yes-no/ and plain-yes-no-2/: 24 relevance_to_query rows each
    (one_shape_rows; the second shares no request with the first) whose request holds a
    yes-or-no question and whose response opens with a yes or a no (yes_no_opening), 6 of
    each opening per label, so the opening does not predict the label."""
    rows = one_shape_rows(path, id_prefix, source, also_others=other)
    openings: dict[tuple[str, str | None], int] = {}
    for i, row in enumerate(rows, start=1):
        record = validate_row(i, {k: v for k, v in row.items() if k not in ("labels", "source")})
        assert isinstance(record, Record)
        key = (row["labels"]["relevance_to_query"], yes_no_opening(record))
        openings[key] = openings.get(key, 0) + 1
    assert openings == {("yes", "yes"): 6, ("yes", "no"): 6, ("no", "yes"): 6, ("no", "no"): 6}


KEYS = DATA / "plain-keys" / "groundedness.jsonl"
# Number words that a "keyless" response (one with no numbers and no names) must not use:
# the words lexical reads as numbers and ordinals, and two fractions.
NUMBER_WORDS = {*lexical._NUMBER_WORDS, *lexical._ORDINAL_WORDS, "half", "quarter"}


def is_keyless(text: str) -> bool:
    """True if `text` has no digit, no number word and no capitalised word except at the
    start of a sentence (so no name)."""
    if any(c.isdigit() for c in text):
        return False
    words = text.replace("?", ".").replace("!", ".").split()
    for i, word in enumerate(words):
        bare = word.strip(",.;:'\"()").lower()
        if bare in NUMBER_WORDS:
            return False
        starts_sentence = i == 0 or words[i - 1].endswith(".")
        if word[:1].isupper() and not starts_sentence:
            return False
    return True


def test_plain_keys_set_is_well_formed() -> None:
    """tests/data/plain-keys/: 24 groundedness rows whose support turns on numbers, dates,
    times, prices, quantities and names (one_shape_rows's checks, with no request shared
    with plain-lists either); the four "keyless" rows of each label have a response with
    no number and no name."""
    rows = one_shape_rows(KEYS, "keys-groundedness", "plain-keys {label}-", also_others=LISTS)
    keyless = {"yes": 0, "no": 0}
    for row in rows:
        if "-keyless-" in row["source"]:
            assert is_keyless(row["response"]), row["request_id"]
            keyless[row["labels"]["groundedness"]] += 1
    assert keyless == {"yes": 4, "no": 4}


def test_is_keyless_reads_numbers_and_names() -> None:
    assert not is_keyless("Yes. Take off the lids, and rinse the jars out first thing.")
    assert is_keyless("Yes. Take off the lids and corks, and rinse the jars out briefly.")
    assert not is_keyless("It starts at 8 pm.")
    assert not is_keyless("Ask for Dr Carrow at the desk.")
    assert not is_keyless("It takes half an hour.")


SUFF_KEYS = DATA / "plain-suff-keys" / "context_sufficiency.jsonl"


def test_plain_suff_keys_set_is_well_formed() -> None:
    """tests/data/plain-suff-keys/: 24 context_sufficiency rows whose sufficiency turns on
    the numbers, dates, times, prices, quantities and names of the expected answer
    (one_shape_rows's checks, with no request shared with plain-polar, the other
    context_sufficiency set of one shape, nor with plain-keys); the four "keyless" rows of
    each label have an expected answer with no number and no name."""
    rows = one_shape_rows(
        SUFF_KEYS, "suff-keys-context_sufficiency", "plain-suff-keys {label}-", also_others=POLAR
    )
    keys = {json.loads(line)["request"] for line in KEYS.read_text(encoding="utf-8").splitlines()}
    keyless = {"yes": 0, "no": 0}
    for row in rows:
        assert row["request"] not in keys, row["request_id"]
        if "-keyless-" in row["source"]:
            assert is_keyless(row["expected_response"]), row["request_id"]
            keyless[row["labels"]["context_sufficiency"]] += 1
    assert keyless == {"yes": 4, "no": 4}


SUFF_VALUES = DATA / "plain-suff-values" / "context_sufficiency.jsonl"
# The kinds (`source` after the set's name, the label first) and their rows.
SUFF_VALUES_KINDS = {
    "yes-other-words": 5,
    "yes-near-verbatim": 3,
    "yes-mixed": 4,
    "no-part-missing": 5,
    "no-different-value": 4,
    "no-value-missing": 3,
}


def test_plain_suff_values_set_is_well_formed() -> None:
    """tests/data/plain-suff-values/: 24 context_sufficiency rows whose expected answer
    states a value (a time, date, day, price, count, length, duration, percentage or name)
    together with other words (one_shape_rows's checks, with no request shared with
    plain-polar, the other one-shape sets or the sets of READINGS_SETS); every expected
    answer has a number or a name (it is not keyless), every row has one or two passages,
    and each kind has its planned number of rows."""
    rows = one_shape_rows(
        SUFF_VALUES,
        "suff-values-context_sufficiency",
        "plain-suff-values {label}-",
        also_others=POLAR,
    )
    readings = (f for s in READINGS_SETS.values() for f in s.folder.glob("*.jsonl"))
    earlier = [*(p for p in ONE_SHAPE if p != SUFF_VALUES), *readings]
    others = {
        json.loads(line)["request"]
        for path in earlier
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    kinds = dict.fromkeys(SUFF_VALUES_KINDS, 0)
    for row in rows:
        assert row["request"] not in others, row["request_id"]
        assert not is_keyless(row["expected_response"]), row["request_id"]
        assert len(row["retrieved_context"]) in (1, 2), row["request_id"]
        kind = row["source"].removeprefix("plain-suff-values ")
        assert kind in kinds, row["request_id"]
        kinds[kind] += 1
    assert kinds == SUFF_VALUES_KINDS


SPLIT = DATA / "plain-split" / "groundedness.jsonl"


def test_plain_split_set_is_well_formed() -> None:
    """tests/data/plain-split/: 24 groundedness rows whose support is split across two or
    three passages (one_shape_rows's checks, with no request shared with plain-keys nor
    plain-lists, the other groundedness sets of one shape); every row has 2 or 3 passages,
    and the passage counts are the same under each label."""
    rows = one_shape_rows(SPLIT, "split-groundedness", "plain-split {label}-", also_others=KEYS)
    lists = {json.loads(line)["request"] for line in LISTS.read_text(encoding="utf-8").splitlines()}
    counts: dict[str, list[int]] = {"yes": [], "no": []}
    for row in rows:
        assert row["request"] not in lists, row["request_id"]
        assert len(row["retrieved_context"]) in (2, 3), row["request_id"]
        counts[row["labels"]["groundedness"]].append(len(row["retrieved_context"]))
    assert sorted(counts["yes"]) == sorted(counts["no"])


READINGS = DATA / "plain-readings"
READINGS_2 = DATA / "plain-readings-2"
READINGS_3 = DATA / "plain-readings-3"
# The files of the other sets of one shape; the readings sets share no request with them.
ONE_SHAPE = (
    GUIDELINES,
    LISTS,
    POLAR,
    HIDING,
    CANNOT_SAY,
    CANNOT_SAY_2,
    KEYS,
    SUFF_KEYS,
    SPLIT,
    SUFF_VALUES,
)


class Readings(NamedTuple):
    """A readings set (or another set checked the same way): its folder, its id and source
    prefix, its rows per file, its categories and its judges, one file each. It shares no
    request with the sets listed before it in READINGS_SETS (written before it)."""

    folder: Path
    prefix: str
    size: int
    kinds: tuple[str, ...]
    judges: tuple[str, ...] = ("context_sufficiency", "correctness", "groundedness")


# In the order the sets were written.
READINGS_SETS = {
    "plain-readings": Readings(READINGS, "readings", 16, ("fraction", "named-day")),
    "plain-readings-2": Readings(
        READINGS_2, "readings2", 18, ("share", "weekdays", "counts-and-pence")
    ),
    "plain-readings-3": Readings(READINGS_3, "readings3", 12, ("share", "price")),
    "plain-hedges": Readings(
        DATA / "plain-hedges",
        "hedges",
        24,
        ("alternatives", "hedged-one"),
        judges=("correctness",),
    ),
    "plain-hedges-2": Readings(
        DATA / "plain-hedges-2",
        "hedges2",
        24,
        ("alternatives", "hedged-one"),
        judges=("correctness",),
    ),
    "plain-readings-4": Readings(
        DATA / "plain-readings-4", "readings4", 12, ("hedged", "feet-and-inches")
    ),
    "plain-readings-5": Readings(
        DATA / "plain-readings-5", "readings5", 24, ("before", "after"), judges=("correctness",)
    ),
    "plain-restated": Readings(
        DATA / "plain-restated",
        "restated",
        24,
        ("one-part", "two-part"),
        judges=("correctness",),
    ),
    # Groundedness rows whose response is one bare answer, a phrase with no verb.
    "plain-bare-answers": Readings(
        DATA / "plain-bare-answers",
        "bare",
        24,
        ("name", "place", "time", "date", "amount", "items"),
        judges=("groundedness",),
    ),
    # Dates written short, mostly with a two-digit year ("1/7/97", "June 10th, '00"),
    # against the same or another date written in full.
    "plain-short-dates": Readings(
        DATA / "plain-short-dates",
        "dates",
        12,
        ("figures", "month-words", "short-given"),
        judges=("correctness", "groundedness"),
    ),
    # American spelling or words on one side of a row and British on the other ("Aluminum."
    # for "Aluminium.", a "Heritage Center" for a "Heritage Centre", "trunk" for "boot").
    "plain-spelling": Readings(DATA / "plain-spelling", "spelling", 12, ("spelling", "words")),
    # A passage gives a range of days or months ("Tuesday to Saturday", "Apr–Sep", "from
    # November till February") and the other side names a day or month inside or outside it.
    "plain-ranges": Readings(
        DATA / "plain-ranges",
        "ranges",
        12,
        ("days", "months", "wraps"),
        judges=("context_sufficiency", "groundedness"),
    ),
    # Correctness rows whose expected answer wraps a value in other words ("A tarot pack has
    # 78 cards: ...", "According to the parish survey, 36% of ...") against a terse response.
    "plain-terse-values": Readings(
        DATA / "plain-terse-values",
        "terse",
        24,
        ("bare-number", "value-and-words"),
        judges=("correctness",),
    ),
    # How often something happens, said one way on one side of a row and another way on the
    # other ("fortnightly" / "every other week", "twice a year" / "every six months").
    "plain-how-often": Readings(
        DATA / "plain-how-often",
        "often",
        12,
        ("adverb", "times"),
        judges=("context_sufficiency", "correctness", "groundedness"),
    ),
    # Correctness rows whose expected answer gives a person's full name and whose response
    # names them by surname, or surname and title ("Dr Jenner."), or names another person.
    "plain-surnames": Readings(
        DATA / "plain-surnames",
        "surnames",
        24,
        ("famous", "local"),
        judges=("correctness",),
    ),
    # Correctness rows with a terse response giving one value, or a value and one other thing,
    # in another form ("A day and a half." for 36 hours) against a wrapped expected answer.
    "plain-terse-values-2": Readings(
        DATA / "plain-terse-values-2",
        "terse2",
        24,
        ("one-value", "two-parts"),
        judges=("correctness",),
    ),
    # A second set of plain-how-often's shape ("daily" / "every 24 hours"), written apart.
    "plain-how-often-2": Readings(
        DATA / "plain-how-often-2",
        "often2",
        12,
        ("adverb", "times"),
        judges=("context_sufficiency", "correctness", "groundedness"),
    ),
    # A value written in words on one side of a row and in figures on the other (years,
    # plain degrees, counts, prices), some against an expected answer that explains its value.
    "plain-words-values": Readings(
        DATA / "plain-words-values",
        "wordsval",
        12,
        ("values", "explained"),
        judges=("context_sufficiency", "correctness", "groundedness"),
    ),
    # A second set of plain-surnames' shape: a person named by surname, or title and
    # surname, against the full name, or another person named.
    "plain-surnames-2": Readings(
        DATA / "plain-surnames-2",
        "surnames2",
        24,
        ("famous", "local"),
        judges=("correctness",),
    ),
    # "Who ...?" requests whose expected answer names the person and says more, against a
    # terse response naming that person or another.
    "plain-who": Readings(
        DATA / "plain-who",
        "who",
        24,
        ("famous", "local"),
        judges=("correctness",),
    ),
}


def written_before(name: str) -> list[Path]:
    """The folders of the sets listed before `name` in READINGS_SETS."""
    names = list(READINGS_SETS)
    return [READINGS_SETS[n].folder for n in names[: names.index(name)]]


@pytest.mark.parametrize("name", READINGS_SETS)
def test_readings_set_is_well_formed(name: str) -> None:
    """tests/data/plain-readings*/: sets where a value is written one way in one place and
    another way in the other (plain-readings: a fraction of a unit or a named day;
    plain-readings-2: a share, a span of weekdays, a count in dozens or a price in pence;
    plain-readings-3: a share or a price; plain-readings-4: a quantity with a hedge of
    nearness or a height in feet and inches), and tests/data/plain-hedges/ and plain-hedges-2/,
    correctness rows whose response names more than one candidate answer or hedges one.
    Each has one file for each of its judges (correctness, context_sufficiency and
    groundedness unless the set names its own: the hedges sets have correctness only) and
    no other; each row is a valid_row with the id <prefix>-<judge>-NN in file order; each
    file has as many yes rows as no, with as many rows of each label in each category
    (`source` "<set> <label>-<category>"); no request is shared with the other sets, the
    other one-shape sets, the sets before it or another row."""
    folder, prefix, size, kinds, judges = READINGS_SETS[name]
    before = written_before(name)
    assert sorted(p.stem for p in folder.glob("*.jsonl")) == sorted(judges)
    others = {row["request"] for set_name in SETS for j in FIELDS for row in load(j, set_name)}
    for path in [*ONE_SHAPE, *(f for earlier in before for f in earlier.glob("*.jsonl"))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        others |= {json.loads(line)["request"] for line in lines}
    for judge in judges:
        lines = (folder / f"{judge}.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines]
        assert len(rows) == size, judge
        counts = {(label, kind): 0 for label in ("yes", "no") for kind in kinds}
        for i, row in enumerate(rows, start=1):
            valid_row(i, row, f"{prefix}-{judge}-{i:02d}", judge)
            assert row["labels"] == {judge: row["labels"][judge]}, row["request_id"]
            label = row["labels"][judge]
            assert row["source"].startswith(f"{name} {label}-"), row["request_id"]
            kind = row["source"].removeprefix(f"{name} {label}-")
            assert (label, kind) in counts, row["request_id"]
            counts[label, kind] += 1
            assert row["request"] not in others, row["request_id"]
            others.add(row["request"])
        labels = [row["labels"][judge] for row in rows]
        assert labels.count("yes") == labels.count("no") == size // 2, judge
        assert set(counts.values()) == {size // 2 // len(kinds)}, (judge, counts)
