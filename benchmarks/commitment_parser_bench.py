"""Commitment-parser accuracy on three phrase sets, with dateparser measured in the same run.

    python -m benchmarks.commitment_parser_bench             # every phrase
    python -m benchmarks.commitment_parser_bench --quick     # 15 phrases per set (smoke)

1. ctparse's corpus (``ctparse.time.corpus.corpus``, shipped in the ctparse wheel): rows
   of (expected "Time[]{YYYY-MM-DD HH:MM (X/X)}", reference time, phrases). Scored: the
   English phrases of Time targets that fix a whole date and/or a clock time. Skipped,
   and counted by reason: German phrases (umlauts or German words), Interval and
   Duration targets, part-of-day targets ("morning", "first"), and partial dates (a
   year or a month alone). A phrase is correct when every field the target specifies
   (the date; hour:minute) equals ours; resolved in UTC at the reference time.
2. recurrent's test expressions (``recurrent.test.expressions``, shipped in the
   recurrent wheel; the module is imported for its list, its tests are not run). Scored:
   the rows whose expectation is a rule dict, in two rows of the table. Rules an RRULE
   body holds: correct when FREQ, INTERVAL, BYDAY and BYMONTHDAY match (as sets) and
   BYHOUR/BYMINUTE/BYMONTH match where the row gives them; a value the row leaves to
   its reference date (bare "weekly" -> that weekday) counts as that value, since our
   rules spell it out. Rules that also need a count, until, dtstart, exdate, exrule,
   bysetpos, byyearday or byweekno (which our RecurringSpec does not hold): correct only
   when we return no rule, since any rule would drop part of the phrase. Rows expecting
   one date or nothing are skipped, counted, and checked for false recurrences.
3. Our own commitment phrasings (benchmarks/commitment_phrases.py): whole entries
   through ``infer_commitment``, split into one-off times, recurrences, conditions, and
   entries that are not commitments or must not be guessed at.

The baseline is ``dateparser.parse(phrase, settings={"PREFER_DATES_FROM": "future",
"RELATIVE_BASE": <reference>})`` out of the box. It has no notion of recurrence or
conditions (n/a there). On our set it gets the bare time phrase, not the whole entry.
Each row reports correct, wrong (an answer that differs) and none (no answer).
Results go to benchmarks/results/commitment-parser.json (commitment-parser-quick.json
with --quick).
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from benchmarks.commitment_phrases import CASES, Case
from memory.commitment_parsing.inference import Inferred, Unparsable, infer_commitment
from memory.commitment_parsing.recurrence_dates import rrule_parts
from memory.commitment_parsing.recurrence_phrases import parse_recurrence
from memory.commitment_parsing.time_resolution import parse_time_phrase
from memory.commitment_parsing.time_words import localize

T = TypeVar("T")
RESULTS_DIR = Path(__file__).with_name("results")
QUICK_LIMIT = 15
UTC_ZONE = ZoneInfo("UTC")


@dataclass
class Tally:
    """Correct / wrong / none counts of one parser on one set, and its time."""

    correct: int = 0
    wrong: int = 0
    none: int = 0
    seconds: float = 0.0

    @property
    def scored(self) -> int:
        return self.correct + self.wrong + self.none

    def add(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    def percent(self) -> float:
        return 100.0 * self.correct / self.scored if self.scored else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "wrong": self.wrong,
            "none": self.none,
            "accuracy": round(self.percent() / 100, 4),
            "ms_per_phrase": round(1000 * self.seconds / self.scored, 3) if self.scored else None,
        }


@dataclass
class SetResult:
    name: str
    ours: Tally = field(default_factory=Tally)
    dateparser: Tally | None = field(default_factory=Tally)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)  # phrases we got wrong (corpus text)


def timed(tally: Tally, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, its time added to ``tally``."""
    started = time.perf_counter()
    try:
        return call(*args, **kwargs)
    finally:
        tally.seconds += time.perf_counter() - started


def dateparser_parse(phrase: str, base: datetime) -> datetime | None:
    """The baseline, out of the box: future preference, relative to ``base`` (naive)."""
    import dateparser

    return dateparser.parse(phrase, settings={"PREFER_DATES_FROM": "future", "RELATIVE_BASE": base})


# ---------------------------------------------------------------------------------------
# 1. ctparse

