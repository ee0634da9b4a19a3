"""The fact reader's fast paths (plain words skip the number and identifier checks) keep
every fact a merge must not blur."""

from __future__ import annotations

from memory.sameness.fact_text import read_fact_text

NOTE = "Per the latest update, Acme owes $1,200 by Friday; ticket INV-2231 is not closed."


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
    assert {"1200", "inv", "2231", "friday", "acme"} <= fact.fact_words


def test_number_words_and_ordinals_are_not_plain_words() -> None:
    fact = read_fact_text("The second invoice: twelve units, sent Monday.")
    assert fact.numbers == ("#2", "12")
    assert fact.dates == ("mon",)
    assert {"second", "twelve", "monday"} <= fact.fact_words
