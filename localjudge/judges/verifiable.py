"""Guidelines a program can check: the "verifiable instructions" of IFEval (Zhou et al.,
2023, "Instruction-Following Evaluation for Large Language Models"), where a word limit,
a sentence limit, a ban on capitals, a list format or a required first word is checked by
code rather than asked of a model.

guideline_adherence checks a guideline here when the guideline is, as a whole, one of the
forms below (after an optional "Please"; case and a final full stop ignored); anything
else, or a form with more in it ("Use at most 50 words unless asked for detail"), goes to
the model. Measured on tests/data/plain-guidelines/ (docs/agreement.md): the default model
ranked style guidelines like these no better than chance, and a rule is exact.

    word limit        "Use at most 40 words", "Answer in no more than 60 words", "Keep it
                      under 100 words", "Answer in 50 words or fewer", "Use at least 100
                      words" ("in 50 words" is read as at most 50)
    sentence limit    "Answer in one sentence", "Write one sentence", "Use at most two
                      sentences", "Keep it to a single sentence"
    no all capitals   "Do not use all capital letters", "Don't write in capitals", "Avoid
                      all caps"; broken by three or more all-capital words in a row (two
                      letters or more each; acronyms alone do not break it) or a response
                      whose letters are mostly capitals
    bulleted list     "Use a bulleted list", "Answer as a bullet-point list", "Use bullet
                      points": at least two lines starting with -, * or a bullet
    numbered list     "Use a numbered list": at least two lines starting with 1. or 1)
    yes or no first   "Start with yes or no", "Begin your answer with yes or no": the first
                      word is yes or no

Words are runs of letters and digits (with ' and - inside); sentences are those of the
deterministic splitter that groundedness and answer_relevancy use (a list item is a
sentence).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from localjudge.judges.answer_relevancy import split_statements


@dataclass(frozen=True)
class Check:
    """A guideline checked by a rule: which rule, whether the response follows it, and what
    was found ("92 words, at most 40")."""

    guideline: str
    rule: str
    followed: bool
    detail: str


_NUMBERS = {
    "a": 1,
    "a single": 1,
    "one": 1,
    "one single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "a hundred": 100,
    "one hundred": 100,
}
_NUM = r"(?P<n>\d+|" + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True)) + ")"
_VERB = (
    r"(?:(?:answer|reply|respond|write|summari[sz]e|explain|keep (?:it|the answer|the "
    r"response|your answer|your reply))\s+)?"
)
_PREP = r"(?:(?:in|to|with|using|use|within)\s+)?"
_AT_MOST = (
    r"(?P<bound>at most|no more than|not more than|up to|a maximum of|maximum|fewer than|"
    r"less than|under|only|just|at least|no fewer than|no less than|more than|over)"
)
_WORD_LIMIT = re.compile(
    rf"{_VERB}{_PREP}(?:{_AT_MOST}\s+)?{_NUM}\s+words(?:\s+or\s+(?P<or>fewer|less|more))?"
)
_SENTENCE_LIMIT = re.compile(rf"{_VERB}{_PREP}(?:{_AT_MOST}\s+)?{_NUM}\s+sentences?")
_NO_CAPITALS = re.compile(
    r"(?:do not|don't|never|avoid)\s+(?:(?:use|using|write|writing|answer|answering|reply|"
    r"replying|respond|responding)\s+)?(?:(?:in|with)\s+)?(?:all\s+)?(?:capital letters|"
    r"capitals|caps|upper[- ]?case(?: letters)?)"
)
_LIST = re.compile(
    r"(?:use|answer|reply|respond|write|format (?:it|the answer|the response))\s+"
    r"(?:(?:in|with|as)\s+)?(?:a\s+)?(?P<kind>bulleted|bullet[- ]point|bullet|numbered)\s+"
    r"(?:list|points)"
)
_YES_NO_FIRST = re.compile(
    r"(?:start|begin)(?:\s+(?:the|your)\s+(?:answer|reply|response))?\s+with\s+(?:a\s+)?"
    r"(?:[\"']?yes[\"']?\s+or\s+[\"']?no[\"']?|yes/no)"
)
_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_BULLET_LINE = re.compile(r"^\s*[-*\u2022\u25e6\u2023]\s+\S")
_NUMBERED_LINE = re.compile(r"^\s*\d+[.)]\s+\S")


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text]


def _words(response: str) -> int:
    return len(_WORD.findall(response))


def _within(count: int, n: int, bound: str | None) -> tuple[bool, str]:
    """Whether `count` keeps the limit `bound` `n` ("at most" when no bound is given: "in
    one sentence"), and the limit in words."""
    if bound in ("fewer than", "less than", "under"):
        return count < n, f"fewer than {n}"
    if bound in ("more than", "over"):
        return count > n, f"more than {n}"
    if bound in ("at least", "no fewer than", "no less than", "more"):
        return count >= n, f"at least {n}"
    return count <= n, f"at most {n}"


def _word_limit(m: re.Match[str], response: str) -> tuple[str, bool, str]:
    count = _words(response)
    bound = "more" if m["or"] == "more" else m["bound"]
    ok, limit = _within(count, _number(m["n"]), bound)
    return "word limit", ok, f"{count} words, {limit}"


def _sentence_limit(m: re.Match[str], response: str) -> tuple[str, bool, str]:
    count = len(split_statements(response))
    ok, limit = _within(count, _number(m["n"]), m["bound"])
    return "sentence limit", ok, f"{count} sentence{'s' if count != 1 else ''}, {limit}"


def _capital_run(response: str) -> int:
    """The longest run of consecutive all-capital words of two letters or more."""
    longest = run = 0
    for word in _WORD.findall(response):
        letters = [c for c in word if c.isalpha()]
        if len(letters) >= 2 and all(c.isupper() for c in letters):
            run += 1
            longest = max(longest, run)
        elif letters:
            run = 0
    return longest


def _no_capitals(m: re.Match[str], response: str) -> tuple[str, bool, str]:
    letters = [c for c in response if c.isalpha()]
    share = sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
    run = _capital_run(response)
    ok = run < 3 and not (len(letters) >= 20 and share > 0.6)
    detail = (
        f"{run} all-capital words in a row, {share:.0%} of letters capitals"
        if not ok
        else "no run of all-capital words"
    )
    return "no all capitals", ok, detail


def _list(m: re.Match[str], response: str) -> tuple[str, bool, str]:
    numbered = m["kind"] == "numbered"
    pattern = _NUMBERED_LINE if numbered else _BULLET_LINE
    items = sum(1 for line in response.splitlines() if pattern.match(line))
    kind = "numbered" if numbered else "bulleted"
    return f"{kind} list", items >= 2, f"{items} {kind} line{'s' if items != 1 else ''}"


def _yes_no_first(m: re.Match[str], response: str) -> tuple[str, bool, str]:
    words = _WORD.findall(response)
    first = words[0] if words else ""
    return "yes or no first", first.lower() in ("yes", "no"), f'first word "{first}"'


_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str], str], tuple[str, bool, str]]]] = [
    (_WORD_LIMIT, _word_limit),
    (_SENTENCE_LIMIT, _sentence_limit),
    (_NO_CAPITALS, _no_capitals),
    (_LIST, _list),
    (_YES_NO_FIRST, _yes_no_first),
]


def _normalised(guideline: str) -> str:
    text = " ".join(guideline.replace("\u2019", "'").split()).lower().rstrip(".!")
    return re.sub(r"^please\s+", "", text)


def check(guideline: str, response: str) -> Check | None:
    """The rule's verdict on `response` if the whole guideline is a form a rule checks,
    else None (the guideline goes to the model)."""
    text = _normalised(guideline)
    for pattern, rule in _RULES:
        m = pattern.fullmatch(text)
        if m is not None:
            name, ok, detail = rule(m, response)
            return Check(guideline, name, ok, detail)
    return None
