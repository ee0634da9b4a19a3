"""Recurring requests in a memoryRef: which requests are "the same", and whether their
times follow a cadence a schedule can keep. Pure: no I/O, deterministic for the same
sightings.

A *sighting* is an entry of working or episodic memory (what was said in a session; the
dream's semantic distillates restate it) that asks for something: an intention in
commitment inference's sense (a trigger phrase such as "remind me" or "follow up", or a
``commitment`` / ``intention`` tag, memory/commitment_parsing/phrasing.py) or an entry tagged
``request`` or ``routine``. Its instant is when the request was due, if inference read a
one-time commitment from it (a "remind me Monday at 9" said on Friday is a Monday
request), else when it was written.

"The same" request is consolidation's restatement rule (the one the dream uses to spend
its budget on a fact once, memory/sameness/restatements.py), applied to the request
without its courtesy ("could you ...?", "please", "thanks") and with single spaces:
close vectors of the offline static model, then the conflict guard and the lexical
verifier, then the paraphrase rule. The guard is what keeps "send Dana the report" and
"send Ravi the report" apart: entries that differ in a name, number, date or negation
are never the same. benchmarks/routine_bench.py measures it on STS-B's test half.

A *routine* is the part of a group that keeps a cadence at one time of day: its
sightings within TIME_OF_DAY_SPREAD around their median local time of day that fall
- weekly: on the group's most frequent weekday, in at least MIN_OCCURRENCES distinct
  weeks at most MAX_GAP_WEEKS apart; or
- daily: on at least MIN_DAILY distinct days at most MAX_GAP_DAYS apart.
A sighting off that schedule is left out of the routine, not a reason to drop it. Its
time is the median local time of day, rounded to the nearest quarter hour.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from statistics import median_low
from typing import Literal
from zoneinfo import ZoneInfo

from memory.commitment_parsing.phrasing import is_tagged_intention, locate_intention
from memory.sameness.fact_text import read_fact_text
from memory.sameness.restatements import Restatements

MIN_OCCURRENCES = 3
MIN_DAILY = 5
MAX_GAP_WEEKS = 2
MAX_GAP_DAYS = 2
TIME_OF_DAY_SPREAD = timedelta(hours=2)
ROUND_MINUTES = 15
REQUEST_TAGS = frozenset({"request", "routine"})

Cadence = Literal["weekly", "daily"]


@dataclass(frozen=True, slots=True)
class Sighting:
    entry_id: str
    text: str
    tags: tuple[str, ...]
    at: datetime  # aware


@dataclass(frozen=True, slots=True)
class Routine:
    """A request that recurs on a cadence: its sightings' ids (oldest first) and when a
    schedule would run it, in ``time_zone``."""

    entry_ids: tuple[str, ...]
    cadence: Cadence
    weekday: int | None  # 0 = Monday, for weekly
    hour: int
    minute: int
    time_zone: str
    first_at: datetime
    last_at: datetime

    @property
    def anchor_entry_id(self) -> str:
        return self.entry_ids[0]

    @property
    def schedule_key(self) -> str:
        day = "daily" if self.weekday is None else f"weekly-{self.weekday}"
        return f"{day}@{self.hour:02d}:{self.minute:02d}/{self.time_zone}"


def is_request(text: str, tags: Sequence[str]) -> bool:
    if any(tag.strip().casefold() in REQUEST_TAGS for tag in tags):
        return True
    return is_tagged_intention(tags) or locate_intention(text, tags) is not None


# How a request is asked is not what it asks: "Could you send ...?" asks "send ...".
_COURTESY = re.compile(
    r"^\s*(?:(?:could|can|would|will)\s+you\s+(?:please\s+)?|please\s+|kindly\s+)"
    r"|[\s,]*(?:please|thanks|thank\s+you)?[\s.!?]*$",
    re.IGNORECASE,
)


def request_core(text: str) -> str:
    """The request without its courtesy (a leading "could you" / "please", a trailing
    "please" / "thanks", the question mark) and with single spaces: the static model's
    tokenizer reads each extra space as a token of its own, which took a re-spaced
    copy's cosine from 0.998 to 0.6, under the candidate cut."""
    spaced = " ".join(text.split())
    return _COURTESY.sub("", spaced).strip() or spaced


