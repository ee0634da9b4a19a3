"""SR-1: no registered secret of 8+ characters survives redaction, on any write path.

The property tests compare the registry with a brute-force oracle (``str.find`` for every
value, overlapping occurrences merged, the longest secret naming the span) and check the
guarantee directly on adversarial secrets: overlapping, prefixes and suffixes of each
other, unicode, brackets, and values built from pieces of redaction markers so that
replacing one secret can spell another across the marker boundary.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

import memory.redaction.chokepoint as redaction
from memory.redaction.chokepoint import (
    MARKER_PREFIX,
    MIN_SECRET_LENGTH,
    SECRET_ID_PATTERN,
    InvalidSecret,
    MemorySecretRegistry,
    Redaction,
    RunSecretRegistries,
    UnredactableContent,
    marker,
    write_redacted,
)
from memory.redaction.vault import FileSecretVault, StaticSecretVault, registry_for_tenant
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.memory_entry import EntryChanges
from tests.support.factories import canary, note, unique_ref

# --------------------------------------------------------------------------- oracle

Span = tuple[int, int, str, int, int]  # start, stop, secret_id, length, origin


def naive(text: str, secrets: dict[str, str]) -> str:
    """The reference rule taken literally: longest first, str.replace per secret."""
    for secret_id, value in sorted(secrets.items(), key=lambda item: -len(item[1])):
        text = text.replace(value, marker(secret_id))
    return text


def oracle_spans(text: str, secrets: dict[str, str]) -> list[Span]:
    """Every occurrence by brute force; overlapping ones merged; the longest secret (then
    the leftmost) names the span; two ids with one value: the lexically first."""
    names: dict[str, str] = {}
    for secret_id in sorted(secrets):
        names.setdefault(secrets[secret_id], secret_id)
    found: list[Span] = []
    for value, secret_id in names.items():
        at = text.find(value)
        while at != -1:
            found.append((at, at + len(value), secret_id, len(value), at))
            at = text.find(value, at + 1)
    merged: list[Span] = []
    for span in sorted(found):
        if merged and span[0] < merged[-1][1]:
            last = merged[-1]
            best = max(last, span, key=lambda s: (s[3], -s[4]))
            merged[-1] = (last[0], max(last[1], span[1]), best[2], best[3], best[4])
        else:
            merged.append(span)
    return merged


def render(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    out, cursor = [], 0
    for start, stop, secret_id in spans:
        out += [text[cursor:start], marker(secret_id)]
        cursor = stop
    return "".join([*out, text[cursor:]])


HOLDS_MARKER = "value: must not contain the redaction marker text '[REDACTED:'"
INSIDE_MARKER = "value: must not occur inside the redaction marker of a registered secretId"
MARKER_HOLDS = "secretId: its redaction marker must not contain a registered secret value"


def expected_refusal(accepted: dict[str, str], secret_id: str, value: str) -> str | None:
    """The error register() must raise, from first principles (None: accept). The
    messages are constants, so they cannot echo a value."""
    if MARKER_PREFIX in value:
        return HOLDS_MARKER
    markers = [marker(other) for other in accepted] + [marker(secret_id)]
    if any(value in text for text in markers):
        return INSIDE_MARKER
    if secret_id not in accepted and any(v in marker(secret_id) for v in accepted.values()):
        return MARKER_HOLDS
    return None


def register_all(pairs: list[tuple[str, str]]) -> tuple[MemorySecretRegistry, dict[str, str]]:
    """Register in order, asserting every acceptance and refusal is the right one."""
    registry = MemorySecretRegistry("run")
    accepted: dict[str, str] = {}
    for secret_id, value in pairs:
        if len(value) < MIN_SECRET_LENGTH:
            assert registry.register(secret_id, value) is False
            continue
        rule = expected_refusal(accepted, secret_id, value)
        if rule is None:
            assert registry.register(secret_id, value) is True
            accepted[secret_id] = value
        else:
            with pytest.raises(InvalidSecret) as refused:
                registry.register(secret_id, value)
            assert str(refused.value) == rule
    assert registry.secret_ids == tuple(sorted(accepted))
    return registry, accepted


def check_redaction(registry: MemorySecretRegistry, secrets: dict[str, str], text: str) -> str:
    """The guarantee plus the exact shape of the result; returns the redacted text."""
    redacted = registry.redact(text)
    for value in secrets.values():
        assert value not in redacted
    assert not registry.contains_secret(redacted)
    spans = registry.redactions(text)
    assert render(text, spans) == redacted
    for before, after in itertools.pairwise(spans):
        assert before.stop <= after.start
    oracle = oracle_spans(text, secrets)
    if not any(value in render(text, [s[:3] for s in oracle]) for value in secrets.values()):
        # No secret re-formed across a marker: exactly the oracle.
        assert spans == [Redaction(*s[:3]) for s in oracle]
    for start, stop, secret_id in spans:
        inside = [s for s in oracle if start <= s[0] and s[1] <= stop]
        # Every replaced span holds whole original occurrences, named by the best of them.
        assert inside
        assert secret_id == max(inside, key=lambda s: (s[3], -s[4]))[2]
    for start, stop, *_ in oracle:  # coverage: every original occurrence was replaced
        assert any(s.start <= start and stop <= s.stop for s in spans)
    return redacted


# ----------------------------------------------------------------------- strategies

# Small alphabets make overlaps, prefixes and marker look-alikes common.
VALUE_CHARS = "ab]:[REDACT-é😀 k0"
ID_CHARS = "ab0RED:-k"
IDS = st.text(ID_CHARS, min_size=1, max_size=5).filter(lambda s: s[0].isalnum())


@st.composite
def secret_sets(draw: st.DrawFn) -> list[tuple[str, str]]:
    """(secretId, value) pairs; some values are spliced from other secrets' markers."""
    ids = draw(st.lists(IDS, min_size=1, max_size=5))
    pairs = []
    for secret_id in ids:
        pieces = draw(st.lists(value_piece(ids), min_size=1, max_size=4))
        pairs.append((secret_id, "".join(pieces)))
    return pairs


