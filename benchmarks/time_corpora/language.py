"""Word-level rules the loaders share: is a phrase English, does it fix a clock time,
does it mark the past, does it carry its own year.

English is decided by vocabulary, not by guessing: a phrase is English when it has no
non-ASCII letter and every word in it is in ``ENGLISH_TIME_WORDS`` (months, weekdays,
their abbreviations, number words, relative words, units, meridiems, time-zone
abbreviations and the glue words of date phrases). Everything else is skipped as "not
English", for every parser alike; a rare English word costs a scored row, never a
wrong one.
"""

from __future__ import annotations

import re

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_WEEKDAYS = (
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur "
    "thurs fri sat sun mondays tuesdays wednesdays thursdays fridays saturdays sundays weekday "
    "weekdays weekend weekends"
)
_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand first second third fourth fifth sixth seventh eighth "
    "ninth tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth "
    "eighteenth nineteenth twentieth thirtieth st nd rd th half quarter couple few several "
    "dozen a an once twice"
)
_UNITS = (
    "second seconds sec secs minute minutes min mins hour hours hr hrs h m s d w y day days "
    "week weeks wk wks month months mo year years yr yrs decade decades century centuries "
    "fortnight fortnights moment moments"
)
_RELATIVE = (
    "today tomorrow tmrw tmr tonight yesterday now ago later earlier next last this past "
    "previous coming following upcoming from after before since until till by in on at of "
    "the and to or for within around about approx approximately exactly just soon end "
    "beginning start middle mid noon midnight midday morning afternoon evening night am pm "
    "a.m p.m o'clock oclock clock every each other daily weekly monthly yearly annually "
    "hourly nightly biweekly fortnightly year's new p t"
)
_ZONES = "utc gmt est edt cst cdt mst mdt pst pdt z bst cet cest ist"
ENGLISH_TIME_WORDS = frozenset(
    " ".join((_MONTHS, _WEEKDAYS, _NUMBERS, _UNITS, _RELATIVE, _ZONES)).split()
)

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_COUNT = (
    r"(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|sixty|half|few|several|couple(?:\s+of)?)"
)
_CLOCK = re.compile(
    r"\d{1,2}\s*[:.h]\s*\d{2}\b|\d\s*(?:a|p)\.?\s*m\b|\d\s*[ap]\b|\b(?:noon|midnight|midday|"
    r"o'?clock)\b|\d{1,2}\s*h\b|\d+\s*(?:h|m|s)\b|\b" + _COUNT + r"[\s-]*(?:and\s+an?\s+)?"
    r"(?:hours?|hrs?|minutes?|mins?|seconds?|secs?)\b",
    re.IGNORECASE,
)
_PAST = re.compile(r"\b(?:ago|yesterday|last|past|previous|before|earlier|since)\b", re.IGNORECASE)
_YEAR = re.compile(r"(?<![\d:])(?:1\d|2\d)\d{2}(?![\d:])")


def unknown_words(phrase: str) -> list[str]:
    """The words of ``phrase`` outside the English time vocabulary."""
    return [w for w in _WORD.findall(phrase.casefold()) if w not in ENGLISH_TIME_WORDS]


def is_english(phrase: str) -> bool:
    if any(ord(ch) > 127 and ch.isalpha() for ch in phrase):
        return False
    return not unknown_words(phrase)


def fixes_clock(phrase: str) -> bool:
    """Whether the phrase fixes an hour:minute: a clock ("10:04", "3pm", "noon") or an
    offset in sub-day units ("in 2 hours"). Otherwise only its date is judged."""
    return _CLOCK.search(phrase) is not None


def marks_past(phrase: str) -> bool:
    """An explicit past word: "ago", "yesterday", "last", ..."""
    return _PAST.search(phrase) is not None


def has_own_year(phrase: str) -> bool:
    """A four-digit year ("Nov 25 2014", "29.01.2008"): the phrase does not depend on
    which way the reader leans, so a past reading of it is the only reading. A two-digit
    year ("3/3/50") does depend on it, so it is not its own year."""
    return _YEAR.search(phrase) is not None
