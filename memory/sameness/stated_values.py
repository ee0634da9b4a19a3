"""The values a short fact states, by kind: when (clock times and dates), a status, a
priority, a diet, an address or place, a number, an identifier.

Update detection (memory/sameness/updates.py) compares two texts kind by kind: a later
text about the same subject with another value of one kind is an update or a conflict.
Each reading is a closed list or a pattern, deterministic and locale-free; a value it
does not know is simply not read (a missed update, recorded by nothing), never guessed.
Values are normalised so that two spellings of one value are equal ("10:00" / "10am",
"closed" / "resolved", "P1" / "p1"), and the words that spell a value are returned too
(``consumed``), so the subject of a fact is read from the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from memory.sameness.fact_text import DATE_WORDS, NUMBER_WORDS, ORDINALS, FactText


class ValueKind(StrEnum):
    WHEN = "when"
    STATUS = "status"
    PRIORITY = "priority"
    DIET = "diet"
    PLACE = "place"
    NUMBER = "number"
    IDENTIFIER = "identifier"
    PERSON = "person"
    NEGATION = "negation"


def _groups(spec: str) -> dict[str, str]:
    """ "a b | c d" -> each phrase to its group's first phrase (the canonical value)."""
    out: dict[str, str] = {}
    for group in spec.split("|"):
        phrases = [p.strip() for p in group.split(",") if p.strip()]
        for phrase in phrases:
            out[phrase] = phrases[0]
    return out


# One group per state an agent acts on: "closed" and "resolved" say the same.
STATUSES = _groups(
    "done, closed, resolved, fixed, complete, completed, finished, shipped, delivered |"
    "open, opened, reopened, re-opened, unresolved, outstanding |"
    "in progress, ongoing, underway, under way, being worked on, wip |"
    "blocked, stuck, on hold, paused, waiting, pending, awaiting |"
    "cancelled, canceled, abandoned, dropped, wontfix, won't fix, scrapped |"
    "approved, accepted, signed off | rejected, declined, denied |"
    "in review, under review, in qa | merged | deployed, released, live, launched |"
    "draft | archived, deprecated | active | inactive, disabled | failing, failed, broken |"
    "passing, green"
)
_PRIORITY_LEVELS = _groups(
    "critical, urgent, top, highest, blocker, p0 | high, higher, important, p1 |"
    "medium, normal, moderate, p2 | low, lower, minor, p3 | lowest, trivial, p4"
)
DIETS = _groups(
    "vegetarian, veggie | vegan, plant-based, plant based | pescatarian, pescetarian |"
    "omnivore, eats meat, eats everything | gluten-free, gluten free, coeliac, celiac |"
    "dairy-free, dairy free, lactose-free, lactose free, lactose intolerant |"
    "keto, ketogenic | paleo | halal | kosher | low-carb, low carb | nut-free, nut free |"
    "diabetic | flexitarian"
)


def _alternation(phrases: list[str]) -> str:
    ordered = sorted(phrases, key=len, reverse=True)
    return "|".join(r"[\s\-]+".join(map(re.escape, p.replace("-", " ").split())) for p in ordered)


_STATUS = re.compile(rf"(?<![\w-])(?:{_alternation(list(STATUSES))})(?![\w-])", re.IGNORECASE)
_DIET = re.compile(rf"(?<![\w-])(?:{_alternation(list(DIETS))})(?![\w-])", re.IGNORECASE)
_PRIORITY_CODE = re.compile(r"(?<![\w-])(?:p|sev|prio)[ -]?([0-4])(?![\w-])", re.IGNORECASE)
_PRIORITY_WORD = re.compile(
    rf"(?<![\w-])({_alternation([k for k in _PRIORITY_LEVELS if not k.startswith('p')])})"
    r"(?:[\s-]+priority)?(?![\w-])",
    re.IGNORECASE,
)
_PRIORITY_CONTEXT = re.compile(r"\b(?:priority|prio|urgency|priorit\w*)\b", re.IGNORECASE)
# 9:30, 10am, 10 am, 3.15pm, 14:00h, noon, midnight
_CLOCK = re.compile(
    r"(?<![\w:.])(\d{1,2})(?:[:.](\d{2}))?\s*(a\.?m\.?|p\.?m\.?|h\b|o'?clock)?(?![\w:])",
    re.IGNORECASE,
)
_NAMED_TIME = re.compile(r"\b(noon|midday|midnight)\b", re.IGNORECASE)
_MONTH_DAY = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b"
    r"|\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_ORDINAL_DAY = re.compile(r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
