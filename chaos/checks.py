"""Store-wide invariants after a chaos run, read straight from the tables (not through
the code under test), each returning the violations it found.

- Event sequences are gap-free: each memoryRef's events are 1..last_seq with no hole
  and its head agrees.
- Archives are whole: every archive's bytes hash to its checksum and list exactly
  source_count sources; no two archives of a memoryRef consumed the same source.
- Lineage is consistent: every mark (distilled_into, superseded_by, consolidation_pass)
  and every lineage row points to an artifact that exists.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


async def event_gaps(engine: AsyncEngine) -> list[str]:
    query = text(
        """
        SELECT h.memory_ref, h.last_seq, count(e.seq), coalesce(max(e.seq), 0)
        FROM memory_ref_heads h LEFT JOIN memory_events e ON e.memory_ref = h.memory_ref
        GROUP BY h.memory_ref, h.last_seq
        """
    )
    async with engine.connect() as connection:
        rows = (await connection.execute(query)).all()
    return [
        f"events of {ref}: {count} rows, max seq {top}, head {head}"
        for ref, head, count, top in rows
        if not (count == top == head)
    ]


async def archive_problems(engine: AsyncEngine) -> list[str]:
    query = text("SELECT memory_ref, checksum, body, source_count FROM memory_archives")
    problems: list[str] = []
    consumed: Counter[tuple[str, str]] = Counter()
    async with engine.connect() as connection:
        rows = (await connection.execute(query)).all()
    for ref, checksum, body, source_count in rows:
        if hashlib.sha256(bytes(body)).hexdigest() != checksum:
            problems.append(f"archive {checksum[:12]} of {ref}: bytes do not hash to checksum")
        sources = json.loads(bytes(body))["sources"]
        if len(sources) != source_count:
            problems.append(f"archive {checksum[:12]} of {ref}: partial ({len(sources)} sources)")
        consumed.update((ref, source["id"]) for source in sources)
    problems += [
        f"source {source} of {ref} is in {n} archives"
        for (ref, source), n in consumed.items()
        if n > 1
    ]
    return problems


DANGLING_MARKS = {
    "distilled_into": """
        SELECT e.memory_ref, e.id FROM memory_entries e
        WHERE e.distilled_into IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM memory_entries d
            WHERE d.memory_ref = e.memory_ref AND d.id = e.distilled_into)
          AND NOT EXISTS (
            SELECT 1 FROM memory_archives a
            WHERE a.memory_ref = e.memory_ref AND a.output_id = e.distilled_into)
    """,
    "superseded_by": """
        SELECT e.memory_ref, e.id FROM memory_entries e
        WHERE e.superseded_by IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM memory_entries s
            WHERE s.memory_ref = e.memory_ref AND s.id = e.superseded_by)
    """,
    "consolidation_pass": """
        SELECT e.memory_ref, e.id FROM memory_entries e
        WHERE e.consolidation_pass IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM consolidation_passes p
            WHERE p.memory_ref = e.memory_ref AND p.pass_id = e.consolidation_pass)
    """,
    "lineage": """
        SELECT l.memory_ref, l.source_id FROM memory_lineage l
        WHERE l.artifact_kind IN ('distilled-entry', 'merged-into') AND NOT EXISTS (
            SELECT 1 FROM memory_entries e
            WHERE e.memory_ref = l.memory_ref AND e.id = l.artifact_id)
    """,
}


async def dangling_marks(engine: AsyncEngine) -> list[str]:
    problems: list[str] = []
    async with engine.connect() as connection:
        for mark, query in DANGLING_MARKS.items():
            for ref, entry_id in (await connection.execute(text(query))).all():
                problems.append(f"{mark} of {entry_id} in {ref} points to nothing")
    return problems


async def texts_anywhere(engine: AsyncEngine, needles: list[str]) -> list[str]:
    """Which needles appear in any text, JSON or bytea column of any table."""
    if not needles:
        return []
    columns = text(
        """
        SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('text', 'jsonb', 'bytea', 'ARRAY')
          AND table_name <> 'alembic_version'
        """
    )
    found: set[str] = set()
    async with engine.connect() as connection:
        for table, column, kind in (await connection.execute(columns)).all():
            value = (
                f'"{column}"::text' if kind != "bytea" else f"convert_from(\"{column}\", 'UTF8')"
            )
            query = text(f'SELECT {value} FROM "{table}" WHERE "{column}" IS NOT NULL')
            for (cell,) in (await connection.execute(query)).all():
                found.update(needle for needle in needles if needle in cell)
    return [f"forgotten text {needle!r} is still stored" for needle in sorted(found)]


STALE_VECTORS = text(
    "SELECT v.memory_ref, v.entry_id FROM memory_embeddings v JOIN memory_entries e"
    " ON e.memory_ref = v.memory_ref AND e.id = v.entry_id"
    " WHERE v.content_sha256 <> e.content_sha256 ORDER BY 1, 2"
)


async def stale_vectors(engine: AsyncEngine) -> list[str]:
    """Vectors computed from content their entry no longer holds: the one writer of
    content (memory/entries/content.py) replaces or deletes them in the transaction that
    changes the content, killed or not."""
    async with engine.connect() as connection:
        rows = (await connection.execute(STALE_VECTORS)).all()
    return [f"the vector of {entry_id} in {ref} is of older content" for ref, entry_id in rows]


async def store_problems(engine: AsyncEngine) -> dict[str, list[str]]:
    return {
        "event gaps": await event_gaps(engine),
        "archives": await archive_problems(engine),
        "lineage": await dangling_marks(engine),
        "indexes": await stale_vectors(engine),
    }
