"""Reading a text for its facts: once per text inside a fleet agent's dream, and the
fast paths of the reader agree with what it reads word by word."""

from __future__ import annotations

import asyncio

from memory.consolidation.fact_text import read_fact_text, reading_once

NOTE = "Per the latest update, Acme owes $1,200 by Friday; ticket INV-2231 is not closed."


def test_outside_a_scope_every_read_is_fresh() -> None:
    first, second = read_fact_text(NOTE), read_fact_text(NOTE)
    assert first == second
    assert first is not second


async def test_a_scope_reads_each_text_once_across_its_threads() -> None:
    with reading_once():
        on_loop = read_fact_text(NOTE)
        # Distillation packs in a worker thread; the scope follows it there.
        in_thread = await asyncio.to_thread(read_fact_text, NOTE)
        assert in_thread is on_loop
    # Nothing read inside the scope outlives it.
    assert read_fact_text(NOTE) is not on_loop


async def test_concurrent_scopes_keep_to_themselves() -> None:
    async def agent() -> object:
        with reading_once():
            fact = read_fact_text(NOTE)
            await asyncio.sleep(0)
            assert read_fact_text(NOTE) is fact
            return fact

    first, second = await asyncio.gather(agent(), agent())
    assert first is not second


def test_the_facts_a_merge_must_keep() -> None:
    fact = read_fact_text(NOTE)
    # The opening filler is left out of the words compared, not out of the guard.
    assert "latest" not in fact.words
    assert fact.numbers == ("1200",)
    assert fact.identifiers == ("inv-2231",)
    assert fact.dates == ("fri",)
    assert fact.negations == 1
    assert fact.currencies == frozenset({"$"})
    # After a filler, "Acme" keeps its place inside the sentence: a name.
    assert fact.names == ("acme",)
    assert "acme" in fact.capitalised
    assert {"1200", "inv", "2231", "friday", "acme"} <= fact.fact_words
