"""Lexical support: how much of a text's content is found, word for word, in its evidence.

A response that adds facts the passages do not hold nearly always adds words they do not
hold: names, numbers, places, claims. groundedness blends this deterministic evidence with
the model's statement verdicts (docs/agreement.md measures both: on the dev sets the
default model's verdicts alone rank grounded and ungrounded responses near chance, the
lexical share far better).

Words are runs of letters or digits (any script), case-folded; English function words (the
NLTK English stop-word list, below) are not content. A word matches the same word in the
singular or plural, and a quantity written another way; nothing looser: a paraphrase
("purchased" for "bought") counts as not found, which is why the model's verdict is kept
in the blend and why a threshold, not 1.0, decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# NLTK's English stop-word list (nltk_data corpora/stopwords/english) without its forms
# with an apostrophe: "don't" is read as the words "don" and "t", both listed.
_NLTK_ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn
    hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
"""
STOPWORDS = frozenset(_NLTK_ENGLISH.split())

_WORD = re.compile(r"[^\W_]+")


# Wording that differs only in how a quantity is written: unit symbols are spelt out before
# the text is split into words, and number words up to twenty, the tens, and the large
# units match their digits ("six" is "6", "thousand" is "1000"), so "100 °C" is found in
# "100 degrees Celsius" and "six" in "6 players". Listed words keep their own spelling.
_SYMBOLS = (
    ("\u00b0c", " degrees celsius"),
    ("\u00b0f", " degrees fahrenheit"),
    ("\u00b0", " degrees"),
    ("%", " percent"),
    ("\u20ac", " euros "),
    ("\u00a3", " pounds "),
    ("$", " dollars "),
)
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70"})
_NUMBER_WORDS.update({"eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000"})
_NUMBER_WORDS.update({"million": "1000000", "billion": "1000000000", "dozen": "12"})
_UNIT_WORDS = {
    "km": "kilometres",
    "kilometers": "kilometres",
    "kilometre": "kilometres",
    "m": "metres",
    "meters": "metres",
    "metre": "metres",
    "meter": "metres",
    "cm": "centimetres",
    "mm": "millimetres",
    "kg": "kilograms",
    "g": "grams",
    "mb": "megabytes",
    "gb": "gigabytes",
    "hrs": "hours",
    "hr": "hours",
    "mins": "minutes",
    "min": "minutes",
    "secs": "seconds",
    "sec": "seconds",
    "centigrade": "celsius",
}


# Durations written in a larger unit are rewritten in the smaller one before matching, so
# "two weeks" is found in "14 days" and "2 hours" in "120 minutes".
_DURATIONS = {
    "week": (7, "days"),
    "fortnight": (14, "days"),
    "hour": (60, "minutes"),
    "decade": (10, "years"),
}
_DURATION = re.compile(
    r"\b(\d+(?:\.\d+)?|an?|" + "|".join(k for k in _NUMBER_WORDS if k != "dozen")
    + r")[\s-]+(" + "|".join(_DURATIONS) + r")s?\b"
)


def _in_smaller_units(folded: str) -> str:
    def convert(m: re.Match[str]) -> str:
        word = m.group(1)
        count = 1.0 if word in ("a", "an") else float(_NUMBER_WORDS.get(word) or word)
        factor, unit = _DURATIONS[m.group(2)]
        return f"{count * factor:g} {unit}"

    return _DURATION.sub(convert, folded)


def singular(word: str) -> str:
    """The word without an English plural ending: "avocados" -> "avocado", "cities" ->
    "city", "boxes" -> "box". Words of four letters or fewer, and words ending in -ss, -us
    or -is ("glass", "virus", "analysis"), are kept as they are. Only a matching key: both
    sides of a comparison go through it, so an odd stem ("ladies" -> "lady") is harmless."""
    if len(word) <= 4 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    return word[:-1]


def _key(word: str) -> str:
    return _NUMBER_WORDS.get(word) or singular(_UNIT_WORDS.get(word) or word)


