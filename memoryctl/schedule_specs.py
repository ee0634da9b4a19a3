"""A Temporal schedule's spec as a person wrote it: cron text back from the calendars the
server stores. The server keeps no cron string (`temporal schedule create --cron "0 23 * * *"`
is stored as a structured calendar: second 0, minute 0, hour 23, every day, month and
weekday; a CRON_TZ= prefix becomes the spec's time zone, `@every 2h` an interval), so
`spec_text` renders each calendar as five fields (minute hour day-of-month month
day-of-week) with `a`, `a-b`, `a-b/step`, comma lists and `*` for a field's full range,
each interval as `every 2h`, several specs joined with "; ", and says so in parentheses
where no cron says the same thing (`(calendar: seconds set)`) rather than show a wrong
one. Pure functions of the spec, used by `memoryctl schedule list`
(memoryctl/dream_schedules.py); tests/memoryctl/test_schedule_list.py checks them on
what a dev server returns, test_schedule_specs.py on what no cron makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from temporalio.client import ScheduleCalendarSpec, ScheduleRange, ScheduleSpec

# The five cron fields in order: the calendar attribute, its name in a message, and the
# full range `*` stands for (Temporal counts weekdays 0-6 from Sunday).
_CRON_FIELDS = (
    ("minute", "minute", 0, 59),
    ("hour", "hour", 0, 23),
    ("day_of_month", "day-of-month", 1, 31),
    ("month", "month", 1, 12),
    ("day_of_week", "day-of-week", 0, 6),
)
# What a cron expression leaves the seconds at; anything else has no 5-field form.
_SECOND_ZERO = (ScheduleRange(0),)
_TIME_ZONE_PREFIXES = ("CRON_TZ=", "TZ=")


def duration_text(value: timedelta) -> str:
    """``2h``, ``1h30m``, ``10m``, ``45s``: the Go duration form the `temporal` CLI's
    --jitter and --interval take (hours are the largest unit, as in Go)."""
    total = value.total_seconds()
    whole = int(total)
    hours, rest = divmod(whole, 3600)
    minutes, seconds = divmod(rest, 60)
    fraction = total - whole
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else ""]
    if seconds or fraction:
        parts.append(f"{seconds + fraction:g}s")
    return "".join(parts) or "0s"


def _range_text(value: ScheduleRange, low: int, high: int) -> str:
    # ScheduleRange normalises an end below the start to the start, and step 0 to 1.
    start, end, step = value.start, max(value.end, value.start), value.step or 1
    if end == start:
        return str(start)
    if step == 1:
        return f"{start}-{end}"
    if (start, end) == (low, high):
        return f"*/{step}"
    return f"{start}-{end}/{step}"


def _field_text(ranges: Sequence[ScheduleRange], low: int, high: int) -> str:
    if tuple(ranges) == (ScheduleRange(low, high),):
        return "*"
    return ",".join(_range_text(value, low, high) for value in ranges)


def calendar_cron(calendar: ScheduleCalendarSpec) -> str:
    """Five cron fields, or ``(calendar: ...)`` naming what five fields cannot say."""
    problems = []
    if tuple(calendar.second) != _SECOND_ZERO:
        problems.append("seconds set")
    if calendar.year:
        problems.append("year set")
    fields = []
    for attribute, name, low, high in _CRON_FIELDS:
        ranges = getattr(calendar, attribute)
        if not ranges:
            # No range matches nothing (the API's rule for every field but year).
            problems.append(f"no {name}")
        fields.append(_field_text(ranges, low, high))
    if problems:
        return f"(calendar: {', '.join(problems)})"
    return " ".join(fields)


def _interval_text(every: timedelta, offset: timedelta | None) -> str:
    text = f"every {duration_text(every)}"
    return f"{text} offset {duration_text(offset)}" if offset else text


def _moment(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def spec_text(spec: ScheduleSpec) -> str:
    """Every calendar as cron (after ``CRON_TZ=<zone> `` when the spec has a zone), any
    cron string the server kept, every interval, joined with "; "; then what narrows
    them: excluded calendars, a start and an end. Jitter is not here (jitter_text)."""
    zone = f"CRON_TZ={spec.time_zone_name} " if spec.time_zone_name else ""
    parts = []
    for calendar in spec.calendars:
        cron = calendar_cron(calendar)
        parts.append(cron if cron.startswith("(") else zone + cron)
    parts += [
        cron if cron.startswith(_TIME_ZONE_PREFIXES) else zone + cron
        for cron in spec.cron_expressions
    ]
    parts += [_interval_text(interval.every, interval.offset) for interval in spec.intervals]
    text = "; ".join(parts) or "(no times: trigger only)"
    notes = []
    if spec.skip:
        count = len(spec.skip)
        notes.append(f"except {count} calendar{'s' if count != 1 else ''}")
    if spec.start_at:
        notes.append(f"from {_moment(spec.start_at)}")
    if spec.end_at:
        notes.append(f"until {_moment(spec.end_at)}")
    return f"{text} ({', '.join(notes)})" if notes else text


def jitter_text(spec: ScheduleSpec) -> str | None:
    """``10m`` for `--jitter 10m`; None without jitter (the server returns zero)."""
    return duration_text(spec.jitter) if spec.jitter else None