def value_piece(ids: list[str]) -> st.SearchStrategy[str]:
    markers = st.sampled_from([marker(i) for i in ids])
    return st.one_of(
        st.text(VALUE_CHARS, min_size=1, max_size=10),
        st.builds(lambda m, k: m[k:], markers, st.integers(1, 30)),  # a marker's tail
        st.builds(lambda m, k: m[:k], markers, st.integers(1, 9)),  # a marker's head
    )


def baits(pairs: list[tuple[str, str]]) -> list[str]:
    """Texts in which redacting one secret re-forms another across its marker: ``v_i``
    then the rest of ``v_j`` where ``v_j`` starts with a tail of ``marker(i)``, and the
    mirror image for a ``v_j`` that ends with a head of ``marker(i)``."""
    latest = dict(pairs)
    found = []
    for secret_id, value in latest.items():
        label = marker(secret_id)
        for other in latest.values():
            for size in range(1, min(len(label), len(other)) + 1):
                if other.startswith(label[-size:]):
                    found.append(value + other[size:])
                if other.endswith(label[:size]):
                    found.append(other[:-size] + value)
    return found or [""]


@st.composite
def texts_for(draw: st.DrawFn, pairs: list[tuple[str, str]]) -> str:
    values = [value for _, value in pairs]
    part = st.one_of(
        st.sampled_from(baits(pairs)),
        st.text(VALUE_CHARS, max_size=6),
        st.sampled_from(values),
        st.builds(lambda v, k: v[:k], st.sampled_from(values), st.integers(1, 20)),
        st.builds(lambda v, k: v[k:], st.sampled_from(values), st.integers(1, 20)),
        st.sampled_from([marker(secret_id) for secret_id, _ in pairs]),
        st.just(MARKER_PREFIX),
    )
    return "".join(draw(st.lists(part, max_size=12)))


# ------------------------------------------------------------------- the guarantee


