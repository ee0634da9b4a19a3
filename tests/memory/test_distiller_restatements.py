"""The default distiller spends its budget on distinct facts (issue 23 item 6): a
restatement of a fact already placed (re-cased, a filler, a typo, reordered) rides along
with it, consumed together and written once; what consolidation must never merge (another
number, name or negation) is written separately; the output is byte-identical for the
same sources and budget."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.distillation.packing import ExtractiveDistiller, SourceText
from memory.tokens import count_tokens

T0 = datetime(2026, 11, 1, tzinfo=UTC)
FACTS = [
    "Acme prefers email for urgent requests",
    "The staging database lives in eu-west-1",
    "Bob is allergic to peanuts and shellfish",
    "The quarterly report is due at the end of March",
]
RESTATED = [
    "ACME PREFERS EMAIL FOR URGENT REQUESTS",
    "Per the latest update, Acme prefers email for urgent requests.",
    "Acme prefers emial for urgent requests",
    "For urgent requests, Acme prefers email",
    "FYI: the staging database lives in eu-west-1",
    "Bob is allergic to peanuts and shelfish",
]
DIFFERENT = [
    "The staging database lives in eu-west-2",  # another identifier
    "Carol is allergic to peanuts and shellfish",  # another name
    "Acme does not prefer email for urgent requests",  # a negation
]


def _sources(texts: list[str]) -> list[SourceText]:
    return [
        SourceText(
            entry_id=f"e{i:03d}",
            version=1,
            content=text,
            content_sha256=f"{i:064x}",
            tags=(),
            pinned=False,
            priority=1,
            created_at=T0 + timedelta(minutes=i),
        )
        for i, text in enumerate(texts)
    ]


def _distill(texts: list[str], budget: int) -> tuple[str, dict[str, tuple[str, ...]]]:
    packing = ExtractiveDistiller().start(budget, count_tokens)
    packing.offer(_sources(texts))
    outcome = packing.finish()
    assert outcome.tokens_used <= budget
    return outcome.output_text, {item.text: item.source_ids for item in outcome.items}


def test_restatements_ride_along_and_other_facts_stay() -> None:
    texts = FACTS + RESTATED + DIFFERENT
    output, items = _distill(texts, budget=2000)
    assert set(items) == set(FACTS + DIFFERENT)  # every distinct fact once, nothing else
    assert set(items[FACTS[0]]) == {"e000", "e004", "e005", "e006", "e007"}
    assert set(items[FACTS[1]]) == {"e001", "e008"}
    assert set(items[FACTS[2]]) == {"e002", "e009"}
    again, _ = _distill(texts, budget=2000)
    assert again == output  # byte-identical for the same sources and budget


def test_a_tight_budget_holds_more_distinct_facts() -> None:
    # Each fact restated three times, restatements ranked first: a budget that holds
    # four lines must hold four facts, not one fact four times.
    texts = [variant for fact in FACTS for variant in (fact.upper(), fact, f"FYI: {fact}")]
    cost = max(2 * count_tokens(f"- {fact.upper()}\n") for fact in FACTS)
    _, items = _distill(texts, budget=4 * cost)
    assert len(items) == 4
