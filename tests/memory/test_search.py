"""Hybrid search and the vectors behind it, through the store with the real offline
model, real PostgreSQL (pgvector HNSW, GIN full text): paraphrases found by meaning, the
tenant scope and the filters held on both legs, vectors that follow their entry (written
with it, replaced on an edit, deleted on forget), a failing model that loses no write and
is caught up, and relevance-ranked budgeted reads."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.embeddings.model import EmbeddingModel, EmbeddingUnavailable, Vectors
from memory.embeddings.static_model import MODEL
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.errors import InvalidInput
from schemas.memory_entry import EntryChanges, ForgetRequest, MemoryListOptions, Tier
from schemas.search import SearchMode, SearchRequest
from tests.support.factories import note, unique_ref
from tests.support.scan import re_embed

FACTS = (
    "Acme prefers email for urgent requests",
    "The staging database lives in eu-west-1",
    "Bob is allergic to peanuts",
    "The quarterly report is due at the end of March",
    "Our office cat is called Whiskers",
)


async def _seed(store: PostgresMemoryStore, ref: str) -> dict[str, str]:
    stored = await store.put_many(ref, [note(text) for text in FACTS])
    return {entry.content: entry.id for entry in stored}


async def _vector_rows(engine: AsyncEngine, entry_id: str) -> list[tuple[str, str]]:
    EMBEDDINGS = tables.embeddings
    async with engine.connect() as connection:
        rows = await connection.execute(
            select(EMBEDDINGS.c.model, EMBEDDINGS.c.content_sha256).where(
                EMBEDDINGS.c.entry_id == entry_id
            )
        )
        return [tuple(row) for row in rows]


async def test_a_paraphrase_is_found_by_meaning_not_only_by_words(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    ids = await _seed(store, ref)
    question = "which channel does Acme like for things that are pressing"
    semantic = await store.search(
        ref, SearchRequest(query=question, limit=1, mode=SearchMode.SEMANTIC)
    )
    assert [hit.entry.id for hit in semantic.hits] == [ids[FACTS[0]]]
    assert semantic.model == MODEL.id
    hybrid = await store.search(ref, SearchRequest(query="peanut allergy", limit=2))
    assert hybrid.hits[0].entry.id == ids[FACTS[2]]
    assert hybrid.hits[0].text_rank == 1 and hybrid.hits[0].vector_rank is not None
    text_only = await store.search(ref, SearchRequest(query="whiskers", mode=SearchMode.TEXT))
    assert [hit.entry.id for hit in text_only.hits] == [ids[FACTS[4]]]
    assert text_only.model is None and text_only.hits[0].vector_rank is None


async def test_search_never_crosses_tenants_or_filters(store: PostgresMemoryStore) -> None:
    ref, other_tenant = unique_ref(), unique_ref()
    await _seed(store, other_tenant)
    assert (await store.search(ref, SearchRequest(query="Acme email"))).hits == ()
    await store.put(ref, note("Acme prefers email", "crm"))
    await store.put(ref, note("Acme prefers email for invoices", tier=Tier.SEMANTIC))
    tagged = await store.search(ref, SearchRequest(query="Acme email", tags_all=("crm",)))
    assert [hit.entry.content for hit in tagged.hits] == ["Acme prefers email"]
    semantic = await store.search(
        ref, SearchRequest(query="Acme email", mode=SearchMode.SEMANTIC, tier=Tier.SEMANTIC)
    )
    assert [hit.entry.content for hit in semantic.hits] == ["Acme prefers email for invoices"]
    assert await store.search("mem://../etc", SearchRequest(query="x")) is not None


async def test_vectors_follow_their_entry(engine: AsyncEngine, store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note("Carol approves refunds up to 500 euros"))
    ((model, checksum),) = await _vector_rows(engine, entry.id)
    assert (model, checksum) == (MODEL.id, entry.content_sha256)
    edited = await store.update(
        ref, entry.id, EntryChanges(content="Carol approves every refund"), expected_version=1
    )
    assert await _vector_rows(engine, entry.id) == [(MODEL.id, edited.content_sha256)]
    await store.forget(ref, ForgetRequest(ids=(entry.id,)))
    assert await _vector_rows(engine, entry.id) == []
    found = await store.search(ref, SearchRequest(query="who approves refunds"))
    assert found.hits == ()


class _Down:
    """An embedding endpoint that is down: every call fails."""

    model = EmbeddingModel(id=MODEL.id, dimensions=MODEL.dimensions)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbeddingUnavailable("endpoint down")


async def test_a_failing_model_loses_no_write_and_the_catch_up_embeds_it(
    engine: AsyncEngine,
) -> None:
    ref = unique_ref()
    down = PostgresMemoryStore(engine, embedder=_Down())
    entry = await down.put(ref, note("The backup runs every night at two"))
    assert await down.get(ref, entry.id) is not None
    assert await _vector_rows(engine, entry.id) == []
    with pytest.raises(EmbeddingUnavailable):
        await down.search(ref, SearchRequest(query="backup", mode=SearchMode.SEMANTIC))
    hybrid = await down.search(ref, SearchRequest(query="when does the backup run"))
    assert [hit.entry.id for hit in hybrid.hits] == [entry.id]  # the text leg still answers

    healthy = PostgresMemoryStore(engine)
    await re_embed(healthy.vectors)
    assert await _vector_rows(engine, entry.id) == [(MODEL.id, entry.content_sha256)]
    again = await healthy.vectors.catch_up(None, batch_size=100_000)
    assert again.embedded == 0  # nothing left: a second catch-up is a no-op


async def test_relevance_ranks_a_budgeted_read(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    ids = await _seed(store, ref)
    recency = await store.list(ref, MemoryListOptions(token_budget=1000))
    relevance = await store.list(
        ref,
        MemoryListOptions(token_budget=1000, rank="relevance", query="Acme urgent email"),
    )
    assert relevance[0].id == ids[FACTS[0]]
    assert [e.id for e in recency] != [e.id for e in relevance]
    assert sorted(e.id for e in relevance) == sorted(e.id for e in recency)
    tight = await store.list(
        ref, MemoryListOptions(token_budget=8, rank="relevance", query="Acme urgent email")
    )
    assert [e.id for e in tight] == [ids[FACTS[0]]]
    with pytest.raises(InvalidInput) as missing:
        await store.list(ref, MemoryListOptions(rank="relevance"))
    assert missing.value.field == "query"


async def test_without_a_model_relevance_is_refused_and_search_is_full_text(
    engine: AsyncEngine,
) -> None:
    ref = unique_ref()
    plain = PostgresMemoryStore(engine, embedder=None)
    entry = await plain.put(ref, note("The invoice template lives in the finance drive"))
    with pytest.raises(InvalidInput) as refused:
        await plain.list(ref, MemoryListOptions(rank="relevance", query="invoice"))
    assert refused.value.field == "rank"
    with pytest.raises(InvalidInput) as semantic:
        await plain.search(ref, SearchRequest(query="invoice", mode=SearchMode.SEMANTIC))
    assert semantic.value.field == "mode"
    found = await plain.search(ref, SearchRequest(query="invoices"))  # stemmed
    assert [hit.entry.id for hit in found.hits] == [entry.id]
    async with engine.connect() as connection:
        count = await connection.execute(
            select(func.count()).where(tables.embeddings.c.memory_ref == ref)
        )
        assert count.scalar_one() == 0


def test_static_vectors_are_unit_length_and_deterministic() -> None:
    from memory.embeddings.choice import static_embedder

    model = static_embedder()
    first = model.embed_now(["Acme prefers email", "zzzz"])
    second = model.embed_now(["Acme prefers email", "zzzz"])
    assert first.shape == (2, 256) and first.dtype == np.float32
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert first.tobytes() == second.tobytes()


async def test_the_vector_is_of_the_redacted_text(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    from memory.embeddings.choice import static_embedder
    from memory.redaction.chokepoint import MemorySecretRegistry
    from tests.support.factories import canary

    ref = unique_ref()
    secret = canary()
    registry = MemorySecretRegistry("search")
    registry.register("vendor-key", secret)
    raw = f"The vendor key is {secret} for the staging account"
    entry = await store.put(ref, note(raw), secrets=registry)
    assert secret not in entry.content
    async with engine.connect() as connection:
        stored = (
            await connection.execute(
                select(tables.embeddings.c.embedding).where(
                    tables.embeddings.c.entry_id == entry.id
                )
            )
        ).scalar_one()
    redacted, leaked = static_embedder().embed_now([entry.content, raw])
    assert np.allclose(np.asarray(stored), redacted, atol=1e-6)
    assert not np.allclose(np.asarray(stored), leaked, atol=1e-3)


async def test_a_catch_up_started_with_a_forget_leaves_no_vector_of_a_forgotten_entry(
    engine: AsyncEngine,
) -> None:
    """Side by side: the re-embed catch-up (read, embed, write) and a forget of the same
    entries, started together in both orders, never leave a vector behind nor fail on
    the foreign key; the entries not forgotten end with their vectors."""
    import asyncio

    healthy = PostgresMemoryStore(engine)
    plain = PostgresMemoryStore(engine, embedder=None)
    for trial in range(4):
        ref = unique_ref()
        written = await plain.put_many(ref, [note(f"trial {trial} fact {n}") for n in range(60)])
        doomed = tuple(entry.id for entry in written[::2])

        async def catch_up_all() -> None:
            after = None
            while True:
                page = await healthy.vectors.catch_up(after, batch_size=16)
                if page.after is None:
                    return
                after = page.after

        async def forget(ref: str, doomed: tuple[str, ...], delay: float) -> None:
            await asyncio.sleep(delay)
            await healthy.forget(ref, ForgetRequest(ids=doomed))

        await asyncio.gather(catch_up_all(), forget(ref, doomed, 0.01 * (trial % 2) * trial))
        await catch_up_all()  # what the race left for later
        async with engine.connect() as connection:
            rows = await connection.execute(
                select(tables.embeddings.c.entry_id).where(tables.embeddings.c.memory_ref == ref)
            )
            embedded = {row.entry_id for row in rows}
        assert embedded == {entry.id for entry in written} - set(doomed)
