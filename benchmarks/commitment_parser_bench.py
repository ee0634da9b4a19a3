"""Commitment-parser accuracy on public time-expression corpora, per development and test
half, with dateparser and parsedatetime measured in the same run.

    python -m benchmarks.time_corpora.fetch                      # once: the sdist corpora
    python -m benchmarks.commitment_parser_bench                 # both halves
    python -m benchmarks.commitment_parser_bench --half dev --misses
    python -m benchmarks.commitment_parser_bench --quick         # wheel corpora, 15 rows/half

Corpora (benchmarks/time_corpora/, one module each; each module's docstring holds its
rules: what is scored, what a row expects, what is skipped and why):

- ctparse corpus (ctparse wheel), recurrent's expressions (recurrent wheel);
- dateparser 1.5.0's own test cases and timefhuman 0.1.4's end-to-end cases, read with
  ``ast`` from sdists fetched once into .cache/time-corpora/. When one is missing the
  benchmark exits 2 naming ``python -m benchmarks.time_corpora.fetch``; nothing
  downloads here.

Split: every row has a half in benchmarks/time_corpora/split.json (committed before any
tuning; see split.py). A row whose key the file lacks is counted as "unassigned",
listed, and never scored. Only the development halves may be used to tune the grammar:
``--misses`` lists our wrong and none answers on the dev half only, never the test half.

Scoring (benchmarks/time_corpora/scoring.py): ours through the whole inference path,
``infer_commitment("Remind me " + phrase, (), said_at=<reference, UTC>, zone=UTC)``;
the baselines on the bare phrase: dateparser out of the box (PREFER_DATES_FROM=future,
RELATIVE_BASE=reference) and parsedatetime (``Calendar().parseDT(phrase,
sourceTime=reference)``, status 0 = none), both with the past filter ours applies (an
instant not after the reference is no answer). Per row a verdict correct / wrong / none:

- one-off instant expected: equal on the fields the row fixes (the date; hour:minute
  only when the phrase fixes a clock) is correct; another instant, a recurrence or a
  condition is wrong; no answer (Unparsable, None) is none;
- no commitment expected (no date, or a past instant a reminder can never be due at):
  no answer is correct, any answer wrong;
- a recurrence expected (recurrent): ours is compared part by part with the row's rule
  (scoring.rule_matches); an instant is wrong; rules needing count/until/exceptions
  expect no answer.

Targets, checked on each test half (PASS/FAIL per row, exit status 0 either way): ours
wrong <= 1% of scored rows, and ours correct >= dateparser correct. Results go to
benchmarks/results/commitment-parser.json (commitment-parser-quick.json with --quick),
with the targets, the skip counts and a sha256 of memory/commitment_parsing/*.py (the
grammar measured).

Regression section (not part of the accuracy table): our own phrasings
(benchmarks/commitment_phrases.py), whole entries through ``infer_commitment``, split
into one-off times, recurrences, conditions and non-commitments; dateparser gets the
bare time phrase of the one-off cases.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.commitment_phrases import CASES, Case
from benchmarks.time_corpora import CORPORA, FETCHED, WHEEL_SHIPPED, Loader
from benchmarks.time_corpora.fetch import FETCH_COMMAND, SDISTS, CorpusMissing, require
from benchmarks.time_corpora.rows import Instant, NoCommitment, Recurrence, Row
from benchmarks.time_corpora.scoring import PARSERS, Answer, Verdict, verdict
from benchmarks.time_corpora.split import HALVES, Half, load_split
from memory.commitment_parsing.inference import Inferred, Unparsable, infer_commitment
from memory.commitment_parsing.time_words import localize

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = Path(__file__).with_name("results")
QUICK_LIMIT = 15
WRONG_SHARE_MAX = 0.01  # target: ours wrong <= 1% of scored test rows


@dataclass
class Tally:
    """Correct / wrong / none counts of one parser on one half, and its time."""

    correct: int = 0
    wrong: int = 0
    none: int = 0
    errors: int = 0  # the parser raised (counted as none too)
    seconds: float = 0.0

    @property
    def scored(self) -> int:
        return self.correct + self.wrong + self.none

    def add(self, outcome: Verdict) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "wrong": self.wrong,
            "none": self.none,
            "errors": self.errors,
            "ms_per_phrase": round(1000 * self.seconds / self.scored, 3) if self.scored else None,
        }


@dataclass
class HalfResult:
    corpus: str
    half: Half
    tallies: dict[str, Tally] = field(default_factory=lambda: {p: Tally() for p in PARSERS})
    by_kind: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # kind, parser, verdict
    misses: list[str] = field(default_factory=list)

    @property
    def scored(self) -> int:
        return self.tallies["ours"].scored

    def targets(self) -> dict[str, Any]:
        ours, theirs = self.tallies["ours"], self.tallies["dateparser"]
        wrong_ok = ours.wrong <= WRONG_SHARE_MAX * self.scored
        correct_ok = ours.correct >= theirs.correct
        return {
            "wrong": ours.wrong,
            "wrong_max": round(WRONG_SHARE_MAX * self.scored, 2),
            "wrong_ok": wrong_ok,
            "correct": ours.correct,
            "dateparser_correct": theirs.correct,
            "correct_ok": correct_ok,
            "pass": wrong_ok and correct_ok,
        }


@dataclass
class CorpusResult:
    name: str
    halves: dict[Half, HalfResult]
    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    unassigned: list[str] = field(default_factory=list)  # keys absent from split.json
    limited: int = 0  # scored rows left out by --quick


def kind_of(row: Row) -> str:
    expected = row.expected
    if isinstance(expected, Instant):
        return "instant"
    if isinstance(expected, NoCommitment):
        return "no commitment"
    if isinstance(expected, Recurrence):
        return "rule" if expected.representable else "rule beyond RRULE"
    return "?"


def timed(tally: Tally, call: Callable[[Row], Answer], row: Row) -> Answer:
    started = time.perf_counter()
    try:
        return call(row)
    finally:
        tally.seconds += time.perf_counter() - started


def run_corpus(
    name: str,
    load: Loader,
    split: dict[str, dict[str, Half]],
    halves: Sequence[Half],
    limit: int | None,
    misses: bool,
) -> CorpusResult:
    rows = list(load())
    assigned = split.get(name, {})
    result = CorpusResult(name, {h: HalfResult(name, h) for h in halves}, rows=len(rows))
    for row in rows:
        if row.key not in assigned:
            result.unassigned.append(row.key)
            continue
        if not row.scored:
            result.skipped[row.skip or "no expectation"] += 1
            continue
        half = assigned[row.key]
        if half not in result.halves:
            continue
        target = result.halves[half]
        if limit is not None and target.scored >= limit:
            result.limited += 1
            continue
        assert row.expected is not None
        for parser, call in PARSERS.items():
            tally = target.tallies[parser]
            answer = timed(tally, call, row)
            outcome = verdict(row.expected, answer, row.reference)
            tally.add(outcome)
            tally.errors += answer.error is not None
            target.by_kind[(kind_of(row), parser, outcome)] += 1
            if parser == "ours" and outcome != "correct" and misses and half == "dev":
                target.misses.append(
                    f"{outcome:<5} {row.phrase!r} (said {row.reference:%Y-%m-%d %H:%M}, "
                    f"{row.group}) -> {answer.describe()}; expected {row.expected.describe()}"
                )
    return result


# ---------------------------------------------------------------------------------------
# Regression: our own phrasings (not part of the accuracy table)


@dataclass
class OwnResult:
    name: str
    ours: Tally = field(default_factory=Tally)
    dateparser: Tally | None = None
    misses: list[str] = field(default_factory=list)


_OWN_GROUPS = {
    "once": "one-off times",
    "recurring": "recurrences",
    "predicate": "conditions",
    "none": "not commitments / no guess",
    "unparsable": "not commitments / no guess",
}


def expected_instant(case: Case) -> datetime:
    assert case.expected is not None
    if case.expected.endswith("Z"):
        return datetime.fromisoformat(case.expected)
    return localize(datetime.fromisoformat(case.expected), case.said.zone).astimezone(UTC)


def judge_case(case: Case, outcome: Inferred | Unparsable | None) -> Verdict:
    if case.kind == "none":
        return "correct" if outcome is None else "wrong"
    if case.kind == "unparsable":
        return "correct" if isinstance(outcome, Unparsable) else "wrong"
    if not isinstance(outcome, Inferred):
        return "none"
    if case.kind == "once":
        return "correct" if getattr(outcome.spec, "at", None) == expected_instant(case) else "wrong"
    if case.kind == "recurring":
        return "correct" if getattr(outcome.spec, "rrule", None) == case.expected else "wrong"
    return "correct" if outcome.normalized_condition == case.expected else "wrong"


def dateparser_on_case(case: Case) -> Verdict:
    import dateparser

    assert case.phrase is not None
    base = case.said.at.replace(tzinfo=None)
    settings: Any = {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": base}
    theirs = dateparser.parse(case.phrase, settings=settings)
    if theirs is None:
        return "none"
    instant = localize(theirs.replace(tzinfo=None), case.said.zone).astimezone(UTC)
    return "correct" if instant == expected_instant(case) else "wrong"


def run_own(limit: int | None, misses: bool) -> list[OwnResult]:
    groups: dict[str, OwnResult] = {}
    for case in CASES:
        name = _OWN_GROUPS[case.kind]
        result = groups.setdefault(name, OwnResult(name))
        if limit is not None and result.ours.scored >= limit:
            continue
        started = time.perf_counter()
        judged: Verdict
        try:
            outcome = infer_commitment(
                case.text, case.tags, said_at=case.said.at, zone=case.said.zone
            )
            judged = judge_case(case, outcome)
        except Exception as error:
            outcome, judged = None, "none"
            result.ours.errors += 1
            result.misses.append(f"{case.text!r} raised {type(error).__name__}")
        result.ours.seconds += time.perf_counter() - started
        result.ours.add(judged)
        if judged != "correct" and misses and outcome is not None:
            result.misses.append(f"{case.text!r} -> {outcome}")
        if case.kind == "once" and case.phrase is not None:
            result.dateparser = result.dateparser or Tally()
            result.dateparser.add(dateparser_on_case(case))
    return list(groups.values())


# ---------------------------------------------------------------------------------------
# Report


def _counts(tally: Tally) -> str:
    return f" | {tally.correct:>7} {tally.wrong:>5} {tally.none:>5}"


def print_table(results: Sequence[CorpusResult]) -> None:
    names = "".join(f" | {p:^19}" for p in PARSERS)
    columns = "".join(f" | {'correct':>7} {'wrong':>5} {'none':>5}" for _ in PARSERS)
    print(f"{'':<18} {'':<4} {'':>6}{names}")
    print(f"{'corpus':<18} {'half':<4} {'scored':>6}{columns} | target (test half)")
    for result in results:
        for half in result.halves.values():
            cells = "".join(_counts(half.tallies[p]) for p in PARSERS)
            verdict_text = " |"
            if half.half == "test" and half.scored:
                t = half.targets()
                verdict_text = (
                    f" | {'PASS' if t['pass'] else 'FAIL'} "
                    f"(wrong {t['wrong']} <= {t['wrong_max']}: "
                    f"{'ok' if t['wrong_ok'] else 'no'}; correct {t['correct']} >= dateparser "
                    f"{t['dateparser_correct']}: {'ok' if t['correct_ok'] else 'no'})"
                )
            print(f"{result.name:<18} {half.half:<4} {half.scored:>6}{cells}{verdict_text}")
    print()
    for result in results:
        print(f"{result.name}: {result.rows} rows, skipped {sum(result.skipped.values())}")
        for reason, count in result.skipped.most_common():
            print(f"  skipped: {count} {reason}")
        if result.limited:
            print(f"  not run (--quick): {result.limited}")
        if result.unassigned:
            print(f"  UNASSIGNED (absent from split.json, not scored): {len(result.unassigned)}")
            for key in result.unassigned[:10]:
                print(f"    {key}")
        for half in result.halves.values():
            kinds = sorted({k for k, _, _ in half.by_kind})
            for kind in kinds:
                parts = []
                for parser in PARSERS:
                    c = [half.by_kind[(kind, parser, v)] for v in ("correct", "wrong", "none")]
                    parts.append(f"{parser} {c[0]}/{c[1]}/{c[2]}")
                print(f"  {half.half} {kind}: " + ", ".join(parts) + "  (ok/wrong/none)")
            errors = half.tallies["ours"].errors
            if errors:
                print(f"  {half.half}: ours RAISED on {errors} rows (counted as none)")


def print_own(results: Sequence[OwnResult]) -> None:
    print("\nregression: own phrase set (benchmarks/commitment_phrases.py, whole entries)")
    for r in results:
        theirs = ""
        if r.dateparser is not None:
            d = r.dateparser
            theirs = f"   dateparser {d.correct} ok / {d.wrong} wrong / {d.none} none"
        o = r.ours
        ours = f"ours {o.correct} ok / {o.wrong} wrong / {o.none} none"
        print(f"  {r.name:<28} {o.scored:>4}  {ours}{theirs}")
    for r in results:
        for miss in r.misses:
            print(f"  miss [{r.name}]: {miss}")


def grammar_checksum() -> str:
    """sha256 over memory/commitment_parsing/*.py: which grammar was measured."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "memory" / "commitment_parsing").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def document(
    results: Sequence[CorpusResult],
    own: Sequence[OwnResult],
    args: argparse.Namespace,
    elapsed: float,
) -> dict[str, Any]:
    return {
        "benchmark": "commitment_parser_bench",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "grammar_sha256": grammar_checksum(),
        "quick": args.quick,
        "halves": args.half,
        "python": platform.python_version(),
        "total_seconds": round(elapsed, 2),
        "targets": {"wrong_share_max": WRONG_SHARE_MAX, "correct_at_least": "dateparser"},
        "corpora": [
            {
                "name": r.name,
                "rows": r.rows,
                "skipped": dict(r.skipped),
                "unassigned": len(r.unassigned),
                "not_run_quick": r.limited,
                "halves": {
                    h.half: {
                        "scored": h.scored,
                        **{p: t.to_json() for p, t in h.tallies.items()},
                        **({"targets": h.targets()} if h.half == "test" else {}),
                    }
                    for h in r.halves.values()
                },
            }
            for r in results
        ],
        "regression": [
            {
                "name": r.name,
                "ours": r.ours.to_json(),
                "dateparser": None if r.dateparser is None else r.dateparser.to_json(),
            }
            for r in own
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--half", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--misses", action="store_true", help="our misses, dev half only")
    parser.add_argument(
        "--quick", action="store_true", help=f"wheel corpora only, {QUICK_LIMIT} rows per half"
    )
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    args = parser.parse_args(argv)
    halves: tuple[Half, ...] = HALVES if args.half == "both" else (args.half,)
    limit = QUICK_LIMIT if args.quick else None
    corpora = WHEEL_SHIPPED if args.quick else CORPORA
    if args.misses and "dev" not in halves:
        print("--misses lists the dev half only; the test half is never shown")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    split = load_split()
    started = time.perf_counter()
    results = []
    try:
        if not args.quick:
            for sdist in SDISTS:  # before any work: a missing corpus fails at once
                require(sdist)
        for name, load in corpora.items():
            results.append(run_corpus(name, load, split, halves, limit, args.misses))
    except CorpusMissing as missing:
        print(f"error: {missing}", file=sys.stderr)
        print(f"fetch the corpora once with: {FETCH_COMMAND}", file=sys.stderr)
        return 2
    own = run_own(limit, args.misses)
    elapsed = time.perf_counter() - started
    print_table(results)
    if args.quick:
        print(f"(--quick: fetched corpora not run: {', '.join(FETCHED)})")
    for result in results:
        for half in result.halves.values():
            for miss in half.misses:
                print(f"  miss [{result.name} dev]: {miss}")
    print_own(own)
    print(f"total {elapsed:.1f} s")
    target = args.json or RESULTS_DIR / (
        "commitment-parser-quick.json" if args.quick else "commitment-parser.json"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        json.dumps(document(results, own, args, elapsed), indent=2) + "\n", encoding="utf-8"
    )
    print(f"results: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
