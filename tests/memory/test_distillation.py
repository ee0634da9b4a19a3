"""Distillation inside the store (no Temporal): budget, atomicity, byte stability, SR-1
carry-forward, idempotency, source marking and MEMORY-INDEX.json."""

from __future__ import annotations

import hashlib
import json

import jsonschema
import pytest
import rfc8785
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.distillation.memory_index import INDEX_MD_PATH, INDEX_PATH, read_workspace_file
from memory.distillation.packing import ExtractiveDistiller
from memory.distillation.run import select_sources
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage import tables
from memory.store import PostgresMemoryStore
from memory.tokens import count_tokens
from schemas import export
from schemas.capabilities import MEMORY_INDEX_MAX_TOKENS
from schemas.errors import TokenBudgetExceeded
from schemas.memory_entry import NewMemoryEntry
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import note, unique_ref

CANARY = "sk-canary-7f3a9b2c4d5e6f708192"


def _request(ref: str, budget: int, run_key: str = "run-1", sources=None) -> DistillMemoryRequest:
    return DistillMemoryRequest(
        memory_ref=ref, token_budget=budget, run_key=run_key, sources=sources
    )


async def _distill(
    store: PostgresMemoryStore,
    ref: str,
    budget: int,
    run_key: str = "run-1",
    registry: MemorySecretRegistry | None = None,
):
    return await store.distill(_request(ref, budget, run_key), secrets=registry)


async def _table_counts(engine: AsyncEngine, ref: str) -> dict[str, int]:
    counts = {}
    async with engine.connect() as connection:
        for name, table in (
            ("archives", tables.archives),
            ("entries", tables.entries),
            ("events", tables.events),
            ("workspace", tables.workspace_files),
            ("runs", tables.distillation_runs),
        ):
            counts[name] = (
                await connection.execute(select(func.count()).where(table.c.memory_ref == ref))
            ).scalar_one()
    return counts


async def _archive_body(engine: AsyncEngine, ref: str, checksum: str) -> bytes:
    async with engine.connect() as connection:
        return bytes(
            (
                await connection.execute(
                    select(tables.archives.c.body).where(
                        tables.archives.c.memory_ref == ref,
                        tables.archives.c.checksum == checksum,
                    )
                )
            ).scalar_one()
        )


async def _seed(store: PostgresMemoryStore, ref: str, n: int = 40) -> None:
    entries = [
        note(f"Customer {i} prefers email follow-up on invoices over phone calls.", "pref")
        for i in range(n)
    ]
    entries += [note("Weekly sync moved to Thursdays at 10:00.", "meeting")] * 3
    await store.put_many(ref, entries)


