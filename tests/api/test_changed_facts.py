"""Facts that change, as an agent meets them over HTTP: a reworded later value of an
everyday fact is stored as a new entry; after a consolidation pass the newest value is
the top search hit, the older is served beside it, marked, and the relation is recorded
(issue 39). These cases are our own writing: regression tests, not the accuracy figure
(benchmarks/update_accuracy_bench.py measures on public sentences)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from memory.distillation.memory_index import INDEX_PATH, read_workspace_file, refresh_index
from memory.store import PostgresMemoryStore
from schemas.consolidation import ConsolidateMemoryRequest, ConsolidationResult
from schemas.memory_ref import parse_memory_ref

# (what was known, the reworded update, what an agent asks)
EVERYDAY = [
    (
        "Standup is at 9:30 every weekday",
        "Heads up: from Monday standup moves to 10:00",
        "what time is standup",
    ),
    ("I'm vegetarian", "I eat fish now, I'm pescatarian", "am I vegetarian"),
    (
        "The Q3 report is due on October 14",
        "The Q3 report deadline was pushed back to October 21",
        "when is the Q3 report due",
    ),
    ("Dana lives at 14 Elm Street, Springfield", "Dana moved to 220 Harbor Road", "Dana address"),
    ("Marco leads the Atlas project", "Atlas project lead is now Priya", "who leads Atlas"),
    ("Ticket OPS-412 is open", "OPS-412 has been resolved", "status of OPS-412"),
    (
        "The database migration is priority P2",
        "Migration priority raised to P1",
        "database migration priority",
    ),
]


async def _create(http, agent: str, key: str, said: str) -> str:
    answer = await http.post(
        "/api/v1/memory",
        json={
            "agent_id": agent,
            "namespace": "facts",
            "key": key,
            "value": {"text": said},
            "memory_type": "semantic",
        },
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


async def _pass(store: PostgresMemoryStore, ref: str) -> ConsolidationResult:
    run_key = f"test/{datetime.now(UTC).timestamp()}/{uuid.uuid4().hex[:6]}"
    return await store.consolidate(ConsolidateMemoryRequest(memory_ref=ref, run_key=run_key))


@pytest.mark.parametrize(("older", "newer", "question"), EVERYDAY)
async def test_the_newest_value_is_read_first_and_the_older_beside_it_marked(
    running_api, store: PostgresMemoryStore, older: str, newer: str, question: str
) -> None:
    tenant = "t" + uuid.uuid4().hex[:10]
    ref = f"mem://{tenant}/agent-7"
    async with await running_api.client_for(tenant) as http:
        old_id = await _create(http, "agent-7", "first", older)
        new_id = await _create(http, "agent-7", "second", newer)
        await _create(http, "agent-7", "other", "The office plants are watered on Fridays")
        result = await _pass(store, ref)
        assert result.updated_count + result.conflict_count == 1, result
        assert result.merged_count == 0 and result.output_count == result.input_count == 3

        found = await http.post(
            "/api/v1/memory/search", json={"query": question, "agent_id": "agent-7"}
        )
        assert found.status_code == 200, found.text
        hits = [hit["entry"] for hit in found.json()["results"]]
        ids = [hit["id"] for hit in hits]
        assert ids[0] == new_id, (question, [h["value"] for h in hits])
        assert old_id in ids, "the older value is served, not hidden"
        old = hits[ids.index(old_id)]
        if result.updated_count:
            assert old["superseded_by"] == new_id
        else:
            assert old["conflicts_with"] == [new_id] and hits[0]["conflicts_with"] == [old_id]

        listed = await http.get("/api/v1/memory", params={"agent_id": "agent-7"})
        marks = {
            e["id"]: (e["superseded_by"], e["conflicts_with"]) for e in listed.json()["entries"]
        }
        assert marks[new_id][0] is None and marks[old_id] != (None, None)

        if result.updated_count:
            current = await http.post(
                "/api/v1/memory/search",
                json={"query": question, "agent_id": "agent-7", "exclude_superseded": True},
            )
            assert old_id not in [hit["entry"]["id"] for hit in current.json()["results"]]
            page = await http.get(
                "/api/v1/memory", params={"agent_id": "agent-7", "exclude_superseded": "true"}
            )
            assert old_id not in [e["id"] for e in page.json()["entries"]]
            assert page.json()["total"] == 2

        again = await _pass(store, ref)
        assert (again.updated_count, again.conflict_count, again.merged_count) == (0, 0, 0)


async def test_links_follow_the_entries_through_edit_forget_and_undo(
    store: PostgresMemoryStore, engine
) -> None:
    from memory.search.update_marks import read_marks
    from schemas.memory_entry import EntryChanges, ForgetRequest, NewMemoryEntry, Tier

    ref = f"mem://t{uuid.uuid4().hex[:10]}/agent-1"
    parsed = parse_memory_ref(ref)
    old, new = await store.put_many(
        ref,
        [
            NewMemoryEntry(content="Standup is at 9:30 every weekday", tier=Tier.SEMANTIC),
            NewMemoryEntry(content="From Monday standup moves to 10:00", tier=Tier.SEMANTIC),
        ],
    )

    async def index_changes() -> dict[str, object]:
        async with engine.begin() as connection:
            await refresh_index(connection, parsed, store.now())
            found = await read_workspace_file(connection, parsed, INDEX_PATH)
        assert found is not None
        return dict(json.loads(found[1])["changedFacts"])

    async def superseded_by() -> str | None:
        async with store.db.driver() as connection:
            marks = await read_marks(connection, parsed, [old.id], store.now())
        return marks.superseded_by(old.id)

    first = await _pass(store, ref)
    assert first.updated_count == 1 and await superseded_by() == new.id
    assert await index_changes() == {
        "superseded": 1,
        "openConflicts": 0,
        "latestSupersessions": [{"older": old.id, "newer": new.id}],
    }
    audit = await store.superseded(ref, pass_id=first.pass_id)
    assert [(a.id, a.superseded_by, a.reason) for a in audit] == [(old.id, new.id, "updated")]
    undone = await store.undo_consolidation(ref, first.pass_id)
    assert undone.unmarked == 1 and await superseded_by() is None

    second = await _pass(store, ref)
    assert second.updated_count == 1 and await superseded_by() == new.id
    # The one writer: rewriting the newer entry's content drops the links read from it.
    await store.update(
        ref,
        new.id,
        EntryChanges(content="Standup is cancelled this week"),
        expected_version=new.version,
    )
    assert await superseded_by() is None
    async with engine.connect() as connection:
        left = await connection.execute(
            text("SELECT count(*) FROM memory_updates WHERE memory_ref = :ref"), {"ref": ref}
        )
        assert left.scalar_one() == 0

    await store.put(ref, NewMemoryEntry(content="Standup now starts at 10:15", tier=Tier.SEMANTIC))
    third = await _pass(store, ref)
    assert third.updated_count >= 1 and await superseded_by() is not None
    forgotten = await superseded_by()
    await store.forget(ref, ForgetRequest(ids=(str(forgotten),)))
    assert await superseded_by() is None, "a forgotten entry supersedes nothing"
    assert (await index_changes())["superseded"] == 0
    async with engine.connect() as connection:
        named = await connection.execute(
            text(
                "SELECT count(*) FROM memory_updates WHERE memory_ref = :ref "
                "AND :gone IN (older_id, newer_id)"
            ),
            {"ref": ref, "gone": forgotten},
        )
        assert named.scalar_one() == 0, "a deleted entry takes its links along"


async def test_an_agent_states_updates_when_it_writes(
    running_api, store: PostgresMemoryStore
) -> None:
    """Writes an agent can make: an unkeyed create is a new fact, ``supersedes`` names the
    entry a value replaces (kept, marked, ranked after), ``supersede_existing`` lets a
    second write of a live key supersede it; a forged or foreign id is refused naming
    the field, and nothing is written."""
    tenant = "t" + uuid.uuid4().hex[:10]
    ref = f"mem://{tenant}/agent-7"
    async with await running_api.client_for(tenant) as http:
        first = await http.post(
            "/api/v1/memory",
            json={"agent_id": "agent-7", "value": {"text": "The gym opens at 6am"}},
        )
        assert first.status_code == 201, first.text
        assert (first.json()["namespace"], first.json()["key"]) == ("", "")
        old_id = first.json()["id"]
        later = await http.post(
            "/api/v1/memory",
            json={
                "agent_id": "agent-7",
                "value": {"text": "The gym opens at 7am on weekdays"},
                "supersedes": old_id,
            },
        )
        assert later.status_code == 201, later.text
        new_id = later.json()["id"]
        found = await http.post(
            "/api/v1/memory/search", json={"query": "when does the gym open", "agent_id": "agent-7"}
        )
        hits = [hit["entry"] for hit in found.json()["results"]]
        assert [h["id"] for h in hits][:2] == [new_id, old_id]
        assert hits[1]["superseded_by"] == new_id

        before = await store.count(ref)
        for bad in ("m-forged-id", "x" * 300):
            refused = await http.post(
                "/api/v1/memory",
                json={"agent_id": "agent-7", "value": {"text": "Gym at 8"}, "supersedes": bad},
            )
            assert refused.status_code == 422 and "supersedes" in refused.text, refused.text
        assert await store.count(ref) == before, "a refused write writes nothing"
        async with await running_api.client_for("o" + uuid.uuid4().hex[:9]) as other:
            foreign = await other.post(
                "/api/v1/memory",
                json={"agent_id": "agent-7", "value": {"text": "x"}, "supersedes": old_id},
            )
            assert foreign.status_code == 422 and "supersedes" in foreign.text

        keyed = {"agent_id": "agent-7", "namespace": "prefs", "key": "seat"}
        one = await http.post("/api/v1/memory", json={**keyed, "value": {"seat": "aisle"}})
        again = await http.post("/api/v1/memory", json={**keyed, "value": {"seat": "window"}})
        assert one.status_code == 201 and again.status_code == 409, again.text
        replaced = await http.post(
            "/api/v1/memory",
            json={**keyed, "value": {"seat": "window"}, "supersede_existing": True},
        )
        assert replaced.status_code == 201, replaced.text
        gone = await http.get(f"/api/v1/memory/{one.json()['id']}", params={"agent_id": "agent-7"})
        assert gone.status_code == 404
        audit = await store.superseded(ref)
        assert (one.json()["id"], replaced.json()["id"], "superseded") in {
            (a.id, a.superseded_by, a.reason) for a in audit
        }
