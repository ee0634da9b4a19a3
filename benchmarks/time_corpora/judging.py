"""From a corpus' expected instant to a row's expectation: which fields count, and when
a past instant means "no commitment" and when it means "skip".

Rules (every loader that expects an instant uses them):

- Fields: the date always; hour:minute only when the phrase fixes a clock
  (``language.fixes_clock``: "10:04", "3pm", "noon", "in 2 hours"). A date-only phrase's
  time is a convention of each parser (ours: 09:00), so it is not judged.
- Past: the instant is not after the reference (to the minute when a clock is fixed; by
  the date otherwise, or the same date under a corpus reading that is not forward-leaning,
  where "Sunday" said on a Sunday is today for it and next week for a reminder). A
  reminder can never be due then, so:
  * when the corpus reads forward anyway, or the phrase says so itself (a past word such
    as "ago", "yesterday", "last", or its own year "Nov 25 2014"), the row expects no
    commitment: correct when a parser returns nothing, wrong when it returns a time;
  * otherwise the past comes from the corpus' past or current-period preference on a
    phrase a reminder reads forward ("Friday", "3 days" relative to a Sunday): skipped,
    counted as "past-leaning reading".
- Partial dates (a month or a year alone) are skipped: no instant to compare.
"""

from __future__ import annotations

from datetime import date, datetime

from benchmarks.time_corpora.language import fixes_clock, has_own_year, marks_past
from benchmarks.time_corpora.rows import Instant, NoCommitment

PAST_LEANING = "past-leaning reading of a relative phrase (the corpus prefers past/current)"
PAST_INSTANT = "past instant"


def expect_instant(
    phrase: str, when: datetime | date, reference: datetime, *, forward: bool
) -> Instant | NoCommitment | str:
    """The expectation for a phrase the corpus resolves to ``when``, or a skip reason.
    ``forward``: the corpus reads the phrase toward the future (dateparser's
    PREFER_DATES_FROM=future, or a corpus without a past preference for this row)."""
    clock = fixes_clock(phrase)
    if isinstance(when, datetime):
        day, at = when.date(), (when.hour, when.minute)
    else:
        day, at = when, (0, 0)
    if clock:
        minute = datetime(day.year, day.month, day.day, *at)
        past = minute <= reference.replace(second=0, microsecond=0)
    else:
        past = day < reference.date() or (day == reference.date() and not forward)
    if past:
        if forward or marks_past(phrase) or has_own_year(phrase):
            return NoCommitment(PAST_INSTANT)
        return PAST_LEANING
    return Instant(day, at if clock else None)
