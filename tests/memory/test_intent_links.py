"""Lifecycle events link to the OpenIntent intent their entry is scoped to (issue 22,
item 9): a keyed digest of (tenant, intent id) in memory_events.intent_digest, written
by every builder of lifecycle events (write, update, archive, erasure, consolidation and
its undo; eviction and TTL are driven over HTTP in
tests/api/test_api_openintent_intent_events.py), never the intent id's text."""

from __future__ import annotations

import re

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.keyed_ids.intent_links import IntentLinks
from memory.keyed_ids.opaque_refs import keyed_token
from memory.store import PostgresMemoryStore
from runtime.workflow_ids import WorkflowIds
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.events import LIFECYCLE_TYPES
from schemas.memory_entry import ForgetRequest, Tier
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref

INTENT = "intent_01HABC: close the Q3 books"
SCOPED = {"openintent": {"scope": {"intent_id": INTENT, "task_id": "task-9"}}}
LIFECYCLE = {t.value for t in LIFECYCLE_TYPES}


def test_the_digest_is_keyed_tenant_bound_and_the_workflow_ids_helper() -> None:
    public, keyed = IntentLinks(), IntentLinks(b"k" * 32)
    digest = public.digest("acme", INTENT)
    assert digest is not None and re.fullmatch(r"h[0-9a-f]{32}", digest)
    assert digest == public.digest("acme", INTENT)  # stable: the route recomputes it
    assert digest != public.digest("other", INTENT)
    assert digest != keyed.digest("acme", INTENT)
    assert public.digest("acme", None) is None and public.digest("acme", 7) is None
    assert public.digest("acme", "\ud800 lone surrogate") is not None  # any path text
    # One keyed-hash helper: the opaque workflow ids use the same one.
    ref = parse_memory_ref("mem://acme/agent-1")
    assert WorkflowIds(b"s" * 32).token(ref) == keyed_token(b"s" * 32, str(ref))


def test_with_a_payload_keys_file_the_link_is_keyed_by_its_own_secret(tmp_path) -> None:
    import base64
    import json

    from runtime.intent_link_keys import intent_links_for
    from runtime.payload_keys import cached_keyring
    from runtime.settings import Settings

    keys = tmp_path / "payload-keys.json"
    key = base64.b64encode(b"\x01" * 32).decode()
    keys.write_text(json.dumps({"system": {"active": "sys-1", "keys": {"sys-1": key}}}))
    settings = Settings(AGENT_MEMORY_PAYLOAD_KEYS_FILE=str(keys))
    keyed = intent_links_for(settings).digest("acme", INTENT)
    assert keyed is not None and keyed != IntentLinks().digest("acme", INTENT)
    assert keyed == intent_links_for(settings).digest("acme", INTENT)
    assert intent_links_for(Settings()).digest("acme", INTENT) == IntentLinks().digest(
        "acme", INTENT
    )
    # Derived like the workflow ids' secret, but its own.
    keyring = cached_keyring(str(keys))
    assert keyring.intent_link_secret != keyring.workflow_id_secret


async def _events(engine: AsyncEngine, ref: str) -> list[tuple[str, str | None, str | None]]:
    async with engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT type, payload->>'memoryId' AS memory_id, intent_digest "
                "FROM memory_events WHERE memory_ref = :ref ORDER BY seq"
            ),
            {"ref": ref},
        )
        return [(row.type, row.memory_id, row.intent_digest) for row in rows]


async def test_every_lifecycle_builder_links_the_entrys_intent(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    a = await store.put(
        ref, note("The customer prefers invoices in EUR", tier=Tier.SEMANTIC, metadata=SCOPED)
    )
    b = await store.put(
        ref,
        note("Note: the customer prefers invoices in EUR.", tier=Tier.SEMANTIC, metadata=SCOPED),
    )
    unscoped = await store.put(ref, note("The trial lasts 14 days", tier=Tier.SEMANTIC))
    working = await store.put(ref, note("Draft the Q3 summary", tier=Tier.WORKING, metadata=SCOPED))
    passed = await store.consolidate(ConsolidateMemoryRequest(memory_ref=ref, run_key="p-1"))
    assert passed.merged_count == 1
    await store.undo_consolidation(ref, passed.pass_id)
    assert await store.archive_working_memory(ref) == 1
    assert await store.forget(ref, ForgetRequest(ids=(a.id, b.id))) == 2

    expected = IntentLinks().digest(tenant, INTENT)
    events = await _events(engine, ref)
    scoped_ids = {a.id, b.id, working.id}
    linked = [(t, m) for t, m, digest in events if digest is not None]
    # Every lifecycle event of a scoped entry, and nothing else, carries the digest.
    assert linked == [(t, m) for t, m, _ in events if t in LIFECYCLE and m in scoped_ids]
    assert {digest for _, _, digest in events} == {expected, None}
    kinds = {t for t, _ in linked}
    assert kinds == {"memory.created", "memory.updated", "memory.archived", "memory.deleted"}
    # The merge, the strengthened survivor and the undo.
    assert sum(1 for t, _ in linked if t == "memory.updated") == 3
    assert all(m != unscoped.id for _, m in linked)
    # The intent id's text is in no column of the log.
    async with engine.connect() as connection:
        dump = (
            await connection.execute(
                text("SELECT string_agg(e::text, ' ') FROM memory_events AS e")
            )
        ).scalar_one()
    assert "close the Q3 books" not in dump and "intent_01HABC" not in dump


async def test_the_intent_index_serves_the_routes_query(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    """Events of tenant T for digest D after a time, oldest first, read off the index
    in order: no sort, no scan of other intents' or tenants' events."""
    ref = unique_ref()
    await store.put(ref, note("A scoped entry", metadata=SCOPED))
    found = await store.event_log.intent_events(parse_memory_ref(ref).tenant, INTENT, limit=10)
    assert [e.type for e in found] == ["memory.created"]
    async with engine.connect() as connection:
        await connection.execute(text("SET enable_seqscan = off"))
        plan = "\n".join(
            row[0]
            for row in await connection.execute(
                text(
                    "EXPLAIN SELECT memory_ref, seq FROM memory_events "
                    "WHERE tenant = 't' AND intent_digest = 'hx' AND occurred_at > now() "
                    "AND type = ANY(ARRAY['memory.created']) "
                    "ORDER BY occurred_at, memory_ref, seq LIMIT 100"
                )
            )
        )
    assert "ix_events_intent" in plan and "Sort" not in plan, plan