_TARGET = re.compile(r"^Time\[\]\{(?P<date>\S+) (?P<time>\S+) \((?P<dow>[^/]*)/(?P<pod>[^)]*)\)\}$")
_FOLLOWING_WEEKDAY = re.compile(
    r"\b(?:next|following)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.IGNORECASE
)
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
        if token.startswith(_GERMAN_STEMS) or token in ("uhr",):
            return True
        if token == "am":
            if index == 0 or not tokens[index - 1].isdigit():
                return True
            continue
        if token in _GERMAN_WORDS:
            return True
    return bool(re.search(r"\d(?:uhr|ten|ter)\b", lowered))


@dataclass(frozen=True)
class Target:
    day: date | None
    clock: tuple[int, int] | None


def ctparse_target(expected: str) -> Target | str:
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
    return Target(day, clock)


def judge_fields(target: Target, got: datetime | None) -> str:
    if got is None:
        return "none"
    if target.day is not None and got.date() != target.day:
        return "wrong"
    if target.clock is not None and (got.hour, got.minute) != target.clock:
        return "wrong"
    return "correct"


def ctparse_rows() -> Iterable[tuple[str, str, str]]:
    corpus = importlib.import_module("ctparse.time.corpus").corpus
    for expected, reference, phrases in corpus:
        for phrase in phrases:
            yield expected, reference, phrase


def run_ctparse(limit: int | None) -> SetResult:
    result = SetResult("ctparse corpus (English Time)")
    assert result.dateparser is not None
    scored = convention = 0
    for expected, reference, phrase in ctparse_rows():
        if is_german(phrase):
            result.skipped["German phrase"] += 1
            continue
        target = ctparse_target(expected)
        if isinstance(target, str):
            result.skipped[target] += 1
            continue
        if limit is not None and scored >= limit:
            result.skipped["--quick limit"] += 1
            continue
        scored += 1
        base = datetime.fromisoformat(reference)
        ours = timed(
            result.ours, parse_time_phrase, phrase, now=base.replace(tzinfo=UTC), zone=UTC_ZONE
        )
        outcome = judge_fields(target, None if ours is None else ours.local)
        result.ours.add(outcome)
        if outcome != "correct":
            result.misses.append(f"{phrase!r} -> {ours.local if ours else None} ({expected})")
        theirs = timed(result.dateparser, dateparser_parse, phrase, base)
        result.dateparser.add(judge_fields(target, theirs))
        if outcome == "wrong" and _FOLLOWING_WEEKDAY.search(phrase):
            convention += 1
    result.notes.append(
        f"{convention} of ours' wrong answers are 'next/following <weekday>', which we read "
        "as the coming one (our convention) and ctparse as the one in the week after"
    )
    return result


# ---------------------------------------------------------------------------------------
# 2. recurrent

_REPRESENTABLE = {"freq", "interval", "byday", "bymonthday", "bymonth", "byhour", "byminute"}


def recurrent_rows() -> list[tuple[str, Any]]:
    # Importing the module builds its expression list; unittest runs nothing on import.
    module = importlib.import_module("recurrent.test")
    rows = []
    for row in module.expressions:
        rows.append((row[0], row[1]))
    return rows


def _values(value: Any) -> set[str]:
    return {v.strip().lstrip("+").upper() for v in str(value).split(",") if v.strip()}


def judge_recurrence(expected: dict[str, Any], ours: dict[str, str] | None, now: datetime) -> str:
    if ours is None:
        return "correct" if set(expected) - _REPRESENTABLE else "none"
    if set(expected) - _REPRESENTABLE:
        return "wrong"  # we returned a rule that drops a count, bound or exception
    freq = str(expected["freq"]).upper()
    implied: dict[str, str] = {}
    # What dateutil fills in from the reference date when the row leaves it out.
    if freq == "WEEKLY" and "byday" not in expected:
        implied["byday"] = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")[now.weekday()]
    if freq in ("MONTHLY", "YEARLY") and "byday" not in expected and "bymonthday" not in expected:
        implied["bymonthday"] = str(now.day)
    if freq == "YEARLY" and "bymonth" not in expected:
        implied["bymonth"] = str(now.month)
    checks = [
        ours.get("FREQ") == freq,
        int(ours.get("INTERVAL", "1")) == int(expected.get("interval", 1)),
    ]
    for key in ("byday", "bymonthday", "bymonth"):
        want = expected.get(key, implied.get(key))
        got = ours.get(key.upper())
        checks.append(_values(want) == _values(got) if want is not None else got is None)
    for key in ("byhour", "byminute"):
        if key in expected:
            checks.append(_values(expected[key]) == _values(ours.get(key.upper(), "")))
    return "correct" if all(checks) else "wrong"


