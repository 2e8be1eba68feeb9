"""Lexical support: how much of a text's content is found, word for word, in its evidence.

A response that adds facts the passages do not hold nearly always adds words they do not
hold: names, numbers, places, claims. groundedness blends this deterministic evidence with
the model's statement verdicts (docs/agreement.md measures both: on the dev sets the
default model's verdicts alone rank grounded and ungrounded responses near chance, the
lexical share far better).

Words are runs of letters or digits (any script), case-folded; English function words (the
NLTK English stop-word list, below) are not content. A word matches the same word in the
singular or plural, in American or British spelling ("color", "colour"; "fall",
"autumn"), and a quantity written another way; nothing looser: a paraphrase
("purchased" for "bought") counts as not found, which is why the model's verdict is kept
in the blend and why a threshold, not 1.0, decides.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet

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
    ("cm\u00b3", " cubic centimetres"),
    ("m\u00b3", " cubic metres"),
    ("km\u00b2", " square kilometres"),
    ("m\u00b2", " square metres"),
    ("\u00b0c", " degrees celsius"),
    ("\u00b0f", " degrees fahrenheit"),
    ("\u00b0", " degrees"),
    ("%", " percent"),
    ("\u20ac", " euros "),
    ("\u00a3", " pounds "),
    ("$", " dollars "),
    ("\u2212", "-"),  # the minus sign: "\u2212273.15 \u00b0C" is below zero
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
_NUMBER_WORDS["nought"] = "0"  # "nought degrees", as British English says zero
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


# Quantities with a unit are matched by value, in one base unit per kind: "two weeks" is
# found in "14 days", "half an hour" in "30 minutes", "1.5 l" in "1,500 ml", "1.5 m³" in
# "1,500 litres", "a quarter of a kilogram" in "250 g", "86 °F" in "30 °C" (temperatures in
# degrees Celsius, to a tenth of a degree: conversions that are exact, not rounded ones such
# as 350 °F for 180 °C); "30 feet" in "about 9 metres" (inches, feet, yards and miles
# against metric lengths, pounds and ounces against metric masses, acres and square miles,
# feet and yards against metric areas, and miles per hour against metric speeds: "4 mph"
# is "6.4 km/h", within IMPERIAL_TOLERANCE). A number with
# a scale word is its value ("two and a half thousand" is 2500; "three hundred and
# sixty-six" is 366). "full" or "whole" before the unit changes nothing ("a full day" is "24
# hours"). Such a phrase is one word of the text, listed as written when it is not found; it
# is also found when each of its words is (the matching before quantities). A hedge before
# it ("about", "just under") is part of it (APPROX_TOLERANCE), and so is "and a bit" after
# it (_AND_A_BIT).
_FAHRENHEIT = ("degrees fahrenheit", "degree fahrenheit", "fahrenheit", "degrees f", "degree f")
_MPH = ("mph", "mile per hour", "miles per hour", "mile an hour", "miles an hour")
# Knots, a nautical speed: matched to metric and imperial speeds as imperial lengths are to
# metric ones ("25 knots" is "29 mph" and "46 km/h", within IMPERIAL_TOLERANCE).
_KNOTS = ("knot",)
_UNITS: dict[str, tuple[float, str]] = {
    "degrees celsius": (1, "celsius"),
    "degree celsius": (1, "celsius"),
    "degrees centigrade": (1, "celsius"),
    "degree centigrade": (1, "celsius"),
    "degrees c": (1, "celsius"),  # "12 degrees C"
    "degree c": (1, "celsius"),
    "celsius": (1, "celsius"),
    # "twelve degrees" with no scale named, as British English gives a temperature: read in
    # degrees Celsius, so it is found in "12 °C" (an angle, "45 degrees", is read so on both
    # sides, and found in "45°"); "a degree" is a qualification (_quantity)
    "degree": (1, "celsius"),
    # converted in _quantity: (F - 32) * 5 / 9
    **{unit: (1, "celsius") for unit in _FAHRENHEIT},
    "cubic centimetre": (1, "millilitres"),
    "cubic centimeter": (1, "millilitres"),
    "cubic metre": (1_000_000, "millilitres"),
    "cubic meter": (1_000_000, "millilitres"),
    "second": (1, "seconds"),
    "sec": (1, "seconds"),
    "minute": (60, "seconds"),
    "min": (60, "seconds"),
    "hour": (3600, "seconds"),
    "hr": (3600, "seconds"),
    "h": (3600, "seconds"),
    "day": (86400, "seconds"),
    "week": (604800, "seconds"),
    "fortnight": (1209600, "seconds"),
    "month": (1, "months"),
    "year": (12, "months"),
    "decade": (120, "months"),
    "century": (1200, "months"),
    "centurie": (1200, "months"),
    "millilitre": (1, "millilitres"),
    "milliliter": (1, "millilitres"),
    "ml": (1, "millilitres"),
    "litre": (1000, "millilitres"),
    "liter": (1000, "millilitres"),
    "l": (1000, "millilitres"),
    "gram": (1, "grams"),
    "g": (1, "grams"),
    "kilogram": (1000, "grams"),
    "kilo": (1000, "grams"),
    "kg": (1000, "grams"),
    "tonne": (1_000_000, "grams"),  # not "ton": a long, a short or a metric one
    "millimetre": (0.001, "metres"),
    "millimeter": (0.001, "metres"),
    "mm": (0.001, "metres"),
    "centimetre": (0.01, "metres"),
    "centimeter": (0.01, "metres"),
    "cm": (0.01, "metres"),
    "metre": (1, "metres"),
    "meter": (1, "metres"),
    "m": (1, "metres"),
    "kilometre": (1000, "metres"),
    "kilometer": (1000, "metres"),
    "km": (1000, "metres"),
    # imperial lengths: matched to metric ones within IMPERIAL_TOLERANCE (see _found)
    "inch": (0.0254, "metres"),
    "foot": (0.3048, "metres"),
    "feet": (0.3048, "metres"),
    "ft": (0.3048, "metres"),
    "yard": (0.9144, "metres"),
    "mile": (1609.344, "metres"),
    # imperial masses, matched to metric ones as imperial lengths are ("2.2 pounds" is "1
    # kg"). "20 pounds" of money is still found in "£20", word by word.
    "pound": (453.59237, "grams"),
    "lb": (453.59237, "grams"),
    "ounce": (28.349523125, "grams"),
    "oz": (28.349523125, "grams"),
    # a stone is 14 pounds, said in the singular after a count ("eleven stone"); "a stone"
    # and "stones" are things (_quantity)
    "stone": (6350.29318, "grams"),
    # areas, in square metres; acres and square miles, feet and yards matched to metric
    # areas as imperial lengths are to metric ones ("2.5 acres" is "1 hectare")
    "square metre": (1, "m2"),
    "square meter": (1, "m2"),
    "square kilometre": (1_000_000, "m2"),
    "square kilometer": (1_000_000, "m2"),
    "hectare": (10_000, "m2"),
    "acre": (4046.8564224, "m2"),
    "square mile": (2_589_988.110336, "m2"),
    "square foot": (0.09290304, "m2"),
    "square feet": (0.09290304, "m2"),
    "square yard": (0.83612736, "m2"),
    # speeds, in metres per second; miles per hour matched to metric speeds as imperial
    # lengths are to metric ones. A plural inside the unit is listed as written.
    **{unit: (1609.344 / 3600, "m/s") for unit in _MPH},
    **{unit: (1852 / 3600, "m/s") for unit in _KNOTS},
    **{
        unit: (1 / 3.6, "m/s")
        for unit in (
            "km/h",
            "kmh",
            "kph",
            "km per hour",
            "kilometre per hour",
            "kilometres per hour",
            "kilometer per hour",
            "kilometers per hour",
            "kilometres an hour",
            "kilometers an hour",
        )
    },
    **{
        unit: (1.0, "m/s")
        for unit in (
            "m/s",
            "metre per second",
            "metres per second",
            "meter per second",
            "meters per second",
        )
    },
}
_IMPERIAL = frozenset(
    {"inch", "foot", "feet", "ft", "yard", "mile", "pound", "lb", "ounce", "oz", "stone", *_MPH}
    | {"acre", "square mile", "square foot", "square feet", "square yard"}
)
# A length converted between imperial and metric units is nearly always rounded ("30 feet"
# is "about 9 metres"): such a pair matches when the values are within this share of each
# other. Within one system, values match only when equal.
IMPERIAL_TOLERANCE = 0.025
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
# Fractions of a unit ("three quarters of an hour", "an eighth of a mile", "two thirds of a
# litre") and after a whole number or a unit ("two and a quarter hours", "an hour and three
# quarters"). "half" and "quarter" may also stand before the unit ("a quarter mile", "a
# half-hour"); the others only with "of" ("a third day" is an ordinal).
_DENOMINATORS = {
    "third": 3,
    "quarter": 4,
    "fifth": 5,
    "sixth": 6,
    "eighth": 8,
    "tenth": 10,
    "hundredth": 100,
    "thousandth": 1000,
}
_FRACTIONS: dict[str, float] = {"half": 0.5, "a half": 0.5}
for _word, _parts in _DENOMINATORS.items():
    _article = "an" if _word[0] in "aeiou" else "a"
    _FRACTIONS.update({f"{_article} {_word}": 1 / _parts, f"one {_word}": 1 / _parts})
    _FRACTIONS.update(
        {
            f"{w} {_word}s": int(n) / _parts
            for w, n in _NUMBER_WORDS.items()
            if 1 < int(n) < min(_parts, 10)
        }
    )
_FRACTION = "|".join(sorted(_FRACTIONS, key=len, reverse=True))
_BEFORE_UNIT = r"half|a half|a quarter|one quarter|three[\s-]quarters?"  # "a quarter mile"
# What may follow "and" after a whole number or a unit: "two and a quarter hours".
_AND_PART = r"a half|a quarter|three quarters|a third|two thirds"
_COUNT = r"\d+(?:\.\d+)?|" + "|".join(
    sorted((k for k in _NUMBER_WORDS if k not in _SCALES and k != "dozen"), key=len, reverse=True)
)
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))
_SCALE = "|".join(_SCALES)
# Between a count and its unit: nothing after digits ("5g"), a space or hyphen after words
# ("a gram", "ten-metre"; "ages" is no gram, "tens" no seconds).
_COUNT_GAP = r"(?:(?<=\d)[\s-]*|[\s-]+)"
_QUANTITY = re.compile(
    rf"(?<![\w.])(?P<minus>-|minus )?(?:"
    rf"(?P<whole>{_COUNT}) and (?P<part>{_AND_PART})(?:[\s-]+(?P<scale1>{_SCALE}))?"
    rf"|(?P<frac>{_FRACTION})(?: of)? an?"
    rf"|(?P<before>{_BEFORE_UNIT})(?=[\s-]+(?:{_UNIT})\b)"
    rf"|(?P<one>an?|one)(?=[\s-]+(?:{_UNIT})s?[\s-]+and (?:{_AND_PART})\b)"
    rf"|(?P<count>{_COUNT}|an?)(?:[\s-]+(?P<scale2>{_SCALE}))?"
    rf")(?:{_COUNT_GAP}(?:(?:full|whole)\s+)?(?P<unit>{_UNIT})(?:e?s)?\b"
    rf"(?: and (?P<andpart>{_AND_PART})\b)?)?"
)


def _fraction(words: str) -> float:
    """The value of a fraction in words: "a quarter" 0.25, "two thirds" 0.667."""
    words = " ".join(words.replace("-", " ").split())
    return _FRACTIONS.get(words) or _FRACTIONS[words + "s"]


def _number(word: str) -> float:
    return 1.0 if word in ("a", "an") else float(_NUMBER_WORDS.get(word) or word)


def _quantity(m: re.Match[str]) -> str | None:
    """The key of a quantity phrase: "q:<value> <base unit>" ("q~:" for an imperial
    unit, "q^:" for a nautical one), or "<value>" for a number with a scale word; None when
    the match is a plain number (matched word by word)."""
    unit = m.group("unit")
    if m.group("whole") is not None:
        value = _number(m.group("whole")) + _fraction(m.group("part"))
        scale = m.group("scale1")
    elif m.group("frac") is not None or m.group("before") is not None:
        if unit is None:
            return None
        value, scale = _fraction(m.group("frac") or m.group("before")), None
    elif m.group("one") is not None:
        value, scale = 1.0, None
    else:
        value, scale = _number(m.group("count")), m.group("scale2")
        if unit is None and scale is None:
            return None
    if m.group("andpart"):
        value += _fraction(m.group("andpart"))
    value *= _SCALES[scale] if scale else 1
    if unit == "stone" and (m.group(0).endswith("s") or m.group("count") in ("a", "an")):
        return None  # "two stones", "a stone wall": things, not a weight
    if unit == "degree" and m.group("count") in ("a", "an"):
        return None  # "a degree in law"
    if unit is None:
        return _plain(value)  # matched as a number, as digits are
    factor, base = _UNITS[unit]
    if unit in _IMPERIAL:
        return f"q~:{_plain(value * factor)} {base}"
    if unit in _KNOTS:
        return f"q^:{_plain(value * factor)} {base}"
    if base == "celsius":  # below zero when written so ("-18 °C", "minus 4 degrees")
        value = -value if m.group("minus") else value
        celsius = (value - 32) * 5 / 9 if unit in _FAHRENHEIT else value
        return f"q:{_plain(round(celsius, 1))} celsius"
    return f"q:{_plain(value * factor)} {base}"


def _plain(value: float) -> str:
    text = f"{round(value, 6):f}".rstrip("0").rstrip(".")
    return text or "0"


# Words of four letters that end in s and are no plurals (or whose stem is another word).
_NOT_PLURAL = frozenset({"news", "lens", "bias", "does", "goes", "yes", "ours", "mars", "oops"})


def singular(word: str) -> str:
    """The word without an English plural ending: "avocados" -> "avocado", "cities" ->
    "city", "boxes" -> "box", "bags" -> "bag". Words of three letters or fewer, words
    ending in -ss, -us or -is ("glass", "virus", "analysis") and a few of four that are no
    plurals ("news", "lens", "does") are kept as they are. Only a matching key: both sides
    of a comparison go through it, so an odd stem ("ladies" -> "lady") is harmless."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if len(word) == 4 and word in _NOT_PLURAL:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    return word[:-1]


