"""An entry's context in search (memory/search/context.py), through the store on real
PostgreSQL: the answer written right after the question it answers is ranked by the
question's words; neighbours said in another sitting, written to another memoryRef or
tenant in between, or found by no leg lend nothing and are not added; ``metadata.saidAt``
is read at the write boundary and refused, naming the field, when it is no instant."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.errors import InvalidInput
from schemas.memory_entry import EntryChanges, NewMemoryEntry
from schemas.search import SearchMode, SearchRequest
from tests.support.factories import canary, note, unique_ref

QUESTION = "Caroline: Did you finish that novel about the lighthouse keeper?"
ANSWER = "Melanie: Yes! Stayed up all night, the ending made me cry."
FILLER = (
    "Caroline: The weather has been lovely this week.",
    "Melanie: We took the kids to the park on Sunday.",
    "Caroline: My new job starts next month, a bit nervous.",
    "Melanie: Cried at the end of the school play, so proud.",
    "Caroline: I painted the fence blue, finally done.",
    "Melanie: Up all night with the baby again, so tired.",
)
ASKED = "What did Melanie think of the novel about the lighthouse keeper?"


def _turn(text: str, said_at: str | None = None) -> NewMemoryEntry:
    return note(text, metadata={"saidAt": said_at} if said_at else {})


async def _ranking(store: PostgresMemoryStore, ref: str, mode: SearchMode) -> list[str]:
    found = await store.search(ref, SearchRequest(query=ASKED, mode=mode, limit=10))
    return [hit.entry.content for hit in found.hits]


@pytest.mark.parametrize("mode", [SearchMode.HYBRID, SearchMode.TEXT])
async def test_the_answer_after_a_question_ranks_by_the_question_words(
    store: PostgresMemoryStore, mode: SearchMode
) -> None:
    ref = unique_ref()
    await store.put_many(ref, [_turn(t) for t in (*FILLER[:3], QUESTION, ANSWER, *FILLER[3:])])
    ranking = await _ranking(store, ref, mode)
    assert ranking[0] == QUESTION, ranking
    # The answer shares only "Melanie" with what was asked; its neighbour lends it the rest.
    assert ranking[1] == ANSWER, ranking


async def test_a_neighbour_said_in_another_sitting_lends_nothing(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [
            *(_turn(t, "2023-05-08T13:56:00Z") for t in FILLER[:3]),
            _turn(QUESTION, "2023-05-08T13:56:00Z"),
            _turn(ANSWER, "2023-06-20T09:00:00Z"),
            *(_turn(t, "2023-06-20T09:00:00Z") for t in FILLER[3:]),
        ],
    )
    ranking = await _ranking(store, ref, SearchMode.TEXT)
    assert ranking[0] == QUESTION
    assert ranking.index(ANSWER) > 1, ranking


async def test_entries_of_another_memory_ref_or_tenant_written_between_are_not_neighbours(
    store: PostgresMemoryStore,
) -> None:
    ref, stranger = unique_ref(), unique_ref()
    sibling = ref.rsplit("/", 1)[0] + "/agent-2"
    await store.put_many(ref, [_turn(t) for t in (*FILLER[:3], QUESTION)])
    await store.put(sibling, note("Melanie: lighthouse keeper novel, loved it"))
    await store.put(stranger, note("Melanie: lighthouse keeper novel, loved it"))
    await store.put_many(ref, [_turn(t) for t in (ANSWER, *FILLER[3:])])
    # Written after two other memoryRefs' entries, the answer is still the question's
    # neighbour in its own memoryRef; the others' entries are never among the results.
    ranking = await _ranking(store, ref, SearchMode.TEXT)
    assert ranking[:2] == [QUESTION, ANSWER], ranking
    assert "Melanie: lighthouse keeper novel, loved it" not in ranking


async def test_a_neighbour_no_leg_found_is_not_added(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await store.put_many(ref, [_turn("Our office cat is called Whiskers"), _turn("Rent is due")])
    found = await store.search(ref, SearchRequest(query="whiskers", mode=SearchMode.TEXT))
    assert [hit.entry.content for hit in found.hits] == ["Our office cat is called Whiskers"]


async def test_said_at_must_be_an_instant_and_follows_an_edit(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    for bad in ("last tuesday", "2023-05-08T13:56:00", 20230508):
        with pytest.raises(InvalidInput) as refused:
            await store.put(ref, note("Caroline: hello", metadata={"saidAt": bad}))
        assert refused.value.field == "metadata.saidAt"
    assert await store.count(ref) == 0
    stored = await store.put(ref, _turn(QUESTION, "2023-05-08T13:56:00+02:00"))
    with pytest.raises(InvalidInput) as refused:
        await store.update(
            ref, stored.id, EntryChanges(metadata={"saidAt": "soon"}), expected_version=1
        )
    assert refused.value.field == "metadata.saidAt"
    # An answer said in the same sitting, written a second later: the edit that moved the
    # question to another day takes its context away.
    await store.put(ref, _turn(ANSWER, "2023-05-08T14:10:00+02:00"))
    for text in FILLER:
        await store.put(ref, _turn(text, "2023-05-08T14:20:00+02:00"))
    ranking = await _ranking(store, ref, SearchMode.TEXT)
    assert ranking[:2] == [QUESTION, ANSWER], ranking
    await store.update(
        ref,
        stored.id,
        EntryChanges(metadata={"saidAt": "2023-05-01T10:00:00Z"}),
        expected_version=1,
    )
    assert (await _ranking(store, ref, SearchMode.TEXT)).index(ANSWER) > 1


async def test_a_neighbour_beyond_the_legs_candidates_joins_when_it_holds_a_query_word(
    store: PostgresMemoryStore,
) -> None:
    # 150 short turns of Melanie's fill the best postings of "melanie" that the text leg
    # reads (memory/search/lexical.py POSTINGS_PER_TERM), so the answer, which shares
    # nothing else with the question, is not among its candidates.
    ref = unique_ref()
    chatter = [_turn(f"Melanie: ok {n}") for n in range(150)]
    await store.put_many(ref, [*chatter, _turn(FILLER[0]), _turn(QUESTION), _turn(ANSWER)])
    ranking = await _ranking(store, ref, SearchMode.TEXT)
    assert ranking[:2] == [QUESTION, ANSWER], ranking


async def test_a_neighbour_the_filters_refuse_is_not_added(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await store.put_many(ref, [note(QUESTION, "books"), note(ANSWER, "diary")])
    found = await store.search(
        ref, SearchRequest(query=ASKED, mode=SearchMode.TEXT, tags_all=("books",))
    )
    assert [hit.entry.content for hit in found.hits] == [QUESTION]


async def test_said_by_must_be_a_name(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    for bad in ("", "Mel\nanie", "x" * 201, 7):
        with pytest.raises(InvalidInput) as refused:
            await store.put(ref, note("Melanie: hello", metadata={"saidBy": bad}))
        assert refused.value.field == "metadata.saidBy"
    assert await store.count(ref) == 0
    await store.put(ref, note("Melanie: hello", metadata={"saidBy": "Dr. Melanie O'Hara"}))
    found = await store.search(
        ref, SearchRequest(query="hello", said_by="Dr. Melanie O'Hara", mode=SearchMode.TEXT)
    )
    assert [hit.entry.content for hit in found.hits] == ["Melanie: hello"]


async def test_a_secret_said_by_lands_redacted(engine, store: PostgresMemoryStore) -> None:
    secret = canary()
    registry = MemorySecretRegistry("run")
    assert registry.register("speaker-token", secret)
    ref = unique_ref()
    stored = await store.put(
        ref, note("Melanie: hello", metadata={"saidBy": f"Melanie {secret}"}), secrets=registry
    )
    await store.update(
        ref,
        stored.id,
        EntryChanges(metadata={"saidBy": f"Mel {secret}"}),
        expected_version=1,
        secrets=registry,
    )
    async with engine.connect() as connection:
        said_by = (
            await connection.execute(
                select(tables.entries.c.said_by).where(tables.entries.c.id == stored.id)
            )
        ).scalar_one()
    assert secret not in said_by and "[REDACTED:speaker-token]" in said_by