def run_recurrent(limit: int | None) -> list[SetResult]:
    """Two rows: rules an RRULE body can hold, and rules that need more (where the
    right answer for us is no rule)."""
    plain = SetResult("recurrent: representable rules", dateparser=None)
    beyond = SetResult("recurrent: needs count/until/except", dateparser=None)
    module_now = importlib.import_module("recurrent.test").NOW
    now = module_now.replace(tzinfo=UTC)
    false_recurrences = 0
    for phrase, expected in recurrent_rows():
        if not isinstance(expected, dict):
            kind = type(expected).__name__
            reason = {
                "NoneType": "not a date (expected nothing)",
                "ExpectedFailure": "known failure in recurrent (expected nothing)",
            }.get(kind, "one-off date (not a recurrence)")
            plain.skipped[reason] += 1
            if parse_recurrence(phrase, now=now, zone=UTC_ZONE) is not None:
                false_recurrences += 1
            continue
        result = beyond if set(expected) - _REPRESENTABLE else plain
        if limit is not None and result.ours.scored >= limit:
            result.skipped["--quick limit"] += 1
            continue
        spec = timed(result.ours, parse_recurrence, phrase, now=now, zone=UTC_ZONE)
        ours = None if spec is None else rrule_parts(spec.rrule)
        outcome = judge_recurrence(expected, ours, now)
        result.ours.add(outcome)
        if outcome != "correct":
            result.misses.append(f"{phrase!r} -> {spec.rrule if spec else None} ({expected})")
    beyond.notes.append("correct = no rule returned (a rule would drop part of the phrase)")
    skipped = sum(v for k, v in plain.skipped.items() if k != "--quick limit")
    plain.notes.append(
        f"of the {skipped} skipped rows (one date or nothing), {false_recurrences} were read "
        "as a recurrence by ours (recurrent marks 'once a month' as an expected failure)"
    )
    return [plain, beyond]


# ---------------------------------------------------------------------------------------
# 3. our phrasings


def expected_instant(case: Case) -> datetime:
    assert case.expected is not None
    if case.expected.endswith("Z"):
        return datetime.fromisoformat(case.expected)
    naive = datetime.fromisoformat(case.expected)
    return localize(naive, case.said.zone).astimezone(UTC)


def judge_case(case: Case, outcome: Inferred | Unparsable | None) -> str:
    if case.kind == "none":
        return "correct" if outcome is None else "wrong"
    if case.kind == "unparsable":
        return "correct" if isinstance(outcome, Unparsable) else "wrong"
    if not isinstance(outcome, Inferred):
        return "none"
    if case.kind == "once":
        at = getattr(outcome.spec, "at", None)
        return "correct" if at == expected_instant(case) else "wrong"
    if case.kind == "recurring":
        rrule = getattr(outcome.spec, "rrule", None)
        return "correct" if rrule == case.expected else "wrong"
    return "correct" if outcome.normalized_condition == case.expected else "wrong"


_OWN_GROUPS = {
    "once": "own set: one-off times",
    "recurring": "own set: recurrences",
    "predicate": "own set: conditions",
    "none": "own set: not commitments / no guess",
    "unparsable": "own set: not commitments / no guess",
}


def same_day_level(case: Case, instant: datetime | None) -> bool:
    """Correct on the fields the phrase fixes: the date alone for a date-only phrase."""
    if instant is None:
        return False
    expected = expected_instant(case)
    if not case.date_only:
        return instant == expected
    zone = case.said.zone
    return instant.astimezone(zone).date() == expected.astimezone(zone).date()


