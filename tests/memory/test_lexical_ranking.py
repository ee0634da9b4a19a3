"""The lexical leg (BM25 over term postings, memory/search/lexical.py) through the store
on real PostgreSQL: rare words outweigh a name every entry carries, a two-word entry is
not lifted over the one that answers, words match across their forms, score fusion
keeps each leg's clear hit, and the term
statistics follow the content: an edit, a forget and a TTL purge leave no posting or
count of words no entry says any more."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.search.hits import LegHit
from memory.search.ranking import fuse
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.memory_entry import EntryChanges, ForgetRequest, NewMemoryEntry
from schemas.memory_ref import parse_memory_ref
from schemas.search import SearchMode, SearchRequest
from tests.support.factories import note, unique_ref
from tests.support.races import check_indexes
from tests.support.scan import index_rows_out_of_step, postings_holding, tables_holding

TURNS = (
    "Nate: You too!",
    "Nate: Thanks, see you soon.",
    "Nate: Haha, same here.",
    "Joanna: How are the pets doing?",
    "Nate: I got a third turtle last week, they love the new tank.",
    "Joanna: I finished my screenplay draft yesterday.",
    "Nate: Gaming all weekend, as usual.",
)


async def _text_ranking(store: PostgresMemoryStore, ref: str, query: str) -> list[str]:
    found = await store.search(ref, SearchRequest(query=query, mode=SearchMode.TEXT, limit=10))
    return [hit.entry.content for hit in found.hits]


async def test_a_rare_word_outweighs_a_name_every_turn_carries(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(ref, [note(turn) for turn in TURNS])
    ranking = await _text_ranking(store, ref, "Why did Nate get a third turtle?")
    assert ranking[0] == TURNS[4], ranking
    # The name alone still finds Nate's turns, shortest (most about him) not required.
    assert set(await _text_ranking(store, ref, "Nate")) == {t for t in TURNS if "Nate" in t}


async def test_words_match_across_their_forms_and_stop_words_find_nothing(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(ref, [note(turn) for turn in TURNS])
    assert (await _text_ranking(store, ref, "turtles"))[0] == TURNS[4]
    assert (await _text_ranking(store, ref, "screenplays drafted"))[0] == TURNS[5]
    assert await _text_ranking(store, ref, "what did they do with the") == []


async def _term_count(engine: AsyncEngine, ref: str, term: str) -> int | None:
    COUNTS = tables.term_counts
    async with engine.connect() as connection:
        return (
            await connection.execute(
                select(COUNTS.c.entries).where(COUNTS.c.memory_ref == ref, COUNTS.c.term == term)
            )
        ).scalar_one_or_none()


async def test_the_statistics_follow_an_edit_a_forget_and_a_ttl_purge(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    kept, edited, forgotten = await store.put_many(
        ref,
        [
            note("The zanzibar ferry leaves at noon"),
            note("The zanzibar visa costs fifty dollars"),
            note("Quokkanary photos are in the shared drive"),
        ],
    )
    assert await _term_count(engine, ref, "zanzibar") == 2
    await store.update(ref, edited.id, EntryChanges(content="Visas cost fifty"), expected_version=1)
    assert await _term_count(engine, ref, "zanzibar") == 1
    assert await _term_count(engine, ref, "visa") == 1
    assert set(await _text_ranking(store, ref, "zanzibar visa")) == {
        kept.content,
        "Visas cost fifty",
    }

    await store.forget(ref, ForgetRequest(ids=(forgotten.id,)))
    assert await _term_count(engine, ref, "quokkanari") is None
    assert await postings_holding(engine, "Quokkanary photos") == []
    assert "memory_terms.term" not in await tables_holding(engine, "Quokkanary photos")

    clock = [datetime.now(UTC)]
    stepped = PostgresMemoryStore(engine, clock=lambda: clock[0])
    expiring = await stepped.put(
        ref,
        NewMemoryEntry(content="Ephemeralword reminder", expires_at=clock[0] + timedelta(hours=1)),
    )
    assert await _term_count(engine, ref, "ephemeralword") == 1
    clock[0] += timedelta(hours=2)
    await stepped.gc_expired(ref)
    assert await stepped.get_entry(ref, expiring.id, touch=False) is None
    assert await _term_count(engine, ref, "ephemeralword") is None


def _hit(entry_id: str, value: float, written: datetime | None = None) -> LegHit:
    return LegHit(entry_id, value, written or datetime(2026, 1, 1, tzinfo=UTC))


def test_fusion_keeps_each_legs_clear_hit() -> None:
    """The text leg's top hit outranks every entry only the vectors found; an entry both
    legs rank well outranks either leg's lone hit; a vector hit outranks a weak word match."""
    text_hits = [_hit("clear", 12.0), _hit("both", 6.0), _hit("weak", 1.0)]
    vector_hits = [_hit("near", 0.10), _hit("both", 0.12), _hit("noise", 0.40), _hit("far", 0.50)]
    ranked = [hit.id for hit in fuse(text_hits, vector_hits)]
    assert ranked[0] == "clear"
    assert ranked.index("both") < ranked.index("near") < ranked.index("weak")
    assert [hit.id for hit in fuse(text_hits, [])] == ["clear", "both", "weak"]
    assert [hit.id for hit in fuse([], vector_hits)] == ["near", "both", "noise", "far"]