# American and British spelling of a word are one key: "color" is found in "colour",
# "organize" in "organise", "center" in "centre", "traveled" in "travelled", "gray" in
# "grey", "pediatric" in "paediatric"; and a few everyday words the two write differently
# ("fall" and "autumn", "diaper" and "nappy"). Both sides of a comparison are folded, so a
# folded form need not be a word ("contour" folds to "contor", as "contor" would). Each
# rule folds a regular ending only where no other word of a different meaning takes the
# folded form ("timbre" would be "timber", so -bre is listed word by word); the rest is a
# list, each word under its own spelling, its plural found through `singular`.
_SPELLING_PAIRS = """
    grey:gray tyre:tire kerb:curb plough:plow aluminium:aluminum doughnut:donut
    programme:program draught:draft jewellery:jewelry pyjama:pajama mould:mold mouldy:moldy
    moult:molt smoulder:smolder axe:ax licence:license defence:defense offence:offense
    pretence:pretense practise:practice practised:practiced practising:practicing
    sceptic:skeptic sceptical:skeptical scepticism:skepticism manoeuvre:maneuver
    manoeuvred:maneuvered manoeuvring:maneuvering sulphur:sulfur artefact:artifact
    cosy:cozy ageing:aging judgement:judgment acknowledgement:acknowledgment enrol:enroll
    enrolment:enrollment fulfil:fulfill fulfilment:fulfillment instalment:installment
    skilful:skillful wilful:willful distil:distill speciality:specialty
    aeroplane:airplane yoghurt:yogurt moustache:mustache omelette:omelet whisky:whiskey
    mum:mom cheque:check odour:odor fibre:fiber sabre:saber calibre:caliber sombre:somber
    meagre:meager ochre:ocher fuelled:fueled fuelling:fueling dialled:dialed
    dialling:dialing woollen:woolen woolly:wooly mollusc:mollusk pedlar:peddler
    autumn:fall apartment:flat elevator:lift truck:lorry sidewalk:pavement
    gasoline:petrol diaper:nappy stroller:pushchair faucet:tap flashlight:torch
    zucchini:courgette eggplant:aubergine cilantro:coriander arugula:rocket movie:film
    vacation:holiday soccer:football freeway:motorway restroom:toilet garbage:rubbish
    trash:rubbish sweater:jumper windshield:windscreen wrench:spanner ladybug:ladybird
    railroad:railway mailman:postman takeout:takeaway cornstarch:cornflour
"""
_SPELLINGS = {a: b for a, b in (pair.split(":") for pair in _SPELLING_PAIRS.split())}
_SPELLING_RULES = (
    # colour, colours, coloured, favourite, honourable, neighbourhood -> color ...
    (
        re.compile(
            r"([a-z]{3,})our(s|ed|ing|ite|ites|able|ably|al|ally|ful|fully|less|er|ers|hood|hoods|y|ist|ists)?"
        ),
        r"\1or\2",
    ),
    # organize, organization, realized -> organise ...; analyze -> analyse
    (re.compile(r"([a-z]{4,})iz(e|es|ed|ing|er|ers|ation|ations|able)"), r"\1is\2"),
    (re.compile(r"([a-z]{3,})yz(e|es|ed|ing|er|ers)"), r"\1ys\2"),
    # centre, centres, centred, centring; theatre -> center ...
    (re.compile(r"([a-z]{2,})tre(s?)"), r"\1ter\2"),
    (re.compile(r"([a-z]{2,})tr(ed|ing)"), r"\1ter\2"),
    # catalogue, dialogues, catalogued -> catalog ...
    (re.compile(r"([a-z]{4,})ogue(s?)"), r"\1og\2"),
    (re.compile(r"([a-z]{4,})ogued"), r"\1oged"),
    # travelled, cancelling, labeller, counsellor, marvellous -> traveled ... (the stem has
    # two vowels apart, so "filled", "called" and "smelling" keep their double l)
    (re.compile(r"([a-z]*[aeiou][^aeiou]+[aeiou])ll(ed|ing|er|ers|or|ors|ous)"), r"\1l\2"),
)
# paediatric, haemorrhage, anaemia, oestrogen, foetus, diarrhoea -> pediatric ...
_SPELLING_PARTS = (
    ("paed", "ped"),
    ("haem", "hem"),
    ("aemia", "emia"),
    ("anaes", "anes"),
    ("oesoph", "esoph"),
    ("oestr", "estr"),
    ("foet", "fet"),
    ("rrhoea", "rrhea"),
    ("gynaec", "gynec"),
)


@functools.lru_cache(maxsize=8192)
def spelling(word: str) -> str:
    """One spelling for the American and British forms of a case-folded word (see
    _SPELLINGS): "colours" -> "colors", "organised" -> "organised", "organized" ->
    "organised", "centre" -> "center", "autumn" -> "fall". Other words are returned as
    they are."""
    listed_as = _SPELLINGS.get(word) or _SPELLINGS.get(singular(word))
    if listed_as is not None:
        return listed_as
    for pattern, repl in _SPELLING_RULES:
        folded = pattern.fullmatch(word)
        if folded is not None:
            return folded.expand(repl)
    for british, american in _SPELLING_PARTS:
        if british in word:
            return word.replace(british, american)
    return word


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def _key(word: str) -> str:
    ordinal = _ORDINAL.fullmatch(word)  # "4th" is "4", as in "July 4th" and "4 July"
    if ordinal:
        return ordinal.group(1)
    return _NUMBER_WORDS.get(word) or singular(spelling(_UNIT_WORDS.get(word) or word))


_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ONES = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_COMPOUND = re.compile(rf"\b({'|'.join(_TENS)})[\s-]({'|'.join(_ONES)})\b")


# A folded text keeps, for each of its characters, the span of the original text it stands
# for, so that a phrase found in the folded text can be found in the original.
Origin = list[tuple[int, int]]

_SYMBOL = re.compile("|".join(re.escape(symbol) for symbol, _ in _SYMBOLS))
_SYMBOL_WORDS = dict(_SYMBOLS)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")  # 1,000 -> 1000


def _sub(
    pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str], text: str, origin: Origin
) -> tuple[str, Origin]:
    """pattern.sub(repl, text), and the origin of each character of the result: a
    replacement stands for the whole of what it replaced."""
    parts: list[str] = []
    spans: Origin = []
    at = 0
    for m in pattern.finditer(text):
        new = repl(m)
        parts.append(text[at : m.start()])
        spans += origin[at : m.start()]
        if new == m.group(0):
            spans += origin[m.start() : m.end()]
        elif new:
            spans += [(origin[m.start()][0], origin[m.end() - 1][1])] * len(new)
        parts.append(new)
        at = m.end()
    parts.append(text[at:])
    return "".join(parts), spans + origin[at:]


# A number in words with "hundred", or a scale word and more after it, is its digits:
# "three hundred and sixty-six" -> "366", "two thousand five hundred" -> "2500". (A count
# before a scale word alone, "two thousand", is read as a quantity; "twenty-three" by
# _COMPOUND.)
_ONE_TO_NINE = "|".join(_ONES)
_TEENS = "|".join(w for w, n in _NUMBER_WORDS.items() if 10 <= int(n) <= 19 and w != "dozen")
_SMALL = rf"(?:(?:{'|'.join(_TENS)})(?:[\s-](?:{_ONE_TO_NINE}))?|{_TEENS}|{_ONE_TO_NINE})"
_HUNDREDS = rf"(?:(?:{_ONE_TO_NINE}|an?)\s+hundred(?:\s+(?:and\s+)?{_SMALL})?)"
_TRIPLE = rf"(?:{_HUNDREDS}|{_SMALL})"
_CARDINAL = re.compile(
    rf"\b(?:{_TRIPLE}\s+(?:thousand|million)(?:,?\s+(?:and\s+)?{_TRIPLE})?|{_HUNDREDS})\b"
)


def _cardinal(m: re.Match[str]) -> str:
    """The digits of a number written in words (_CARDINAL), or the words as they are when
    they are only a count and a scale word ("two thousand")."""
    words = re.findall(r"[a-z]+", m.group(0))
    if "hundred" not in words and words[-1] in ("thousand", "million"):
        return m.group(0)
    total = current = 0
    for w in words:
        if w == "hundred":
            current = (current or 1) * 100
        elif w in ("thousand", "million"):
            total += (current or 1) * (1000 if w == "thousand" else 1_000_000)
            current = 0
        elif w in ("a", "an"):
            current += 1
        elif w != "and":
            current += int(_NUMBER_WORDS[w])
    return str(total + current)


# A no-break, thin or other typographic space reads as a space: "March\u00a01,\u00a02018" is
# a date.
_SPACE = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")

# A unit word, singular or plural, and a count with its unit ("ten metres", "a mile").
_UNIT_WORD = rf"(?:{_UNIT})(?:e?s)?"
_COUNTED = rf"(?:{_COUNT}|an?){_COUNT_GAP}{_UNIT_WORD}"

# A hedge after a quantity reads as the one before it: "ten metres and a bit" is "just over
# ten metres"; "14 km, roughly", "14 km or so", "14 km, give or take (a kilometre)" and
# "9-ish miles" are "about 14 km" and "about 9 miles".
_AND_A_BIT = re.compile(rf"(?<![\w.])({_COUNTED}) and a bit\b")
_AFTER_HEDGE = (
    rf"or so|or thereabouts|more or less|roughly|approximately|or near enough|"
    rf"give or take(?:\s+(?:an?|{_COUNT})\s+{_UNIT_WORD})?"
)
_COUNTED_AND = rf"(?:{_COUNT}) and (?:{_AND_PART})[\s-]+{_UNIT_WORD}|{_COUNTED}"
_ROUGHLY_AFTER = re.compile(rf"(?<![\w.])({_COUNTED_AND}),?\s+(?:{_AFTER_HEDGE})(?![\w-])")
# The words of a quantity as written, without a hedge after it ("315 ft, give or take").
_HEDGE_AFTER = re.compile(rf",?\s+(?:{_AFTER_HEDGE}|and a bit)$", re.IGNORECASE)
_ISH = re.compile(rf"(?<![\w.])({_COUNTED}|{_COUNT})-?ish\b")  # "nine-ish", "25 miles-ish"
_INCH_COUNT = "eleven|ten|nine|eight|seven|six|five|four|three|two|one"
# Feet and inches said the everyday way: "six foot three", "5 ft 10", "5'10\"" are "6 feet 3
# inches" and "5 feet 10 inches" (the inches, up to 11, need no unit after the feet).
_FEET_INCHES = re.compile(
    rf"(?<![\w.])(\d+|{_INCH_COUNT})\s*(?:foot|feet|ft\.?|')\s*(1[01]|\d(?:\.\d+)?|{_INCH_COUNT})"
    r"(?![\w,/:]|\.\d)"
    rf"(?:\s*(?:inches|inch|in\b\.?|\"|''|\u201d))?(?!\s*(?:{_UNIT_WORD})\b)"
)

# "Exactly" or "precisely" next to a quantity says it is not hedged, which a quantity
# without a hedge already is: "one quarter of a mile, exactly" is "one quarter of a mile".
_EXACTLY = re.compile(
    rf"\b({_UNIT_WORD}),? (?:exactly|precisely)\b|\b(?:exactly|precisely) (?={_COUNTED}\b)"
)

# Other ways of writing a count, a price or a share of the week, folded to one spelling:
# "per cent" is "percent" (as "%" is); "half a dozen" is "6" and "two dozen" "24" ("a
# dozen" is already 12); a price in pence is in pounds ("150p" and "a pound fifty" are
# "£1.50", "75 pence" is "£0.75"); "weekdays" and "every weekday" are "monday to friday",
# "weekends" "saturday and sunday", and a range of days in short ("mon-fri") is spelt out;
# "every day except Sunday" is "monday to saturday".
# A singular weekend ("at the weekend", "this weekend") is one weekend, not its days.
_PER_CENT = re.compile(r"\bper[\s-]cent\b")
_DOZENS = re.compile(rf"\b(?:(half) an?|({_COUNT}|an?)) (baker['\u2019]s )?dozen\b")


def _dozens(m: re.Match[str]) -> str:
    dozen = 13 if m.group(3) else 12  # "a baker's dozen" is thirteen
    return _plain(dozen / 2) if m.group(1) else _plain(_number(m.group(2)) * dozen)


_PENCE_COUNT = r"[1-9]\d?|" + "|".join(k for k, v in _NUMBER_WORDS.items() if 0 < int(v) < 100)
_PENCE = re.compile(rf"(?<![\w.])(\d+)p\b|\b(\d+|{_PENCE_COUNT}) pence\b")
_POUNDS_AND_PENCE = re.compile(
    rf"\b(an?|{_COUNT}) pounds? (?:and )?({_PENCE_COUNT})(?: pence| p)?\b"
    rf"(?![\s-]+(?:{_UNIT})(?:e?s)?\b|[.,]\d)"
)


# How often, as one phrase whose key is its period ("every:<value> <base unit>"): "twice a
# year" is every 6 months, "three times a week" every 56 hours, "fortnightly", "every
# other week" and "every two weeks" every 2 weeks, "monthly" and "every month" every
# month; "every 90 minutes" every 5,400 seconds. So "every six months" is found in "twice a
# year", and shown as it ("Twice a year.") where it stands as a phrase of its own (_spans).
# A bare "a year" ("£5 a year") stays a quantity.
_PERIODS = ("minute", "hour", "day", "week", "fortnight", "month", "year")
_PERIOD = "|".join(_PERIODS)
_HOW_OFTEN = {
    "hourly": ("1", "hour"),
    "daily": ("1", "day"),
    "nightly": ("1", "day"),
    "weekly": ("1", "week"),
    "fortnightly": ("1", "fortnight"),
    "monthly": ("1", "month"),
    "quarterly": ("3", "month"),
    "yearly": ("1", "year"),
    "annually": ("1", "year"),
}
_FREQUENCY = re.compile(
    rf"\b(?:(?P<once>once|twice|(?P<times>\d+(?:\.\d+)?|{_PENCE_COUNT}) times) "
    rf"(?:a|an|per|each|every) (?P<per>{_PERIOD})"
    rf"|(?:once )?(?:every|each) (?:(?P<other>other) |(?P<count>\d+(?:\.\d+)?|{_PENCE_COUNT}) )?"
    rf"(?P<unit>{_PERIOD})s?"
    rf"|(?P<adverb>{'|'.join(_HOW_OFTEN)}))\b"
)


def _frequency(m: re.Match[str]) -> str | None:
    """The key of a _FREQUENCY phrase; None for a count of none ("0 times a day")."""
    if m.group("adverb"):
        count, unit = _HOW_OFTEN[m.group("adverb")]
        every = float(count)
    elif m.group("per"):
        once = m.group("once")
        times = 1.0 if once == "once" else 2.0 if once == "twice" else _number(m.group("times"))
        if not times:
            return None
        every, unit = 1.0 / times, m.group("per")
    else:
        every = 2.0 if m.group("other") else _number(m.group("count") or "1")
        unit = m.group("unit")
    factor, base = _UNITS[unit]
    return f"every:{_plain(factor * every)} {base}"