def _words(text: str) -> list[tuple[str, str]]:
    """(word as matched, key it is matched by) for each word of the text, case-folded. The
    key spells quantities one way and drops plural endings; durations are first rewritten
    in the smaller unit ("two weeks" becomes "14 days")."""
    folded = text.casefold()
    for symbol, words in _SYMBOLS:
        folded = folded.replace(symbol, words)
    folded = re.sub(r"(?<=\d),(?=\d{3})", "", folded)  # 1,000 -> 1000
    folded = _in_smaller_units(folded)
    return [(w, _key(w)) for w in _WORD.findall(folded)]


def content_words(text: str) -> list[str]:
    """The text's content words, case-folded, in order (repeats kept)."""
    return [w for w, _ in _words(text) if w not in STOPWORDS]


def lexical_support(text: str, evidence: Iterable[str]) -> tuple[float, list[str]]:
    """(share of `text`'s content words that occur in `evidence`, the words that do not,
    each once, in order of appearance). A text without content words is fully supported.
    Words match by their key: the same word, or the same quantity written differently."""
    known = {key for _, key in _words(" ".join(evidence))}
    words = [(w, key) for w, key in _words(text) if w not in STOPWORDS]
    if not words:
        return 1.0, []
    missing = [w for w, key in words if key not in known]
    return 1.0 - len(missing) / len(words), list(dict.fromkeys(missing))


def listed(words: Sequence[str], limit: int = 8) -> str:
    """The first `limit` words, comma-separated, with an ellipsis if there are more."""
    return ", ".join(words[:limit]) + (", \u2026" if len(words) > limit else "")


# Words that only answer a yes/no question ("no" is already a stop word): an expected answer
# made of them names nothing that passages could contain word for word.
POLAR_WORDS = frozenset({"yes", "true", "false"})


def answer_recall(expected: str, passages: Iterable[str]) -> tuple[float | None, list[str]]:
    """(share of the expected answer's content words that occur in the passages, the words
    that do not). None when the answer has no content words beyond yes/no/true/false: then
    the words say nothing about whether the passages suffice."""
    words = [w for w in content_words(expected) if w not in POLAR_WORDS]
    if not words:
        return None, []
    return lexical_support(" ".join(words), passages)


# Key terms: the words whose change turns a faithful claim into a false one while leaving
# nearly every other word in place (SummEdits' entity and number edits, a changed date or
# name). Numbers are runs of digits ("1,200" and "1200" are one number); names are words
# that start with a capital letter anywhere but at the start of a sentence (where every
# word does: a one-word name there is missed, a paraphrase's first word is not counted).
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)([^\W\d_]+)")


def _numbers(text: str) -> set[str]:
    return {m.group(0).replace(",", "") for m in _NUMBER.finditer(text)}


def key_terms(text: str) -> list[str]:
    """The text's numbers and capitalised names (not sentence-initial), in order, each once;
    names case-folded."""
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    terms: list[str] = []
    for m in re.finditer(r"\d+(?:[.,]\d+)*|[^\W\d_]+", text):
        word = m.group(0)
        if word[0].isdigit():
            terms.append(word.replace(",", ""))
        elif word[0].isupper() and m.start() not in starts and word.casefold() not in STOPWORDS:
            terms.append(word.casefold())
    return list(dict.fromkeys(terms))


def missing_key_terms(text: str, evidence: Iterable[str]) -> tuple[float | None, list[str]]:
    """(share of `text`'s key terms (numbers, names) not found in `evidence`, those terms).
    None when the text has no key terms. Unlike lexical support, a paraphrase keeps its
    names and numbers, so it is not penalised here; a changed name or number is."""
    joined = " ".join(evidence)
    known = set(_WORD.findall(joined.casefold())) | _numbers(joined)
    terms = key_terms(text)
    if not terms:
        return None, []
    missing = [t for t in terms if t not in known]
    return len(missing) / len(terms), missing
