"""ctparse's hand-written corpus (``ctparse.time.corpus.corpus``, in the ctparse wheel):
rows of (target "Time[]{YYYY-MM-DD HH:MM (dow/pod)}", reference time, phrases).

Key: ``<target>|<reference>|<phrase>`` (``#n`` on the n-th repeat).

Scored: English phrases of Time targets that fix a whole date and/or a clock time; the
target's fields (date; hour:minute) are the expectation (``rows.Instant``). ctparse
reads forward (its targets are the coming date), so no past rule applies. Skipped, and
counted by reason: German phrases (umlauts, German weekday stems or words), Interval
and Duration targets, part-of-day targets ("morning", "first"), and partial dates (a
year or a month alone).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from datetime import date, datetime

from benchmarks.time_corpora.rows import Instant, Row, unique_keys

NAME = "ctparse corpus"
_TARGET = re.compile(r"^Time\[\]\{(?P<date>\S+) (?P<time>\S+) \((?P<dow>[^/]*)/(?P<pod>[^)]*)\)\}$")
_GERMAN_CHARS = re.compile("[äöüß]")
_GERMAN_WORDS = frozenset(
    {
        *("heute", "morgen", "gestern", "jetzt", "genau", "gerade", "eben", "zu", "dieser"),
        *("zeit", "ende", "des", "monats", "jahres", "um", "uhr", "den", "dem", "der", "die"),
        *("das", "vom", "von", "bis", "zum", "ab", "nach", "vor", "gegen", "woche", "diesen"),
        *("abends", "morgens", "nachmittag", "nachmittags", "vormittag", "vormittags"),
        *("mittags", "nachts", "sehr", "erster", "letzter", "viertel", "halb", "acht"),
        *("neun", "mitternacht", "ein", "eine", "nacht", "tage", "wochen", "minuten"),
        *("monat", "stunde", "halbe", "zwischen", "und", "nicht", "ten", "ter", "mai"),
        *("januar", "februar", "juni", "juli", "oktober", "dezember", "dez", "mrz", "mo"),
        *("früh", "spät", "später", "nächste", "nächsten", "frühestens", "spätestens"),
        *("abend", "mittag", "am", "so", "wie", "möglich", "möglicher", "vorgestern"),
    }
)
_GERMAN_STEMS = ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag")


def is_german(phrase: str) -> bool:
    """Umlauts, German weekday stems or German words ("am" only where English has no
    "8 am": at the start or after a word)."""
    lowered = phrase.casefold()
    if _GERMAN_CHARS.search(lowered):
        return True
    tokens = re.findall(r"[a-zäöüß]+|\d+", lowered)
    for index, token in enumerate(tokens):
        if token.startswith(_GERMAN_STEMS) or token == "uhr":
            return True
        if token == "am":
            if index == 0 or not tokens[index - 1].isdigit():
                return True
            continue
        if token in _GERMAN_WORDS:
            return True
    return bool(re.search(r"\d(?:uhr|ten|ter)\b", lowered))


def target_of(expected: str) -> Instant | str:
    """The fields a ctparse target specifies, or why it is out of scope."""
    if expected.startswith("Interval"):
        return "interval target"
    if expected.startswith("Duration"):
        return "duration target"
    found = _TARGET.match(expected)
    if found is None:
        return "unknown target shape"
    if found.group("pod") != "X" or found.group("dow") != "X":
        return "part-of-day target (morning, first, ...)"
    date_text, time_text = found.group("date"), found.group("time")
    if "X" in date_text and date_text != "X-X-X":
        return "partial date (year or month only)"
    day = None if date_text == "X-X-X" else date.fromisoformat(date_text)
    clock = None
    if time_text != "X:X":
        hour, minute = time_text.split(":")
        clock = (int(hour), int(minute))
    if day is None and clock is None:
        return "empty target"
    return Instant(day, clock)


def load() -> Iterator[Row]:
    corpus = importlib.import_module("ctparse.time.corpus").corpus
    flat = [(t, ref, p) for t, ref, phrases in corpus for p in phrases]
    keys = unique_keys([f"{t}|{ref}|{p}" for t, ref, p in flat])
    for key, (expected, reference_text, phrase) in zip(keys, flat, strict=True):
        reference = datetime.fromisoformat(reference_text)
        target = "German phrase" if is_german(phrase) else target_of(expected)
        if isinstance(target, str):
            yield Row(NAME, key, phrase, reference, None, skip=target, group=expected)
        else:
            yield Row(NAME, key, phrase, reference, target, group=expected)
