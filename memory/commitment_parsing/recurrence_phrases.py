"""Recurring phrasings -> RecurringSpec: the recurrence grammar.

``parse_recurrence("every Thursday at 17:00", now=..., zone=...)`` gives
``FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0`` over local wall-clock time in
``zone``. The grammar covers the common shapes: daily / every N days, weekdays,
weekends, "every (other|N) week(s) on <days>", plural days ("tuesdays and thursdays"),
"every month on the 1st", "the 4th of every other month", "every first Monday of the
month", "2nd and last Friday of each month", "every July 4th", "every fourth Thursday
in November", hourly / every N minutes, each with "at <time>" anywhere. The shapes
themselves are ``recurrence_rules``; this module picks the one a phrase means, adds its
time of day and writes the spec. When such a spec fires is ``recurrence_dates``'
business.

Conventions:

- The rule is written out in full, so the RRULE body alone says when it fires:
  BYHOUR/BYMINUTE/BYSECOND are always set for daily and longer periods (09:00 when no
  time is given; "every morning/evening" use the parts of day of time_words), and a
  bare "weekly"/"monthly"/"yearly" takes its day from when it was said (BYDAY,
  BYMONTHDAY, BYMONTH+BYMONTHDAY). INTERVAL is written only when it is not 1.
- ``dtstart`` is the start of the period the phrase was said in (that day, that
  week's Monday, the 1st of that month, January 1st, that hour, that minute) at
  00:00: with INTERVAL > 1 it fixes which weeks/days/months are "on", and it is the
  same for every moment of one period. Use ``recurrence_dates.first_occurrence(spec,
  said_at)`` for the first firing: occurrences earlier in that period are not due.
- Anything the RRULE body cannot hold, or that we do not parse, gives None rather than
  a rule that drops part of the phrase: counts ("twice", "3x", "for 5 times"), bounds
  ("until", "starting", "for the next 3 weeks"), exceptions ("except"), positions
  ("instance"), week numbers, seconds, two different recurrences in one phrase, or a
  recurrence next to a one-off date ("every week on the 4th day").
- "at 17:00 UTC"/"GMT" (an allowed zone abbreviation, ``ParsingConventions``) makes the
  rule run in that zone; a clock time next to another zone abbreviation ("5pm PST")
  gives none.
- Every word of the recurrence phrase must be read (``coverage.regions``: the
  recognizer's match and the time pieces count as read; task words after a task
  introducer or verb are not part of it): "every Monday at 9 sharp-ish" has none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Final
from zoneinfo import ZoneInfo

from memory.commitment_parsing.conventions import DEFAULT_CONVENTIONS, ParsingConventions
from memory.commitment_parsing.coverage import regions
from memory.commitment_parsing.recurrence_rules import (
    MONTH_NAME_RE,
    NUMBER_WORD_RE,
    ORDINAL_WORD_RE,
    PLURAL_DAY_RE,
    Found,
    Rule,
    find_all,
    is_adjective,
)
from memory.commitment_parsing.text_map import MappedText, normalize_mapped
from memory.commitment_parsing.time_grammar import scan
from memory.commitment_parsing.time_resolution import Refusal
from memory.commitment_parsing.time_words import (
    DEFAULT_TIME,
    PARTS_OF_DAY,
    WEEKDAY_RE,
)
from schemas.commitment_spec import RecurringSpec

# Phrasings the RRULE body cannot carry or that we do not parse: no rule, never a
# partial one. Kept narrow ("starting on/in/next ...", "instance of", "between 9 ...")
# so that task words like "starting the build" or "EC2 instances" do not trip it.
_UNSUPPORTED: Final = re.compile(
    r"\b(?:twice|thrice|except|excluding|until|till|untill|"
    r"(?:starting|beginning|start)\s+(?:on|in|from|next|tomorrow|today|this|the\s+\d|\d|"
    + MONTH_NAME_RE
    + "|"
    + WEEKDAY_RE
    + r")|from\b.*\b(?:to|until|till|through|thru)|"
    r"for\s+(?:the\s+next\s+|up\s+to\s+)?(?:\d+|a|an|" + NUMBER_WORD_RE + r")\s*"
    r"(?:x|times?|occurrences?|days?|weeks?|months?|years?)\b|up\s+to\s+\d|\d+\s*x|"
    r"(?:\d+|" + NUMBER_WORD_RE + r")\s+(?:times|occurrences)|instances?\s+of|"
    r"in\s+week\s+\d|weeks?\s+\d+|biweekly|bimonthly|semi-?monthly|holidays?|"
    r"between\s+(?:\d|noon|midnight)|"
    r"(?:every|each)\s+(?:\d+\s+(?:seconds?|secs?)|seconds|secs?)\b|"
    r"(?:every|each)\s+(?:other\s+)?second\b(?!\s+(?:day|week|month|year|" + WEEKDAY_RE + r")))\b"
)

RECURRENCE_SIGNAL: Final = re.compile(
    r"\b(?:(?:every|each)\s+(?:other|\d+|single|business|working|fortnight|"
    + ORDINAL_WORD_RE
    + "|"
    + NUMBER_WORD_RE
    + r"|last|days?|weeks?|week\s?days?|weekends?|months?|years?|hours?|hrs?|minutes?|mins?"
    + r"|"
    + MONTH_NAME_RE
    + r"|seconds?|secs?|morning|afternoon|evening|night|"
    + WEEKDAY_RE
    + r")|daily|weekly|monthly|yearly|annually|hourly|nightly|fortnightly|biweekly|bimonthly"
    r"|everyday|weekdays|weekends|once\s+(?:a|per|every)\s+\w+|twice\s+(?:a|per|every)\s+\w+"
    r"|\w+\s+times\s+(?:a|per)\s+\w+|" + PLURAL_DAY_RE + r")"
)


def has_recurrence_signal(text: str) -> bool:
    """Does ``text`` (normalized) say something repeats? Then it must parse as a
    recurrence or not at all: "every Thursday" is never read as one Thursday."""
    return any(not is_adjective(text, match) for match in RECURRENCE_SIGNAL.finditer(text))


# A day number left over once the recurrence is read: part of the schedule we did not
# parse (a day of the year, a week day number), so no rule rather than a partial one.
_STRAY_DAY: Final = re.compile(r"\b(?:\d{1,3}(?:st|nd|rd|th)|day\s+\d{1,3})\b")
_POD_AFTER: Final = re.compile(r"\s*(morning|afternoon|evening|night)s?\b")


@dataclass(frozen=True)
class _Times:
    times: list[time]
    said: bool  # whether the phrase gave a time of day
    taken: bytes  # the characters the time pieces consumed
    codes: tuple[str, ...]


def _times(
    rule: Rule, text: str, span: Found, now_local: datetime, conventions: ParsingConventions
) -> _Times | None:
    """The times of day of a rule; several only when they share the minute ("at 9am and
    5pm"); None when the rest of the phrase does not fit."""
    remaining = text[: span.start] + " " * (span.end - span.start) + text[span.end :]
    found = scan(remaining, now_local=now_local, conventions=conventions)
    if found.dates or found.weekdays or found.relatives or found.exact or found.invalid:
        return None  # "every week on the 4th day", "every Monday in 5 days"
    if _STRAY_DAY.search(remaining):
        return None  # "31st of every year": a day we would otherwise drop
    taken = bytearray(found.taken)
    pods = set(found.parts_of_day)
    after = _POD_AFTER.match(text, span.end)  # "every Monday morning"
    if after:
        pods.add(after.group(1))
        taken[after.start() : after.end()] = b"\x01" * (after.end() - after.start())
    if rule.part_of_day:
        pods.add(rule.part_of_day)
    soft = set(found.soft_times)
    if len(pods) > 1 or len(soft) > 1:
        return None
    pod = next(iter(pods), None)
    clocks = {clock.resolve(pod) for clock in found.clocks}
    if None in clocks:
        return None
    codes = [*found.conventions, *(c for c in {k.convention(pod) for k in found.clocks} if c)]
    times = sorted(c for c in clocks if c is not None)
    said = bool(times or pod or soft)
    if not times:
        times = [PARTS_OF_DAY[pod]] if pod else sorted(soft) or [DEFAULT_TIME]
        codes.append(
            f"part-of-day-{pod}-{times[0]:%H:%M}" if pod else f"default-time-{times[0]:%H:%M}"
        )
    if len({t.minute for t in times}) > 1 or any(t.second or t.microsecond for t in times):
        return None  # the rule holds one minute and BYSECOND=0: "at 9:00:30" is refused
    return _Times(times, said, bytes(taken), tuple(codes))


def build_rrule(rule: Rule, times: list[time]) -> str:
    """The canonical RRULE body: fixed part order, sorted values, INTERVAL only if > 1."""
    parts = [f"FREQ={rule.freq}"]
    if rule.interval != 1:
        parts.append(f"INTERVAL={rule.interval}")
    if rule.by_month:
        parts.append("BYMONTH=" + ",".join(map(str, sorted(rule.by_month))))
    if rule.by_month_day:
        parts.append("BYMONTHDAY=" + ",".join(map(str, rule.by_month_day)))
    if rule.by_day:
        parts.append("BYDAY=" + ",".join(rule.by_day))
    if rule.freq in ("HOURLY", "MINUTELY"):
        parts.extend(["BYMINUTE=0", "BYSECOND=0"] if rule.freq == "HOURLY" else ["BYSECOND=0"])
    else:
        parts.append("BYHOUR=" + ",".join(str(t.hour) for t in times))
        parts.extend([f"BYMINUTE={times[0].minute}", "BYSECOND=0"])
    return ";".join(parts)


def period_start(freq: str, local: datetime) -> datetime:
    """Naive start of the period ``local`` falls in: the anchor of INTERVAL > 1."""
    naive = local.replace(tzinfo=None, second=0, microsecond=0)
    if freq == "MINUTELY":
        return naive
    if freq == "HOURLY":
        return naive.replace(minute=0)
    day = datetime.combine(naive.date(), time())
    if freq == "WEEKLY":
        return day - timedelta(days=day.weekday())
    if freq == "MONTHLY":
        return day.replace(day=1)
    if freq == "YEARLY":
        return day.replace(month=1, day=1)
    return day


@dataclass(frozen=True)
class RecurrenceReading:
    """A recurrence read whole: the spec, the span read (offsets of the text given) and
    the codes of the conventions applied."""

    spec: RecurringSpec
    span: tuple[int, int]
    conventions: tuple[str, ...]


def read_recurrence(
    mapped: MappedText,
    *,
    now: datetime,
    zone: ZoneInfo,
    conventions: ParsingConventions = DEFAULT_CONVENTIONS,
) -> RecurrenceReading | Refusal:
    """The recurrence a part of an entry describes, or why there is none we read."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    text = mapped.text
    if not text or _UNSUPPORTED.search(text):
        return Refusal("unsupported-recurrence")
    whole = scan(text, now_local=now.astimezone(zone).replace(tzinfo=None), conventions=conventions)
    if whole.refusal == "unknown-zone-abbreviation":
        return Refusal(whole.refusal)  # "every day at 5pm PST": an abbreviation not allowed
    codes: tuple[str, ...] = ()
    if whole.clocks and isinstance(whole.zone, ZoneInfo):
        zone = whole.zone  # "every day at 17:00 UTC": the rule runs in that zone
        codes = (f"zone-{whole.zone_code}",)
    now_local = now.astimezone(zone)
    found = list(find_all(text, now_local.date()))
    if not found:
        return Refusal("unsupported-recurrence")
    primary = found[0]
    # A second, separate recurrence ("every Monday and every Friday") is not dropped.
    if any(f.end <= primary.start or f.start >= primary.end for f in found[1:]):
        return Refusal("unsupported-recurrence")
    times = _times(primary.rule, text, primary, now_local.replace(tzinfo=None), conventions)
    if times is None:
        return Refusal("unsupported-recurrence")
    if primary.rule.freq in ("HOURLY", "MINUTELY"):
        if times.said:
            return Refusal("unsupported-recurrence")  # "every hour at 9": not supported
        codes = tuple(c for c in codes if not c.startswith("default-time"))
    else:
        codes += times.codes + primary.rule.implied
    taken = bytearray(times.taken)
    taken[primary.start : primary.end] = b"\x01" * (primary.end - primary.start)
    covered = regions(text, taken)
    if covered.leftover or covered.span is None:
        return Refusal("leftover-words")
    spec = RecurringSpec(
        rrule=build_rrule(primary.rule, times.times),
        dtstart=period_start(primary.rule.freq, now_local),
        time_zone=zone.key or "UTC",
    )
    return RecurrenceReading(spec, mapped.span(*covered.span), tuple(dict.fromkeys(codes)))


def parse_recurrence(
    phrase: str,
    *,
    now: datetime,
    zone: ZoneInfo,
    conventions: ParsingConventions = DEFAULT_CONVENTIONS,
) -> RecurringSpec | None:
    """The recurrence ``phrase`` describes, or None when it describes none we read whole."""
    reading = read_recurrence(normalize_mapped(phrase), now=now, zone=zone, conventions=conventions)
    return reading.spec if isinstance(reading, RecurrenceReading) else None