# A year said in words, as its two halves: "nineteen forty-seven" (after the tens and ones
# are digits: "nineteen 47") is 1947, "fourteen fifteen" 1415, "nineteen thirty" 1930,
# "eighteen oh five" 1805, "fifteen hundred" 1500. Centuries from thirteen to twenty only:
# "eleven thirty" and "twelve fifteen" are times.
_CENTURIES = ("thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS_OR_TEEN = "|".join((_TEENS, *_TENS))
_YEAR_WORDS = re.compile(
    rf"\b({'|'.join((*_CENTURIES, 'twenty'))})[ -]"
    rf"(?:([1-9]\d)|({_TENS_OR_TEEN})|oh[ -]({_ONE_TO_NINE})|(hundred))\b"
    # not "nineteen hundred and two", "... 47 5", nor a count before a compound ("fifteen
    # twenty-minute walks")
    rf"(?![ -](?:and |{_ONE_TO_NINE}|[1-9]\d)|-[a-z])"
)


def _year_words(m: re.Match[str]) -> str:
    century = int(_NUMBER_WORDS[m.group(1)])
    if m.group(3):
        return f"{century}{_NUMBER_WORDS[m.group(3)]}"
    rest = m.group(2) or (f"0{_NUMBER_WORDS[m.group(4)]}" if m.group(4) else "00")
    return f"{century}{rest}"


def _pence(m: re.Match[str]) -> str:
    pence = int(m.group(1) or _number(m.group(2)))
    return f"pounds {pence // 100}.{pence % 100:02d}"


def _pounds_and_pence(m: re.Match[str]) -> str:
    return f"pounds {_plain(_number(m.group(1)))}.{int(_number(m.group(2))):02d}"


_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SHORT_DAYS = {"tues": "tuesday", "thur": "thursday", "thurs": "thursday"}
_SHORT_DAYS.update({d[:3]: d for d in _DAY_NAMES})
_SHORT_DAY = "|".join(sorted(_SHORT_DAYS, key=len, reverse=True))
_WEEK_PARTS = {"weekdays": "monday to friday", "every weekday": "monday to friday"}
_WEEK_PARTS["weekends"] = "saturday and sunday"
_WEEK_PARTS["weekday"] = "monday to friday"  # "weekday mornings"
_WEEK_PARTS["weekend"] = "saturday and sunday"  # "weekend afternoons"
# Every day but one is the other six, from the day after it: "every day except Sunday" is
# "monday to saturday", "daily apart from Mondays" "tuesday to sunday".
_DAY_NAME = "|".join(_DAY_NAMES)
_WEEK = re.compile(
    r"\b(?:weekdays|every weekday|weekends)\b"
    r"|\bweek(?:day|end)(?= (?:morning|afternoon|evening|night)s?\b)"
    rf"|\b(?P<first>{_SHORT_DAY})\.?\s*(?:-|\u2013|to)\s*(?P<last>{_SHORT_DAY})\b"
    r"|\b(?:every day(?: of the week)?|daily)(?:,? (?:except|apart from)| but| bar)"
    rf"(?: on)? (?:a )?(?P<but>{_DAY_NAME})s?\b",
    re.IGNORECASE,
)


def _week(m: re.Match[str]) -> str:
    if m.group("first"):
        first, last = m.group("first").casefold(), m.group("last").casefold()
        return f"{_SHORT_DAYS[first]} to {_SHORT_DAYS[last]}"
    if m.group("but"):
        i = _DAY_NAMES.index(m.group("but").casefold())
        return f"{_DAY_NAMES[(i + 1) % 7]} to {_DAY_NAMES[(i - 1) % 7]}"
    return _WEEK_PARTS[" ".join(m.group(0).casefold().split())]


# A named day with a fixed date is that date: "Christmas Eve" is "24 December", "Bonfire
# Night 2026" the full date "5 November 2026". Days whose date moves (Easter, Mother's Day,
# the May Day bank holiday) or that are told differently (Twelfth Night, the 5th or the 6th
# of January; Independence Day, one per country) are left as words.
_NAMED_DAYS = {
    "new year's day": "1 january",
    "new year's eve": "31 december",
    "hogmanay": "31 december",
    "christmas eve": "24 december",
    "christmas day": "25 december",
    "boxing day": "26 december",
    "st stephen's day": "26 december",
    "st nicholas day": "6 december",
    "st nicholas' day": "6 december",
    "burns night": "25 january",
    "australia day": "26 january",
    "valentine's day": "14 february",
    "st valentine's day": "14 february",
    "leap day": "29 february",
    "st david's day": "1 march",
    "st patrick's day": "17 march",
    "lady day": "25 march",
    "april fools' day": "1 april",
    "april fool's day": "1 april",
    "st george's day": "23 april",
    "anzac day": "25 april",
    "may day": "1 may",
    "midsummer day": "24 june",
    "midsummer's day": "24 june",
    "juneteenth": "19 june",
    "canada day": "1 july",
    "bastille day": "14 july",
    "st swithin's day": "15 july",
    "michaelmas day": "29 september",
    "halloween": "31 october",
    "hallowe'en": "31 october",
    "all saints' day": "1 november",
    "all souls' day": "2 november",
    "bonfire night": "5 november",
    "guy fawkes night": "5 november",
    "guy fawkes day": "5 november",
    "armistice day": "11 november",
    "remembrance day": "11 november",
    "st andrew's day": "30 november",
}


def _day_name(name: str) -> str:
    """A named day as _NAMED_DAYS spells it: no apostrophes, "saint" and "st." as "st"."""
    name = re.sub(r"['\u2019]", "", " ".join(name.casefold().split()))
    return re.sub(r"^(?:saint|st\.) ", "st ", name)


_DAY_DATES = {_day_name(name): date for name, date in _NAMED_DAYS.items()}
_NAMED_DAY = re.compile(
    r"\b(?:"
    + "|".join(
        re.sub(r"^st\\ ", r"(?:st\.?|saint)\\ ", re.escape(name))
        .replace("'", "['\u2019]?")
        .replace("\\ ", r"\s+")
        for name in sorted(_NAMED_DAYS, key=len, reverse=True)
    )
    + r")(?!['\u2019\w])(?!\s+bank\b)",
    re.IGNORECASE,
)


def _named_date(m: re.Match[str]) -> str:
    return _DAY_DATES[_day_name(m.group(0))]


# The folding steps after case-folding, in order: typographic spaces as " ", unit symbols
# spelt out, "1,000" as "1000", numbers in words as digits ("three hundred and sixty-six",
# "twenty-three"), feet and inches with their units, a hedge after a quantity before it,
# "exactly" next to one left out;
# first, a named day as its date.
_FOLD_STEPS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (_SPACE, lambda m: " "),
    (_NAMED_DAY, _named_date),
    (_WEEK, _week),
    (_SYMBOL, lambda m: _SYMBOL_WORDS[m.group(0)]),
    (_PER_CENT, lambda m: "percent"),
    (_THOUSANDS, lambda m: ""),
    (_CARDINAL, _cardinal),
    (_COMPOUND, lambda m: str(int(_NUMBER_WORDS[m.group(1)]) + int(_NUMBER_WORDS[m.group(2)]))),
    (_DOZENS, _dozens),
    (_YEAR_WORDS, _year_words),
    (_POUNDS_AND_PENCE, _pounds_and_pence),  # before pence: "two pounds eighty-five pence"
    (_PENCE, _pence),
    (_FEET_INCHES, lambda m: f"{m.group(1)} feet {m.group(2)} inches"),
    (_AND_A_BIT, lambda m: f"just over {m.group(1)}"),
    (_ROUGHLY_AFTER, lambda m: f"about {m.group(1)}"),
    (_ISH, lambda m: f"about {m.group(1)}"),
    (_EXACTLY, lambda m: m.group(1) or ""),
)


def _fold(text: str) -> str:
    """The text case-folded, unit symbols spelt out, "1,000" as "1000" and numbers in words
    as digits."""
    folded = text.casefold()
    for pattern, repl in _FOLD_STEPS:
        folded = pattern.sub(repl, folded)
    return folded


def _folded(text: str) -> tuple[str, Origin]:
    """_fold(text), with the origin of each character (slower: only for short texts and
    for the passages a quantity is looked up in)."""
    chars = [(c.casefold(), i) for i, c in enumerate(text)]
    folded = "".join(c for c, _ in chars)
    origin = [(i, i + 1) for c, i in chars for _ in c]
    for pattern, repl in _FOLD_STEPS:
        folded, origin = _sub(pattern, repl, folded, origin)
    return folded, origin


# Full dates are one word whose key is the date, however it is written: "15 April 2025",
# "April 15th, 2025", "2025-04-15", "15/04/2025". A date in numbers with the year last is
# read day first ("01/10/2026" is 1 October), or month first when only that is a date
# ("10/31/2026"); in evidence, a date that could be either is found both ways.
_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for m in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))

# A range of days or months in the evidence holds each day or month in it: "open Tuesday to
# Saturday" gives Thursday, "from the beginning of June until the end of August" July,
# "Nov-Feb" December and January (a range runs on round the week or the year), "between
# Monday and Wednesday" Tuesday. Only the evidence is read so: a text that names the range's
# ends names nothing between them. Months are read with a capital only ("may" and "march"
# are words too); days either way, and so in the folded evidence, where "weekdays" and
# "every day except Sunday" are already ranges of days (_WEEK).
_MONTH_NAMES = tuple(next(m for m in _MONTHS if _MONTHS[m] == i) for i in range(1, 13))
_CAPITAL_MONTH = "|".join(sorted((m.title() for m in _MONTHS), key=len, reverse=True))
_SPAN_END = r"(?:(?:the )?(?:beginning|start|middle|end) of |early |late |mid-?)?"
_SPAN_NAME = (
    rf"(?:(?i:{'|'.join(sorted((*_DAY_NAMES, *_SHORT_DAYS), key=len, reverse=True))})s?"
    rf"|{_CAPITAL_MONTH})\.?"
)
_SPAN = re.compile(
    rf"\b{_SPAN_END}(?P<a>{_SPAN_NAME})(?:\s*[-\u2013]\s*|\s+(?:to|until|till|through|thru)\s+)"
    rf"{_SPAN_END}(?P<b>{_SPAN_NAME})(?!\w)"
    rf"|\bbetween {_SPAN_END}(?P<c>{_SPAN_NAME}) and {_SPAN_END}(?P<d>{_SPAN_NAME})(?!\w)"
)


def _span_end(name: str) -> tuple[tuple[str, ...], int] | None:
    """(the names of its kind, the index of the day or month) of a range's end."""
    name = name.rstrip(".").casefold()
    for word in (name, name[:-1] if name.endswith("s") else name):
        day = _SHORT_DAYS.get(word, word)
        if day in _DAY_NAMES:
            return _DAY_NAMES, _DAY_NAMES.index(day)
        if word in _MONTHS:
            return _MONTH_NAMES, _MONTHS[word] - 1
    return None


def _span_names(m: re.Match[str]) -> list[str]:
    """Each day or month of a range (_SPAN), from its first end to its last."""
    first = _span_end(m.group("a") or m.group("c"))
    last = _span_end(m.group("b") or m.group("d"))
    if first is None or last is None or first[0] is not last[0]:
        return []
    names, i = first
    return [names[(i + k) % len(names)] for k in range((last[1] - i) % len(names) + 1)]


_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
# A year is four digits, or two after an apostrophe ("3rd May '22") or in a date written
# with slashes ("12/12/12"): a two-digit year is read as strptime's %y reads it, 69-99 as
# 1969-1999 and 00-68 as 2000-2068.
_YEAR = r"(?:\d{4}|['\u2019]\d{2})"
_DATE = re.compile(
    rf"\b(?:(?P<d1>{_DAY})(?: of)? (?P<m1>{_MONTH})\.?,? (?P<y1>{_YEAR})"
    rf"|(?P<m2>{_MONTH})\.? (?P<d2>{_DAY}),? (?P<y2>{_YEAR})"
    rf"|(?P<y3>\d{{4}})-(?P<m3>[01]?\d)-(?P<d3>[0-3]?\d)"
    rf"|(?<![\d/.-])(?P<a4>[0-3]?\d)(?P<sep>[/.-])(?P<b4>[0-3]?\d)(?P=sep)"
    rf"(?P<y4>\d{{4}}|(?<=/)\d{{2}}(?![\d/])))\b"
)


def _full_year(year: str) -> str:
    """A year as four digits: "'22" and "22" are 2022, "'69" is 1969 (strptime's %y)."""
    digits = year.lstrip("'\u2019")
    if len(digits) != 2:
        return digits
    return f"{1900 + int(digits) if int(digits) >= 69 else 2000 + int(digits)}"


_ORDINAL_WORDS = {
    w: i
    for i, w in enumerate(
        [
            *("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"),
            *("ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth"),
            *("fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"),
        ],
        start=1,
    )
}
_ORDINAL_WORDS.update({f"twenty-{w}": 20 + i for w, i in _ORDINAL_WORDS.items() if i < 10})
_ORDINAL_WORDS.update({"thirtieth": 30, "thirty-first": 31})
_ORDINAL_WORD = "|".join(sorted(_ORDINAL_WORDS, key=len, reverse=True))
# A day written as a word, next to a month: "the fourth of july", "july fourth".
_DAY_WORD = re.compile(
    rf"\b(?:({_ORDINAL_WORD})(?= of (?:{_MONTH})\b)|((?:{_MONTH}) )({_ORDINAL_WORD}))\b"
)


def _day_digits(m: re.Match[str]) -> str:
    if m.group(1):
        return f"{_ORDINAL_WORDS[m.group(1)]}th"
    return f"{m.group(2)}{_ORDINAL_WORDS[m.group(3)]}th"


def _read(text: str) -> tuple[str, Origin]:
    """The text folded (_folded) and with days written as words in digits ("the fourth of
    july" -> "the 4th of july"), with the origin of each character."""
    return _sub(_DAY_WORD, _day_digits, *_folded(text))


def _prepared(text: str) -> str:
    """_read(text) without the origins: what words are read from."""
    return _DAY_WORD.sub(_day_digits, _fold(text))


def _numeric_dates(m: re.Match[str]) -> list[str]:
    """The dates "a/b/yyyy" can be: day first, then month first; none when neither is."""
    a, b, year = int(m.group("a4")), int(m.group("b4")), _full_year(m.group("y4"))
    out = [
        f"date:{year}-{mo:02d}-{d:02d}"
        for d, mo in ((a, b), (b, a))
        if 1 <= d <= 31 and 1 <= mo <= 12
    ]
    return list(dict.fromkeys(out))