async def test_hybrid_search_keeps_the_text_legs_clear_hit(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await store.put_many(ref, [note(turn) for turn in TURNS])
    query = "Why did Nate get a third turtle?"
    hybrid = await store.search(ref, SearchRequest(query=query, limit=3))
    assert hybrid.hits[0].entry.content == TURNS[4]
    assert hybrid.hits[0].text_rank == 1


async def test_the_in_step_checks_find_a_planted_posting_and_count(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    """The checks every test and every race trial run (tests/support/scan.py) can fail:
    a posting of a word the entry does not say, and a count that is not the recount."""
    ref = unique_ref()
    (entry,) = await store.put_many(ref, [note("The ferry leaves at noon")])
    planted = text(
        "INSERT INTO memory_terms (memory_ref, term, entry_id, tenant, frequency, entry_terms)"
        " VALUES (:ref, 'plantedword', :id, :tenant, 1, 1)"
    )
    async with engine.begin() as connection:
        await connection.execute(
            planted, {"ref": ref, "id": entry.id, "tenant": parse_memory_ref(ref).tenant}
        )
        # The trigger counted the planted posting as a term of one more entry (the writer
        # inserts an entry's postings in one statement), and a count is planted too.
        await connection.execute(
            text(
                "UPDATE memory_term_counts SET entries = 7"
                " WHERE memory_ref = :ref AND term = 'ferri'"
            ),
            {"ref": ref},
        )
        found = await index_rows_out_of_step(connection, ref)
        assert (ref, entry.id, "term postings") in found and (ref, "", "term counts") in found
        assert set(found) <= set(await index_rows_out_of_step(connection))
        assert (await check_indexes(connection, ref))["index_in_step"] == (
            "1 term counts out of step; 1 term postings out of step; 1 term totals out of step"
        )
        await connection.rollback()
    async with engine.connect() as connection:
        assert await index_rows_out_of_step(connection, ref) == []


def test_equal_scores_put_the_newer_entry_first() -> None:
    older, newer = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)
    text_hits = [_hit("b-old", 3.0, older), _hit("a-new", 3.0, newer), _hit("c", 1.0, newer)]
    assert [hit.id for hit in fuse(text_hits, [])] == ["a-new", "b-old", "c"]
    text_hits = [_hit("a-old", 3.0, older), _hit("b-new", 3.0, newer)]
    assert [hit.id for hit in fuse(text_hits, [])] == ["b-new", "a-old"]


async def test_a_fact_restated_later_comes_first(store: PostgresMemoryStore) -> None:
    """The same words written twice (no key, so both kept): the later one ranks first in
    every mode, whichever id sorts first."""
    ref = unique_ref()
    clock = [datetime(2026, 3, 1, tzinfo=UTC)]
    stepped = PostgresMemoryStore(store.engine, clock=lambda: clock[0])
    said = "The standup is at ten in the small room"
    first = await stepped.put(ref, NewMemoryEntry(id="a-first", content=said))
    clock[0] += timedelta(days=1)
    second = await stepped.put(ref, NewMemoryEntry(id="z-second", content=said))
    for mode in SearchMode:
        found = await stepped.search(ref, SearchRequest(query="when is the standup", mode=mode))
        assert [hit.entry.id for hit in found.hits[:2]] == [second.id, first.id], mode
