"""The chaos run's checks must be able to fail: each one is shown a store with the
defect it exists to catch (a hole in an event sequence, a second or truncated archive,
a mark pointing nowhere, forgotten text left behind, a workflow applied twice)."""

from __future__ import annotations

import random
import uuid

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from chaos import checks
from chaos.operations import Context, Distillation
from memory.store import PostgresMemoryStore
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import note


async def _distilled_ref(store: PostgresMemoryStore, number: int) -> str:
    operation = Distillation(number)
    await store.put_many(operation.ref, [note(f"chaos check note {number}.{i}") for i in range(5)])
    result = await store.distill(
        DistillMemoryRequest(
            memory_ref=operation.ref, token_budget=5_000, run_key=f"run-{uuid.uuid4().hex[:8]}"
        )
    )
    assert result.status == "distilled"
    return operation.ref


def _context(engine: AsyncEngine) -> Context:
    return Context(None, engine, "unused", {}, random.Random(0), lambda: None)  # type: ignore[arg-type]


async def test_a_clean_store_passes_every_check(
    store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    ref = await _distilled_ref(store, 1)
    assert await checks.store_problems(engine) == {
        "event gaps": [],
        "archives": [],
        "lineage": [],
        "indexes": [],
    }
    verdict = await Distillation(1).verify(_context(engine))
    assert (verdict.duplicates, verdict.losses, verdict.problems) == (0, 0, [])
    assert ref == Distillation(1).ref


async def test_each_defect_is_reported(store: PostgresMemoryStore, engine: AsyncEngine) -> None:
    ref = await _distilled_ref(store, 2)
    async with engine.begin() as connection:
        # A second archive of the same sources (a distillation applied twice)...
        await connection.execute(
            text(
                # The copy's first hex digit differs from the original's whatever it is
                # ('f' || ... collided with a checksum starting with 'f', 1 run in 16).
                "INSERT INTO memory_archives SELECT tenant, memory_ref,"
                " CASE WHEN left(checksum, 1) = 'f' THEN '0' ELSE 'f' END || substr(checksum, 2),"
                " body, run_key, output_id, source_count, token_budget, tokens_used, byte_size,"
                " created_at, expires_at FROM memory_archives WHERE memory_ref = :ref"
            ),
            {"ref": ref},
        )
        # ... a sequence whose head is ahead of its events (a lost event; the events
        # table itself is append-only), and a merge mark pointing at nothing.
        await connection.execute(
            text("UPDATE memory_ref_heads SET last_seq = last_seq + 1 WHERE memory_ref = :ref"),
            {"ref": ref},
        )
        await connection.execute(
            text(
                "UPDATE memory_entries SET superseded_by = 'gone' WHERE id = ("
                " SELECT id FROM memory_entries WHERE memory_ref = :ref LIMIT 1)"
            ),
            {"ref": ref},
        )
        # ... and a vector beside text its entry no longer says.
        await connection.execute(
            text(
                "UPDATE memory_embeddings SET content_sha256 = 'planted' WHERE entry_id = ("
                " SELECT min(entry_id) FROM memory_embeddings WHERE memory_ref = :ref)"
            ),
            {"ref": ref},
        )
    problems = await checks.store_problems(engine)
    assert problems["event gaps"] and ref in problems["event gaps"][0]
    assert any("bytes do not hash" in p for p in problems["archives"])
    assert any("in 2 archives" in p for p in problems["archives"])
    assert any(p.startswith("superseded_by") for p in problems["lineage"])
    assert len(problems["indexes"]) == 1 and "older content" in problems["indexes"][0]
    verdict = await Distillation(2).verify(_context(engine))
    assert verdict.duplicates == 1, verdict.problems
    async with engine.begin() as connection:  # the planted vector goes (tests/conftest.py)
        await connection.execute(
            text("DELETE FROM memory_embeddings WHERE content_sha256 = 'planted'")
        )


async def test_a_lost_distillation_and_left_text_are_reported(
    store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    lost = Distillation(3)
    await store.put_many(lost.ref, [note("chaos check note never distilled")])
    verdict = await lost.verify(_context(engine))
    assert verdict.losses == 2, verdict.problems  # no archive, no memory.compacted
    ref = await _distilled_ref(store, 4)
    found = await checks.texts_anywhere(engine, ["chaos check note 4.3", "never stored here"])
    assert found == ["forgotten text 'chaos check note 4.3' is still stored"]
    assert ref
