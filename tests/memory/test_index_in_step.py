"""Every path that writes what an entry says keeps its derived indexes in step
(memory/entries/content.py): an edit, a distillation, a consolidation survivor
re-redacted, and an erasure's rewrite of a distilled entry under forget, delete and TTL.
After each, no vector is left whose checksum is not its entry's, and the nearest
neighbours of a forgotten text's vector find nothing derived from it: a vector is a copy
of the text it was computed from, and forget must reach it.

Through the store with the real offline model and real PostgreSQL (pgvector). Every
other test's database is checked for stale index rows too (tests/conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.embeddings.model import EmbeddingModel, EmbeddingUnavailable, Vectors
from memory.embeddings.static_model import MODEL
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.memory_entry import EntryChanges, ForgetRequest, Tier
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import canary, note, unique_ref
from tests.support.scan import (
    re_embed,
    stale_index_rows,
    tables_holding,
    vectors_derived_from,
)


class _Down:
    """An embedding endpoint that is down: every call fails."""

    model = EmbeddingModel(id=MODEL.id, dimensions=MODEL.dimensions)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbeddingUnavailable("endpoint down")


async def _vectors_of(engine: AsyncEngine, entry_id: str) -> list[str]:
    """The checksums the entry's vectors were computed from."""
    EMBEDDINGS = tables.embeddings
    async with engine.connect() as connection:
        return list(
            (
                await connection.execute(
                    select(EMBEDDINGS.c.content_sha256).where(EMBEDDINGS.c.entry_id == entry_id)
                )
            ).scalars()
        )


async def _distill(store: PostgresMemoryStore, ref: str) -> str:
    result = await store.distill(
        DistillMemoryRequest(memory_ref=ref, token_budget=5_000, run_key=uuid.uuid4().hex)
    )
    assert result.status == "distilled" and result.output_id, result
    return result.output_id


async def _in_step(engine: AsyncEngine, store: PostgresMemoryStore, ref: str, entry_id: str):
    """The entry has exactly one vector, computed from what it says now."""
    entry = await store.get_entry(ref, entry_id, touch=False)
    assert entry is not None
    assert await _vectors_of(engine, entry_id) == [entry.content_sha256]
    assert await stale_index_rows(engine) == []


async def test_an_edit_while_the_model_is_down_keeps_no_vector_of_the_old_text(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    old_text = f"The vault code is {uuid.uuid4().hex[:10]} until Friday."
    entry = await store.put(ref, note(old_text))
    assert await _vectors_of(engine, entry.id) == [entry.content_sha256]
    down = PostgresMemoryStore(engine, embedder=_Down())
    await down.update(
        ref, entry.id, EntryChanges(content="The vault code was changed."), expected_version=1
    )
    assert await _vectors_of(engine, entry.id) == []
    assert await vectors_derived_from(engine, old_text) == []
    await re_embed(store.vectors)
    await _in_step(engine, store, ref, entry.id)


async def test_a_dream_gives_its_distilled_entry_the_vector_of_what_it_says(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(ref, [note("The office moved to Leeds."), note("Standup is at 9:15.")])
    distilled = await _distill(store, ref)
    await _in_step(engine, store, ref, distilled)


async def test_forget_reaches_the_vector_of_a_distillate_that_quoted_it(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    """The case the one writer was made for: re-embed, then forget a source a distilled
    entry quoted. The distillate is rewritten without it, and so is its vector."""
    ref = unique_ref()
    forgotten = f"The locker combination is {uuid.uuid4().hex[:10]}, tell nobody."
    target = await store.put(ref, note(forgotten))
    await store.put_many(ref, [note("The customer prefers invoices by email.")])
    distilled = await _distill(store, ref)
    await re_embed(store.vectors)
    assert await vectors_derived_from(engine, forgotten) != []
    report = await store.erase(ref, ForgetRequest(ids=(target.id,)))
    assert report.distilled_rewritten == 1
    assert await tables_holding(engine, forgotten) == []
    assert await vectors_derived_from(engine, forgotten) == []
    await _in_step(engine, store, ref, distilled)


async def test_deleting_a_source_reaches_the_distillates_vector(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    deleted = f"Parking spot {uuid.uuid4().hex[:8]} is reserved for the CFO."
    target = await store.put(ref, note(deleted))
    await store.put(ref, note("Lunch is served at noon."))
    distilled = await _distill(store, ref)
    await re_embed(store.vectors)
    assert await store.delete(ref, target.id)
    assert await vectors_derived_from(engine, deleted) == []
    await _in_step(engine, store, ref, distilled)


async def test_ttl_reaches_the_distillates_vector(engine: AsyncEngine) -> None:
    ref = unique_ref()
    store = PostgresMemoryStore(engine)
    expiry = store.now() + timedelta(seconds=30)
    expiring = f"Temporary door code {uuid.uuid4().hex[:10]} for the visit."
    await store.put(ref, note(expiring, expires_at=expiry))
    await store.put(ref, note("The visit is on Thursday."))
    distilled = await _distill(store, ref)
    await re_embed(store.vectors)
    later = PostgresMemoryStore(engine, clock=lambda: expiry)
    assert (await later.collect_garbage(ref)).expired_entries == 1
    assert await vectors_derived_from(engine, expiring) == []
    await _in_step(engine, later, ref, distilled)


async def test_a_survivor_re_redacted_by_consolidation_keeps_no_vector_of_the_secret(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    secret = canary()
    said = f"The billing API key is {secret}."
    stored = await store.put_many(
        ref, [note(said, tier=Tier.SEMANTIC), note(said, tier=Tier.SEMANTIC)]
    )
    registry = MemorySecretRegistry("consolidation")
    registry.register("billing-key", secret)
    result = await store.consolidate(
        ConsolidateMemoryRequest(memory_ref=ref, run_key=uuid.uuid4().hex),
        secrets=registry,
    )
    assert result.merged_count == 1
    (survivor,) = [e for e in await store.list(ref) if e.id in {s.id for s in stored}]
    assert secret not in survivor.content
    await _in_step(engine, store, ref, survivor.id)
