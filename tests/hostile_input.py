"""Hypothesis strategies for hostile input, shared by the fuzzing tests: strings that
carry a marker (so an echo is easy to spot) and the characters that break parsers and
databases (NUL, lone surrogates, control and bidi characters, homoglyphs, a BOM, a path
escape), and any JSON-ish value built from them."""

from __future__ import annotations

from hypothesis import strategies as st

MARKER = "§fz§"  # in every drawn string, so an echo of input is easy to spot

_chars = st.text(st.characters(exclude_categories=()), max_size=10)
hostile_text = st.tuples(
    st.just(MARKER),
    _chars,
    st.sampled_from(["", "\x00", "\ud800", "\udfff", "\x1f", "\u202e", "\u0430", "\ufeff", "../"]),
    _chars,
).map("".join)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**53, max_value=2**70)
    | st.floats()
    | hostile_text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=8,
)
