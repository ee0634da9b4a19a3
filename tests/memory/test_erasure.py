"""Forget means forgotten everywhere: after two dreams, a recursive distillation and a
session snapshot, forgetting one entry leaves its text in no column of any table, while
every remaining archive still verifies and every distilled entry still matches its
archive. A dry run reports the same and changes nothing."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.memory_entry import ForgetRequest, NewMemoryEntry, Tier
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import note, unique_ref
from tests.support.scan import tables_holding


async def _distill(store: PostgresMemoryStore, ref: str, sources=None) -> str:
    result = await store.distill(
        DistillMemoryRequest(
            memory_ref=ref,
            token_budget=5_000,
            run_key=f"run-{uuid.uuid4().hex[:8]}",
            sources=sources,
        )
    )
    assert result.status == "distilled", result
    return result.output_id or ""


async def _row_counts(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as connection:
        return {
            table.name: (
                await connection.execute(select(func.count()).select_from(table))
            ).scalar_one()
            for table in tables.metadata.sorted_tables
        }


async def _assert_distillates_verify(engine: AsyncEngine, store: PostgresMemoryStore, ref: str):
    async with engine.connect() as connection:
        archives = (
            await connection.execute(
                select(
                    tables.archives.c.checksum, tables.archives.c.body, tables.archives.c.output_id
                ).where(tables.archives.c.memory_ref == ref)
            )
        ).all()
    for checksum, body, output_id in archives:
        assert hashlib.sha256(bytes(body)).hexdigest() == checksum
        entry = await store.get_entry(ref, output_id, touch=False)
        assert entry is not None
        assert entry.content == json.loads(bytes(body))["output"]
        assert entry.metadata["archiveChecksum"] == checksum
    return archives


async def _build_history(store: PostgresMemoryStore, ref: str, secret_text: str):
    target = await store.put(ref, note(secret_text, "health"))
    kept = await store.put(ref, note("The customer prefers invoices by email."))
    await store.put(ref, note("Renewal is due in March."))
    first = await _distill(store, ref)
    await store.put_many(ref, [note("The office moved to Leeds."), note("Standup is at 9:15.")])
    second = await _distill(store, ref)
    recursive = await _distill(store, ref, sources=(first, second))
    await store.snapshot(ref, "session-1")
    return target, kept, first, recursive


async def test_forget_after_two_dreams_and_a_recursive_distillation(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    secret_text = f"Diagnosed with condition {uuid.uuid4().hex[:12]} last spring."
    target, kept, first, recursive = await _build_history(store, ref, secret_text)
    assert set(await tables_holding(engine, secret_text)) >= {
        "memory_entries.content",
        "memory_archives.body",
        "memory_snapshot_items.content",
    }
    links = await store.lineage(ref, target.id)
    lineage = {(link.artifact_kind, link.artifact_id) for link in links}
    assert ("distilled-entry", first) in lineage and ("distilled-entry", recursive) in lineage
    assert any(kind == "snapshot" for kind, _ in lineage)

    before = await _row_counts(engine)
    dry = await store.erase(ref, ForgetRequest(ids=(target.id,)), dry_run=True)
    assert await _row_counts(engine) == before
    assert await tables_holding(engine, secret_text) != []

    report = await store.erase(ref, ForgetRequest(ids=(target.id,)))
    assert report.model_copy(update={"dry_run": True}) == dry
    assert report.entries == 1 and report.entry_ids == (target.id,)
    assert report.archives_rewritten == 2 and report.distilled_rewritten == 2
    assert report.snapshots_dropped == 1
    assert await tables_holding(engine, secret_text) == []

    archives = await _assert_distillates_verify(engine, store, ref)
    assert len(archives) == 3
    for output_id in (first, recursive):
        entry = await store.get_entry(ref, output_id, touch=False)
        assert entry is not None and kept.content in entry.content
    async with engine.connect() as connection:
        tombstones = (
            await connection.execute(
                select(tables.archive_tombstones).where(
                    tables.archive_tombstones.c.memory_ref == ref
                )
            )
        ).all()
    assert len(tombstones) == 2 and all(t.successor_checksum for t in tombstones)
    assert all(len(t.erased_item_sha256) >= 1 for t in tombstones)
    assert await store.lineage(ref, target.id) == []
    events = await store.events(ref, types=["memory.deleted"])
    assert [e.payload["memoryId"] for e in events] == [target.id]
    assert secret_text not in json.dumps([e.payload for e in events])


async def test_forgetting_everything_a_distillate_holds_removes_it(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(ref, [note("alpha fact", "gone"), note("beta fact", "gone")])
    output = await _distill(store, ref)
    report = await store.erase(ref, ForgetRequest(tag="gone"))
    assert report.entries == 2 and report.archives_removed == 1
    assert report.distilled_removed == 1
    assert await store.get(ref, output) is None
    for text in ("alpha fact", "beta fact"):
        assert await tables_holding(engine, text) == []


async def test_ttl_reaches_derived_data_to_the_millisecond_and_gc_erases_it(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    from datetime import timedelta

    ref = unique_ref()
    now = store.now()
    expiry = now + timedelta(seconds=30)
    short_text = f"Temporary door code {uuid.uuid4().hex[:10]} for the visit."
    await store.put(ref, note(short_text, expires_at=expiry))
    kept = await store.put(ref, note("The visit is on Thursday."))
    first = await _distill(store, ref)
    recursive = await _distill(store, ref, sources=(first,))

    def at(instant):
        return PostgresMemoryStore(engine, clock=lambda: instant)

    just_before = at(expiry - timedelta(milliseconds=1))
    assert await just_before.get(ref, first) is not None
    assert await just_before.get(ref, recursive) is not None
    at_expiry = at(expiry)
    # A distilled entry expires with the earliest source it carries, on every read path.
    assert await at_expiry.get(ref, first) is None
    assert await at_expiry.get(ref, recursive) is None
    assert first not in {e.id for e in await at_expiry.list(ref)}
    report = await at_expiry.collect_garbage(ref)
    assert report.expired_entries == 1
    assert await tables_holding(engine, short_text) == []
    for output_id in (first, recursive):
        entry = await at_expiry.get(ref, output_id)
        assert entry is not None and kept.content in entry.content
    await _assert_distillates_verify(engine, store, ref)
    expired = await store.events(ref, types=["memory.expired"])
    assert len(expired) == 1


async def test_gc_after_a_distilled_source_was_deleted_still_erases_what_expired(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    """A source deleted (or archived at task end) after a dream is no longer an entry but
    still listed by its archive item; expiring another source of that archive must not
    trip over it. It did (a KeyError on every later collect_garbage of the ref, so every
    dream's clean-up failed from then on)."""
    from datetime import timedelta

    ref = unique_ref()
    expiry = store.now() + timedelta(seconds=30)
    short_text = f"Temporary gate code {uuid.uuid4().hex[:10]} for the delivery."
    await store.put(ref, note(short_text, expires_at=expiry))
    scratch = await store.put(ref, note("Scratch: compare the two quotes", tier=Tier.WORKING))
    await store.put(ref, note("The delivery is on Friday."))
    await _distill(store, ref)
    assert await store.delete(ref, scratch.id)

    later = PostgresMemoryStore(engine, clock=lambda: expiry + timedelta(seconds=1))
    report = await later.collect_garbage(ref)
    assert report.expired_entries == 1
    assert await tables_holding(engine, short_text) == []
    await _assert_distillates_verify(engine, later, ref)


async def test_forget_by_tag_takes_the_tag_out_of_rewritten_archives(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    tag = f"patient-{uuid.uuid4().hex[:8]}"
    await store.put_many(
        ref, [note("Blood test on Monday.", tag), note("Invoice sent on Friday.", "billing")]
    )
    await _distill(store, ref)
    report = await store.erase(ref, ForgetRequest(tag=tag))
    assert report.entries == 1 and report.archives_rewritten == 1
    async with engine.connect() as connection:
        bodies = (
            await connection.execute(
                select(tables.archives.c.body).where(tables.archives.c.memory_ref == ref)
            )
        ).scalars()
        assert all(tag.encode() not in bytes(body) for body in bodies)
    await _assert_distillates_verify(engine, store, ref)


async def test_a_tenant_wide_subject_forget_reaches_every_ref_of_the_tenant_only(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    tenant = f"t{uuid.uuid4().hex[:10]}"
    refs = [unique_ref(tenant=tenant, agent=f"agent-{i}") for i in range(2)]
    other = unique_ref()
    text_of = {ref: f"Jo's address is {uuid.uuid4().hex[:10]} Street." for ref in [*refs, other]}
    for ref in [*refs, other]:
        await store.put_many(ref, [note(text_of[ref], subject="jo"), note("A neutral fact.")])
        await _distill(store, ref)
    report = await store.erase(refs[0], ForgetRequest(subject="jo", tenant_wide=True))
    assert report.entries == 2 and report.archives_rewritten == 2
    for ref in refs:
        assert await tables_holding(engine, text_of[ref]) == []
    # Another tenant's entry with the same subject is untouched (CTI-1).
    assert await tables_holding(engine, text_of[other]) != []
    assert (await store.erase(other, ForgetRequest(subject="nobody"))).entries == 0


async def test_forget_after_the_archive_was_collected_rewrites_the_distillate_by_line(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    from datetime import timedelta

    from schemas.capabilities import ARCHIVE_RETENTION

    ref = unique_ref()
    gone = f"Old phone number {uuid.uuid4().hex[:10]}."
    target = await store.put(ref, note(gone))
    await store.put_many(ref, [note("Prefers mornings."), note("Works from Leeds.")])
    output = await _distill(store, ref)
    later = store.now() + ARCHIVE_RETENTION + timedelta(days=1)
    aged = PostgresMemoryStore(engine, clock=lambda: later)
    assert (await aged.collect_garbage(ref)).expired_archives == 1

    report = await aged.erase(ref, ForgetRequest(ids=(target.id,)))
    assert report.distilled_rewritten == 1 and report.distilled_removed == 0
    assert await tables_holding(engine, gone) == []
    entry = await aged.get(ref, output)
    assert entry is not None
    assert "Prefers mornings." in entry.content and "Works from Leeds." in entry.content


async def test_a_line_redacted_by_the_dream_is_still_found_after_the_archive_went(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    from datetime import timedelta

    from memory.redaction.chokepoint import MemorySecretRegistry
    from schemas.capabilities import ARCHIVE_RETENTION

    ref = unique_ref()
    secret = f"pin-{uuid.uuid4().hex[:12]}"
    words = f"Call the vendor {uuid.uuid4().hex[:6]} with"
    # Written before the secret was registered: stored in clear, redacted by the dream.
    target = await store.put(ref, note(f"{words} {secret} today."))
    await store.put(ref, note("Prefers mornings."))
    registry = MemorySecretRegistry("dream")
    registry.register("pin", secret)
    output = (
        await store.distill(
            DistillMemoryRequest(memory_ref=ref, token_budget=5_000, run_key="r"),
            secrets=registry,
        )
    ).output_id
    later = store.now() + ARCHIVE_RETENTION + timedelta(days=1)
    aged = PostgresMemoryStore(engine, clock=lambda: later)
    await aged.collect_garbage(ref)
    report = await aged.erase(ref, ForgetRequest(ids=(target.id,)), secrets=registry)
    assert report.distilled_rewritten == 1
    assert await tables_holding(engine, words) == []
    entry = await aged.get(ref, output or "")
    assert entry is not None and entry.content == "- Prefers mornings.\n"


@pytest.mark.slow
async def test_forget_by_tag_reaches_more_entries_than_a_statement_has_parameters(
    store: PostgresMemoryStore,
) -> None:
    """33,000 entries behind one tag: every id list binds as one array parameter (one
    parameter per id stops at the driver's 32,767). Loaded without vectors: the limit is
    the erasure's, and 33,000 HNSW inserts would only slow the suite."""
    ref = unique_ref()
    loader = PostgresMemoryStore(store.engine, embedder=None)
    for start in range(0, 33_000, 1000):
        await loader.put_many(
            ref,
            [
                NewMemoryEntry(content=f"bulk import row {n}", tags=("bulk",), tier=Tier.SEMANTIC)
                for n in range(start, start + 1000)
            ],
        )
    report = await store.erase(ref, ForgetRequest(tag="bulk"))
    assert report.entries == 33_000
    assert await store.count(ref) == 0
