"""Hypothesis strategies for hostile input, shared by the fuzzing tests: strings that
carry a marker (so an echo is easy to spot) and the characters that break parsers and
databases (NUL, lone surrogates, control and bidi characters, homoglyphs, a BOM, a path
escape), and any JSON-ish value built from them."""

from __future__ import annotations

from hypothesis import strategies as st

from schemas.memory_entry import NewMemoryEntry, Tier

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

# ---------------------------------------------------------------- memoryRefs, budgets, size

# Past every limit; not "x": other tests register runs of x as written text, which the
# end-of-session history audit would then find inside a fuzz input sent to Temporal.
huge_text = st.integers(1_000, 200_000).map(lambda n: MARKER + "q" * n)


def lookalike_refs(tenant: str, agent: str = "agent-1") -> list[str]:
    """memoryRefs one slip away from ``mem://<tenant>/<agent>``: case, trailing dots and
    suffixes, truncation, encoded and real path escapes, spaces, homoglyphs, NUL, a lone
    surrogate, a missing or extra segment, oversize."""
    ref = f"mem://{tenant}/{agent}"
    return [
        f"mem://{tenant.upper()}/{agent}",
        f"mem://{tenant}./{agent}",
        f"mem://{tenant}x/{agent}",
        f"mem://{tenant[:-1]}/{agent}",
        f"mem://{tenant}%2F{agent}",
        f"mem://{tenant}%2F..%2F{agent}",
        f"mem://{tenant}/../{agent}",
        f"mem://{tenant}/./{agent}",
        f" {ref}",
        f"{ref} ",
        f"{ref}/",
        f"{ref}//x",
        f"mem://{tenant}",
        f"mem:/{tenant}/{agent}",
        f"MEM://{tenant}/{agent}",
        f"mem://\u0430{tenant[1:]}/{agent}",  # Cyrillic a
        f"{ref}\x00",
        f"{ref}\ud800",
        f"{ref}\u202e",
        f"{ref}\ufeff",
        ref[:-1],
        ref + "/" + "s" * 65,
        "mem://" + "a" * 600,
        "",
    ]


def hostile_refs(tenant: str = "fz-tenant") -> st.SearchStrategy[object]:
    return (
        st.sampled_from(lookalike_refs(tenant))
        | hostile_text
        | hostile_text.map(lambda t: f"mem://{tenant}/{t}")
        | huge_text
        | st.integers()
        | st.none()
    )


token_budgets: st.SearchStrategy[object] = (
    st.sampled_from(
        [
            *(
                0,
                -1,
                -(2**63),
                0.5,
                1.5,
                8000.0,
                "8000",
                "",
                "1e3",
                2**63,
                2**63 - 1,
                2**64,
                10**30,
            ),
            *(True, False, None, [], {}, [8000], {"tokens": 8000}, float("nan"), float("inf")),
        ]
    )
    | st.integers()
    | st.floats()
    | hostile_text
)


def tenant_a_corpus(canaries: list[str], key_prefix: str = "k") -> list[NewMemoryEntry]:
    """What cross-tenant sweeps seed for tenant A: an entry per canary (tagged, keyed,
    with a subject, in both tiers), a duplicate pair for consolidation and a promise
    for commitment inference."""
    return [
        NewMemoryEntry(
            content=f"{canary} The customer prefers invoices in EUR",
            tags=("a-only", f"tag-{i}"),
            tier=[Tier.SEMANTIC, Tier.EPISODIC][i % 2],
            namespace="private",
            key=f"{key_prefix}-{i}",
            subject="dana",
        )
        for i, canary in enumerate(canaries)
    ] + [
        NewMemoryEntry(content="The trial lasts 14 days", tier=Tier.SEMANTIC),
        NewMemoryEntry(content="Note: the trial lasts 14 days.", tier=Tier.SEMANTIC),
        NewMemoryEntry(
            content="Follow up with Dana when the contract is signed", tags=("commitment",)
        ),
    ]
