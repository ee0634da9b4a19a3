"""SR-1: no registered secret of 8+ characters survives redaction, on any write path."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory import tables
from memory.redaction import (
    MIN_SECRET_LENGTH,
    FileSecretVault,
    MemorySecretRegistry,
    RunSecretRegistries,
    StaticSecretVault,
    registry_for_tenant,
    write_redacted,
)
from memory.store import PostgresMemoryStore
from schemas.memory_entry import EntryChanges
from tests.factories import canary, note, unique_ref

# Small alphabets make overlaps, prefixes and marker-like text common.
ALPHABET = st.sampled_from(list("ab]:[RED-é😀 "))
SECRETS = st.lists(
    st.text(ALPHABET, min_size=MIN_SECRET_LENGTH, max_size=14), min_size=1, max_size=6
)


def _registry(values: list[str]) -> MemorySecretRegistry:
    registry = MemorySecretRegistry("run")
    for i, value in enumerate(values):
        # Values holding the marker are refused; that is tested separately.
        with contextlib.suppress(ValueError):
            registry.register(f"s{i}", value)
    return registry


@settings(max_examples=400, deadline=None)
@given(values=SECRETS, text=st.text(ALPHABET, max_size=80), picks=st.lists(st.integers(0, 5)))
def test_no_registered_secret_survives(values: list[str], text: str, picks: list[int]) -> None:
    registry = _registry(values)
    # Embed some secrets, back to back and overlapping with the surrounding text.
    for pick in picks:
        text += values[pick % len(values)] + text[:3]
    redacted = registry.redact(text)
    for secret_id in registry.secret_ids:
        value = values[int(secret_id[1:])]
        assert value not in redacted


@settings(max_examples=200, deadline=None)
@given(
    short=st.text(st.characters(codec="utf-8"), min_size=1, max_size=MIN_SECRET_LENGTH - 1),
    text=st.text(max_size=40),
)
def test_secrets_under_eight_characters_are_ignored(short: str, text: str) -> None:
    registry = MemorySecretRegistry()
    assert registry.register("short", short) is False
    assert registry.redact(text + short) == text + short


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(min_size=8, max_size=20), min_size=1, max_size=5), st.text(max_size=50))
def test_unicode_secrets_are_redacted(values: list[str], filler: str) -> None:
    registry = _registry(values)
    text = filler.join(values) + filler
    redacted = registry.redact(text)
    for secret_id in registry.secret_ids:
        assert values[int(secret_id[1:])] not in redacted


def test_longest_secret_wins_and_marker_format() -> None:
    registry = MemorySecretRegistry()
    registry.register("short", "password")
    registry.register("long", "password-for-prod-db")
    assert registry.redact("use password-for-prod-db and password") == (
        "use [REDACTED:long] and [REDACTED:short]"
    )


def test_prefix_secrets_and_overlaps() -> None:
    registry = MemorySecretRegistry()
    registry.register("a", "abcdefgh")
    registry.register("b", "efghijklmnop")  # overlaps the end of "a"
    out = registry.redact("xxabcdefghijklmnopyy")
    assert out == "xxabcd[REDACTED:b]yy"  # the longer one is redacted whole
    assert "abcdefgh" not in out and "efghijklmnop" not in out


def test_regex_metacharacters_are_literal() -> None:
    registry = MemorySecretRegistry()
    registry.register("re", "a.*b+c?(d)[e]")
    assert registry.redact("a.*b+c?(d)[e] vs aXXbbcd") == "[REDACTED:re] vs aXXbbcd"


def test_marker_text_cannot_be_registered_and_nothing_echoes_values() -> None:
    registry = MemorySecretRegistry()
    value = "[REDACTED:x]-secret"
    with pytest.raises(ValueError) as info:
        registry.register("x", value)
    assert value not in str(info.value)
    with pytest.raises(ValueError, match="secretId") as bad_id:
        registry.register("../evil", "some-secret-value")
    assert "some-secret-value" not in str(bad_id.value)
    registry.register("ok", "hunter2-hunter2")
    assert "hunter2" not in repr(registry)


def test_a_thousand_secrets_in_one_pass() -> None:
    registry = MemorySecretRegistry()
    values = [f"tok_{i:05d}_{i * 7919 % 100000:05d}" for i in range(1000)]
    for i, value in enumerate(values):
        registry.register(f"k{i}", value)
    text = " ".join(values[::3]) * 20
    redacted = registry.redact(text)
    assert not any(value in redacted for value in values)
    assert redacted.count("[REDACTED:") == len(values[::3]) * 20


def test_chokepoint_without_registry_is_identity() -> None:
    assert write_redacted("anything", None) == "anything"


def test_run_registries_are_per_run() -> None:
    runs = RunSecretRegistries()
    runs.for_run("r1").register("k", "value-one-123")
    assert len(runs.for_run("r2")) == 0
    assert runs.for_run("r1").redact("value-one-123") == "[REDACTED:k]"
    runs.discard("r1")
    assert len(runs.for_run("r1")) == 0


def test_file_vault_reloads_on_change(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    vault = FileSecretVault(path)
    assert vault.secrets_for("acme") == {}
    path.write_text(json.dumps({"acme": {"k1": "first-secret-1"}}))
    assert vault.secrets_for("acme") == {"k1": "first-secret-1"}
    assert vault.secrets_for("globex") == {}
    time.sleep(0.01)
    path.write_text(json.dumps({"acme": {"k1": "second-secret-22"}}))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10_000_000))
    assert vault.secrets_for("acme") == {"k1": "second-secret-22"}
    registry = registry_for_tenant(vault, "acme", "run-9")
    assert registry.redact("x second-secret-22") == "x [REDACTED:k1]"


async def test_every_store_write_path_redacts(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    secret = canary()
    registry = registry_for_tenant(
        StaticSecretVault({ref.split("/")[2]: {"api": secret}}), ref.split("/")[2], "r"
    )
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
    assert all(secret not in json.dumps(p) for p in payloads)


def test_a_secret_spelled_by_a_marker_and_its_neighbours_is_caught() -> None:
    # Replacing "XXXXXXXX" leaves "[REDACTED:s1]abcdefg", which spells the other secret.
    registry = MemorySecretRegistry()
    registry.register("s0", "s1]abcdefg")
    registry.register("s1", "XXXXXXXX")
    redacted = registry.redact("start XXXXXXXXabcdefg end")
    assert "s1]abcdefg" not in redacted and "XXXXXXXX" not in redacted
    assert redacted == "start [REDACTED:[REDACTED:s0] end"