def _date(m: re.Match[str]) -> str:
    if m.group("y4"):
        dates = _numeric_dates(m)
        return dates[0] if dates else m.group(0)
    if m.group("y3"):
        year, month, day = m.group("y3"), int(m.group("m3")), m.group("d3")
    else:
        name = m.group("m1") or m.group("m2")
        year, month, day = (
            m.group("y1") or m.group("y2"),
            _MONTHS[name],
            m.group("d1") or m.group("d2"),
        )
    return f"date:{_full_year(year)}-{month:02d}-{int(re.sub(r'[a-z]', '', day)):02d}"


# Clock times are one word whose key is the time, however it is written: "2.40 pm",
# "2:40pm", "14:40", "twenty to three in the afternoon", "eleven o'clock", "half past
# eleven", "noon". A time whose half of the day is not said ("twenty to three", "11:30") is
# either reading, and so is a number written like one ("at 11.30"): "twenty to three" is
# found in "2.40 pm", not in "2.45 pm"; "11 am" is not found in "11 pm".
_HOUR = rf"(?:1[0-2]|0?[1-9]|{'|'.join((*_ONES, 'ten', 'eleven', 'twelve'))})"
_DAY_PART = r"in the (?:morning|afternoon|evening)|at night"
_PARTS = rf"\s*[ap](?:\.m\b\.?|m\b)|\s+(?:{_DAY_PART})"
# After a time said as one ("twenty past five", "7.30", "six o'clock"), "each morning" or
# "every evening" says its half of the day too; not after a bare number ("take two each
# morning" is a dose).
_MERIDIEM = (
    r"\s*(?P<mer>[ap])(?:\.m\b\.?|m\b)"
    rf"|\s+(?P<part>{_DAY_PART}|(?:each|every) (?:morning|afternoon|evening|night))"
)
# "ten to twelve" is a time only where a time can end: not "ten to twelve weeks".
_TIME_END = (
    rf"(?= o['\u2019]clock|{_PARTS}|\s*(?:[^\w\s]|$)"
    r"|\s+(?:on|at|and|or|sharp|every|each|so|but|when|then|to|until|till|today|tonight"
    r"|tomorrow|this|next|for|with|from|is|was|will)\b)"
)
# "at 11.30": a number written like a time after a word that introduces one, and no unit
# after it ("by 1.25 metres" is a length)
_AT = "(?:" + "|".join(rf"(?<=\b{w} )" for w in ("at", "until", "till", "from", "by")) + ")"
_TIME = re.compile(
    r"(?<![\w.:])(?:"
    rf"(?P<mins>five|ten|twenty|25|a quarter|quarter|half) (?P<rel>past|to) (?P<h1>{_HOUR})"
    rf"{_TIME_END}(?: o['\u2019]clock)?"
    rf"|(?P<h2>{_HOUR}) o['\u2019]clock"
    rf"|(?P<h3>{_HOUR})(?:[.:](?P<m3>[0-5]\d))?(?={_PARTS})"
    rf"|{_AT}(?P<h5>1[0-2]|0?[1-9])[.:](?P<m5>[0-5]\d)(?![\s-]*{_UNIT_WORD}\b)"
    r"|(?P<h4>[01]?\d|2[0-3]):(?P<m4>[0-5]\d)"
    r"|(?P<noon>noon|midday|midnight)"
    rf")(?:{_MERIDIEM})?(?![\w:])"
)
_MINUTES = {"five": 5, "ten": 10, "twenty": 20, "25": 25, "a quarter": 15, "quarter": 15}
_CLOCK_NUMBER = re.compile(r"(1[0-2]|0?[1-9])(?:[.:]([0-5]\d))?")


def _hour(word: str) -> int:
    return int(_NUMBER_WORDS.get(word, word))


def _time(m: re.Match[str]) -> str:
    """The key of a clock time (_TIME): "time:HH:MM" on the 24-hour clock, or "time?:H:MM"
    on the 12-hour clock when the half of the day is not said."""
    if m.group("noon"):
        return "time:00:00" if m.group("noon") == "midnight" else "time:12:00"
    if m.group("h4") is not None:
        hour, minute = int(m.group("h4")), int(m.group("m4"))
        if hour == 0 or hour > 12:
            return f"time:{hour:02d}:{minute:02d}"
    elif m.group("h1") is not None:
        hour, minute = _hour(m.group("h1")), _MINUTES.get(m.group("mins"), 30)
        if m.group("rel") == "to":
            hour, minute = (hour - 2) % 12 + 1, 60 - minute
    elif m.group("h5") is not None:
        hour, minute = int(m.group("h5")), int(m.group("m5"))
    else:
        hour, minute = _hour(m.group("h2") or m.group("h3")), int(m.group("m3") or 0)
    mer, part = m.group("mer"), m.group("part")
    digits = m.group("h3") or m.group("h4") or m.group("h5") or ""
    if mer is None and part is None:
        if digits.startswith("0") and len(digits) == 2:  # "05:20", as "17:20", is 24-hour
            return f"time:{hour:02d}:{minute:02d}"
        return f"time?:{hour}:{minute:02d}"
    pm = mer == "p" or (part is not None and not part.endswith("morning"))
    return f"time:{hour % 12 + (12 if pm else 0):02d}:{minute:02d}"


def _clock(key: str) -> set[str]:
    """The readings "HH:MM" on the 24-hour clock a key can stand for: one for a time with
    its half of the day, two for one without ("time?:2:40") and for a number of the evidence
    outside any time that could be one ("clock?:7" for "Let's make it 7", "clock?:11.30"),
    none for any other key."""
    if key.startswith("time:"):
        return {key[5:]}
    number = _CLOCK_NUMBER.fullmatch(key[7:]) if key.startswith("clock?:") else None
    if key.startswith("time?:") or number:
        hour, minute = (
            (int(number.group(1)), int(number.group(2) or 0))
            if number
            else (int(x) for x in key[6:].split(":"))
        )
        return {f"{hour % 12:02d}:{minute:02d}", f"{hour % 12 + 12:02d}:{minute:02d}"}
    return set()


def _loose_clock(folded: str, phrases: Sequence[tuple[int, int, str]]) -> set[str]:
    """Each number of a folded text outside its clock times (`phrases`: its _phrases) that
    could be one ("7", "11.30"), as the key "clock?:N"."""
    rest = folded
    for start, end, key in reversed(phrases):
        if key.startswith("time"):
            rest = rest[:start] + " " + rest[end:]
    return {f"clock?:{n}" for n in _NUMBER.findall(rest) if _CLOCK_NUMBER.fullmatch(n)}


def _same_share(key: str, other: str) -> bool:
    """Whether two share keys are within SHARE_TOLERANCE of each other."""
    if not (key.startswith("share:") and other.startswith("share:")):
        return False
    return abs(float(key[6:]) - float(other[6:])) <= SHARE_TOLERANCE


def _same_time(key: str, other: str) -> bool:
    """Whether two keys, one of them a clock time, can be the same time (_clock)."""
    if not (key.startswith("time") or other.startswith("time")):
        return False
    return bool(_clock(key) & _clock(other))


def _plain_words(folded: str) -> list[tuple[str, str]]:
    return [(w, _key(w)) for w in _WORD.findall(folded)]


# A share of a group said in words ("a quarter of the members", "half of them", "one in
# four adults", "one in every four", "9 out of 10") is one word whose key is its percentage
# ("share:25"), found where the evidence gives that share in words or as a percentage,
# rounded to the nearest whole percent ("a third of" in "33%"); a percentage in the
# evidence is found in the share's words too. A percentage stays words of its own ("25",
# "percent").
_SHARE_FRACTION = "|".join(k for k in sorted(_FRACTIONS, key=len, reverse=True))
_RATIO_COUNT = r"\d+|" + "|".join(k for k, v in _NUMBER_WORDS.items() if 0 < int(v) <= 20)
_SHARE = re.compile(
    rf"\b(?:(?P<frac>{_SHARE_FRACTION})(?= of\b)(?! of an?\b)"
    rf"|(?P<n>{_RATIO_COUNT}) (?:in|out of)(?: every)? (?P<d>{_RATIO_COUNT})\b"
    rf"(?![\s-]*{_UNIT_WORD}\b))"
)
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) percent\b")
SHARE_TOLERANCE = 0.5  # percentage points: "a third" (33.3%) is "33%", not "34%"


def _share(m: re.Match[str]) -> str | None:
    if m.group("frac"):
        value = 100 * _fraction(m.group("frac"))
    else:
        n, d = _number(m.group("n")), _number(m.group("d"))
        if not 0 < n <= d:
            return None
        value = 100 * n / d
    return f"share:{_plain(value)}"


def _share_words(folded: str, phrases: Sequence[tuple[int, int, str]]) -> set[str]:
    """The keys a text's shares and percentages offer beyond their words: each percentage
    as a share, and each share in words as its percentage's words."""
    out = {f"share:{_plain(float(m.group(1)))}" for m in _PERCENT.finditer(folded)}
    for _, _, key in phrases:
        if key.startswith("share:"):
            out |= {_plain(math.floor(float(key[6:]) + 0.5)), "percent"}
    return out


# A price is one word whose key is its value and currency, however it is written: "£1.50",
# "150p", "a pound fifty", "1.50 pounds" (in evidence), "$20", "20 dollars", "€7.50", "7.50
# euros", "twelve euros and fifty cents" ("money:pounds:1.5"), so a changed price is one
# word not found, not one figure of three. "20 pounds" in a claim stays a quantity (it may
# be a weight), found in "£20" word by word.
_CURRENCY = "pounds|dollars|euros"
_DIGITS = rf"\d+(?:\.\d+)?(?:\s+(?P<scale>{'|'.join(_SCALES)}))?"  # after a sign: "£1.50"
_AMOUNT = _DIGITS.replace(r"\d+(?:\.\d+)?", rf"(?:\d+(?:\.\d+)?|{_PENCE_COUNT})", 1)
_MONEY = re.compile(
    rf"(?<![\w.])(?:(?P<cur>{_CURRENCY})\s+(?P<v>{_DIGITS.replace('scale', 's1')})"
    rf"|(?P<v2>{_AMOUNT.replace('scale', 's2')})\s+(?P<cur2>dollars|euros)"
    rf"(?:\s+and\s+(?P<cents>{_PENCE_COUNT})(?:\s+(?:cents?|centimes?))?)?)(?!\w|\.\d)"
)
_POUNDS_AFTER = re.compile(rf"(?<![\w.])(?P<v>{_AMOUNT.replace('scale', 's1')}) pounds\b")
_MONEY_SIGNS = {"pounds": "\u00a3", "dollars": "$", "euros": "\u20ac"}
_PRICE = re.compile(rf"^[\u00a3$\u20ac]|\b(?:{_CURRENCY})\b")  # a price word (_money_word)


def _money_key(currency: str, amount: str, scale: str | None) -> str:
    value = _number(amount.split()[0]) * (_SCALES[scale] if scale else 1)
    return f"money:{currency}:{_plain(value)}"


def _money(m: re.Match[str]) -> str:
    if m.group("cur"):
        return _money_key(m.group("cur"), m.group("v"), m.group("s1"))
    key = _money_key(m.group("cur2"), m.group("v2"), m.group("s2"))
    if m.group("cents"):  # "12 euros and 50 cents"
        currency, value = key.split(":")[1:]
        return f"money:{currency}:{_plain(float(value) + _number(m.group('cents')) / 100)}"
    return key


def _money_word(key: str, written: str) -> str:
    """A price as it is listed when not found: with its sign when it was written with one
    ("£1.50", "$11225 million"), else as written ("20 dollars")."""
    currency, _, amount = written.partition(" ")
    return f"{_MONEY_SIGNS[currency]}{amount}" if currency in _MONEY_SIGNS else written


_BETWEEN_END = re.compile(r"\bbetween\s+$")


def _phrases(folded: str) -> list[tuple[int, int, str]]:
    """(start, end, key) of each price, frequency, full date, clock time, quantity and share
    of a folded text, in order."""
    spans = [(m.start(), m.end(), _money(m)) for m in _MONEY.finditer(folded)]
    spans += [
        (m.start(), m.end(), key)
        for m in _FREQUENCY.finditer(folded)
        if (key := _frequency(m)) is not None
        and not any(m.start() < end and m.end() > start for start, end, _ in spans)
    ]
    spans += [
        (m.start(), m.end(), _date(m))
        for m in _DATE.finditer(folded)
        if not any(m.start() < end and m.end() > start for start, end, _ in spans)
    ]
    spans += [
        (m.start(), m.end(), _time(m))
        for m in _TIME.finditer(folded)
        if not any(m.start() < end and m.end() > start for start, end, _ in spans)
    ]
    quantities: list[tuple[int, int, str]] = []
    for m in _QUANTITY.finditer(folded):
        key = _quantity(m)
        if key is None or any(m.start() < end and m.end() > start for start, end, _ in spans):
            continue
        last = quantities[-1] if quantities else None
        if (
            last
            and _same_kind(last[2], key)
            and _JOIN.fullmatch(folded[last[1] : m.start()])
            and not _BETWEEN_END.search(folded, 0, last[0])
        ):
            # "1 h 15 min", "2 hours and 30 minutes": one quantity, the sum ("between twenty
            # minutes and half an hour" is two)
            quantities[-1] = (last[0], m.end(), _sum(last[2], key))
        else:
            quantities.append((m.start(), m.end(), key))
    spans += quantities
    spans += [
        (m.start(), m.end(), key)
        for m in _SHARE.finditer(folded)
        if (key := _share(m)) is not None
        and not any(m.start() < end and m.end() > start for start, end, _ in spans)
    ]
    return sorted(spans)


def _words(text: str) -> list[tuple[str, str]]:
    """(word as written, case-folded, and the key it is matched by) for each word of the
    text. The key spells numbers one way and drops plural endings; a quantity with a unit,
    or a number with a scale word, is one word whose key is its value in a base unit
    ("half an hour" -> "1800 seconds"; "1 h 15 min" is one quantity, 4500 seconds); a full
    date is one word whose key is the date, and so is a clock time (_TIME)."""
    folded = _prepared(text)
    return _words_in(folded, _phrases(folded))