_STREET_TYPES = (
    "street|st|avenue|ave|road|rd|lane|ln|boulevard|blvd|drive|dr|way|court|ct|place|pl|"
    "square|sq|terrace|parkway|pkwy|highway|hwy|close|crescent|alley"
)
# A house number, a capitalised street name, a street type ("14 Elm Street", "220
# Harbor Rd"): capitals keep "$27.45 from Thursday's close" from being an address.
_STREET = re.compile(
    rf"\b(\d{{1,6}}[a-zA-Z]?)\s+((?:[A-Z][\w'.-]*\s+){{1,3}}?)(?i:{_STREET_TYPES})\b\.?"
    r"(?i:,?\s+(?:apt|apartment|suite|unit|flat)\.?\s*#?\w+)?"
    r"(?:,\s*([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*))?"
)
_PLACE = re.compile(
    r"\b(?:lives?|living|based|located|resides?|residing|moved|moves|moving|relocated|"
    r"relocating|relocates|stays?|staying|home)\s+(?:is\s+)?(?:in|to|at|near)\s+"
    r"((?:[A-Z][\w'-]*)(?:\s+[A-Z][\w'-]*){0,3})"
)


@dataclass(frozen=True)
class StatedValues:
    by_kind: dict[ValueKind, frozenset[str]]
    # Case-folded words that spell one of the values (not the fact's subject).
    consumed: frozenset[str]


def _words_of(span: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"[^\W_]+", span)}


def _clock(hour: str, minute: str | None, suffix: str | None) -> str | None:
    h, m = int(hour), int(minute or 0)
    tag = (suffix or "").casefold().replace(".", "")
    if tag.startswith("p") and h < 12:
        h += 12
    elif tag.startswith("a") and h == 12:
        h = 0
    if h > 23 or m > 59:
        return None
    return f"t{h:02d}:{m:02d}"


def _times(text: str, consumed: set[str]) -> set[str]:
    """Clock times: "9:30", "10am", "3 pm". A bare number is a time only with a suffix
    or a minute part ("at 10" stays a number)."""
    out: set[str] = set()
    for match in _CLOCK.finditer(text):
        hour, minute, suffix = match.groups()
        if minute is None and suffix is None:
            continue
        value = _clock(hour, minute, suffix)
        if value is not None:
            out.add(value)
            consumed |= _words_of(match.group())
    for match in _NAMED_TIME.finditer(text):
        out.add("t12:00" if match.group(1).casefold() != "midnight" else "t00:00")
        consumed |= _words_of(match.group())
    return out


_DATE_KEYS = frozenset(DATE_WORDS)
_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"[^\W_]+")


def _dates(text: str, words: frozenset[str], digits: bool, consumed: set[str]) -> set[str]:
    out: set[str] = set()
    named = words & _DATE_KEYS
    if not (named or digits):
        return out
    for match in _MONTH_DAY.finditer(text) if named and digits else ():
        month = (match.group(1) or match.group(4)).casefold()[:3]
        day = int(match.group(2) or match.group(3))
        out.add(f"{DATE_WORDS.get(month, month)}-{day:02d}")
        consumed |= _words_of(match.group())
    for match in _ISO_DATE.finditer(text) if digits else ():
        out.add(f"{match.group(1)}-{match.group(2)}-{match.group(3)}")
        consumed |= _words_of(match.group())
    dated_months = {value[:3] for value in out}
    # Read from the words rather than from the fact: "Sunday's" is a date too.
    for word in named:
        date = DATE_WORDS[word]
        if date not in dated_months:
            out.add(date)
        consumed.add(word)
    for match in _ORDINAL_DAY.finditer(text) if digits else ():
        if not any(value.endswith(f"-{int(match.group(1)):02d}") for value in out):
            out.add(f"day{int(match.group(1)):02d}")
        consumed |= _words_of(match.group())
    return out


def _first_words(groups: dict[str, str]) -> frozenset[str]:
    return frozenset(_WORD.findall(phrase)[0] for phrase in groups)


_STATUS_FIRST, _DIET_FIRST = _first_words(STATUSES), _first_words(DIETS)


def _phrases(
    pattern: re.Pattern[str], groups: dict[str, str], text: str, consumed: set[str]
) -> set[str]:
    out: set[str] = set()
    for match in pattern.finditer(text):
        phrase = " ".join(re.split(r"[\s\-]+", match.group().casefold()))
        key = phrase if phrase in groups else phrase.replace(" ", "-")
        out.add(groups.get(key, groups.get(phrase.replace("-", " "), phrase)))
        consumed |= _words_of(match.group())
    return out


def _priorities(text: str, consumed: set[str]) -> set[str]:
    out: set[str] = set()
    for match in _PRIORITY_CODE.finditer(text):
        out.add(f"p{match.group(1)}")
        consumed |= _words_of(match.group())
    if _PRIORITY_CONTEXT.search(text):
        for match in _PRIORITY_WORD.finditer(text):
            word = " ".join(match.group(1).casefold().split())
            out.add(_PRIORITY_LEVELS.get(word, word))
            consumed |= _words_of(match.group())
    return {_PRIORITY_LEVELS.get(value, value) for value in out}


def _places(text: str, consumed: set[str]) -> set[str]:
    out: set[str] = set()
    for match in _STREET.finditer(text):
        number, name, city = match.group(1), match.group(2) or "", match.group(3)
        out.add(f"{number.casefold()} {' '.join(name.casefold().split())}".strip())
        consumed |= _words_of(match.group())
        if city:
            consumed |= _words_of(city)
    for match in _PLACE.finditer(text):
        out.add(" ".join(match.group(1).casefold().split()))
        consumed |= _words_of(match.group(1))
    return out


