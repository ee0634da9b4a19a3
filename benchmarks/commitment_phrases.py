"""Our own commitment phrasings with hand-computed expectations, for
benchmarks/commitment_parser_bench.py.

Each case is a whole memory entry (trigger phrase, task words and all) said at one of a
few reference moments chosen around DST changes, plus the bare time phrase that the
dateparser baseline is given (a favour to it: it never sees the task words). Expected
one-off times are local wall-clock strings (localized with fold=0, so a time in a
spring-forward gap is written as the shifted time) or UTC instants ending in Z;
recurrences are the canonical RRULE body; conditions the normalized condition string.
The values were worked out by hand from the conventions in
memory/commitment_parsing/time_words.py, time_grammar.py, time_clocks.py,
time_resolution.py, recurrence_phrases.py, recurrence_dates.py and conditions.py, not by
running the parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

Kind = Literal["once", "recurring", "predicate", "none", "unparsable"]


@dataclass(frozen=True)
class Said:
    at: datetime  # aware, in zone
    zone: ZoneInfo


def _said(local: str, zone: str) -> Said:
    tz = ZoneInfo(zone)
    return Said(datetime.fromisoformat(local).replace(tzinfo=tz), tz)


# Wednesday morning in Berlin (CET).
A = _said("2026-11-25T10:30", "Europe/Berlin")
# Friday evening in Berlin, two days before clocks go forward (Sun 2026-03-29 02:00).
B = _said("2026-03-27T18:00", "Europe/Berlin")
# Saturday night in New York, hours before clocks go back (Sun 2026-11-01 02:00).
C = _said("2026-10-31T22:15", "America/New_York")
# Tuesday morning in Tokyo (no DST).
D = _said("2026-07-14T07:45", "Asia/Tokyo")
# Saturday evening in Sydney, hours before clocks go forward (Sun 2026-10-04 02:00).
E = _said("2026-10-03T20:00", "Australia/Sydney")


@dataclass(frozen=True)
class Case:
    text: str
    said: Said
    kind: Kind
    expected: str | None = None
    phrase: str | None = None  # the bare time phrase given to the dateparser baseline
    tags: tuple[str, ...] = ()
    # The phrase names a day but no time of day: the expected time is a convention
    # (09:00, tonight 20:00, this evening 18:00), so a day-level score compares dates only.
    date_only: bool = False


def once(text: str, phrase: str, said: Said, expected: str, tags: tuple[str, ...] = ()) -> Case:
    return Case(text, said, "once", expected, phrase, tags)


def day(text: str, phrase: str, said: Said, expected: str, tags: tuple[str, ...] = ()) -> Case:
    return Case(text, said, "once", expected, phrase, tags, date_only=True)


def every(text: str, rrule: str, said: Said = A) -> Case:
    return Case(text, said, "recurring", rrule)


def when(text: str, normalized: str) -> Case:
    return Case(text, A, "predicate", normalized)


_AT9 = "BYHOUR=9;BYMINUTE=0;BYSECOND=0"
_WEEKDAYS = "BYDAY=MO,TU,WE,TH,FR"

CASES: tuple[Case, ...] = (
    # --- one-off times, said Wednesday 2026-11-25 10:30 Europe/Berlin ---------------------
    once("remind me in 5 days to send the invoice", "in 5 days", A, "2026-11-30 10:30"),
    once("remind me in 2 hours to call Dana", "in 2 hours", A, "2026-11-25 12:30"),
    once("remind me in 30 minutes to check the build", "in 30 minutes", A, "2026-11-25 11:00"),
    once("follow up in 3 weeks on the renewal quote", "in 3 weeks", A, "2026-12-16 10:30"),
    day("remind me tomorrow to book the train", "tomorrow", A, "2026-11-26 09:00"),
    once("remind me tomorrow at 8:30 to prep the demo", "tomorrow at 8:30", A, "2026-11-26 08:30"),
    day("remind me tonight to water the plants", "tonight", A, "2026-11-25 20:00"),
    once(
        "follow up next Tuesday at 15:00 with Priya",
        "next Tuesday at 15:00",
        A,
        "2026-12-01 15:00",
    ),
    day("remind me on Friday to send the deck", "on Friday", A, "2026-11-27 09:00"),
    once("remind me Friday at 9 about the offsite", "Friday at 9", A, "2026-11-27 09:00"),
    once("check back Friday at 9am about the vendor", "Friday at 9am", A, "2026-11-27 09:00"),
    once("remind me at 5pm to leave for the airport", "at 5pm", A, "2026-11-25 17:00"),
    day("remind me on December 3 to renew the domain", "on December 3", A, "2026-12-03 09:00"),
    once(
        "remind me on 2026-12-03 at 10:00 to file the report",
        "on 2026-12-03 at 10:00",
        A,
        "2026-12-03 10:00",
    ),
    day(
        "remind me at the end of the month to close the books",
        "end of the month",
        A,
        "2026-11-30 09:00",
    ),
    day("follow up next week about the pilot", "next week", A, "2026-11-30 09:00"),
    day("check in next month on hiring", "next month", A, "2026-12-01 09:00"),
    # "next Friday" said on a Wednesday is refused by default (two readings; see the
    # not-guessed cases); "this Friday" is the coming one.
    day("remind me this Friday to submit expenses", "this Friday", A, "2026-11-27 09:00"),
    day("remind me on Wednesday to review PRs", "on Wednesday", A, "2026-12-02 09:00"),
    once(
        "remind me tomorrow morning at 8 to run payroll",
        "tomorrow morning at 8",
        A,
        "2026-11-26 08:00",
    ),
    day(
        "follow up the day after tomorrow with legal",
        "the day after tomorrow",
        A,
        "2026-11-27 09:00",
    ),
    once("remind me Monday at 10:15 to send the agenda", "Monday at 10:15", A, "2026-11-30 10:15"),
    once("remind me on Dec 24th at 18:00 to call mom", "Dec 24th at 18:00", A, "2026-12-24 18:00"),
    day("remind me on 3 January to restart the trial", "on 3 January", A, "2027-01-03 09:00"),
    once("follow up with Wen in an hour", "in an hour", A, "2026-11-25 11:30"),
    once(
        "remind me in 10 days at 14:00 to chase the payment",
        "in 10 days at 14:00",
        A,
        "2026-12-05 14:00",
    ),
    day("remind me this evening to send the summary", "this evening", A, "2026-11-25 18:00"),
    once("remind me at noon to order lunch", "at noon", A, "2026-11-25 12:00"),
    once("remind me Thursday at 4pm to prep the retro", "Thursday at 4pm", A, "2026-11-26 16:00"),
    day("remind me on the 1st of December to pay rent", "1st of December", A, "2026-12-01 09:00"),
    once("follow up in 2 months on the contract renewal", "in 2 months", A, "2027-01-25 10:30"),
    # 07:45 has passed today: tomorrow.
    once("remind me at 7:45 am to take the train", "at 7:45 am", A, "2026-11-26 07:45"),
    day("remind me Friday next week to send the report", "Friday next week", A, "2026-12-04 09:00"),
    once("check back in a week about the refund", "in a week", A, "2026-12-02 10:30"),
    once(
        "send the board pack on 2026-12-10 at 08:00",
        "2026-12-10 at 08:00",
        A,
        "2026-12-10 08:00",
        tags=("commitment",),
    ),
    # A colon ends the time phrase; without it "quarterly" would be a leftover word.
    once(
        "Dec 1st 14:30: quarterly review prep",
        "Dec 1st 14:30",
        A,
        "2026-12-01 14:30",
        tags=("Intention",),
    ),
    day("Next Monday: follow up with Dana", "next Monday", A, "2026-11-30 09:00"),
    # Issue 21's kinds: spelled hours with am/pm, fractions of an hour, minutes around an
    # hour, parts of the day after a bare hour, positions in a month, "after next".
    once("remind me at three am to call Dana", "at three am", A, "2026-11-26 03:00"),
    once("remind me in 1/2 hour to call back", "in 1/2 hour", A, "2026-11-25 11:00"),
    once("remind me a quarter past 3pm to stretch", "a quarter past 3pm", A, "2026-11-25 15:15"),
    once("remind me 8 this evening to call mom", "8 this evening", A, "2026-11-25 20:00"),
    day(
        "remind me on the first Tuesday of October to renew",
        "first Tuesday of October",
        A,
        "2027-10-05 09:00",
    ),
    day("remind me Friday after next to pay", "Friday after next", A, "2026-12-04 09:00"),
    # Offsets, fractions and timestamps (issue 21, second round).
    once("remind me in 1.5 days to chase the invoice", "in 1.5 days", A, "2026-11-26 22:30"),
    once("remind me 0,5 hours later to check", "0,5 hours later", A, "2026-11-25 11:00"),
    once("remind me 30 minutes to take the pizza out", "30 minutes", A, "2026-11-25 11:00"),
    once("remind me 2h30m to move the car", "2h30m", A, "2026-11-25 13:00"),
    once("remind me now + 1 hour to stretch", "now + 1 hour", A, "2026-11-25 11:30"),
    once(
        "remind me Thu Aug 05 12:00:00 2027 to file",
        "Thu Aug 05 12:00:00 2027",
        A,
        "2027-08-05 12:00",
    ),
    once("remind me 2027-01-04T09:15:00 to deploy", "2027-01-04T09:15:00", A, "2027-01-04 09:15"),
    day("remind me I'm off tomorrow", "tomorrow", A, "2026-11-26 09:00"),
    # --- said Friday 2026-03-27 18:00 Europe/Berlin, before the spring-forward night -------
    once("remind me in 5 days to renew the certificate", "in 5 days", B, "2026-04-01 18:00"),
    once("remind me in 36 hours to check the deploy", "in 36 hours", B, "2026-03-29 07:00"),
    # 02:30 does not exist that night: shifted forward by the gap.
    once(
        "remind me Sunday at 02:30 to check the backup job",
        "Sunday at 02:30",
        B,
        "2026-03-29 03:30",
    ),
    once("remind me tomorrow at 9 to buy flowers", "tomorrow at 9", B, "2026-03-28 09:00"),
    day("remind me Monday to call the bank", "Monday", B, "2026-03-30 09:00"),
    day("remind me tonight to back up the laptop", "tonight", B, "2026-03-27 20:00"),
    # --- said Saturday 2026-10-31 22:15 America/New_York, before the fall-back night -------
    # 01:30 happens twice: the first one (EDT).
    once(
        "remind me tomorrow at 1:30 am to check the batch",
        "tomorrow at 1:30 am",
        C,
        "2026-11-01 01:30",
    ),
    # Elapsed time: four real hours, which is the second 01:15 of the night.
    once("remind me in 4 hours to lock up", "in 4 hours", C, "2026-11-01T06:15:00Z"),
    once("remind me Monday at 9 to send the invoice", "Monday at 9", C, "2026-11-02 09:00"),
    once("follow up in 3 days with the landlord", "in 3 days", C, "2026-11-03 22:15"),
    # --- said Tuesday 2026-07-14 07:45 Asia/Tokyo -----------------------------------------
    once("remind me at 9 to join the standup", "at 9", D, "2026-07-14 09:00"),
    once("remind me on August 5th at 8am", "August 5th at 8am", D, "2026-08-05 08:00"),
    day("follow up next month with the supplier", "next month", D, "2026-08-01 09:00"),
    day("remind me on Tuesday to send the newsletter", "on Tuesday", D, "2026-07-21 09:00"),
    day(
        "remind me at the end of the month to file taxes",
        "end of the month",
        D,
        "2026-07-31 09:00",
    ),
    # --- said Saturday 2026-10-03 20:00 Australia/Sydney, before the spring-forward night --
    once(
        "remind me tomorrow at 2:30am to watch the launch",
        "tomorrow at 2:30am",
        E,
        "2026-10-04 03:30",
    ),
    once("remind me in 1 day to call Sam", "in 1 day", E, "2026-10-04 20:00"),
    day("remind me next week to review the roadmap", "next week", E, "2026-10-05 09:00"),
    # --- recurrences ----------------------------------------------------------------------
    every("remind me every day at 8 to take vitamins", "FREQ=DAILY;BYHOUR=8;BYMINUTE=0;BYSECOND=0"),
    every("check in daily with the on-call engineer", "FREQ=DAILY;" + _AT9),
    every(
        "remind me every weekday at 9:30 to post the standup",
        f"FREQ=WEEKLY;{_WEEKDAYS};BYHOUR=9;BYMINUTE=30;BYSECOND=0",
    ),
    every(
        "check back every Thursday at 17:00 on the pipeline",
        "FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0",
    ),
    every(
        "remind me every thursday at 5pm", "FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0"
    ),
    every(
        "follow up every other week on Mon and Wed with the design team",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;" + _AT9,
    ),
    every(
        "remind me every 2 weeks on Friday to send payroll",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR;" + _AT9,
    ),
    every("remind me every month on the 1st to pay rent", "FREQ=MONTHLY;BYMONTHDAY=1;" + _AT9),
    every(
        "remind me every first Monday of the month to send the report",
        "FREQ=MONTHLY;BYDAY=1MO;" + _AT9,
    ),
    every("check in weekly on tuesdays with Olu", "FREQ=WEEKLY;BYDAY=TU;" + _AT9),
    every("remind me every 3 days to water the ficus", "FREQ=DAILY;INTERVAL=3;" + _AT9),
    every("remind me every hour to stretch", "FREQ=HOURLY;BYMINUTE=0;BYSECOND=0"),
    every("remind me every Monday morning to plan the week", "FREQ=WEEKLY;BYDAY=MO;" + _AT9),
    every(
        "remind me every evening at 8 to log my hours",
        "FREQ=DAILY;BYHOUR=20;BYMINUTE=0;BYSECOND=0",
    ),
    every(
        "follow up tuesdays and thursdays at 3:15 with support",
        "FREQ=WEEKLY;BYDAY=TU,TH;BYHOUR=15;BYMINUTE=15;BYSECOND=0",
    ),
    every(
        "remind me on the last Friday of each month to send invoices",
        "FREQ=MONTHLY;BYDAY=-1FR;" + _AT9,
    ),
    every(
        "remind me every year on December 31st at 12:00 to renew the license",
        "FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=31;BYHOUR=12;BYMINUTE=0;BYSECOND=0",
    ),
    every(
        "remind me on weekdays at 18:00 to file the timesheet",
        f"FREQ=WEEKLY;{_WEEKDAYS};BYHOUR=18;BYMINUTE=0;BYSECOND=0",
    ),
    every(
        "check back every Friday at 16:30 on open tickets",
        "FREQ=WEEKLY;BYDAY=FR;BYHOUR=16;BYMINUTE=30;BYSECOND=0",
    ),
    every(
        "remind me every 15th of the month to reconcile accounts",
        "FREQ=MONTHLY;BYMONTHDAY=15;" + _AT9,
    ),
    every("remind me each morning to review the inbox", "FREQ=DAILY;" + _AT9),
    every("remind me every weekend to call grandma", "FREQ=WEEKLY;BYDAY=SA,SU;" + _AT9),
    every("follow up every 30 minutes on the incident", "FREQ=MINUTELY;INTERVAL=30;BYSECOND=0"),
    every(
        "remind me monthly on the 10th at 9:15 to review the budget",
        "FREQ=MONTHLY;BYMONTHDAY=10;BYHOUR=9;BYMINUTE=15;BYSECOND=0",
    ),
    every(
        "remind me every last day of the month to send the invoice",
        "FREQ=MONTHLY;BYMONTHDAY=-1;" + _AT9,
    ),
    # A bare "weekly" repeats on the weekday it was said (a Wednesday).
    every("check in weekly with Dana", "FREQ=WEEKLY;BYDAY=WE;" + _AT9),
    every(
        "remind me every Thursday at 17:00 to send the weekly report",
        "FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0",
        B,
    ),
    # --- conditions -----------------------------------------------------------------------
    when(
        "remind me when the contract is signed", "predicate:memory.tag_exists:tag=contract-signed"
    ),
    when(
        "follow up with Dana once the SOC2 report is filed",
        "predicate:memory.tag_exists:tag=soc2-report-filed",
    ),
    when(
        "remind me as soon as the invoice gets paid",
        "predicate:memory.tag_exists:tag=invoice-paid",
    ),
    when("remind me when tag deal-won exists", "predicate:memory.tag_exists:tag=deal-won"),
    when(
        "check back when key deal.stage is closed-won",
        "predicate:memory.key_has_value:key=deal.stage,value=closed-won",
    ),
    when(
        "remind me when key onboarding.done exists",
        "predicate:memory.key_exists:key=onboarding.done",
    ),
    when("remind me to send the retro after the launch", "predicate:memory.tag_exists:tag=launch"),
    when(
        "follow up once our budget is finally approved, then book the venue",
        "predicate:memory.tag_exists:tag=budget-approved",
    ),
    # --- not commitments, and commitments we must not guess at ----------------------------
    Case("the contract was signed yesterday", A, "none"),
    Case("Dana prefers email over Slack", A, "none"),
    Case("remind me to call Dana", A, "unparsable"),
    Case("remind me in a few days to check on the order", A, "unparsable"),
    Case("follow up every Thursday twice", A, "unparsable"),
    Case("remind me on Friday once the contract is signed", A, "unparsable"),
    Case("remind me yesterday to file the form", A, "unparsable"),
    Case("remind me every second to breathe", A, "unparsable"),
    Case("remind me next Friday to submit expenses", A, "unparsable"),  # two readings
    Case("remind me at 5pm sharp to leave", A, "unparsable"),  # a leftover word
    Case("remind me on 10/31/74 to call", A, "unparsable"),  # 1974 or 2074
    Case("remind me the following Friday", A, "unparsable"),
    Case("remind me to attend 12-14 June 2027", A, "unparsable"),  # a range
    Case("remind me to attend June 12-14", A, "unparsable"),  # not June 12th of 2014
    Case("remind me in 1.5 months to renew", A, "unparsable"),  # months differ in length
    Case("remind me Wed Aug 05 12:00:00 2027", A, "unparsable"),  # a Thursday
)