def run_own(limit: int | None) -> list[SetResult]:
    groups: dict[str, SetResult] = {}
    day_level = Counter[str]()
    for case in CASES:
        name = _OWN_GROUPS[case.kind]
        result = groups.setdefault(
            name, SetResult(name, dateparser=Tally() if case.kind == "once" else None)
        )
        if limit is not None and result.ours.scored >= limit:
            result.skipped["--quick limit"] += 1
            continue
        outcome = timed(
            result.ours,
            infer_commitment,
            case.text,
            case.tags,
            said_at=case.said.at,
            zone=case.said.zone,
        )
        verdict = judge_case(case, outcome)
        result.ours.add(verdict)
        if verdict != "correct":
            result.misses.append(f"{case.text!r} -> {outcome}")
        if result.dateparser is not None and case.phrase is not None:
            base = case.said.at.replace(tzinfo=None)
            theirs = timed(result.dateparser, dateparser_parse, case.phrase, base)
            instant = None
            if theirs is not None:
                instant = localize(theirs.replace(tzinfo=None), case.said.zone).astimezone(UTC)
            if theirs is None:
                result.dateparser.add("none")
            else:
                result.dateparser.add("correct" if instant == expected_instant(case) else "wrong")
            ours_at = getattr(getattr(outcome, "spec", None), "at", None)
            day_level["ours"] += same_day_level(case, ours_at)
            day_level["dateparser"] += same_day_level(case, instant)
            day_level["n"] += 1
            day_level["date_only"] += case.date_only
    once_group = groups.get(_OWN_GROUPS["once"])
    if once_group is not None and day_level["n"]:
        n, dates_only = day_level["n"], day_level["date_only"]
        ours_pct, theirs_pct = (100 * day_level[k] / n for k in ("ours", "dateparser"))
        once_group.notes.append(
            f"scored on the fields the phrase fixes (the date alone for the {dates_only} "
            f"date-only phrases, whose 09:00/20:00 is our convention): ours {ours_pct:.1f}%, "
            f"dateparser {theirs_pct:.1f}%"
        )
    return list(groups.values())


# ---------------------------------------------------------------------------------------
# Report


def _cell(tally: Tally | None) -> str:
    if tally is None:
        return f"{'n/a':>8} {'':>5} {'':>5}"
    return f"{tally.percent():>7.1f}% {tally.wrong:>5} {tally.none:>5}"


def print_table(results: Sequence[SetResult]) -> None:
    print(
        f"{'phrase set':<38} {'n':>4}  {'ours':>8} {'wrong':>5} {'none':>5}"
        f"  {'dateparser':>8} {'wrong':>5} {'none':>5}  {'skipped':>7}"
    )
    for result in results:
        print(
            f"{result.name:<38} {result.ours.scored:>4}  {_cell(result.ours)}"
            f"  {_cell(result.dateparser):>22}  {sum(result.skipped.values()):>7}"
        )
    for result in results:
        for reason, count in sorted(result.skipped.items()):
            print(f"  skipped from {result.name}: {count} {reason}")
        for note in result.notes:
            print(f"  {result.name}: {note}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_LIMIT} phrases per set")
    parser.add_argument("--limit", type=int, default=None, help="phrases scored per set")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument("--misses", action="store_true", help="list the phrases ours missed")
    args = parser.parse_args(argv)
    limit = args.limit if args.limit is not None else (QUICK_LIMIT if args.quick else None)
    # dateparser warns about pytz/zoneinfo deprecations on some versions; not ours.
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    started = time.perf_counter()
    dateparser_parse("tomorrow", datetime(2026, 1, 1))  # import and warm up outside the timings
    results = [run_ctparse(limit), *run_recurrent(limit), *run_own(limit)]
    elapsed = time.perf_counter() - started
    print_table(results)
    if args.misses:
        for result in results:
            for miss in result.misses:
                print(f"  miss [{result.name}]: {miss}")
    print(f"total {elapsed:.1f} s")
    document = {
        "benchmark": "commitment_parser_bench",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "limit": limit,
        "python": platform.python_version(),
        "total_seconds": round(elapsed, 2),
        "sets": [
            {
                "name": r.name,
                "scored": r.ours.scored,
                "ours": r.ours.to_json(),
                "dateparser": None if r.dateparser is None else r.dateparser.to_json(),
                "skipped": dict(r.skipped),
                "notes": r.notes,
            }
            for r in results
        ],
    }
    target = args.json or RESULTS_DIR / (
        "commitment-parser-quick.json" if limit is not None else "commitment-parser.json"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"results: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