@settings(max_examples=1000, deadline=None)
@given(data=st.data())
def test_no_registered_secret_survives_adversarial_sets(data: st.DataObject) -> None:
    pairs = data.draw(secret_sets())
    registry, accepted = register_all(pairs)
    text = data.draw(texts_for(pairs))
    check_redaction(registry, accepted, text)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.text(VALUE_CHARS, min_size=8, max_size=14), min_size=1, max_size=6),
    filler=st.text(VALUE_CHARS, max_size=40),
    picks=st.lists(st.integers(0, 5), max_size=8),
)
def test_embedded_and_back_to_back_secrets(
    values: list[str], filler: str, picks: list[int]
) -> None:
    registry, accepted = register_all([(f"s{i}", value) for i, value in enumerate(values)])
    text = filler
    for pick in picks:
        text += values[pick % len(values)] + filler[:3]
    check_redaction(registry, accepted, text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(min_size=8, max_size=20), min_size=1, max_size=5),
    st.text(max_size=50),
)
def test_unicode_secrets(values: list[str], filler: str) -> None:
    registry, accepted = register_all([(f"u{i}", value) for i, value in enumerate(values)])
    check_redaction(registry, accepted, filler.join(values) + filler)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(".*+?()[]{}|^$\\ab", min_size=8, max_size=16), min_size=1, max_size=5),
    st.text(".*+?()[]{}|^$\\ab", max_size=60),
)
def test_regex_metacharacters_are_literal(values: list[str], filler: str) -> None:
    registry, accepted = register_all([(f"re{i}", value) for i, value in enumerate(values)])
    check_redaction(registry, accepted, filler.join(values) + filler)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.text("abcdef0123", min_size=4, max_size=12), min_size=1, max_size=6),
    text=st.text("abcdef0123 ", max_size=80),
)
def test_without_overlaps_it_is_the_naive_rule(values: list[str], text: str) -> None:
    # Wrapped in braces that occur nowhere else, no two occurrences can overlap; then the
    # result is exactly "sort by length, str.replace each".
    wrapped = [f"{{{value}}}" for value in values]
    registry, accepted = register_all([(f"n{i}", value) for i, value in enumerate(wrapped)])
    words = text.split(" ")
    text = " ".join(f"{word} {wrapped[i % len(wrapped)]}" for i, word in enumerate(words))
    assert check_redaction(registry, accepted, text) == naive(text, accepted)


@settings(max_examples=200, deadline=None)
@given(
    secret_id=st.from_regex(SECRET_ID_PATTERN, fullmatch=True),
    value=st.text(st.characters(codec="utf-8", exclude_characters="\n"), min_size=8),
)
def test_marker_format_is_exact(secret_id: str, value: str) -> None:
    assume(expected_refusal({}, secret_id, value) is None)
    registry = MemorySecretRegistry()
    assert registry.register(secret_id, value)
    assert registry.redact(f"\n{value}\n") == f"\n[REDACTED:{secret_id}]\n"


@settings(max_examples=200, deadline=None)
@given(
    short=st.text(min_size=0, max_size=MIN_SECRET_LENGTH - 1),
    text=st.text(max_size=40),
)
def test_secrets_under_eight_characters_are_ignored(short: str, text: str) -> None:
    registry = MemorySecretRegistry()
    assert registry.register("short", short) is False
    assert len(registry) == 0 and registry.secret_ids == ()
    assert registry.redact(text + short) == text + short
    assert not registry.contains_secret(text + short)


def test_eight_characters_is_enough() -> None:
    registry = MemorySecretRegistry()
    assert registry.register("seven", "1234567") is False
    assert registry.register("eight", "12345678") is True
    assert registry.redact("1234567 12345678") == "1234567 [REDACTED:eight]"


# ------------------------------------------------------------------ the rules, by example


def test_longest_secret_wins_and_marker_format() -> None:
    registry = MemorySecretRegistry()
    registry.register("short", "password")
    registry.register("long", "password-for-prod-db")
    registry.register("suffixed", "prod-db-password")
    assert registry.redact("use password-for-prod-db, prod-db-password and password") == (
        "use [REDACTED:long], [REDACTED:suffixed] and [REDACTED:short]"
    )


def test_overlapping_secrets_leave_no_fragment() -> None:
    registry = MemorySecretRegistry()
    registry.register("a", "abcdefgh")
    registry.register("b", "efghijklmnop")  # overlaps the end of "a"
    # Leftmost-longest would leave "ijklmnop" (most of b) in clear; the merged span
    # is named by the longer secret.
    assert registry.redact("xxabcdefghijklmnopyy") == "xx[REDACTED:b]yy"
    assert registry.redactions("xxabcdefghijklmnopyy") == [Redaction(2, 18, "b")]


def test_equal_length_overlaps_are_named_by_the_leftmost() -> None:
    registry = MemorySecretRegistry()
    registry.register("right", "cdefghijkl")
    registry.register("left", "abcdefghij")
    assert registry.redact("abcdefghijkl") == "[REDACTED:left]"


def test_touching_occurrences_stay_separate_and_self_overlaps_merge() -> None:
    registry = MemorySecretRegistry()
    registry.register("t", "token-123")
    registry.register("ab", "abababab")
    assert registry.redact("token-123token-123") == "[REDACTED:t][REDACTED:t]"
    assert registry.redact("ababababab") == "[REDACTED:ab]"


