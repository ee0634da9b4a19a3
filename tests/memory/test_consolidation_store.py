"""Consolidation through the store API: the spec's example, the conflict guard on real
rows, supersession by key, SR-1 carry-forward, undo, audit, exactly-once claims and a
write racing a pass."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from memory.entries.content import rewrite_entry
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.consolidation import ConsolidateMemoryRequest, ConsolidationResult
from schemas.errors import ConsolidationRefused, PassNotFound
from schemas.events import EventType
from schemas.memory_entry import ForgetRequest, MemoryListOptions, Tier
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import canary, note, unique_ref

pytestmark = pytest.mark.asyncio


def fact(content: str, *tags: str, **extra: object):
    return note(content, *tags, tier=Tier.SEMANTIC, **extra)


async def run_pass(
    store: PostgresMemoryStore, ref: str, key: str = "", **extra: object
) -> ConsolidationResult:
    request = ConsolidateMemoryRequest(
        memory_ref=ref, run_key=key or f"test/{datetime.now(UTC).timestamp()}", **extra
    )
    return await store.consolidate(request)


async def live_ids(store: PostgresMemoryStore, ref: str) -> set[str]:
    return {e.id for e in await store.list(ref, MemoryListOptions(limit=1000))}


async def test_the_spec_example_four_entries_give_three_then_a_no_op(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [
            fact("The customer prefers invoices in EUR"),
            fact("Note: the customer prefers invoices in EUR."),
            fact("The trial lasts 14 days"),
            fact("Support hours are 9 to 5 on weekdays"),
        ],
    )
    first = await run_pass(store, ref, "pass-1")
    assert (first.input_count, first.output_count) == (4, 3)
    second = await run_pass(store, ref, "pass-2")
    assert (second.input_count, second.output_count) == (3, 3)
    assert second.merged_ids == ()
    events = [e for e in await store.events(ref) if e.type == EventType.MEMORY_CONSOLIDATED]
    counts = [(e.payload["inputCount"], e.payload["outputCount"]) for e in events]
    assert counts == [(4, 3), (3, 3)]


@pytest.mark.parametrize(
    ("first", "second", "kind"),
    [
        ("The trial lasts 14 days", "The trial lasts 21 days", "number"),
        ("The plan costs $500 per month", "The plan costs $650 per month", "amount"),
        ("The plan costs $500 per month", "The plan costs €500 per month", "amount"),
        ("Deploy billing to eu-west-1", "Deploy billing to eu-west-2", "identifier"),
        ("Invoice INV-2231 is overdue", "Invoice INV-2213 is overdue", "identifier"),
        ("The review meeting is on Monday", "The review meeting is on Tuesday", "date"),
        ("The contract renews in March", "The contract renews in April", "date"),
        ("The customer wants weekly reports", "The customer does not want weekly reports", "negation"),  # noqa: E501
        ("Alice approves refunds for Acme", "Carol approves refunds for Acme", "name"),
        ("Refunds for Acme go to Alice", "Refunds for Acme go to Carol", "name"),
        ("Acme prefers email over Slack", "Acme prefers Slack over email", "order"),
    ],
)  # fmt: skip
async def test_look_alikes_that_differ_in_a_fact_never_merge_and_are_recorded(
    store: PostgresMemoryStore, first: str, second: str, kind: str
) -> None:
    ref = unique_ref()
    a, b = await store.put_many(ref, [fact(first), fact(second)])
    result = await run_pass(store, ref)
    assert (result.input_count, result.output_count) == (2, 2)
    assert await live_ids(store, ref) == {a.id, b.id}
    recorded = await store.conflicts(ref)
    detected = [e for e in await store.events(ref) if e.type == EventType.MEMORY_CONFLICT]
    if kind in ("name", "order"):
        # The same statement about someone else, or with its terms swapped: another
        # fact, never merged, but not a dispute to record either.
        assert recorded == [] and detected == []
        return
    (conflict,) = recorded
    assert {conflict.first_id, conflict.second_id} == {a.id, b.id}
    assert kind in conflict.kinds
    assert len(detected) == 1
    assert detected[0].payload["memoryIds"] in ([a.id, b.id], [b.id, a.id])
    # Recorded once: a second pass finds it again but records nothing new.
    again = await run_pass(store, ref)
    assert again.conflict_count == 0 and len(await store.conflicts(ref)) == 1


async def test_duplicate_families_merge_into_one_strengthened_survivor(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    written = await store.put_many(
        ref,
        [
            fact("The customer prefers dark mode in the dashboard", "ui"),
            fact("NOTE: THE CUSTOMER PREFERS DARK MODE IN THE DASHBOARD", "prefs"),
            fact("the customer  prefers dark mode in the\tdashboard"),
            fact("The custmoer prefers dark mode in the dashboard"),
            fact("In the dashboard, the customer prefers dark mode"),
        ],
    )
    result = await run_pass(store, ref)
    assert (result.input_count, result.output_count, result.merged_count) == (5, 1, 4)
    (survivor_id,) = await live_ids(store, ref)
    survivor = await store.get_entry(ref, survivor_id)
    assert survivor is not None and set(survivor.tags) >= {"ui", "prefs"}
    assert survivor.version == 2
    audit = await store.superseded(ref)
    assert {row.id for row in audit} == {e.id for e in written} - {survivor_id}
    assert {row.superseded_by for row in audit} == {survivor_id}
    assert {row.reason for row in audit} == {"merged"}
    # Lineage tells where each merged entry went.
    for row in audit:
        links = await store.lineage(ref, row.id)
        assert [(link.artifact_kind, link.artifact_id) for link in links] == [
            ("merged-into", survivor_id)
        ]
    # Merged rows are invisible to list and get.
    for row in audit:
        assert await store.get(ref, row.id) is None


async def test_corroboration_counts_what_a_survivor_stands_for(engine, store) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [
            fact("The office is closed on public holidays"),
            fact("the office is closed on public holidays."),
            fact("The office is closed on public holidays!"),
        ],
    )
    await run_pass(store, ref)
    async with engine.connect() as connection:
        value = (
            await connection.execute(
                text("SELECT corroboration FROM memory_entries WHERE invalidated_at IS NULL")
            )
        ).scalar_one()
    assert value == 3


async def test_a_newer_value_of_a_key_supersedes_the_older_one(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    old = await store.put(ref, fact("Plan tier: basic", namespace="billing", key="plan_tier"))
    await asyncio.sleep(0.01)
    new = await store.put(ref, fact("Plan tier: premium", namespace="Billing", key="planTier"))
    result = await run_pass(store, ref)
    assert (result.superseded_count, result.merged_count) == (1, 0)
    assert await live_ids(store, ref) == {new.id}
    (mark,) = await store.superseded(ref)
    assert (mark.id, mark.superseded_by, mark.reason) == (old.id, new.id, "superseded")
    # The superseded row no longer holds its key: writing it again is allowed.
    again = await store.put(
        ref, fact("Plan tier: enterprise", namespace="billing", key="plan_tier")
    )
    assert again.key == "plan_tier"


async def test_a_redacted_secret_stays_redacted_after_merging(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    secret = canary()
    registry = MemorySecretRegistry("run-1")
    registry.register("api-key", secret)
    await store.put_many(
        ref,
        [
            fact(f"The staging api key is {secret} for the billing service"),
            fact(f"note: the staging api key is {secret} for the billing service"),
        ],
        secrets=registry,
    )
    # A survivor written before its secret was registered is redacted by the pass.
    late = canary()
    await store.put_many(
        ref,
        [
            fact(f"The deploy token {late} rotates every month on the first day"),
            fact(f"FYI the deploy token {late} rotates every month on the first day"),
        ],
    )
    registry.register("deploy-token", late)
    request = ConsolidateMemoryRequest(memory_ref=ref, run_key="sr1")
    result = await store.consolidate(request, secrets=registry)
    assert (result.input_count, result.output_count) == (4, 2)
    for entry in await store.list(ref):
        assert secret not in entry.content and late not in entry.content
        assert "[REDACTED:" in entry.content


async def test_undo_restores_every_row_of_a_pass(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    written = await store.put_many(
        ref,
        [
            fact("The warehouse ships orders before noon"),
            fact("Note: the warehouse ships orders before noon."),
            fact("Plan tier: basic", namespace="billing", key="plan_tier"),
        ],
    )
    await store.put(ref, fact("Plan tier: premium", namespace="billing", key="PlanTier"))
    result = await run_pass(store, ref)
    assert result.output_count == 2
    report = await store.undo_consolidation(ref, result.pass_id)
    assert report.restored == 2
    assert {e.id for e in written} <= await live_ids(store, ref)
    assert await store.superseded(ref) == []
    # Undone once: a second undo says so (issue 41: it said the pass did not exist).
    with pytest.raises(ConsolidationRefused, match="undone already"):
        await store.undo_consolidation(ref, result.pass_id)
    with pytest.raises(PassNotFound):
        await store.undo_consolidation(ref, "cp-" + "0" * 20)


async def test_undo_is_refused_whole_when_a_restored_key_is_taken(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    old = await store.put(ref, fact("Region: eu-west-1", namespace="deploy", key="region"))
    await store.put(ref, fact("Region: eu-west-2", namespace="deploy", key="Region"))
    result = await run_pass(store, ref)
    assert result.superseded_count == 1
    await store.put(ref, fact("Region: us-east-1", namespace="deploy", key="region"))
    with pytest.raises(ConsolidationRefused):
        await store.undo_consolidation(ref, result.pass_id)
    assert old.id not in await live_ids(store, ref)
    assert len(await store.superseded(ref)) == 1


async def test_a_retried_pass_returns_its_recorded_result_and_applies_nothing_twice(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref, [fact("The gate code changes weekly"), fact("the gate code changes weekly.")]
    )
    first = await run_pass(store, ref, "same-run")
    # More duplicates arrive, then the same run key comes back (the activity's commit
    # landed but its completion did not): the recorded result, nothing new applied.
    await store.put(ref, fact("THE GATE CODE CHANGES WEEKLY"))
    retried = await run_pass(store, ref, "same-run")
    assert retried == first
    assert len(await live_ids(store, ref)) == 2
    events = [e for e in await store.events(ref) if e.type == EventType.MEMORY_CONSOLIDATED]
    assert len(events) == 1


async def test_concurrent_passes_apply_each_merge_once(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [
            fact("Team Apollo holds standup in the big room"),
            fact("Team Zephyr holds standup in the big room"),
            fact("The parking garage closes at midnight"),
            fact("the parking garage closes at midnight!"),
        ],
    )
    results = await asyncio.gather(*(run_pass(store, ref, f"concurrent-{n}") for n in range(4)))
    assert sum(r.merged_count for r in results) == 1
    assert sorted(r.output_count for r in results) == [3, 3, 3, 3]
    assert len(await store.superseded(ref)) == 1


async def test_a_write_racing_a_pass_is_not_lost(engine, store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    a, b = await store.put_many(
        ref,
        [fact("The backup runs every night"), fact("Note: the backup runs every night.")],
    )
    read = asyncio.Event()

    def on_progress(details: dict[str, object]) -> None:
        if details.get("phase") == "read":
            read.set()

    # An edit of a planned member is in flight (not yet committed) when the pass reads:
    # the pass plans the merge from what it read, and its claim must see the edit.
    async with engine.connect() as writer:
        edit = await writer.begin()
        # Through the one writer of content, as an edit is: its postings and vectors
        # follow in the same uncommitted transaction.
        await rewrite_entry(
            writer,
            parse_memory_ref(ref),
            b.id,
            datetime.now(UTC),
            content="The backup runs every night at two",
            values={"version": tables.entries.c.version + 1},
        )
        request = ConsolidateMemoryRequest(memory_ref=ref, run_key="race")
        task = asyncio.create_task(store.consolidate(request, progress=on_progress))
        await read.wait()
        await asyncio.sleep(0.2)  # the pass plans, then its claim waits for this row
        await edit.commit()
        result = await task
    assert result.skipped_clusters == 1 and result.merged_count == 0
    assert (result.input_count, result.output_count) == (2, 2)
    assert await live_ids(store, ref) == {a.id, b.id}
    current = await store.get_entry(ref, b.id)
    assert current is not None and current.content.endswith("at two")
    # The next pass sees the edit: the two no longer say the same thing.
    assert (await run_pass(store, ref)).merged_count == 0


async def test_forgetting_a_survivor_erases_what_was_merged_into_it(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [
            fact("The lockbox number is under the mat"),
            fact("NOTE: the lockbox number is under the mat"),
        ],
    )
    await run_pass(store, ref)
    (survivor,) = await live_ids(store, ref)
    await store.forget(ref, ForgetRequest(ids=(survivor,)))
    assert await store.superseded(ref) == []


async def test_deleting_a_survivor_deletes_what_was_merged_into_it(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [fact("The boiler is serviced in autumn"), fact("the boiler is serviced in autumn")],
    )
    await run_pass(store, ref)
    (survivor,) = await live_ids(store, ref)
    assert await store.delete(ref, survivor)
    assert await store.superseded(ref) == []


async def test_expiry_never_comes_sooner_for_a_merged_fact(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    soon = datetime.now(UTC) + timedelta(hours=1)
    kept, expiring = await store.put_many(
        ref,
        [
            fact("The loading dock is on the north side"),
            fact("Note: the loading dock is on the north side", expires_at=soon),
        ],
    )
    await run_pass(store, ref)
    assert await live_ids(store, ref) == {kept.id}
    del expiring


async def test_other_tiers_and_other_refs_are_untouched(store: PostgresMemoryStore) -> None:
    ref, other = unique_ref(), unique_ref()
    working = await store.put_many(
        ref, [note("The cafe opens at eight"), note("the cafe opens at eight")]
    )
    foreign = await store.put_many(
        other, [fact("The cafe opens at eight"), fact("the cafe opens at eight")]
    )
    result = await run_pass(store, ref)
    assert (result.input_count, result.output_count) == (0, 0)
    assert {e.id for e in working} <= await live_ids(store, ref)
    assert await live_ids(store, other) == {e.id for e in foreign}


async def test_a_session_reading_the_ref_may_not_consolidate_it(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref, [fact("The lab is on floor three"), fact("the lab is on floor three")]
    )
    await store.snapshot(ref, "session:run-a/1")
    with pytest.raises(ConsolidationRefused):
        await run_pass(store, ref, requested_by_session="session:run-a/1")
    assert len(await live_ids(store, ref)) == 2


@pytest.mark.slow
async def test_a_pass_larger_than_the_drivers_parameter_limit(
    store: PostgresMemoryStore,
) -> None:
    """5,000 conflict pairs and 2,000 merges in one pass: every write binds its ids as
    one array (a statement with a parameter per row stops at 32,767 parameters)."""
    ref = unique_ref()
    rng = random.Random(5)
    letters = "bcdfghjklmnpqrstvwxz"
    names = sorted({"".join(rng.choices(letters, k=7)).capitalize() for _ in range(9000)})
    entries = []
    for name in names[:5000]:
        entries += [
            fact(f"Account {name} pays 14 dollars"),
            fact(f"Account {name} pays 21 dollars"),
        ]
    for name in names[5000:7000]:
        entries += [
            fact(f"{name} ships from the north dock"),
            fact(f"{name} ships from the north dock."),
        ]
    # Loaded without vectors: a pass reads none, and 14,000 HNSW inserts would only
    # slow the suite.
    loader = PostgresMemoryStore(store.engine, embedder=None)
    for start in range(0, len(entries), 1000):
        await loader.put_many(ref, entries[start : start + 1000])
    result = await run_pass(store, ref)
    assert result.conflict_count == 5000
    assert result.merged_count == 2000
    assert result.output_count == len(entries) - 2000
    assert result.merged_ids is None  # over MAX_EVENT_MERGED_IDS: omitted
