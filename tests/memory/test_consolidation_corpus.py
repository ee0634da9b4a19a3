"""The planted consolidation corpus (benchmarks/consolidation_corpus.py): deterministic,
its ground truth holds under the conflict guard, and the planner scores on it.

Plain in-process tests: no database, no services. Restatements marked hazardous
(consolidation_corpus.HAZARDS: capitals moved to or from the sentence start, a newline
before a name, "FYI" inside a sentence, a re-cased camelCase product, "it's") are the ones
a reader of capitals and apostrophes gets wrong; they are checked on their own so a
regression names its cause.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import replace
from functools import cache

from benchmarks import consolidation_corpus as cc
from memory.consolidation.planner import Cluster, ConflictPair, Plan, plan_pass, slot_of
from memory.sameness.conflict_guard import TYPO_MIN_WORDS, compare
from memory.sameness.fact_text import STOPWORDS, read_fact_text
from memory.sameness.typos import typo_close

N = 2000
SEED = 20251106


@cache
def corpus(hazards: bool = True, n: int = N, seed: int = SEED) -> cc.PlantedCorpus:
    return cc.generate(n, seed, hazards=hazards)


@cache
def planned(hazards: bool) -> cc.Scores:
    planted = corpus(hazards)
    return cc.score(planted, plan_pass(planted.entries))


def texts(planted: cc.PlantedCorpus) -> dict[str, str]:
    return {e.id: e.content for e in planted.entries}


def test_same_seed_same_corpus() -> None:
    a, b = cc.generate(1500, 11), cc.generate(1500, 11)
    assert a == b
    assert [e.content for e in a.entries] != [e.content for e in cc.generate(1500, 12).entries]


def test_shape_of_the_corpus() -> None:
    planted = corpus()
    entries = planted.entries
    assert len(entries) == N
    ids = [e.id for e in entries]
    assert ids == sorted(set(ids)) and all(re.fullmatch(r"c\d{7}", i) for i in ids)
    assert all(a.updated_at < b.updated_at for a, b in itertools.pairwise(entries))
    assert {e.version for e in entries} == {1}
    # Roughly the documented mix: families ~30%, conflict pairs ~15%, keyed ~10%.
    in_families = sum(len(f) for f in planted.duplicate_families)
    assert 0.2 * N < in_families < 0.45 * N
    assert 0.05 * N < 2 * len(planted.conflict_pairs) < 0.25 * N
    assert {kind for *_, kind in planted.conflict_pairs} == set(cc.CONFLICT_KINDS)
    assert 0.04 * N < sum(e.slot is not None for e in entries) < 0.2 * N
    assert set(planted.variant_ops) == set(planted.variant_base)
    assert all(set(ops) <= set(cc._VARIANT_OPS) for ops in planted.variant_ops.values())
    assert set(planted.hazards) <= set(planted.variant_ops)


def test_superseded_entries_hold_the_newest_entry_slot_with_another_value() -> None:
    planted = corpus()
    by_id = {e.id: e for e in planted.entries}
    for old, new in planted.superseded.items():
        older, newer = by_id[old], by_id[new]
        assert older.slot is not None and older.slot == newer.slot
        assert older.updated_at < newer.updated_at and older.content != newer.content
    slots = [e.slot for e in planted.entries if e.slot is not None]
    assert len(set(slots)) == len(slots) - len(planted.superseded)
    # The slot is what slot_of makes of every spelling the generator uses.
    for words in ("plan tier", "api version"):
        assert len({slot_of("Acme", key) for key in cc._spellings(words.split())}) == 1


def test_vocabulary_has_no_words_a_typo_apart() -> None:
    """Otherwise two unrelated planted facts ("Sara ..." / "Sarah ...") could be the
    same fact with a typo, and a merge of them would count against the planner."""
    lists = [
        cc.FIRST_NAMES, cc.LAST_NAMES, cc.COMPANIES, cc.CITIES, cc.PRODUCTS, cc.LANGUAGES,
        cc.SERVICES, cc.TEAMS, cc.DOCS, cc.TOPICS, cc.PREFERENCES, cc.PURPOSES, cc.CHANNELS,
    ]  # fmt: skip
    for values in lists:
        assert len(set(values)) == len(values)
        words = sorted({w.casefold() for value in values for w in re.findall(r"\w+", value)})
        assert [(a, b) for a, b in itertools.combinations(words, 2) if typo_close(a, b)] == []
        # A company called "Blue Sun" or a topic "quarterly planning" would carry a date.
        assert [w for w in words if w in cc._GUARDED_WORDS - STOPWORDS] == []


def test_every_template_can_take_a_typo_and_carries_a_guarded_fact() -> None:
    rng = random.Random(1)
    for template in range(len(cc.TEMPLATES)):
        spec = cc._base_spec(rng, template)
        bare = replace(spec, optional=(False,) * len(spec.optional), prefix="", suffix="")
        fact = read_fact_text(cc._render(bare))
        assert len(fact.word_set) >= TYPO_MIN_WORDS, cc.TEMPLATES[template]
        assert any(cc._CONFLICT_KIND.get(s.rstrip("0123456789")) for s in cc._slots(template))


def test_restatements_compare_as_duplicates_of_their_fact() -> None:
    planted = corpus(n=5000)
    text = texts(planted)
    safe = [v for v in planted.variant_base if v not in planted.hazards]
    assert len(safe) > 800
    failures = [
        (text[planted.variant_base[v]], text[v], planted.variant_ops[v])
        for v in safe
        if not compare(
            read_fact_text(text[planted.variant_base[v]]), read_fact_text(text[v])
        ).duplicate
    ]
    assert failures == []
    # Every operation is exercised, alone and in pairs.
    ops = {planted.variant_ops[v] for v in safe}
    assert {(op,) for op in cc._VARIANT_OPS} <= ops and any(len(o) == 2 for o in ops)


def test_hazardous_restatements_compare_as_duplicates_of_their_fact() -> None:
    planted = corpus(n=5000)
    text = texts(planted)
    failures = [
        (hazards, text[planted.variant_base[v]], text[v])
        for v, hazards in planted.hazards.items()
        if not compare(
            read_fact_text(text[planted.variant_base[v]]), read_fact_text(text[v])
        ).duplicate
    ]
    assert failures == []


def test_hazards_are_marked_and_can_be_left_out() -> None:
    planted = corpus(n=5000)
    assert {h for hs in planted.hazards.values() for h in hs} == set(cc.HAZARDS)
    assert 0.05 < len(planted.hazards) / len(planted.variant_ops) < 0.4
    without = corpus(hazards=False)
    assert without.hazards == {} and len(without.variant_ops) > 300


def test_look_alikes_are_never_duplicates() -> None:
    planted = corpus(n=5000)
    text = texts(planted)
    for a, b, kind in planted.conflict_pairs:
        verdict = compare(read_fact_text(text[a]), read_fact_text(text[b]))
        assert not verdict.duplicate, (kind, text[a], text[b])


def test_planner_scores_on_restatements_without_hazards() -> None:
    scores = planned(hazards=False)
    assert scores.merge_precision >= 0.99
    assert scores.merge_recall >= 0.90
    assert scores.false_merges == 0
    assert scores.supersession_precision >= 0.99 and scores.supersession_recall >= 0.99


def test_planner_merges_no_look_alikes_in_the_full_corpus() -> None:
    scores = planned(hazards=True)
    assert scores.merge_precision >= 0.99
    assert scores.false_merges == 0
    assert scores.supersession_precision >= 0.99 and scores.supersession_recall >= 0.99


def test_planner_recall_in_the_full_corpus() -> None:
    scores = planned(hazards=True)
    assert scores.merge_recall >= 0.90
    together, total = scores.variants_by_op["hazardous"]
    assert together >= 0.9 * total


def test_score_counts_same_cluster_pairs() -> None:
    planted = corpus(n=600, seed=5)
    a, b, kind = planted.conflict_pairs[0]
    # The right answer, written as a plan: one cluster per family (its largest id
    # survives), the newest holder of each slot superseding the others.
    newest: dict[str, list[str]] = {}
    for old, new in planted.superseded.items():
        newest.setdefault(new, []).append(old)
    clusters = [
        Cluster(
            survivor=max(f), merged=tuple(sorted(f - {max(f)})), superseded=(), corroboration=len(f)
        )
        for f in planted.duplicate_families
    ] + [
        Cluster(survivor=n, merged=(), superseded=tuple(o), corroboration=1)
        for n, o in newest.items()
    ]
    survivor = {i: c.survivor for c in clusters for i in (*c.merged, *c.superseded)}
    conflicts = [
        ConflictPair(survivor.get(x, x), survivor.get(y, y), ())
        for x, y, _ in planted.conflict_pairs
    ]
    perfect = cc.score(planted, Plan(input_count=600, clusters=clusters, conflicts=conflicts))
    assert (perfect.merge_precision, perfect.merge_recall) == (1.0, 1.0)
    assert (perfect.supersession_precision, perfect.supersession_recall) == (1.0, 1.0)
    assert perfect.false_merges == 0 and perfect.conflict_detection_recall == 1.0
    assert perfect.merge_pairs_planted == sum(
        len(f) * (len(f) - 1) // 2 for f in planted.duplicate_families
    )
    assert all(together == total for together, total in perfect.variants_by_op.values())

    # Merging one look-alike pair: a false merge of its kind, one wrong pair (or more,
    # when a family hangs on the pair), and it is no longer reported as a conflict.
    left, right = survivor.get(a, a), survivor.get(b, b)
    sides = [
        {x, *(i for c in clusters if c.survivor == x for i in c.merged)} for x in (left, right)
    ]
    members = sides[0] | sides[1]
    joined = [c for c in clusters if c.survivor not in (left, right)]
    joined.append(Cluster(max(members), tuple(sorted(members - {max(members)})), (), len(members)))
    wrong = cc.score(planted, Plan(input_count=600, clusters=joined, conflicts=conflicts[1:]))
    assert wrong.conflict_false_merges[kind] == 1 and wrong.false_merges == 1
    assert wrong.merge_recall == 1.0
    assert wrong.merge_pairs_predicted - wrong.merge_pairs_correct == len(sides[0]) * len(sides[1])
    assert sum(wrong.conflicts_detected.values()) == len(planted.conflict_pairs) - 1

    nothing = cc.score(planted, Plan(input_count=600))
    assert nothing.merge_recall == 0.0 and nothing.merge_precision == 1.0
    assert nothing.supersession_recall == 0.0 and nothing.conflict_detection_recall == 0.0
    lines = cc.format_scores(perfect)
    assert lines[0].split()[-1] == "600" and any(line.startswith("merge recall") for line in lines)


def test_all_pairs_baseline_compares_every_pair() -> None:
    pairs, seconds = cc.all_pairs_baseline(corpus(n=300, seed=2).entries)
    assert pairs == 300 * 299 // 2 and seconds > 0
