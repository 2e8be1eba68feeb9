"""Guidelines checked by rule (judges/verifiable.py) and guideline_adherence's use of them,
on the scripted fake backend."""

from __future__ import annotations

from dataclasses import replace

import pytest

from localjudge.judges import JudgeOptions
from localjudge.judges.verifiable import check
from localjudge.records import Chunk, Record

from .test_judges import rec, run_one

PREFIX = "response/llm_judged/guideline_adherence"
TWELVE = "one two three four five six seven eight nine ten eleven twelve"


@pytest.mark.parametrize(
    ("guideline", "response", "rule", "followed"),
    [
        ("Use at most 10 words.", TWELVE, "word limit", False),
        ("Use at most 12 words.", TWELVE, "word limit", True),
        ("Please answer in no more than twelve words", TWELVE, "word limit", True),
        ("Keep it under 12 words.", TWELVE, "word limit", False),
        ("Answer in 20 words or fewer.", TWELVE, "word limit", True),
        ("Use at least 20 words.", TWELVE, "word limit", False),
        (
            "Answer in one sentence.",
            "It opens at nine. It closes at five.",
            "sentence limit",
            False,
        ),
        ("Write one sentence.", "It opens at 9 a.m. on weekdays.", "sentence limit", True),
        (
            "Use at most two sentences.",
            "Yes. Bring a receipt. Do it soon.",
            "sentence limit",
            False,
        ),
        ("Keep it to a single sentence.", "Yes, with a receipt.", "sentence limit", True),
        ("Do not use all capital letters.", "PASSWORDS MUST BE LONG!!!", "no all capitals", False),
        ("Don't write in capitals", "Use your PIN at any ATM in the UK.", "no all capitals", True),
        ("Avoid all caps.", "NEVER SHARE IT with anyone", "no all capitals", False),
        ("Avoid all caps.", "NEVER share it with anyone", "no all capitals", True),
        ("Use a bulleted list.", "- Restart it.\n- Update it.", "bulleted list", True),
        ("Use a bulleted list.", "Restart it, then update it.", "bulleted list", False),
        ("Use a numbered list.", "1. Restart it.\n2) Update it.", "numbered list", True),
        ("Start with yes or no.", "Yes, you can.", "yes or no first", True),
        (
            'Begin your answer with "yes" or "no".',
            "Name changes cost £40.",
            "yes or no first",
            False,
        ),
    ],
)
def test_rules(guideline: str, response: str, rule: str, followed: bool) -> None:
    result = check(guideline, response)
    assert result is not None
    assert (result.rule, result.followed) == (rule, followed), result.detail


@pytest.mark.parametrize(
    "guideline",
    [
        "Answer politely.",
        "Do not promise anything the policy does not state.",
        "Use at most 50 words unless the customer asks for detail.",
        "Do not answer in one sentence when a list is clearer.",
        "Mention the word limit of 200 words for the essay.",
        "Use code formatting for commands.",
    ],
)
def test_other_guidelines_go_to_the_model(guideline: str) -> None:
    assert check(guideline, "Anything at all.") is None


RULED = rec(
    request="Summarise our password policy in one sentence.",
    response="PASSWORDS MUST BE 12 CHARACTERS LONG!!! ALSO WRITE THEM DOWN.",
    retrieved_context=(Chunk("Passwords must be at least 12 characters long.", "kb://pw"),),
    guidelines=("Write one sentence.", "Do not use all capital letters.", "Be accurate."),
)


def test_a_broken_rule_rates_no_without_asking_the_model() -> None:
    row, fake = run_one(["guideline_adherence"], RULED, [], JudgeOptions())
    assert fake.asked == []
    assert row[f"{PREFIX}/rating"] == "no"
    assert row[f"{PREFIX}/probability"] == 1.0  # P(no): the rule is certain
    assert row[f"{PREFIX}/rationale"].startswith('Broken by rule: "Write one sentence."')
    checks = row[f"{PREFIX}/guideline_checks"]
    assert [c["checked_by"] for c in checks] == ["sentence limit", "no all capitals", "model"]
    assert [c["followed"] for c in checks] == [False, False, None]


def test_the_model_is_asked_only_about_guidelines_no_rule_checks() -> None:
    record = replace(RULED, response="Passwords must be at least 12 characters long.")
    row, fake = run_one(["guideline_adherence"], record, [("yes", 0.9)], JudgeOptions())
    assert row[f"{PREFIX}/rating"] == "yes"
    assert [c["followed"] for c in row[f"{PREFIX}/guideline_checks"]] == [True, True, None]
    # the model is asked only about the guideline no rule checks, after the passages (which
    # come before the response, so that the request-and-passages prefix is shared)
    user = "".join(p.text for p in fake.asked[0].prompt.user)
    assert "- Be accurate." in user and "Write one sentence" not in user
    assert user.index("<request") < user.index("<passage") < user.index("<response")
    assert user.index("<response") < user.index("<guidelines>")


def card_question(guidelines: tuple[str, ...]) -> Record:
    return rec(
        request="Can I pay by card?",
        response="Yes, we take every major card.",
        guidelines=guidelines,
    )


def test_rules_followed_leave_the_verdict_to_the_model() -> None:
    record = card_question(("Start with yes or no.", "Answer politely."))
    row, fake = run_one(["guideline_adherence"], record, [("no", 0.7)])
    assert row[f"{PREFIX}/rating"] == "no"
    assert row[f"{PREFIX}/probability"] == 0.7
    assert [c["followed"] for c in row[f"{PREFIX}/guideline_checks"]] == [True, None]
    assert len(fake.asked) == 1


def test_every_guideline_checked_by_rule_asks_no_model() -> None:
    record = card_question(("Start with yes or no.", "Use at most 20 words."))
    row, fake = run_one(["guideline_adherence"], record, [], JudgeOptions())
    assert fake.asked == []
    assert row[f"{PREFIX}/rating"] == "yes"
    assert row[f"{PREFIX}/rationale"] == (
        'Every guideline checked by rule and followed: first word "Yes"; 6 words, at most 20.'
    )