def test_two_ids_with_one_value_are_named_stably() -> None:
    registry = MemorySecretRegistry()
    registry.register("zeta", "shared-secret-1")
    registry.register("alpha", "shared-secret-1")
    assert registry.redact("shared-secret-1") == "[REDACTED:alpha]"


def test_registering_an_id_again_replaces_its_value() -> None:
    registry = MemorySecretRegistry()
    registry.register("k", "first-value-1")
    registry.register("k", "second-value-2")
    assert len(registry) == 1
    assert registry.redact("first-value-1 second-value-2") == "first-value-1 [REDACTED:k]"
    # A too-short replacement is ignored: the registered value keeps being redacted.
    assert registry.register("k", "short") is False
    assert registry.redact("second-value-2") == "[REDACTED:k]"


def test_a_secret_spelled_by_a_marker_and_its_neighbours_is_caught() -> None:
    # Replacing "XXXXXXXX" leaves "[REDACTED:s1]abcdefg", which spells the other secret;
    # the characters that re-formed it join the span.
    registry = MemorySecretRegistry()
    registry.register("s0", "s1]abcdefg")
    registry.register("s1", "XXXXXXXX")
    assert registry.redact("start XXXXXXXXabcdefg end") == "start [REDACTED:s1] end"


def test_a_secret_spelled_by_text_and_a_marker_head_is_caught() -> None:
    registry = MemorySecretRegistry()
    registry.register("k", "abcdefg[REDAC")
    registry.register("m", "QQQQQQQQ")
    assert registry.redact("-abcdefgQQQQQQQQ-") == "-[REDACTED:m]-"


def test_a_secret_spelled_by_two_adjacent_markers_is_caught() -> None:
    registry = MemorySecretRegistry()
    registry.register("X", "zzzzzzzz")
    registry.register("Y", "yyyyyyyy")
    registry.register("C", "X][REDAC")  # the seam of [REDACTED:X][REDACTED:Y]
    assert registry.redact("--zzzzzzzzyyyyyyyy--") == "--[REDACTED:X]--"