_NAMED_TIMES = frozenset({"noon", "midday", "midnight"})
_PLACE_VERBS = frozenset(
    [
        "live",
        "lives",
        "living",
        "based",
        "located",
        "reside",
        "resides",
        "residing",
        "moved",
        "moves",
        "moving",
        "relocated",
        "relocating",
        "relocates",
        "stay",
        "stays",
        "staying",
        "home",
    ]
)
_PRIORITY_WORDS = frozenset(
    {"priority", "priorities", "prioritised", "prioritized", "prio", "urgency"}
)
_NUMBER_KEYS = frozenset(NUMBER_WORDS)
_NUMBER = re.compile(
    r"(?<![\w.,:/-])(?P<pre>[$€£¥₹])?\s?(?P<num>\d+(?:[.,]\d{3})*(?:[.,]\d+)?)(?![\w:/-])"
    r"(?P<pct>\s?%|\s?percent\b)?(?:\s+(?P<unit>[A-Za-z]+))?"
    rf"|(?<![\w-])(?P<word>{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))})(?![\w-])"
    r"(?:\s+(?P<word_unit>[A-Za-z]+))?",
    re.IGNORECASE,
)
_CURRENCY_WORDS = frozenset(
    [
        "usd",
        "eur",
        "gbp",
        "jpy",
        "chf",
        "cad",
        "aud",
        "inr",
        "cny",
        "dollar",
        "dollars",
        "euro",
        "euros",
        "pound",
        "pounds",
    ]
)
_NOT_UNITS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "and",
        "or",
        "per",
        "by",
        "from",
        "with",
        "is",
        "are",
        "was",
        "were",
        "am",
        "pm",
    ]
)


def _unit(word: str | None) -> str:
    """What a number counts: its currency, a percentage, or the word after it ("14
    days", "25 seats"), folded to its singular; "" when nothing says."""
    if not word or word.casefold() in _NOT_UNITS:
        return ""
    folded = word.casefold()
    if folded in _CURRENCY_WORDS:
        return "¤"
    return folded[:-1] if folded.endswith("s") and len(folded) > 3 else folded


def _numbers(text: str, consumed: set[str]) -> set[str]:
    """Numbers no time, date, address or priority took, each as "<unit>:<value>": a
    tax rate of 6% and an invoice of $4,875 state no value of one attribute."""
    out: set[str] = set()
    for match in _NUMBER.finditer(text):
        if match.group("word"):
            word = match.group("word").casefold()
            if word in consumed:
                continue
            value, unit = str(NUMBER_WORDS[word]), _unit(match.group("word_unit"))
            consumed.add(word)
        else:
            raw = match.group("num")
            if raw in consumed or raw.replace(",", "") in consumed:
                continue
            value = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", raw) else raw
            if match.group("pre"):
                unit = "¤"
            elif match.group("pct"):
                unit = "%"
            else:
                unit = _unit(match.group("unit"))
            consumed.add(raw)
        out.add(f"{unit}:{value}")
    consumed |= {w for w in re.findall(r"[^\W_]+", text.casefold()) if w in ORDINALS}
    return out


def read_values(text: str, fact: FactText) -> StatedValues:
    consumed: set[str] = set()
    # Most texts state few kinds of value: a pattern runs only when a word it needs is
    # there (a digit, a month, the first word of a status).
    words = frozenset(_WORD.findall(text.casefold()))
    digits = _DIGIT.search(text) is not None
    when = _times(text, consumed) if digits or words & _NAMED_TIMES else set()
    when |= _dates(text, words, digits, consumed)
    places = _places(text, consumed) if digits or words & _PLACE_VERBS else set()
    priorities = _priorities(text, consumed) if digits or words & _PRIORITY_WORDS else set()
    statuses = _phrases(_STATUS, STATUSES, text, consumed) if words & _STATUS_FIRST else set()
    diets = _phrases(_DIET, DIETS, text, consumed) if words & _DIET_FIRST else set()
    numbers = _numbers(text, consumed) if digits or words & _NUMBER_KEYS else set()
    identifiers = {
        i
        for i in fact.identifiers
        if not _words_of(i) <= consumed and not _CLOCK.fullmatch(i) and not _ISO_DATE.fullmatch(i)
    }
    by_kind = {
        ValueKind.WHEN: frozenset(when),
        ValueKind.PLACE: frozenset(places),
        ValueKind.PRIORITY: frozenset(priorities),
        ValueKind.STATUS: frozenset(statuses),
        ValueKind.DIET: frozenset(diets),
        ValueKind.NUMBER: frozenset(numbers),
        ValueKind.IDENTIFIER: frozenset(identifiers),
    }
    return StatedValues({k: v for k, v in by_kind.items() if v}, frozenset(consumed))