def group_same_requests(sightings: Sequence[Sighting]) -> list[list[Sighting]]:
    """Sightings grouped by restatement, each group in the order given (oldest first),
    groups in the order of their first sighting."""
    restatements = Restatements(with_paraphrases=True)
    cores = [request_core(sighting.text) for sighting in sightings]
    vectors = Restatements.vectors(cores)
    group_of: list[int] = []
    groups: list[list[Sighting]] = []
    for position, sighting in enumerate(sightings):
        fact = read_fact_text(cores[position])
        vector = vectors[position]
        earlier = restatements.find(fact, vector)
        if earlier is None:
            group_of.append(len(groups))
            groups.append([sighting])
        else:
            group_of.append(group_of[earlier])
            groups[group_of[earlier]].append(sighting)
        restatements.add(fact, vector)
    return groups


def find_routines(sightings: Sequence[Sighting], time_zone: str) -> list[Routine]:
    """The routines among ``sightings`` (requests only; others are ignored), oldest
    first. Sightings are read in (instant, entry id) order whatever the order given."""
    zone = ZoneInfo(time_zone)
    requests = sorted(
        (s for s in sightings if is_request(s.text, s.tags)), key=lambda s: (s.at, s.entry_id)
    )
    routines = []
    for group in group_same_requests(requests):
        routine = _cadence(group, zone, time_zone)
        if routine is not None:
            routines.append(routine)
    return sorted(routines, key=lambda r: (r.first_at, r.anchor_entry_id))


def _cadence(group: list[Sighting], zone: ZoneInfo, zone_name: str) -> Routine | None:
    """The group's routine: the sightings that keep one cadence at one time of day. A
    sighting off the schedule (asked once on a Wednesday night) is left out of it rather
    than cancelling the weeks that keep it."""
    if len(group) < MIN_OCCURRENCES:
        return None
    local = [(sighting, sighting.at.astimezone(zone)) for sighting in group]
    weekday = _modal_weekday(local)
    weekly = _at_one_time([item for item in local if item[1].weekday() == weekday])
    if _weekly(weekly):
        return _routine(weekly, "weekly", weekday, zone_name)
    daily = _at_one_time(local)
    if _daily(daily):
        return _routine(daily, "daily", None, zone_name)
    return None


Located = tuple[Sighting, datetime]


def _minute(moment: datetime) -> int:
    return moment.hour * 60 + moment.minute


def _modal_weekday(local: list[Located]) -> int:
    counts = Counter(moment.weekday() for _, moment in local)
    return min(counts, key=lambda day: (-counts[day], day))  # the most, then the first


def _at_one_time(local: list[Located]) -> list[Located]:
    """The sightings within TIME_OF_DAY_SPREAD around their median time of day."""
    if not local:
        return []
    middle = median_low(_minute(moment) for _, moment in local)
    half = TIME_OF_DAY_SPREAD.total_seconds() // 120
    return [item for item in local if abs(_minute(item[1]) - middle) <= half]


def _weekly(local: list[Located]) -> bool:
    weeks = sorted({moment.date().toordinal() // 7 for _, moment in local})
    if len(weeks) < MIN_OCCURRENCES:
        return False
    return all(later - earlier <= MAX_GAP_WEEKS for earlier, later in pairwise(weeks))


def _daily(local: list[Located]) -> bool:
    days = sorted({moment.date().toordinal() for _, moment in local})
    if len(days) < MIN_DAILY:
        return False
    return all(later - earlier <= MAX_GAP_DAYS for earlier, later in pairwise(days))


def _routine(
    local: list[Located], cadence: Cadence, weekday: int | None, zone_name: str
) -> Routine:
    rounded = round(median_low(_minute(m) for _, m in local) / ROUND_MINUTES) * ROUND_MINUTES
    rounded %= 24 * 60
    sightings = [sighting for sighting, _ in local]
    return Routine(
        entry_ids=tuple(sighting.entry_id for sighting in sightings),
        cadence=cadence,
        weekday=weekday,
        hour=rounded // 60,
        minute=rounded % 60,
        time_zone=zone_name,
        first_at=sightings[0].at,
        last_at=sightings[-1].at,
    )
