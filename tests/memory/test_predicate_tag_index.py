"""A predicate watch waiting for a tag asks the tag index (issue 24: a 1M-entry memoryRef).

``memory.tag_exists`` is evaluated when its watch starts (arming starts one per new
predicate commitment, inside the nightly dream) and whenever a write may have made it
true. Its tag is usually carried by no entry yet ("when the contract is signed" waits
for contract-signed). As a bare EXISTS, PostgreSQL planned it for the first row,
assumed the tag sits in 0.5% of the rows and read the whole table to find none: 500 ms
at 1M entries, under the dream's load up to 1.7 s. Checked by the rows the statement
reads (EXPLAIN ANALYZE of the statement the predicate really runs), not by timing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.commitments.predicates import TAG_EXISTS, default_predicates
from memory.store import PostgresMemoryStore
from schemas.commitment_spec import PredicateSpec
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.scan import index_seeded_entries

ENTRIES = 20_000
# Every entry carries one of four common tags, as agent memory does.
SEED = """
INSERT INTO memory_entries (
    tenant, memory_ref, id, content, content_sha256, tags, tier, version, pinned,
    priority, metadata, created_at, updated_at, last_accessed_at
)
SELECT
    CAST(:tenant AS text), CAST(:ref AS text), 'seed' || lpad(k::text, 9, '0'),
    'Note ' || k, md5('Note ' || k),
    ARRAY[(ARRAY['customer', 'billing', 'support', 'sales'])[1 + k % 4]],
    'episodic', 1, false, 1, '{}'::jsonb, now(), now(), now()
FROM generate_series(0, CAST(:size AS integer) - 1) AS k
"""


def _entry_rows_read(plan: dict[str, Any]) -> int:
    """Rows of memory_entries a plan read: those it kept plus those its filters dropped."""
    total = 0
    if plan.get("Relation Name") == "memory_entries" and "Scan" in plan["Node Type"]:
        total += int(plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0))
    for child in plan.get("Plans", ()):
        total += _entry_rows_read(child)
    return total


async def _evaluate(engine: AsyncEngine, ref: str, tag: str) -> tuple[bool, list[Any]]:
    """The predicate's verdict and the statements it ran."""
    seen: list[Any] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    spec = PredicateSpec(predicate=TAG_EXISTS, args={"tag": tag})
    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        async with engine.connect() as connection:
            holds = await default_predicates().evaluate(
                connection, parse_memory_ref(ref), spec, datetime.now(UTC)
            )
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    return holds, seen


async def test_a_tag_no_entry_carries_is_looked_up_not_scanned(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    async with engine.begin() as connection:
        await connection.execute(
            text(SEED), {"tenant": parse_memory_ref(ref).tenant, "ref": ref, "size": ENTRIES}
        )
        await index_seeded_entries(connection, ref)
    async with engine.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        await connection.execute(text("ANALYZE memory_entries"))

    holds, statements = await _evaluate(engine, ref, "contract-signed")
    assert holds is False
    ((statement, parameters),) = [s for s in statements if "memory_entries" in s[0]]
    async with engine.connect() as connection:
        raw = (
            await connection.exec_driver_sql(
                f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", parameters
            )
        ).scalar_one()
    plan = (json.loads(raw) if isinstance(raw, str) else raw)[0]["Plan"]
    assert _entry_rows_read(plan) < 100, json.dumps(plan)

    # A common tag is found at once, and a tag written later is seen.
    assert (await _evaluate(engine, ref, "billing"))[0] is True
    await store.put(ref, note("The contract was signed today", "contract-signed"))
    assert (await _evaluate(engine, ref, "contract-signed"))[0] is True