def count_scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the length of every text the automaton scans."""
    scanned: list[int] = []
    real = redaction._occurrences

    def counting(automaton: Any, text: str) -> Any:
        scanned.append(len(text))
        return real(automaton, text)

    monkeypatch.setattr(redaction, "_occurrences", counting)
    return scanned


def test_a_cascade_settles_with_local_rescans(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each redaction of "A]xxxxxx" leaves "[REDACTED:A]" before the next six x's, which
    # spells it again: 10,000 rounds. Only windows around the changed marker are
    # re-scanned, so the work stays linear in the text.
    registry = MemorySecretRegistry()
    registry.register("A", "A]xxxxxx")
    scanned = count_scanned(monkeypatch)
    text = "A]" + "x" * 60_000 + "!"
    assert registry.redact(text) == "[REDACTED:A]!"
    assert sum(scanned) < 50 * len(text)  # full re-scans would be ~10,000 x 60,000


def test_a_thousand_secrets_cost_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = MemorySecretRegistry()
    values = {f"k{i}": f"tok_{i:05d}_{i * 7919 % 100000:05d}" for i in range(1000)}
    for secret_id, value in values.items():
        assert registry.register(secret_id, value)
    text = " ".join(list(values.values())[::3]) * 20
    scanned = count_scanned(monkeypatch)
    redacted = registry.redact(text)
    # The input once, then at most the output once (the verification; here the secrets
    # are dense, so the windows around their markers join up): not once per secret.
    assert scanned[0] == len(text) and sum(scanned[1:]) <= len(redacted)
    assert not any(value in redacted for value in values.values())
    assert redacted.count(MARKER_PREFIX) == len(list(values)[::3]) * 20
    assert redacted == naive(text, values)


def test_sparse_secrets_cost_about_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = MemorySecretRegistry()
    values = {f"k{i}": f"sk_live_{i * 2654435761 % 10**12:012d}" for i in range(1000)}
    for secret_id, value in values.items():
        registry.register(secret_id, value)
    filler = "the customer asked about the renewal quote again. " * 2000
    text = filler + values["k7"] + filler + values["k993"] + filler
    scanned = count_scanned(monkeypatch)
    assert registry.redact(text) == f"{filler}[REDACTED:k7]{filler}[REDACTED:k993]{filler}"
    # The input once; the verification only looks near the two markers.
    assert scanned[0] == len(text) and sum(scanned[1:]) < 200


def test_text_without_secrets_is_returned_as_is() -> None:
    registry = MemorySecretRegistry()
    registry.register("k", "not-in-there")
    text = "nothing to see here " * 100
    assert registry.redact(text) is text
    assert registry.redactions(text) == []
    assert MemorySecretRegistry().redact(text) is text
    assert registry.redact("") == ""


def test_contains_secret() -> None:
    registry = MemorySecretRegistry()
    assert not registry.contains_secret("anything")
    registry.register("k", "hunter2-hunter2")
    assert registry.contains_secret("x hunter2-hunter2 y")
    assert not registry.contains_secret("hunter2-hunter")
    assert not registry.contains_secret("")


# -------------------------------------------------------- refusals never echo a value


SECRETISH = st.text(st.characters(codec="utf-8"), min_size=12, max_size=30)


@settings(max_examples=200, deadline=None)
@given(value=SECRETISH)
def test_repr_never_shows_values(value: str) -> None:
    registry = MemorySecretRegistry("run-7")
    assume(expected_refusal({}, "k", value) is None)
    registry.register("k", value)
    for shown in (repr(registry), str(registry), f"{registry}"):
        assert value not in shown
        assert "run-7" in shown


@settings(max_examples=200, deadline=None)
@given(value=SECRETISH, bad_id=st.text(min_size=1, max_size=20))
def test_errors_never_echo_values(value: str, bad_id: str) -> None:
    assume(not re.fullmatch(SECRET_ID_PATTERN, bad_id))
    registry = MemorySecretRegistry()
    with pytest.raises(InvalidSecret) as error:
        registry.register(bad_id, value)
    # A constant message: neither the value nor the id (it may be a swapped-in value).
    assert str(error.value) == f"secretId: must match {SECRET_ID_PATTERN}"
    with pytest.raises(InvalidSecret) as error:
        registry.register("k", value + MARKER_PREFIX)
    assert str(error.value) == HOLDS_MARKER


@pytest.mark.parametrize(
    ("secret_id", "value", "message"),
    [
        ("x", "[REDACTED:x]-secret-value", HOLDS_MARKER),
        ("k", "REDACTED", INSIDE_MARKER),  # inside every marker: could never be eliminated
        ("k", "EDACTED:k]", INSIDE_MARKER),  # inside its own marker
        ("svc-abcdefgh12-key", "abcdefgh12", INSIDE_MARKER),  # its id would leak it
    ],
)
def test_values_a_marker_would_store_are_refused(secret_id: str, value: str, message: str) -> None:
    registry = MemorySecretRegistry()
    with pytest.raises(InvalidSecret) as error:
        registry.register(secret_id, value)
    assert str(error.value) == message
    assert error.value.field == "value"
    assert len(registry) == 0


def test_marker_collisions_are_refused_in_either_order() -> None:
    registry = MemorySecretRegistry()
    registry.register("x", "abcdefgh12")
    with pytest.raises(InvalidSecret) as error:
        registry.register("svc-abcdefgh12-key", "an-unrelated-value")
    assert str(error.value) == MARKER_HOLDS
    registry.register("svc-key", "an-unrelated-value")
    with pytest.raises(InvalidSecret) as error:
        registry.register("y", "REDACTED:svc-k")
    assert str(error.value) == INSIDE_MARKER
    assert registry.secret_ids == ("svc-key", "x")  # refusals change nothing


def test_bad_ids_and_value_types_are_refused() -> None:
    registry = MemorySecretRegistry()
    for bad_id in ("", "-leading", "has space", "a" * 129, "new\nline", "trailing\n", "é"):
        with pytest.raises(InvalidSecret, match=r"^secretId"):
            registry.register(bad_id, "some-secret-value")
    assert registry.register("a" * 128, "some-secret-value")
    with pytest.raises(InvalidSecret, match=r"^value: must be a string"):
        registry.register("k", b"bytes-value-123")  # type: ignore[arg-type]


def test_refusal_is_a_value_error_with_a_code() -> None:
    with pytest.raises(ValueError) as error:
        MemorySecretRegistry().register("k", "REDACTED")
    assert isinstance(error.value, InvalidSecret)
    assert error.value.code == "invalid_secret"


def test_a_broken_precondition_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the marker check, "REDACTED" reappears inside every marker: no amount of
    # replacing settles it. The write is refused instead of looping or storing it.
    monkeypatch.setattr(MemorySecretRegistry, "_refuse_marker_collisions", lambda self, i, v: None)
    registry = MemorySecretRegistry()
    registry.register("k", "REDACTED")
    with pytest.raises(UnredactableContent):
        registry.redact("a REDACTED b")
    with pytest.raises(UnredactableContent):
        write_redacted("a REDACTED b", registry)


# -------------------------------------------------------------- chokepoint and scopes


def test_chokepoint() -> None:
    assert write_redacted("anything", None) == "anything"
    registry = MemorySecretRegistry()
    registry.register("k", "secret-value-9")
    assert write_redacted("x secret-value-9", registry) == "x [REDACTED:k]"


def test_run_registries_are_per_run() -> None:
    runs = RunSecretRegistries()
    runs.for_run("r1").register("k", "value-one-123")
    assert len(runs.for_run("r2")) == 0
    assert runs.for_run("r1").redact("value-one-123") == "[REDACTED:k]"
    assert "r1" in runs and len(runs) == 2
    runs.discard("r1")
    runs.discard("r1")  # idempotent
    assert "r1" not in runs
    assert len(runs.for_run("r1")) == 0


def test_run_registries_are_thread_safe() -> None:
    runs = RunSecretRegistries()
    barrier = threading.Barrier(16)
    seen: list[MemorySecretRegistry] = []

    def worker(index: int) -> None:
        barrier.wait()
        registry = runs.for_run("shared")
        registry.register(f"k{index}", f"secret-value-{index:04d}")
        seen.append(registry)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(registry is seen[0] for registry in seen)
    assert len(seen[0]) == 16
    text = " ".join(f"secret-value-{i:04d}" for i in range(16))
    assert seen[0].redact(text) == " ".join(f"[REDACTED:k{i}]" for i in range(16))


def test_redacting_while_registering_never_leaks() -> None:
    registry = MemorySecretRegistry()
    registry.register("base", "base-secret-0")
    stop = threading.Event()
    failures: list[str] = []

    def redact_forever() -> None:
        while not stop.is_set():
            if "base-secret-0" in registry.redact("x base-secret-0 y"):
                failures.append("leaked")

    reader = threading.Thread(target=redact_forever)
    reader.start()
    for i in range(300):
        registry.register(f"k{i}", f"other-secret-{i:04d}")
    stop.set()
    reader.join()
    assert failures == []


# ----------------------------------------------------------------------------- vaults


@pytest.fixture
def vault_file(tmp_path: Path) -> Callable[[object], None]:
    path = tmp_path / "secrets.json"
    bump = iter(range(1, 1000))

    def write(content: object) -> None:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        # A distinct mtime per write, however coarse the filesystem clock.
        stamp = 1_700_000_000_000_000_000 + next(bump) * 1_000_000_000
        os.utime(path, ns=(stamp, stamp))

    return write


def test_file_vault_reloads_when_the_file_changes(tmp_path: Path, vault_file: Any) -> None:
    path = tmp_path / "secrets.json"
    vault = FileSecretVault(path)
    assert vault.secrets_for("acme") == {}  # missing file: no secrets
    vault_file({"acme": {"k1": "first-secret-1"}})
    assert vault.secrets_for("acme") == {"k1": "first-secret-1"}
    assert vault.secrets_for("globex") == {}
    vault_file({"acme": {"k1": "second-secret-22"}})
    assert vault.secrets_for("acme") == {"k1": "second-secret-22"}
    registry = registry_for_tenant(vault, "acme", "run-9")
    assert registry.redact("x second-secret-22") == "x [REDACTED:k1]"
    path.unlink()
    assert vault.secrets_for("acme") == {}


def test_file_vault_reads_once_per_change(tmp_path: Path, vault_file: Any) -> None:
    vault = FileSecretVault(str(tmp_path / "secrets.json"))
    vault_file({"acme": {"k1": "first-secret-1"}})
    assert vault.secrets_for("acme") == {"k1": "first-secret-1"}
    # The same mtime, size and inode: the cached copy is served (proven by a change
    # the vault cannot see because the stamp was forced back).
    path = tmp_path / "secrets.json"
    stat = path.stat()
    path.write_text(json.dumps({"acme": {"k1": "other-secret-1"}}))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert vault.secrets_for("acme") == {"k1": "first-secret-1"}


def test_file_vault_sees_an_atomic_replace(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    path.write_text(json.dumps({"acme": {"k1": "first-secret-1"}}))
    vault = FileSecretVault(path)
    assert vault.secrets_for("acme") == {"k1": "first-secret-1"}
    stat = path.stat()
    staged = tmp_path / "staged.json"
    staged.write_text(json.dumps({"acme": {"k1": "other-secret-1"}}))
    os.utime(staged, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime and size
    os.replace(staged, path)
    assert vault.secrets_for("acme") == {"k1": "other-secret-1"}


def test_file_vault_errors_never_quote_the_file(tmp_path: Path, vault_file: Any) -> None:
    vault = FileSecretVault(tmp_path / "secrets.json")
    vault_file('{"acme": {"k1": "hunter2-secret-value"')  # truncated
    with pytest.raises(ValueError, match="not valid JSON") as error:
        vault.secrets_for("acme")
    assert "hunter2-secret-value" not in str(error.value)
    assert error.value.__cause__ is None and error.value.__suppress_context__
    vault_file({"acme": {"k1": 123456789012}})
    with pytest.raises(ValueError, match="value must be a string") as error:
        vault.secrets_for("acme")
    assert "123456789012" not in str(error.value)
    vault_file(["not", "an", "object"])
    with pytest.raises(ValueError, match="JSON object of tenants"):
        vault.secrets_for("acme")


def test_vaults_hand_out_copies() -> None:
    vault = StaticSecretVault({"acme": {"k1": "first-secret-1"}})
    secrets = vault.secrets_for("acme")
    assert isinstance(secrets, dict)
    secrets["k2"] = "injected-value"
    assert vault.secrets_for("acme") == {"k1": "first-secret-1"}
    assert vault.secrets_for("nobody") == {}
    vault.secrets["globex"] = {"k9": "added-later-99"}  # a vault gains secrets mid-run
    assert registry_for_tenant(vault, "globex", "r").redact("added-later-99") == "[REDACTED:k9]"


def test_registry_for_tenant_fails_closed_on_a_bad_secret() -> None:
    vault = StaticSecretVault({"acme": {"ok": "fine-secret-1", "bad": "REDACTED"}})
    with pytest.raises(InvalidSecret):
        registry_for_tenant(vault, "acme", "run-1")
    registry = registry_for_tenant(
        StaticSecretVault({"acme": {"ok": "fine-secret-1"}}), "acme", "r"
    )
    assert registry.run_id == "r" and registry.secret_ids == ("ok",)


# ---------------------------------------------------------------- every store write path


async def test_every_store_write_path_redacts(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    tenant = ref.split("/")[2]
    secret = canary()
    registry = registry_for_tenant(StaticSecretVault({tenant: {"api": secret}}), tenant, "r")
    put = await store.put(ref, note(f"key={secret}"), secrets=registry)
    batch = await store.put_many(ref, [note(f"{secret}{secret}")], secrets=registry)
    await store.update(
        ref, put.id, EntryChanges(content=f"rotated {secret}"), expected_version=1, secrets=registry
    )
    assert put.content == "key=[REDACTED:api]"
    assert batch[0].content == "[REDACTED:api][REDACTED:api]"
    async with engine.connect() as connection:
        contents = (await connection.execute(select(tables.entries.c.content))).scalars().all()
        payloads = (await connection.execute(select(tables.events.c.payload))).scalars().all()
    assert contents and all(secret not in c for c in contents)
    assert "rotated [REDACTED:api]" in contents
    assert all(secret not in json.dumps(p) for p in payloads)


def test_carry_forward_makes_foreign_secret_markers_canonical() -> None:
    """RFC 0012 §D: derived content carries no BYOK reference or foreign marker as it
    is; each becomes [REDACTED:carry-forward-<n>], the same text the same marker, and a
    canonical marker of ours is left alone."""
    from memory.redaction.carry_forward import carry_forward

    text = "a [BYOK:hk_live_1] b <REDACTED:db-creds> c [BYOK:hk_live_1] d [REDACTED:ours]"
    assert carry_forward(text) == (
        "a [REDACTED:carry-forward-1] b [REDACTED:carry-forward-2] c "
        "[REDACTED:carry-forward-1] d [REDACTED:ours]"
    )
    assert carry_forward("no markers here") == "no markers here"