def _words_in(folded: str, phrases: Sequence[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """_words of a text already prepared (_prepared), whose _phrases are `phrases`."""
    out: list[tuple[str, str]] = []
    at = 0
    for start, end, key in phrases:
        hedge = _HEDGE_BEFORE.search(folded, at, start) if _measure(key) else None
        start = hedge.start() if hedge else start  # "about 9 metres" is one word
        out += _plain_words(folded[at:start])
        word = " ".join(folded[start:end].split())
        word = _money_word(key, word) if key.startswith("money:") else word
        out.append((word, key))
        at = end
    return out + _plain_words(folded[at:])


# What the readings above cover, as the judges' template texts name them (a manifest
# records those texts, so a new reading shows there): how quantities are shown to the model
# (align_quantities), and what answer recall matches by value.
READINGS = (
    "imperial masses, tonnes, knots, areas; hedges such as 'a shade under', 'not quite', "
    "'and a bit' and 'or so'; feet and inches ('six foot three'); clock times; 'exactly'; "
    "fractions of a unit; named days; shares and prices in figures; two-digit years; pounds "
    "and pence in words; how often ('four times a year' as 'every three months'), not "
    "inside a phrase of when"
)
RECALL_READINGS = (
    "v3, imperial masses, tonnes, knots, areas, hedged temperatures, 'a shade under', "
    "'not quite', 'and a bit', 'or so', feet and inches, clock times, 'exactly', fractions "
    "of a unit, named days, shares, dozens, pence, weekdays, prices, two-digit years, "
    "American and British spelling, days and months inside a range, years and pounds and "
    "pence in words, the minus sign, how often ('twice a year' is 'every six months')"
)


_JOIN = re.compile(r"\s+(?:and\s+)?")


_QUANTITY_KEYS = ("q:", "q~:", "q^:")  # metric, imperial, nautical


def _measure(key: str) -> tuple[str, float, str] | None:
    """(system: "q" metric, "q~" imperial, "q^" nautical; value; base unit) of a quantity
    key; None for any other key."""
    if not key.startswith(_QUANTITY_KEYS):
        return None
    system, rest = key.split(":", 1)
    value, base = rest.split()
    return system, float(value), base


def _same_kind(a: str, b: str) -> bool:
    ma, mb = _measure(a), _measure(b)
    return ma is not None and mb is not None and ma[0] == mb[0] and ma[2] == mb[2]


def _sum(a: str, b: str) -> str:
    value = float(a.split(":", 1)[1].split()[0]) + float(b.split(":", 1)[1].split()[0])
    return f"{a.split(':', 1)[0]}:{_plain(value)} {a.split()[-1]}"


def _near(key: str, other: str) -> bool:
    """Whether two quantity keys are of two systems (metric, imperial, nautical) and within
    IMPERIAL_TOLERANCE of each other."""
    a, b = _measure(key), _measure(other)
    if a is None or b is None or a[0] == b[0] or a[2] != b[2] or not (a[1] and b[1]):
        return False
    return abs(a[1] - b[1]) <= IMPERIAL_TOLERANCE * max(a[1], b[1])


# A quantity given as approximate ("about 9 metres", "just under 2 miles", "nearly an hour")
# is found in evidence that gives a value within APPROX_TOLERANCE of it, on the side its
# hedge allows: "just under 2 miles" in "3 km" (1.86 miles), not in "3.5 km" (2.17 miles).
# The hedge is part of the quantity's word, not a content word the evidence must repeat.
# A temperature has no zero to take a share of, so its hedge allows TEMPERATURE_TOLERANCE
# degrees Celsius instead: "just over 80 °F" (26.7 °C) is found in "27 °C", but "about
# 38 °C" is not 37 °C. Only the text's own hedge loosens the match: "8,849 metres" is not
# found in "about 8,800 metres".
APPROX_TOLERANCE = 0.1
TEMPERATURE_TOLERANCE = 0.5
_BELOW = (
    "nearly",
    "almost",
    "just under",
    "a little under",
    "just short of",
    "just below",
    "a shade under",
    "a touch under",
    "a bit under",
    "slightly under",
    "slightly less than",
    "a little less than",
    "not quite",
    "getting on for",
    "the best part of",
    "just shy of",
    "a little short of",
    "not far short of",
)
_ABOVE = (
    "just over",
    "a little over",
    "just above",
    "a little more than",
    "slightly more than",
    "a shade over",
    "a touch over",
    "a bit over",
    "slightly over",
)
_AROUND = ("about", "around", "roughly", "approximately", "approx", "circa", "close to", "close on")
# Hedges that say a value is clearly more or less, by at least APPROX_TOLERANCE: "well over
# 300 pounds" is 165 kg (364 lb), not 140 kg.
_WELL_ABOVE = ("well over", "well above", "comfortably over", "way over")
_WELL_BELOW = ("well under", "well below", "comfortably under", "way under")
_HEDGE = "|".join(
    sorted((*_BELOW, *_ABOVE, *_AROUND, *_WELL_ABOVE, *_WELL_BELOW), key=len, reverse=True)
)
_HEDGE_BEFORE = re.compile(rf"\b(?:{_HEDGE})\.?\s+$", re.IGNORECASE)
_HEDGE_START = re.compile(rf"(?:{_HEDGE})\b")


def _within(hedge: str, key: str, other: str) -> bool:
    """Whether `other`, a quantity of the evidence, is what `key`, hedged by `hedge`
    ("about", "just under", ...), allows (APPROX_TOLERANCE; TEMPERATURE_TOLERANCE for a
    temperature)."""
    a, b = _measure(key), _measure(other)
    if a is None or b is None or a[2] != b[2]:
        return False
    x, y = a[1], b[1]
    if a[2] == "celsius":  # degrees, not a share (TEMPERATURE_TOLERANCE)
        side = around = TEMPERATURE_TOLERANCE
        slack = 0.0
    else:
        side = APPROX_TOLERANCE * abs(x)
        around = APPROX_TOLERANCE * max(abs(x), abs(y))
        slack = IMPERIAL_TOLERANCE * abs(x) if a[0] != b[0] else 0.0  # a rounded conversion
    if hedge in _BELOW:
        return x - side <= y <= x + slack
    if hedge in _ABOVE:
        return x - slack <= y <= x + side
    if hedge in _WELL_ABOVE:
        return y >= x + side
    if hedge in _WELL_BELOW:
        return y <= x - side
    return abs(x - y) <= around


def _hedge(word: str) -> str | None:
    """The hedge a quantity's word starts with ("about 9 metres" -> "about"), if any."""
    m = _HEDGE_START.match(word)
    return " ".join(m.group(0).split()) if m else None


def _known(evidence: Iterable[str]) -> frozenset[str]:
    """Every key the evidence offers: its words' and its quantities', and the words of its
    named days and weeks as written ("weekday mornings" is found in "on weekdays")."""
    return _known_in(" ".join(evidence))


@functools.lru_cache(maxsize=32)
def _known_in(text: str) -> frozenset[str]:
    """_known of the evidence joined into one text. Cached: every statement of a response
    is looked up in the same passages."""
    folded = _fold(text)
    named = {
        _key(w)
        for pattern in (_NAMED_DAY, _WEEK)
        for m in pattern.finditer(text)
        if pattern is _NAMED_DAY or not m.group("but")  # not the day "every day but" skips
        for w in _WORD.findall(m.group(0).casefold())
    }
    dates = {d for m in _DATE.finditer(folded) if m.group("y4") for d in _numeric_dates(m)}
    prepared = _DAY_WORD.sub(_day_digits, folded)  # _prepared(text), folded once
    phrases = _phrases(prepared)  # once: for the words and for the loose hours
    words = {key for _, key in _plain_words(folded)}
    words |= {key for _, key in _words_in(prepared, phrases)}
    words |= named | _share_words(prepared, phrases)
    words |= {
        f"within:{_key(n)}"
        for t in (text, folded)
        for m in _SPAN.finditer(t)
        for n in _span_names(m)
    }
    words |= {
        _money_key("pounds", m.group("v"), m.group("s1")) for m in _POUNDS_AFTER.finditer(prepared)
    }
    return frozenset(words | dates | _loose_clock(prepared, phrases))


def _found(word: str, key: str, known: AbstractSet[str]) -> bool:
    # A quantity or date is also found when each of its content words is, as before they
    # were read as one ("a month" is found in "every month").
    if key.startswith(_QUANTITY_KEYS) and any(_near(key, k) for k in known):
        return True  # values of two systems, rounded (IMPERIAL_TOLERANCE)
    if key.startswith("money:"):  # "£1.20" is not found in "£1.50" and "20 people"
        _, currency, value = key.split(":")
        return key in known or (value in known and _key(currency) in known)  # "2500 dollars"
    if key.startswith("every:"):  # "every week" is not in "every other week"
        return key in known
    if key.startswith("time"):  # "twenty to three" in "2.40 pm", not in "2.40 am"
        return key in known or any(_same_time(key, k) for k in known)
    if key.startswith("share:") and any(_same_share(key, k) for k in known):
        return True  # "a third of" in "33%"
    hedge = _hedge(word) if key.startswith(_QUANTITY_KEYS) else None
    if hedge is not None and any(_within(hedge, key, k) for k in known):
        return True  # "about 9 metres" in "9.2 m" (APPROX_TOLERANCE)
    bare = word[len(hedge) :].lstrip(" .") if hedge is not None else word
    if bare.startswith(("-", "minus ")):
        return key in known  # the words of "-18 °C" are those of "18 °C"
    return key in known or all(
        k in known for w, k in _plain_words(bare) if w not in STOPWORDS or w == bare
    )


# Quantities and dates in a claim are shown to the model as its reference writes them: the
# default model reads "105 minutes" against "1 hour 45 minutes", or "half an hour" against
# "30 minutes", as different, where any reader sees the same value. Only an equal value (or
# a hedged one within its hedge) is rewritten, so the claim says what it said; a changed
# value is left for the model to see.
_ONE = {"a": "1", "an": "1"}


_IN_WHEN = re.compile(r"\b(?:in|of|on|the|a|an)\s+$")  # "the first Sunday of" every month
_IN_WHEN_SPAN = 12  # characters before a frequency that _IN_WHEN reads ("the" and spaces)


@functools.lru_cache(maxsize=32)
def _spans(text: str) -> tuple[tuple[int, int, str, str], ...]:
    """(start, end, key, folded words) of each quantity, frequency (not inside a longer
    phrase of when: _IN_WHEN), full date, clock time, price, share and percentage
    ("share:25" for "25%", here only: a percentage is words of its own when words are
    matched) of the text, with start and end in the text as written; the folded
    words start with a hedge that was written after the quantity. Cached (a
    statement is asked of every passage, a passage of every statement); the characters'
    origins are only worked out for a text that has such a phrase."""
    folded = _prepared(text)
    # a frequency is shown another way only where it stands as one ("once an hour" as
    # "every 60 minutes"), not inside a longer phrase of when: "the first Tuesday in every
    # month" is no "the first Tuesday in monthly"
    phrases = [
        p
        for p in _phrases(folded)
        if not p[2].startswith("every:")
        or not _IN_WHEN.search(folded, max(0, p[0] - _IN_WHEN_SPAN), p[0])
    ]
    phrases += [
        (m.start(), m.end(), f"share:{_plain(float(m.group(1)))}")
        for m in _PERCENT.finditer(folded)
        if not any(m.start() < end and m.end() > start for start, end, _ in phrases)
    ]
    if not phrases:
        return ()
    origin = _read(text)[1]  # the same folded text, with each character's origin
    out = []
    at = 0  # a hedge lies between the phrase before and this one, as in _words_in
    for start, end, key in sorted(phrases):
        words = folded[start:end]
        lead = _HEDGE_BEFORE.search(folded, at, start)
        if lead is not None and origin[lead.start()][0] >= origin[start][0]:
            words = f"{lead.group(0).strip()} {words}"  # "14 km, roughly": "about 14 km"
        out.append((origin[start][0], origin[end - 1][1], key, words))
        at = max(at, end)
    return tuple(out)


def _text_forms(text: str) -> list[tuple[str, str]]:
    """(key, words as written) of each quantity and full date of one text, in order; a date
    in numbers that could be read either way under both keys."""
    out: list[tuple[str, str]] = []
    for start, end, key, folded in _spans(text):
        date = _DATE.fullmatch(folded)
        for k in _numeric_dates(date) if date and date.group("y4") else [key]:
            out.append((k, _HEDGE_AFTER.sub("", text[start:end])))
    return out


def _forms(reference: Iterable[str]) -> dict[str, list[str]]:
    """Each quantity's and full date's key in `reference`, and the words it is written in
    there, in order."""
    forms: dict[str, list[str]] = {}
    for text in reference:
        for key, written in _text_forms(text):
            forms.setdefault(key, []).append(written)
    return forms


# A close hedge of a reference's round quantity ("just over sixty miles", "twenty pounds
# or thereabouts") allows values other than its own; a correctness judge, whose reference
# is the response, reads an expected "100 km" as given by "just over sixty miles" (62.1
# miles). "Well over" and "well under" give no close value, and a value written to more
# than ROUND_DIGITS significant digits is no round one ("approximately 56,564 square
# miles" is not 58,125), so those are left out.
ROUND_DIGITS = 2


def _round(words: str) -> bool:
    """Whether every number of a quantity's words has at most ROUND_DIGITS significant
    digits ("sixty", "850", "2.5"; not "56,564" or "1.75")."""
    numbers = _numbers(_prepared(words))
    return all(len(n.replace(".", "").strip("0")) <= ROUND_DIGITS for n in numbers)


@functools.lru_cache(maxsize=32)
def _hedged_forms(reference: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """(hedge, key, words as written with the hedge) of each round quantity (_round) of
    the reference that has a close hedge before or after it."""
    out = []
    for text in reference:
        at = 0
        for a, b, key, words in _spans(text):
            lead = _HEDGE_BEFORE.search(text, at, a) if _measure(key) else None
            side = _hedge(lead.group(0).casefold()) if lead else _hedge(words)
            close = side is not None and side not in (*_WELL_ABOVE, *_WELL_BELOW)
            if _measure(key) and close and _round(text[a:b]):
                out.append((side or "", key, text[lead.start() if lead else a : b]))
            at = b
    return tuple(out)


# "5.68m" -> "5.68 m", not "24th" -> "24 th"
_DIGIT_LETTER = re.compile(r"(?<=\d)(?=[^\W\d_])(?!(?:st|nd|rd|th)\b)")


def _spelt_alike(a: str, b: str) -> bool:
    """Whether two phrases differ only in spelling or order: the same content words once
    numbers, unit abbreviations, plurals and day numbers are read ("8 kg" and "8
    kilograms", "a day" and "one day", "30-minute" and "30 minutes", "June 18, 1815" and
    "the 18th of June 1815")."""

    def keys(text: str) -> list[str]:
        words = _plain_words(_DIGIT_LETTER.sub(" ", _prepared(text)))
        return sorted(
            _ONE.get(k, k)
            for w, k in words
            if w in _ONE or w in _UNIT_WORDS or w not in STOPWORDS  # "m" is a unit here
        )

    for pattern in (_NAMED_DAY, _PENCE, _POUNDS_AND_PENCE):  # folded alike, spelt apart:
        if bool(pattern.search(a.casefold())) != bool(pattern.search(b.casefold())):
            return False  # "New Year's Eve 2026" and "31 December 2026", "135p" and "£1.35"
    return keys(a) == keys(b)


def _cased(form: str, written: str, first: bool) -> str:
    """`form` with its first letter's case as `written` has it; a capital at the start of
    the reference's sentence is not carried into the middle of the text."""
    if written[:1].isupper() and form[:1].islower():
        return form[0].upper() + form[1:]
    lower = not first and not written[:1].isupper()
    word = form[1:2].islower() or form[1:2] == " "  # "Half", "A pound": no "US" or "UK"
    if lower and form[:1].isupper() and word and not _NAMED_DAY.match(form):
        return form[0].lower() + form[1:]
    return form


# A named day is shown as its reference writes its date: "on Halloween" against "on 31
# October" is asked as "on 31 October" (a full date with a year is a phrase above).
def _day_month(day: int, month: int) -> re.Pattern[str]:
    """The day of a month however it is written without a year: "31 October", "October
    31st", "the 31st of October"."""
    names = "|".join(n for n, i in _MONTHS.items() if i == month)
    day_pattern = rf"0?{day}(?:st|nd|rd|th)?"
    return re.compile(
        rf"\b(?:the\s+)?{day_pattern}(?:\s+of)?\s+(?:{names})\b(?!\s*,?\s*\d)"
        rf"|\b(?:{names})\.?\s+{day_pattern}\b(?!\s*,?\s*\d)",
        re.IGNORECASE,
    )


def _named_days(text: str) -> list[tuple[re.Match[str], re.Pattern[str]]]:
    """Each named day of a text without a year after it, with the pattern of its date."""
    out = []
    for m in _NAMED_DAY.finditer(text):
        if not re.match(r"\s*,?\s*\d{4}\b", text[m.end() :]):  # else a full date
            day, month = _named_date(m).split()
            out.append((m, _day_month(int(day), _MONTHS[month])))
    return out


def _align_named_days(text: str, reference: Sequence[str]) -> str:
    """A named day of `text` written as `reference` writes its date, and a date of `text`
    as `reference` names its day ("26 December" -> "Boxing Day")."""
    parts: list[str] = []
    at = 0
    for m, pattern in _named_days(text):
        found = next((f for r in reference for f in [pattern.search(r)] if f), None)
        if found is not None:
            parts += [text[at : m.start()], found.group(0)]
            at = m.end()
    text = "".join(parts) + text[at:]
    for r in reference:
        for m, pattern in _named_days(r):
            text = pattern.sub(m.group(0).replace("\\", "\\\\"), text)
    return text


def align_quantities(text: str, reference: Iterable[str], hedged: bool = False) -> str:
    """`text` with each quantity and full date that `reference` holds with the same value,
    written another way, in the reference's words: "Half an hour in the clamps" -> "30
    minutes in the clamps" when the reference says "30 minutes"; "86 °F" -> "30 °C"; "1
    October 2026" -> "01/10/2026"; a hedged one that the reference holds within its hedge,
    hedge and all: "Just under 2 miles" -> "3 km"; and a one-sided hedge ("just under",
    "nearly") goes with a value the reference holds as it is: "just under 70 feet" -> "21
    metres", not "just under 21 metres" ("about" stays: "about 9 metres"). A phrase that
    the reference also writes as the text does (up to spelling and order) is left as it
    is, as is everything else. A named day is written as the reference writes its date
    ("on Halloween" -> "on 31 October"). With `hedged`, a quantity without a hedge of its
    own that a hedge of the reference allows is written as the reference writes it, hedge
    and all: "100 km" -> "just over sixty miles" (_hedged_forms)."""
    reference = list(reference)
    spans = _spans(text)
    forms = _forms(reference) if spans else {}
    parts: list[str] = []
    at = 0
    start = len(text) - len(text.lstrip())  # a phrase here begins the text
    for a, b, key, words in spans:
        written = forms.get(key) or [
            f
            for k, fs in forms.items()
            if _near(key, k) or _same_time(key, k) or _same_share(key, k)
            for f in fs
        ]
        hedge = _HEDGE_BEFORE.search(text, at, a) if _measure(key) and not written else None
        if hedge is not None:  # "Just under 2 miles" -> "3 km": the hedge goes with it
            word = _hedge(hedge.group(0).casefold()) or ""
            written = [f for k, fs in forms.items() if _within(word, key, k) for f in fs]
            a = hedge.start() if written else a
        after = _hedge(words) if _measure(key) and hedge is None else None
        if after is not None and not written:  # "14 km, roughly" -> "nine miles"
            written = [f for k, fs in forms.items() if _within(after, key, k) for f in fs]
            after = None  # within the hedge: it goes with the value
        if hedged and not written and hedge is None and _measure(key) and not _hedge(words):
            within = [f for s, k, f in _hedged_forms(tuple(reference)) if _within(s, k, key)]
            if within:  # "100 km" -> "just over sixty miles": the reference's hedge allows it
                parts += [text[at:a], _cased(within[0], text[a:b], a <= start)]
                at = b
                continue
        bare = _HEDGE_AFTER.sub("", text[a:b])  # "277 miles or so" is written as "277 miles"
        if written and not any(_spelt_alike(bare, form) for form in written):
            if hedge is None and _measure(key):  # matched by value: "just under 70 feet"
                hedge = _HEDGE_BEFORE.search(text, at, a)  # is "21 metres", not "just under"
                side = _hedge(hedge.group(0).casefold()) if hedge else None
                a = hedge.start() if hedge and side not in _AROUND else a
            if after in _AROUND:  # "446 km or so" -> "277 miles or so": the hedge stays
                b = a + len(bare)
            parts += [text[at:a], _cased(written[0], text[a:b], a <= start)]
            at = b
    return _align_named_days("".join(parts) + text[at:], reference)


# A list answer is shown in the order its reference names the items: the default model
# reads "Hearts, diamonds, clubs and spades" against "Spades, clubs, diamonds and hearts"
# as a different answer (P(same) 0.19), where any reader sees the same four suits. Only a
# one-sentence list of short items, each found in the reference, is reordered; the caller
# leaves a request that asks for an order alone.
_LIST_SEPARATOR = re.compile(r"(\s*,\s*(?:and\s+)?|\s+and\s+)")
_LIST_ITEM_WORDS = 4
_LIST_ITEMS = 10


def _item_at(item: str, keys: Sequence[str], skip: AbstractSet[str] = STOPWORDS) -> int | None:
    """Where the item's keys (of its words not in `skip`: its content words) first occur
    together in `keys`, or None."""
    own = [key for word, key in _words(item) if word not in skip]
    if not own:
        return None
    first, width = own[0], len(own)
    return next(
        (i for i, key in enumerate(keys) if key == first and list(keys[i : i + width]) == own),
        None,
    )


def align_list_order(text: str, reference: str) -> str:
    """`text`, a list of short items in one sentence ("Hearts, diamonds, clubs and
    spades."), with its items in the order `reference` names them; `text` as it is when it
    is no such list, when an item is not found in the reference, or when the order is
    already the reference's."""
    body = text.strip()
    end = body[-1] if body and body[-1] in ".!" else ""
    body = body[: len(body) - len(end)]
    if not body or re.search(r"[.!?;:\n]", body):
        return text
    pieces = _LIST_SEPARATOR.split(body)
    items, separators = pieces[0::2], pieces[1::2]
    if not 2 <= len(items) <= _LIST_ITEMS or any(
        len(item.split()) > _LIST_ITEM_WORDS for item in items
    ):
        return text
    # Items are found by their content words; by every word when one item has none (the
    # blood groups "A, B, AB and O": "a" is a stop word).
    skip: AbstractSet[str] = STOPWORDS
    if any(all(word in STOPWORDS for word, _ in _words(item)) for item in items):
        skip = frozenset()
    keys = [key for word, key in _words(reference) if word not in skip]
    if _item_at(body, keys, skip) is not None:
        return text  # the reference writes it so: one name ("the Beaver and Erie Canal")
    places = [at for at in (_item_at(item, keys, skip) for item in items) if at is not None]
    if len(places) < len(items) or len(set(places)) < len(places) or places == sorted(places):
        return text
    order = sorted(range(len(items)), key=places.__getitem__)
    shown = [items[k] for k in order]
    if items[0][:1].isupper():
        shown[0] = shown[0][:1].upper() + shown[0][1:]
        moved = order.index(0)  # capitalised as the first word: now cased as the reference
        seen = re.search(rf"\b{re.escape(items[0])}\b", reference, re.IGNORECASE)
        if moved and seen and seen.group(0)[:1].islower():
            shown[moved] = items[0][:1].lower() + items[0][1:]
    joined = shown[0] + "".join(sep + item for sep, item in zip(separators, shown[1:], strict=True))
    lead = text[: len(text) - len(text.lstrip())]
    return lead + joined + end + text[len(text.rstrip()) :]


def content_words(text: str) -> list[str]:
    """The text's content words, case-folded, in order (repeats kept)."""
    return [w for w, _ in _words(text) if w not in STOPWORDS]


def lexical_support(text: str, evidence: Iterable[str]) -> tuple[float, list[str]]:
    """(share of `text`'s content words that occur in `evidence`, the words that do not,
    each once, in order of appearance). A text without content words is fully supported.
    Words match by their key: the same word, or the same quantity written differently."""
    words = [(w, key) for w, key in _words(text) if w not in STOPWORDS]
    return _support(words, evidence, ranged=_ranged(text))


def _ranged(text: str) -> frozenset[str]:
    """The words of the text's ranges of days or months (_SPAN), as _words reads them."""
    return frozenset(
        w
        for t in (text, _prepared(text))
        for m in _SPAN.finditer(t)
        for w in _WORD.findall(m.group(0).casefold())
    )


def _support(
    words: Sequence[tuple[str, str]],
    evidence: Iterable[str],
    hedged: bool = False,
    weights: Sequence[float] | None = None,
    ranged: AbstractSet[str] = frozenset(),
) -> tuple[float, list[str]]:
    """lexical_support of words already read (word, key); with `hedged`, a quantity
    without a hedge of its own is also found within a hedge the evidence gives one
    (_hedged_forms: "100 km" in "just over sixty miles"); with `weights`, the share is of
    their sum, each word counting by its weight. A day or month is also found inside a
    range of the evidence (_SPAN), unless it is one of `ranged`, the words of the text's own
    ranges: "Monday to Thursday" is no part of "Mon-Fri"."""
    if not words:
        return 1.0, []
    evidence = tuple(evidence)
    known = _known(evidence)
    forms = _hedged_forms(evidence) if hedged else ()

    def found(word: str, key: str) -> bool:
        if _found(word, key, known) or (word not in ranged and f"within:{key}" in known):
            return True
        unhedged = key.startswith(_QUANTITY_KEYS) and _hedge(word) is None
        return unhedged and any(_within(side, k, key) for side, k, _ in forms)

    lost = [not found(w, key) for w, key in words]
    missing = [w for (w, _), gone in zip(words, lost, strict=True) if gone]
    if weights is None:
        return 1.0 - len(missing) / len(words), list(dict.fromkeys(missing))
    share = sum(x for x, gone in zip(weights, lost, strict=True) if gone) / sum(weights)
    return 1.0 - share, list(dict.fromkeys(missing))


def listed(words: Sequence[str], limit: int = 8) -> str:
    """The first `limit` words, comma-separated, with an ellipsis if there are more."""
    return ", ".join(words[:limit]) + (", \u2026" if len(words) > limit else "")


# A yes/no answer: an expected answer that starts with the word ("No, that is a later
# myth."), and a reply that gives it in so many words or in other words, as replies to a
# yes/no question usually do ("They didn't.", "It does: ...", "Ostriches cannot fly").
_ANSWER_WORD = re.compile(r"\s*(yes|no)\b(?=\s*(?:[,.;:!\u2014-]|$))", re.IGNORECASE)
# Words that give a yes or a no on their own: read here, and by groundedness, which judges
# a reply made of one of them with the sentence after it (only_reply).
YES_WORDS = (
    "yes",
    "yeah",
    "yep",
    "sure",
    "certainly",
    "absolutely",
    "definitely",
    "of course",
    "indeed",
    "correct",
)
NO_WORDS = ("no", "nope", "never", "not at all", "not really", "not quite")
EMPHATIC_NO = "(?:of course|certainly|absolutely|definitely) not"
# A polite no or yes: "I'm afraid not.", "Sadly not.", "I'm afraid so."
_POLITE = r"(?:i['\u2019]m |i am )?"
POLITE_NO = rf"{_POLITE}(?:afraid|sadly|unfortunately) not"
POLITE_YES = rf"{_POLITE}afraid so"
_REPLY_WORD = re.compile(
    rf"\s*(?:(?P<no>{EMPHATIC_NO}|{POLITE_NO}|{'|'.join(NO_WORDS)})"
    rf"|(?P<yes>{POLITE_YES}|{'|'.join(YES_WORDS)}))\b"
    r"(?!\s+(?:one|more|longer|less|matter|doubt)\b)",
    re.IGNORECASE,
)
_AUX = "do|does|did|is|are|was|were|could|would|should|has|have|had|might|must|need"
_SUBJECT = r"\s*(?:[^\W\d_]+\s+){0,3}?"
_REPLY_NO = re.compile(
    rf"{_SUBJECT}(?:(?:{_AUX})n['\u2019]t|(?:{_AUX}|can|will|may)\s+(?:not|never)|cannot|"
    r"can['\u2019]t|won['\u2019]t)\b",
    re.IGNORECASE,
)
_REPLY_YES = re.compile(
    rf"{_SUBJECT}(?:{_AUX}|can|will|may)\s*(?:[,.;:!\u2014]|\s[-\u2013]\s|$)", re.IGNORECASE
)


def answer_word(expected: str) -> str | None:
    """ "yes" or "no" when the expected answer starts with that word, else None."""
    m = _ANSWER_WORD.match(expected)
    return m.group(1).lower() if m else None


_NO_NEED = re.compile(r"\s*(?:there['\u2019]s |there is )?no need[.!]*\s*", re.IGNORECASE)
_HAVE_TO = re.compile(r"(?<=n['\u2019]t)\s+(?:have|need) to$", re.IGNORECASE)


def only_reply(text: str) -> bool:
    """Whether `text` does nothing but give a yes or a no: the word ("No.", "I'm afraid
    not."), a verb that echoes the question ("They didn't.", "It does."), both ("Yes, you
    can."), or "There's no need." Groundedness judges such a reply with the sentence after
    it."""
    if _NO_NEED.fullmatch(text):
        return True
    word = _REPLY_WORD.match(text)
    rest = (text[word.end() :] if word else text).strip(" ,.!")
    rest = _HAVE_TO.sub("", rest)  # "you don't have to", "you don't need to"
    if not rest:
        return word is not None
    return bool(_REPLY_NO.fullmatch(rest) or _REPLY_YES.fullmatch(rest))


def reply_word(reply: str) -> tuple[str | None, bool]:
    """(the yes or no the reply starts by giving, or None; whether it says so in so many
    words). "They didn't." is a no in other words, "It does: ..." a yes."""
    m = _REPLY_WORD.match(reply)
    if m:
        return ("yes" if m.group("yes") else "no"), True
    if _REPLY_NO.match(reply):
        return "no", False
    if _REPLY_YES.match(reply):
        return "yes", False
    return None, False


# Words that only answer a yes/no question ("no" is already a stop word): an expected answer
# made of them names nothing that passages could contain word for word.
POLAR_WORDS = frozenset({"yes", "true", "false"})
_NOT_ANSWER_WORDS = STOPWORDS | POLAR_WORDS  # "no" is a stopword


# Keys of a quantity, date, clock time, price or share (_words): with a word that holds a
# digit, the words an answer's values are in.
_VALUE_KEYS = ("q:", "q~:", "q^:", "date:", "time", "money:", "share:")


def _values(words: Sequence[tuple[str, str]], frequencies: bool = False) -> list[bool]:
    """For each word (_words), whether it is a value: a quantity, date, clock time, price or
    share, or a number in digits ("1990s", "12th"; not a bare number in words, "a flat,
    round one", not a name, and not a code with digits in it, "CO2", "M25", "B12"); with
    `frequencies`, also how often ("twice a week": _FREQUENCY)."""
    keys = (*_VALUE_KEYS, "every:") if frequencies else _VALUE_KEYS
    return [key.startswith(keys) or (key.isdigit() and w[:1].isdigit()) for w, key in words]


# A unit named in a request ("How many hours ...?", "How tall is it in metres?"): not after
# an apostrophe ("I'm" names no metre).
_UNIT_NAMED = re.compile(rf"(?<![\w'\u2019])(?P<unit>{_UNIT})(?:e?s)?\b")


def _counts(texts: Iterable[str]) -> set[tuple[str, tuple[float, str]]]:
    """(count, unit) of each quantity the texts give with a unit, read as _unasked reads
    one: "168 minutes" is ("168", (60, "seconds"))."""
    return {
        (_plain(_number(m.group("count"))), _UNITS[m.group("unit")])
        for text in texts
        for m in _QUANTITY.finditer(_fold(text))
        if m.group("unit") and m.group("count") not in (None, "a", "an")
    }


def _unasked(
    words: Sequence[tuple[str, str]], given: str, evidence: Sequence[str]
) -> list[tuple[str, str]]:
    """The expected answer's words (_words) that answer the request `given`: a word the
    request already says is left out, as a restatement ("The Crannock Hall eagle weighs
    190 kg." for "How much does the Crannock Hall eagle weigh?"), unless that leaves none
    (a choice question, "Is Paris or Lyon the capital?"). A value is a restatement only
    where the request writes it the same: "A week is how many hours long?" asks for "168
    hours", which equals its "a week" but is the answer. A quantity whose unit the request
    names is its number alone: the request has said what is counted, so "168 hours" is
    found in "168", unless the evidence gives that number with another unit ("168
    minutes"; nor is "about 168 hours" read so, nor a count with a scale or a fraction)."""
    known = _known([given])
    written = {w for w, _ in _words(given)}
    units = {_UNITS[m.group("unit")] for m in _UNIT_NAMED.finditer(_fold(given))}
    counted: set[tuple[str, tuple[float, str]]] | None = None
    out = []
    for (w, key), value in zip(words, _values(words), strict=True):
        if _found(w, key, known) and (not value or w in written):
            continue
        m = _QUANTITY.fullmatch(w) if key.startswith(_QUANTITY_KEYS) else None
        if m is not None and m.group("unit") and m.group("count") not in (None, "a", "an"):
            unit = _UNITS[m.group("unit")]
            bare = _plain(_number(m.group("count")))
            plain = not (m.group("minus") or m.group("scale2") or m.group("andpart"))
            if plain and unit in units:
                counted = _counts(evidence) if counted is None else counted
                if not any(c == bare and u != unit for c, u in counted):
                    w, key = m.group("count"), bare
        out.append((w, key))
    return out or list(words)


# Words an expected answer says around its answer, not part of it: "That would be Truro, of
# course." answers "Truro"; "The answer is 12." answers "12".
_FILLER = re.compile(
    r"\b(?:of course|that would be|that['\u2019]d be|it would be|the answer is|"
    r"the answer['\u2019]s|in fact|actually|i believe|i think)\b",
    re.IGNORECASE,
)


# A person's name given by its last word: "Dostoevsky." gives "Fyodor Dostoevsky.", "on
# Vaughan Williams" gives "Ralph Vaughan Williams." A name is a run of two or more
# capitalised words of the expected answer; its last word must be written so in the
# evidence, and not after another capitalised word that is no part of the name ("Samuel
# Adams" is not "John Adams"; a sentence's opening "It's" or "The" is a stopword).
# A title before a surname is no other name: "Dr Jenner." gives "Edward Jenner.", unless
# the expected name has a title of its own and it is another one: "Mr Turnbull." is not
# "Mrs Elspeth Turnbull." (each title as its short form: "Revd" is "Reverend").
_TITLES = {
    **{t: t for t in ("mr", "mrs", "ms", "miss", "mx", "sir", "dame", "lady", "lord")},
    **{t: t for t in ("father", "sister", "brother", "canon", "major", "colonel")},
    **{t: t for t in ("sergeant", "inspector")},
    **{"dr": "dr", "doctor": "dr", "prof": "prof", "professor": "prof"},
    **{"rev": "rev", "revd": "rev", "reverend": "rev", "capt": "capt", "captain": "capt"},
}


def _title(word: str) -> str | None:
    """The short form of a title ("Revd." -> "rev"), or None for a word that is none."""
    return _TITLES.get(word.rstrip(".").casefold())


_NAME_PART = r"[A-Z][\w'\u2019-]*"
_NAME_RUN = re.compile(rf"(?<![\w'\u2019-]){_NAME_PART}(?:[ \t]+{_NAME_PART})+")


def given_names(expected: str, evidence: Iterable[str]) -> frozenset[str]:
    """The keys (_key) of the words before the last of each name of `expected` (_NAME_RUN)
    whose last word the evidence gives as a surname, alone or after the name's own words
    (answer_recall looks for them no more, where the evidence does not give them)."""
    texts = list(evidence)
    out: set[str] = set()
    for m in _NAME_RUN.finditer(expected):
        parts = m.group(0).split()
        last = re.escape(parts[-1].rstrip("'\u2019-"))
        pattern = re.compile(rf"(?<![\w'\u2019-])(?:([\w'\u2019-]+)[ \t]+)?{last}(?![\w'\u2019-])")
        for text in texts:
            for e in pattern.finditer(text):
                before = e.group(1)
                own = before is None or before in parts or not before[:1].isupper()
                title, titles = _title(before or ""), {_title(p) for p in parts} - {None}
                own = own or (title is not None and (not titles or title in titles))
                if own or all(w in STOPWORDS for w in _WORD.findall(before.casefold())):
                    out |= {_key(w) for p in parts[:-1] for w in _WORD.findall(p.casefold())}
    return frozenset(out)


def drop_given_names(text: str, reference: Iterable[str]) -> str:
    """`text` without the given names (and other words before a surname) of each name whose
    surname the reference gives as one (given_names) and that the reference does not give
    itself: "Mrs Joan Pollinger." against "Mrs Pollinger." is "Mrs Pollinger.", "Edward
    Jenner." against "Dr Jenner, using cowpox." is "Jenner."; stopwords stay ("The
    Reverend Helen Tapscott." against "Reverend Tapscott." is "The Reverend Tapscott.")."""
    texts = list(reference)
    if not given_names(text, texts):
        return text
    known = _known(texts)
    titles = {_title(w) for t in texts for w in t.split()} - {None}
    parts: list[str] = []
    at = 0
    for m in _NAME_RUN.finditer(text):
        optional = given_names(m.group(0), texts)  # this name's, not another's
        words = m.group(0).split()
        kept = [
            w
            for w in words[:-1]
            if w.casefold() in STOPWORDS
            or _title(w) in titles  # "The Revd Oldroyd." for "Reverend Oldroyd."
            or any(_key(x) not in optional or _key(x) in known for x in _WORD.findall(w.casefold()))
        ]
        if len(kept) < len(words) - 1:
            parts += [text[at : m.start()], " ".join([*kept, words[-1]])]
            at = m.end()
    return "".join(parts) + text[at:]


# A request that asks for one value and nothing else: "How many stiles are there on the
# coffin route?", "In what year was the team set up?", "What time does the wrestling
# start?". Not one that asks a second thing too ("What time does the ferry leave, and from
# which pier?", "What does it cost, and until what time can I fish?", two question marks)
# nor how often, unless the caller counts a frequency as a value (asks_one_value's
# `how_often`).
_ONE_VALUE = re.compile(
    r"\b(?:how (?:many|much|long|far|high|tall|old|deep|wide|heavy|fast|hot|cold|warm)|"
    r"(?:what|which) (?:year|time|date|age|temperature|percentage|share|proportion|fraction|"
    r"price|height|length|distance|speed|weight|depth)|when)\b",
    re.IGNORECASE,
)
_SECOND_ASK = re.compile(
    r"\b(?:and|or|but|also)\s+(?:[^\W\d_]+\s+)?"  # "and from which", "and until what"
    r"(?:what|which|who|whom|whose|where|when|why|how|is|are|was|"
    r"were|do|does|did|can|could|will|would|should|has|have|had)\b",
    re.IGNORECASE,
)


_HOW_OFTEN_ASK = re.compile(r"\bhow often\b", re.IGNORECASE)
_WHO_ASK = re.compile(r"\bwho(?:m|se)?\b", re.IGNORECASE)


def _asks_one_thing(request: str) -> bool:
    """Whether the request asks no second question (_SECOND_ASK, or a second question
    mark)."""
    return _SECOND_ASK.search(request) is None and request.count("?") <= 1


def asks_one_name(request: str) -> bool:
    """Whether the request asks who and nothing else ("Who keeps the bees at Birkshaw?";
    not "Who runs it, and when?": _asks_one_thing)."""
    return _WHO_ASK.search(request) is not None and _asks_one_thing(request)


def _kind(key: str) -> str:
    """The kind of a value's key: "q" (a quantity), "date", "time", "money", "share",
    "every" (how often) or "number" (digits: a count, a year)."""
    if key.startswith(_QUANTITY_KEYS):
        return "q"
    if key.isdigit():
        return "number"
    return key.split(":", 1)[0].rstrip("?")  # "time?:": a time with no a.m. or p.m.


# The kinds of value a one-value request asks for, by its first asking phrase that names
# them: "How often ...?" a frequency, "What time ...?" a clock time, "In what year ...?" a
# year or date, "How long ...?" a quantity or a count. A request none of these name may be
# answered by a value of any kind.
_ASKED_KINDS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (_HOW_OFTEN_ASK, frozenset({"every"})),
    (re.compile(r"\b(?:what|which) time\b", re.I), frozenset({"time"})),
    (re.compile(r"\b(?:what|which) (?:year|date)\b", re.I), frozenset({"number", "date"})),
    (
        re.compile(r"\b(?:what|which) (?:percentage|share|proportion|fraction)\b", re.I),
        frozenset({"share", "number"}),
    ),
    (
        re.compile(
            r"\b(?:what|which) price\b|\bhow much (?:does|do|did|is|are|will|would) "
            r"(?:\w+ ){0,6}?(?:cost|charge|pay|be)\b",
            re.I,
        ),
        frozenset({"money"}),
    ),
    (
        re.compile(
            r"\bhow (?:long|far|high|tall|deep|wide|heavy|fast|hot|cold|warm|old)\b|"
            r"\b(?:what|which) (?:age|temperature|height|length|distance|speed|weight|"
            r"depth)\b",
            re.I,
        ),
        frozenset({"q", "number"}),
    ),
    (re.compile(r"\bhow (?:many|much)\b", re.I), frozenset({"q", "number", "money", "share"})),
    (re.compile(r"\bwhen\b", re.I), frozenset({"number", "date", "time"})),
)


def _asked(request: str) -> frozenset[str] | None:
    """The kinds of value a request asks for (_ASKED_KINDS), or None when it names none."""
    return next((kinds for pattern, kinds in _ASKED_KINDS if pattern.search(request)), None)


def asks_one_value(request: str, how_often: bool = False) -> bool:
    """Whether the request asks for one value (a number, quantity, date, time, price or
    share; with `how_often`, also how often: _HOW_OFTEN_ASK) and nothing else (_ONE_VALUE,
    with no second question: _SECOND_ASK, or a second question mark)."""
    asks = _ONE_VALUE.search(request) is not None
    asks = asks or (how_often and _HOW_OFTEN_ASK.search(request) is not None)
    return asks and _asks_one_thing(request)


def answer_recall(
    expected: str,
    passages: Iterable[str],
    hedged: bool = False,
    given: str | None = None,
    key_weight: float = 1.0,
    surnames: bool = False,
    one_value: bool = False,
    any_value: bool = False,
    frequencies: bool = False,
    one_name: bool = False,
) -> tuple[float | None, list[str]]:
    """(share of the expected answer's content words that occur in the passages, the words
    that do not). None when the answer has no content words beyond yes/no/true/false: then
    the words say nothing about whether the passages suffice. `hedged`: a value within a
    hedge the passages give it counts as found (_support). `given`: a text (the request)
    whose words the answer only restates ("The Crannock Hall eagle weighs 190 kg." for
    "How much does the Crannock Hall eagle weigh?"): they are left out, unless that
    leaves none (a choice question, "Is Paris or Lyon the capital?"). `key_weight`: each
    value (_values: a quantity, date, time, price, share or number) counts as that many
    words. `surnames`: a name's given names that the passages do not give are not looked
    for where the passages give its surname ("Dostoevsky." for "Fyodor Dostoevsky.":
    given_names). `one_value`: where `given` asks for one value (asks_one_value) and the
    answer gives values, only its values are looked for: the words around them say where
    it comes from or what else is so ("The team was set up in 1947 by local shepherds,
    according to its website." for "In what year was the team set up?"); with `any_value`
    too, one of those values of the kind the request asks for (_asked: "How long ...?" a
    quantity or a count) found is the answer found: an answer that explains its value
    gives others beside it ("There are 1,440 minutes in a day: 24 hours of 60 minutes
    each." for "How many minutes make up a whole day?" is found in "1,440"). `frequencies`:
    how often something happens is a value ("three times a week"), and "how often" asks
    for one. `one_name`: where `given` asks who and nothing else (asks_one_name), only the
    words of the answer's names (_NAME_RUN) are looked for ("Ian Brunton has been coxswain
    since 2009." for "Who's the coxswain?" looks for "Ian Brunton")."""
    words = [
        (w, key) for w, key in _words(_FILLER.sub(" ", expected)) if w not in _NOT_ANSWER_WORDS
    ]
    if not words:
        return None, []
    passages = list(passages)
    if given is not None:
        words = _unasked(words, given, passages)
    if surnames and (optional := given_names(expected, passages)):
        known = _known(passages)
        words = [(w, k) for w, k in words if k not in optional or _found(w, k, known)] or words
    if one_name and given is not None and asks_one_name(given):
        names = {
            _key(w)
            for m in _NAME_RUN.finditer(expected)
            for w in _WORD.findall(m.group(0).casefold())
            if w not in STOPWORDS
        }
        words = [(w, k) for w, k in words if k in names] or words
    if one_value and given is not None and asks_one_value(given, frequencies):
        values = [wk for wk, v in zip(words, _values(words, frequencies), strict=True) if v]
        if values and any_value:
            kinds = _asked(given)
            asked = [(w, k) for w, k in values if kinds is None or _kind(k) in kinds] or values
            share, missing = _support(asked, passages, hedged, None, _ranged(expected))
            return (1.0, []) if share else (share, missing)
        words = values or words
    weights = None
    if key_weight != 1.0:
        weights = [key_weight if v else 1.0 for v in _values(words, frequencies)]
    # the words as read, not joined and read again: "10,935 metres (about 11 km)" is two
    # quantities, not one of 21,935 metres
    return _support(words, passages, hedged, weights, _ranged(expected))


# An expected answer may list the answers it accepts, separated by " / " ("Gary Lewis & the
# Playboys / Gary Lewis and The Playboys"): any one of them will do.
ALTERNATIVES = " / "


def best_answer_recall(
    expected: str,
    evidence: Iterable[str],
    hedged: bool = False,
    given: str | None = None,
    key_weight: float = 1.0,
    surnames: bool = False,
    one_value: bool = False,
    any_value: bool = False,
    frequencies: bool = False,
    one_name: bool = False,
) -> tuple[float | None, list[str]]:
    """answer_recall of the best of the accepted answers that `expected` lists (ALTERNATIVES
    between them); of `expected` itself when it lists one."""
    texts = list(evidence)
    results = [
        answer_recall(
            a,
            texts,
            hedged,
            given,
            key_weight,
            surnames,
            one_value,
            any_value,
            frequencies,
            one_name,
        )
        for a in expected.split(ALTERNATIVES)
        if a.strip()
    ]
    known = [r for r in results if r[0] is not None]
    if not known:
        return None, []
    return max(known, key=lambda r: r[0] or 0.0)


# A response that offers two or more answers and does not commit to one ("It's either
# Toronto or Ottawa.", "Frankfurt, or possibly Munich.", "Probably Mercury, though it might
# be Venus.", "Maybe the liver. Or is it the skin?", "Rodin, but Degas is just as likely.",
# "Is it 7 or 8?"): the doubt is between answers, not about one answer ("Cabbage, I'm
# fairly sure." commits). "Either ... or" hedges where it starts a sentence or follows
# "it's" or "I think"; after a verb it offers a choice ("bend your knees and either drag
# your toe or ...") and after a negation it rules both out. A bare "or" hedges when the
# response also voices doubt ("Guatemala or Belize; the country escapes me"), unless it
# only loosens a quantity ("forty minutes or so", "a day or two").
_EITHER_AFTER = (  # "either" where it hedges: a sentence's start, "it's (in)", "I think"
    r"(?:^|[.!?;:]\s+|\b(?:it|that|this|they|he|she)(?:['\u2019]s|['\u2019]re| is| are| was| were)"
    r"\s+(?:(?:in|at|on|from|by)\s+)?|\b(?:maybe|probably|perhaps|think|believe|guess)\s+)"
)
_WHICH = (  # "... which": "not sure which", "couldn't tell you which"
    r"(?:not sure|unsure|not certain|no idea|can['\u2019]t (?:remember|recall)|cannot "
    r"(?:remember|recall)|don['\u2019]t (?:know|remember)|couldn['\u2019]t (?:tell you|say))"
)
# "Y is just as likely", not "it is also possible to book online"
_AS_LIKELY = (
    r"(?:just as|equally|also|every bit as) (?:likely|possible|plausible|probable)\b"
    r"(?!\s+(?:to|for)\b)"
)
_COULD_BE = (  # "though it might be Venus", "but it could just as easily be in the ..."
    r"\b(?:though|but|although|or)\s+(?:it|that|they|he|she)\s+(?:might|may|could)\s+"
    r"(?:(?:also|equally|just as (?:easily|well)|as (?:easily|well))\s+be\s+"
    r"|be\s+(?:(?:in|at|on|from|by|under|near)\s+)?(?:the\s+)?(?=(?-i:[A-Z])))"
)  # a caveat is not an answer: "but it may be a good idea to book", "it may be 14 days"
_DOUBT = re.compile(  # doubt voiced anywhere in a response
    r"\b(?:maybe|perhaps|possibly|probably|not sure|unsure|not certain|can['\u2019]t "
    r"(?:remember|recall|say)|cannot (?:remember|recall|say)|don['\u2019]t (?:know|remember)|"
    r"escapes me|i forget|i think|i believe|i guess|my guess|i['\u2019]d guess|i reckon|"
    r"second[- ]guess\w*|no idea)\b",
    re.IGNORECASE,
)
_LOOSE_OR = re.compile(  # an "or" that loosens a quantity or a time, not one joining answers
    r"\bor\s+(?:so|thereabouts|more|less|fewer|longer|shorter|two|three|beyond|over|under|"
    r"later|earlier|above|below|similar|other|not)\b",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    rf"{_EITHER_AFTER}either\b[^.?!;]{{0,80}}?\bor\b"
    r"|\bor\s+(?:maybe|possibly|perhaps|probably|else|is it|was it|could it be|might it be|"
    r"it could be|it might be|it may be)\b"
    rf"|{_COULD_BE}|\b{_AS_LIKELY}\b"
    r"|\b(?:is|are)\s+(?:also\s+)?(?:another\s+|an?\s+)?(?:possibility|possibilities|candidate)\b"
    r"|\b(?:two|three|several|a few) (?:plausible|possible|likely|candidate) (?:answers|options|"
    r"candidates|possibilities)\b"
    r"|\bcould be\b[^.?!;]{1,40}?,\s*(?:or\s+)?(?:it\s+)?could be\b"
    r"|\bone or the other\b|\bone of (?:those|these|the) (?:two|three)\b"
    r"|\bcould be (?:either|any)\b"
    rf"|\b{_WHICH} which\b|\btorn between\b|\bmix (?:them|those|these|the two) up\b"
    r"|\b(?:wouldn['\u2019]t|can['\u2019]t|couldn['\u2019]t) rule out\b",
    re.IGNORECASE,
)
# A second answer named as possible after a "but" ("I'd guess Rosslare, but Dublin's
# possible."): a hedge when the response voices doubt (_DOUBT); "Yes, but cash is possible
# too" adds to an answer, and "but it's possible to pay cash" is a caveat.
_BUT_POSSIBLE = re.compile(
    r"\bbut\s+(?!(?:it|that|this|there|they)\b)[^.?!;,]{1,30}?"
    r"(?:['\u2019]s|\s+(?:is|are|was|were))\s+(?:also\s+)?(?:possible|a possibility)"
    r"(?!\s+(?:to|that|for|if|when)\b)",
    re.IGNORECASE,
)
_OR = re.compile(r"\bor\b", re.IGNORECASE)
_FIRST_SENTENCE = re.compile(r".*?[.!?](?=\s|$)", re.DOTALL)


def _hedges_between(response: str) -> bool:
    """Whether the response hedges between answers (_BETWEEN; _BUT_POSSIBLE with doubt
    voiced, _DOUBT), or its first sentence, where an answer is given, joins answers with
    "or" (not one that loosens a quantity) and either asks it back ("Is it 7 on a Sunday,
    or 8?"; a question at the end, "... or anything else?", is not an answer) or the
    response voices doubt (_DOUBT)."""
    if _BETWEEN.search(response):
        return True
    if _BUT_POSSIBLE.search(response) and _DOUBT.search(response):
        return True
    first = _FIRST_SENTENCE.match(response)
    opening = first.group(0) if first else response
    joined = len(_OR.findall(opening)) > len(_LOOSE_OR.findall(opening))
    return joined and (opening.endswith("?") or _DOUBT.search(response) is not None)


# Words of such a hedge that name no answer.
_HEDGE_WORDS = frozenset(
    {
        *("either", "maybe", "possibly", "perhaps", "probably", "could", "might", "may"),
        *("one", "two", "three", "else", "think", "sure", "certain", "honestly", "guess"),
        *("remember", "tell", "say", "know", "mix", "torn", "possibility", "also", "which"),
        *("likely", "possible", "plausible", "probable", "equally", "easily", "well", "idea"),
        *("options", "option", "answers", "candidates", "possibilities", "recall", "forget"),
    }
)


def between_answers(response: str, expected: str) -> bool:
    """Whether `response` hedges between answers (_BETWEEN) and names one the expected
    answer does not: a content word not in the expected answer that is no word of the
    hedge itself (a choice the request offers counts: "Is it Leeds or York?" answered
    "Either Leeds or York."). An expected answer that offers a choice itself (" or ")
    accepts a response that does."""
    if not _hedges_between(response) or _OR.search(expected):
        return False
    _, missing = lexical_support(response, [expected])
    return any(w not in _HEDGE_WORDS for w in missing)


# Key terms: the words whose change turns a faithful claim into a false one while leaving
# nearly every other word in place (SummEdits' entity and number edits, a changed date or
# name). Numbers are runs of digits ("1,200" and "1200" are one number); names are words
# that start with a capital letter anywhere but at the start of a sentence (where every
# word does: a one-word name there is missed, a paraphrase's first word is not counted).
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# A line's first word counts as a sentence's, after a list's bullet or number ("- Cost: £12").
_LIST_NUMBER = re.compile(r"^[ \t]*(\d+)[.)]\s", re.MULTILINE)
_SENTENCE_START = re.compile(
    r"(?:^|[.!?:;]\s+|\n)\s*(?:(?:[-*\u2022\u2013]|\d+[.)])\s+)?([^\W\d_]+)"
)


def _numbers(text: str) -> set[str]:
    return {m.group(0).replace(",", "") for m in _NUMBER.finditer(text)}


def key_terms(text: str) -> list[str]:
    """The text's numbers in digits and capitalised names (not sentence-initial), in order,
    each once; names case-folded; then its quantities counted in words ("twenty miles",
    "about five minutes", "half a litre": _counted_in_words). A numbered list's numbers are
    not the text's ("1. Bring ID"). Other numbers in words are left out: answers count what
    passages list ("Three things: ..."), which is no claim a passage could hold. A named
    day is its date ("Christmas Eve" gives "24" and "december")."""
    text = _NAMED_DAY.sub(lambda m: _named_date(m).title(), text)
    text = _WEEK.sub(lambda m: _week(m).title().replace(" To ", " to "), text)
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    markers = {m.start(1) for m in _LIST_NUMBER.finditer(text)}
    terms: list[str] = []
    for m in re.finditer(r"\d+(?:[.,]\d+)*|[^\W\d_]+", text):
        word = m.group(0)
        if m.start() in markers:
            continue
        if word[0].isdigit():
            terms.append(word.replace(",", ""))
        elif word[0].isupper() and m.start() not in starts and word.casefold() not in STOPWORDS:
            terms.append(word.casefold())
    digits = {t for t in terms if t[0].isdigit()}
    terms += [w for w, key in _words(text) if _measure(key) and _counted_in_words(w, digits)]
    return list(dict.fromkeys(terms))


_ONE_UNIT = re.compile(r"an?[\s-]+[^\W\d_]+$")  # "an hour", "a-mile"; not "a hundred miles"


def _counted_in_words(word: str, digits: AbstractSet[str]) -> bool:
    """Whether a quantity's word (as read: "a hundred miles" is "100 miles") gives its count
    in words ("four hours", "about twenty miles", "half a kilometre", "a hundred miles"),
    not in the text's own digits (`digits`, key terms already) and not as one unit ("an
    hour", "a second": "a second film" is no quantity)."""
    hedge = _hedge(word)
    count = word[len(hedge) :].lstrip(" .") if hedge else word
    return not _ONE_UNIT.match(count) and not (_numbers(count) and _numbers(count) <= digits)


def missing_key_terms(text: str, evidence: Iterable[str]) -> tuple[float | None, list[str]]:
    """(share of `text`'s key terms (numbers, names) not found in `evidence`, those terms).
    None when the text has no key terms. Unlike lexical support, a paraphrase keeps its
    names and numbers, so it is not penalised here; a changed name or number is. Terms are
    found as lexical_support finds words: a number by its value, in words or in another
    unit ("12" in "twelve", "820 feet" in "250-metre"), so only a number that no word or
    quantity of the evidence gives is missing. A number with a point ("8.50 pm") is
    missing when the evidence does not write it and a part of it is not found ("8.20 pm")."""
    terms = key_terms(text)
    if not terms:
        return None, []
    evidence = list(evidence)
    written = _numbers(" ".join(evidence))
    _, not_found = lexical_support(text, evidence)
    unfound = {*not_found} | {
        n for w in not_found for n in (*_WORD.findall(w), *_numbers(w)) if not _PRICE.search(w)
    }
    # a price not found ("£1.20") is missing by its figure, or in pence ("120p"), not by its
    # pence alone ("20 people")
    unfound |= {
        n
        for w in not_found
        if _PRICE.search(w)
        for figure in _numbers(w)
        for n in (figure, *([_plain(float(figure) * 100)] if "." in figure else []))
    }

    def missing(term: str) -> bool:
        if term in unfound:
            return True
        parts = re.split(r"[.,]", term)
        return len(parts) > 1 and term not in written and any(p in unfound for p in parts)

    absent = [t for t in terms if missing(t)]
    return len(absent) / len(terms), absent
