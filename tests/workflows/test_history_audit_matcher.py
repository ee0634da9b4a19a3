"""The history audit's matcher (runtime/history_audit.ForbiddenTexts) finds exactly the
forbidden strings a plain substring test finds: short ones, long ones sharing a prefix,
overlapping ones and ones at either end of the text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.history_audit import WINDOW, ForbiddenTexts, leaks

alphabet = st.sampled_from("ab c")
texts = st.text(alphabet, max_size=200)


@settings(max_examples=300, deadline=None)
@given(text=texts, forbidden=st.sets(st.text(alphabet, min_size=1, max_size=40), max_size=12))
def test_matches_plain_substring_search(text: str, forbidden: set[str]) -> None:
    # Plant a few of them so hits are common, not only misses.
    planted = text + "".join(sorted(forbidden)[:3])
    expected = sorted(s for s in forbidden if s in planted)
    assert ForbiddenTexts(forbidden).found_in(planted) == expected


def test_long_strings_sharing_a_prefix_overlapping_and_at_the_edges() -> None:
    stem = "x" * WINDOW
    forbidden = {stem + "one", stem + "two", "short", stem + "one and more"}
    text = stem + "one and more ... short" + stem + "tw"
    assert ForbiddenTexts(forbidden).found_in(text) == sorted(
        [stem + "one", stem + "one and more", "short"]
    )
    assert ForbiddenTexts(forbidden).found_in(stem + "two") == [stem + "two"]
    assert leaks('{"a": ["' + stem + 'two"]}', forbidden) == [stem + "two"]
