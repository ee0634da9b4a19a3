"""The consolidation planner on its own (pure, no database): the guard holds across
chains, clusters are deterministic, and planning the survivors again changes nothing."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from memory.consolidation.planner import Plan, PlanEntry, plan_pass, slot_of
from memory.sameness.conflict_guard import compare
from memory.sameness.fact_text import read_fact_text

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def entries(*texts: str) -> list[PlanEntry]:
    return [
        PlanEntry(id=f"e{i:03d}", version=1, content=text, updated_at=T0 + timedelta(minutes=i))
        for i, text in enumerate(texts)
    ]


def clustered(plan: Plan) -> list[set[str]]:
    return [{c.survivor, *c.merged, *c.superseded} for c in plan.clusters]


def test_a_chain_of_duplicates_never_joins_two_facts_that_conflict() -> None:
    # A and C disagree on the name (Paris / Parcel read as names), yet each is a
    # duplicate of the lower-case B: the closure must not put A and C together.
    a, b, c = "Ship the parcel to Paris", "ship the parcel to paris", "Ship the Parcel to paris"
    assert compare(read_fact_text(a), read_fact_text(b)).duplicate
    assert compare(read_fact_text(b), read_fact_text(c)).duplicate
    assert not compare(read_fact_text(a), read_fact_text(c)).duplicate
    plan = plan_pass(entries(a, b, c))
    assert len(plan.removed_ids) == 1
    (cluster,) = clustered(plan)
    assert cluster != {"e000", "e002"} and len(cluster) == 2


def test_the_plan_is_the_same_whatever_order_the_entries_come_in() -> None:
    texts = [
        "The customer prefers invoices in EUR",
        "Note: the customer prefers invoices in EUR.",
        "THE CUSTOMER PREFERS INVOICES IN EUR",
        "The trial lasts 14 days",
        "The trial lasts 21 days",
        "the custmoer prefers invoices in EUR",
    ]
    given = entries(*texts)
    shuffled = list(given)
    random.Random(7).shuffle(shuffled)
    assert plan_pass(given).clusters == plan_pass(shuffled).clusters


def test_planning_the_survivors_again_merges_nothing() -> None:
    texts = [
        "The warehouse ships orders before noon",
        "Note: the warehouse ships orders before noon.",
        "the warehuose ships orders before noon",
        "The warehouse ships orders after noon",
        "The warehouse ships orders before noon on Friday",
    ]
    given = entries(*texts)
    first = plan_pass(given)
    removed = set(first.removed_ids)
    survivors = [e for e in given if e.id not in removed]
    merged_into = {c.survivor: c.merged for c in first.clusters}
    by_id = {e.id: e for e in given}
    again = plan_pass(
        [
            PlanEntry(
                id=e.id,
                version=e.version,
                content=e.content,
                updated_at=e.updated_at,
                merged_texts=tuple(by_id[m].content for m in merged_into.get(e.id, ())),
            )
            for e in survivors
        ]
    )
    assert again.clusters == [] and again.output_count == again.input_count


def test_slots_compare_case_and_separator_insensitively() -> None:
    assert slot_of("Billing", "planTier") == slot_of("billing", "plan_tier")
    assert slot_of("billing", "Plan Tier") == slot_of("billing", "plan-tier")
    assert slot_of("billing", "plan_tier") != slot_of("billing", "plan_tiers")
    assert slot_of(None, None) is None


def test_different_slots_are_different_facts_even_with_the_same_text() -> None:
    home = PlanEntry(id="a", version=1, content="Paris", updated_at=T0, slot=("p", "home_city"))
    birth = PlanEntry(id="b", version=1, content="Paris", updated_at=T0, slot=("p", "birth_city"))
    assert plan_pass([home, birth]).clusters == []