async def test_tokens_used_stays_within_budget_and_matches_the_archive(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await _seed(store, ref)
    result = await _distill(store, ref, budget=300)
    assert result.status == "distilled"
    assert 0 < result.tokens_used <= 300
    assert result.deferred_count > 0  # a small budget leaves a backlog for the next dream
    body = await _archive_body(engine, ref, result.archive_checksum or "")
    assert hashlib.sha256(body).hexdigest() == result.archive_checksum
    archive = json.loads(body)
    assert body == rfc8785.dumps(archive)  # canonical JCS bytes
    recount_in = sum(count_tokens(item["text"]) for item in archive["items"])
    recount_out = count_tokens(archive["output"])
    assert recount_in + recount_out == result.tokens_used
    output = await store.get(ref, result.output_id or "")
    assert output is not None and output.content == archive["output"]
    assert result.byte_size == len(output.content.encode())


async def test_exact_repeats_are_distilled_once(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await _seed(store, ref, n=2)
    result = await _distill(store, ref, budget=10_000)
    output = await store.get(ref, result.output_id or "")
    assert output is not None
    assert output.content.count("Weekly sync moved to Thursdays") == 1
    assert result.source_count == 5 and result.deferred_count == 0


async def test_unmeetable_budget_fails_atomically(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put(ref, note("A pinned fact that must survive every dream. " * 5, pinned=True))
    await store.put(ref, note("another note"))
    before = await _table_counts(engine, ref)
    with pytest.raises(TokenBudgetExceeded) as info:
        await _distill(store, ref, budget=3)
    assert info.value.budget == 3
    assert info.value.minimum_required > 3
    assert await _table_counts(engine, ref) == before
    # The reported minimum (the cheapest source) is enough; the pinned entry larger than
    # the budget was parked by the failed run and is passed over, not failed on.
    result = await _distill(store, ref, budget=info.value.minimum_required, run_key="run-2")
    assert result.status == "distilled"
    assert result.tokens_used <= info.value.minimum_required
    assert result.source_count == 1 and result.snapshot_count == 1


async def test_same_sources_and_budget_give_identical_bytes(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    refs = [unique_ref(tenant="same-tenant", agent=f"agent-{i}") for i in range(2)]
    results = []
    for ref in refs:
        await store.put_many(
            ref,
            [
                NewMemoryEntry(id=f"e{i}", content=f"fact number {i} about the rollout")
                for i in range(30)
            ],
        )
    results = [await _distill(store, ref, budget=250) for ref in refs]
    bodies = [
        await _archive_body(engine, r, res.archive_checksum or "")
        for r, res in zip(refs, results, strict=True)
    ]
    # The memoryRef is part of the document, so compare with it normalised out...
    docs = [json.loads(b) for b in bodies]
    for doc in docs:
        doc["memoryRef"] = "x"
    assert docs[0] == docs[1]
    # ...and selecting the same sources twice gives byte-identical archives.
    fresh = unique_ref(tenant="same-tenant", agent="agent-fresh")
    await store.put_many(
        fresh,
        [
            NewMemoryEntry(id=f"e{i}", content=f"fact number {i} about the rollout")
            for i in range(30)
        ],
    )
    outcomes = [
        await select_sources(
            store.db,
            _request(fresh, 250, f"plan-{n}"),
            secrets=None,
            distiller=ExtractiveDistiller(),
            progress=lambda _: None,
        )
        for n in range(2)
    ]
    assert outcomes[0].checksum == outcomes[1].checksum
    assert outcomes[0].outcome == outcomes[1].outcome
    result = await _distill(store, fresh, budget=250)
    doc = json.loads(await _archive_body(engine, fresh, result.archive_checksum or ""))
    doc["memoryRef"] = "x"
    assert doc == docs[0]


async def test_secret_registered_after_the_write_never_reaches_the_archive(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    # Written before the secret was known to the vault: stored in plaintext.
    await store.put(ref, note(f"deploy key is {CANARY} keep it safe", "ops"))
    registry = MemorySecretRegistry("run-1")
    registry.register("deploy-key", CANARY)
    result = await _distill(store, ref, budget=5_000, registry=registry)
    body = await _archive_body(engine, ref, result.archive_checksum or "")
    assert CANARY.encode() not in body
    assert b"[REDACTED:deploy-key]" in body
    output = await store.get(ref, result.output_id or "")
    assert output is not None and CANARY not in output.content
    async with engine.connect() as connection:
        files = (await connection.execute(select(tables.workspace_files.c.body))).scalars().all()
        events = (await connection.execute(select(tables.events.c.payload))).scalars().all()
    assert all(CANARY.encode() not in bytes(f) for f in files)
    assert all(CANARY not in json.dumps(p) for p in events)


async def test_retry_with_the_same_run_key_writes_nothing_twice(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await _seed(store, ref, n=5)
    first = await _distill(store, ref, budget=2_000)
    after_first = await _table_counts(engine, ref)
    second = await _distill(store, ref, budget=2_000, run_key="run-1")
    assert second == first
    assert await _table_counts(engine, ref) == after_first
    compacted = await store.events(ref, types=["memory.compacted"])
    assert len(compacted) == 1


async def test_distilled_sources_are_not_distilled_again(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await _seed(store, ref, n=5)
    first = await _distill(store, ref, budget=5_000)
    assert first.deferred_count == 0
    second = await _distill(store, ref, budget=5_000, run_key="run-2")
    assert second.status == "nothing-to-distill"
    await store.put(ref, note("a brand new observation"))
    third = await _distill(store, ref, budget=5_000, run_key="run-3")
    assert third.source_count == 1


async def test_compacted_event_and_index(engine: AsyncEngine, store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await _seed(store, ref, n=5)
    result = await _distill(store, ref, budget=5_000)
    events = await store.events(ref)
    compacted = [e for e in events if e.type == "memory.compacted"]
    assert len(compacted) == 1
    payload = compacted[0].payload
    schema = json.loads((export.OUTPUT_DIR / "event-memory-compacted.schema.json").read_text())
    jsonschema.validate(payload, schema)
    assert payload["trigger"] == "host-managed"
    assert payload["outputId"] == result.output_id
    assert payload["sourceCount"] == 8 and len(payload["sourceIds"]) == 8  # type: ignore[arg-type]
    assert payload["distillation"] == {
        "tokenBudget": 5_000,
        "tokensUsed": result.tokens_used,
        "indexUpdated": True,
    }
    updates = [e.payload for e in events if e.type == "workspace.updated"]
    assert {"path": INDEX_PATH, "version": 1} in updates
    assert {"path": INDEX_MD_PATH, "version": 1} in updates
    async with engine.connect() as connection:
        found = await read_workspace_file(connection, parse_memory_ref(ref), INDEX_PATH)
    assert found is not None
    version, body = found
    index = json.loads(body)
    assert version == 1 == (result.index.version if result.index else 0)
    assert index["sizeTokens"] == count_tokens(body.decode()) <= MEMORY_INDEX_MAX_TOKENS
    assert index["archives"][0]["checksum"] == result.archive_checksum
    assert index["entryCounts"]["semantic"] == 1
    assert "Customer" not in body.decode()  # content-free

    await store.put(ref, note("next day"))
    await _distill(store, ref, budget=5_000, run_key="run-2")
    async with engine.connect() as connection:
        latest = await read_workspace_file(connection, parse_memory_ref(ref), INDEX_PATH)
    assert latest is not None and latest[0] == 2


async def test_index_respects_its_token_cap(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    # Many tags and many archives push the manifest past its cap.
    for day in range(25):
        await store.put_many(
            ref,
            [
                note(f"day {day} note {i}", *[f"tag-{day}-{i}-{k}" for k in range(4)])
                for i in range(6)
            ],
        )
        await _distill(store, ref, budget=5_000, run_key=f"run-{day}")
    async with engine.connect() as connection:
        found = await read_workspace_file(connection, parse_memory_ref(ref), INDEX_PATH)
    assert found is not None
    index = json.loads(found[1])
    assert index["sizeTokens"] <= MEMORY_INDEX_MAX_TOKENS
    assert index["sizeTokens"] == count_tokens(found[1].decode())
    assert index["omitted"]["tags"] + index["omitted"]["archives"] > 0
    assert index["archiveCount"] == 25


async def test_recursive_distillation_of_earlier_outputs(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await _seed(store, ref, n=3)
    first = await _distill(store, ref, budget=5_000)
    registry = MemorySecretRegistry("r")
    registry.register("k", "Customer 1 prefers")  # >= 8 chars, re-checked at this level
    result = await store.distill(
        _request(ref, 5_000, "rec", sources=(first.output_id or "",)), secrets=registry
    )
    assert result.source_count == 1
    output = await store.get(ref, result.output_id or "")
    assert output is not None and "Customer 1 prefers" not in output.content
    assert "[REDACTED:k]" in output.content


async def test_archives_are_immutable_and_collected_after_retention(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    from datetime import timedelta

    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from schemas.capabilities import ARCHIVE_RETENTION

    ref = unique_ref()
    await _seed(store, ref, n=3)
    result = await _distill(store, ref, budget=5_000)
    async with engine.connect() as connection:
        with pytest.raises(DBAPIError, match="immutable"):
            await connection.execute(text("UPDATE memory_archives SET body = 'x'"))
    assert (await store.collect_garbage(ref)).expired_archives == 0

    later = store.now() + ARCHIVE_RETENTION + timedelta(milliseconds=1)
    aged = PostgresMemoryStore(engine, clock=lambda: later)
    report = await aged.collect_garbage(ref)
    assert report.expired_archives == 1
    counts = await _table_counts(engine, ref)
    assert counts["archives"] == 0
    # The distilled entry itself is long-term memory and stays readable.
    assert await store.get(ref, result.output_id or "") is not None


async def test_pinned_backlog_larger_than_the_budget_drains_over_several_dreams(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [
            note(f"Pinned fact {i}: the customer's contract renews every March.", pinned=True)
            for i in range(40)
        ]
        + [note(f"ordinary note {i}") for i in range(10)],
    )
    first = await _distill(store, ref, budget=400)
    assert first.status == "distilled" and first.tokens_used <= 400
    assert 0 < first.source_count < 40 and first.deferred_count > 0
    output = await store.get(ref, first.output_id or "")
    assert output is not None
    # Pinned rank first; a short ordinary note may still fill the last few tokens.
    assert output.content.count("Pinned fact") > 3 * output.content.count("ordinary note")
    drained, run = first.source_count, 1
    while drained < 50 and run < 40:
        result = await _distill(store, ref, budget=400, run_key=f"run-{run + 1}")
        drained += result.source_count
        run += 1
    assert drained == 50
