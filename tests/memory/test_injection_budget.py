"""Budgeted reads (RFC 0113, MemoryListOptions.tokenBudget): the most recent entries
whose contents fit the budget together, counted with the advertised tokenizer; an entry
larger than the whole budget is left out whole (never truncated); SR-1 redaction and the
tenant scope hold on the budgeted path; "relevance" ranks by the hybrid search and needs
a query. Through the
store and over HTTP (GET /v1/host/memory), and as discovery advertises it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.redaction.chokepoint import MemorySecretRegistry
from memory.store import PostgresMemoryStore
from memory.tokens import count_tokens
from schemas.capabilities import TOKENIZER_NAME
from schemas.errors import InvalidInput
from schemas.memory_entry import MemoryListOptions
from tests.support.factories import canary, note, unique_ref

BUDGET = 120


class _Clock:
    def __init__(self) -> None:
        self.at = datetime.now(UTC) - timedelta(hours=1)

    def __call__(self) -> datetime:
        self.at += timedelta(seconds=1)  # each write strictly newer than the last
        return self.at


def _words(count: int, tag: str) -> str:
    return " ".join(f"{tag}{n}" for n in range(count))


async def _reference_layout(engine: AsyncEngine) -> tuple[str, dict[str, str], str]:
    """The reference host's layout: the oversize entry oldest, three fillers of about
    30% of the budget each, then an entry carrying a registered secret, newest."""
    store = PostgresMemoryStore(engine, clock=_Clock())
    ref = unique_ref()
    secret = canary()
    registry = MemorySecretRegistry("budget")
    registry.register("vendor-key", secret)
    oversize = await store.put(ref, note(_words(300, "oversize")))
    fillers = [await store.put(ref, note(_words(9, f"filler{i}-"))) for i in range(3)]
    sr1 = await store.put(ref, note(f"The vendor key is {secret}"), secrets=registry)
    ids = {"oversize": oversize.id, "sr1": sr1.id, **{f"f{i}": f.id for i, f in enumerate(fillers)}}
    return ref, ids, secret


async def test_a_budgeted_list_is_a_recent_prefix_within_the_budget(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref, ids, secret = await _reference_layout(engine)
    sizes = {name: count_tokens((await store.get(ref, i)).content) for name, i in ids.items()}  # type: ignore[union-attr]
    assert sizes["oversize"] > BUDGET and all(
        0.2 * BUDGET < sizes[f"f{i}"] < 0.4 * BUDGET for i in range(3)
    ), sizes

    entries = await store.list(ref, MemoryListOptions(token_budget=BUDGET))

    got = [e.id for e in entries]
    assert sum(count_tokens(e.content) for e in entries) <= BUDGET
    assert ids["oversize"] not in got  # omitted whole, never truncated
    assert got[0] == ids["sr1"]  # most recent first
    assert got == [ids["sr1"], ids["f2"], ids["f1"]]  # the prefix stops at f0
    redacted = entries[0].content
    assert secret not in redacted and "[REDACTED:vendor-key]" in redacted
    # Without a budget the same read returns everything, oversize included.
    assert len(await store.list(ref)) == 5


async def test_an_entry_larger_than_the_budget_alone_gives_an_empty_slice(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put(ref, note(_words(300, "only")))
    assert await store.list(ref, MemoryListOptions(token_budget=BUDGET)) == []


async def test_limit_and_budget_together_give_whichever_is_fewer(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref, _, _ = await _reference_layout(engine)
    assert len(await store.list(ref, MemoryListOptions(token_budget=BUDGET, limit=1))) == 1
    assert len(await store.list(ref, MemoryListOptions(token_budget=BUDGET, limit=50))) == 3


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"token_budget": 0}, "tokenBudget"),
        ({"token_budget": -5}, "tokenBudget"),
        ({"rank": "relevance"}, "query"),
        ({"rank": "relevance", "query": "   "}, "query"),
        ({"rank": "random"}, "rank"),
    ],
)
async def test_bad_budget_options_name_the_field(
    store: PostgresMemoryStore, options: dict[str, object], field: str
) -> None:
    ref = unique_ref()
    await store.put(ref, note("a note to read back"))
    with pytest.raises(InvalidInput) as raised:
        await store.list(ref, MemoryListOptions.model_construct(**options))  # type: ignore[arg-type]
    assert raised.value.field == field


async def test_recency_rank_is_the_default_order(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    for n in range(3):
        await store.put(ref, note(f"recency note {n} {uuid.uuid4().hex[:6]}"))
    plain = await store.list(ref, MemoryListOptions(token_budget=10_000))
    ranked = await store.list(ref, MemoryListOptions(token_budget=10_000, rank="recency"))
    assert [e.id for e in plain] == [e.id for e in ranked] and len(plain) == 3


async def test_the_budgeted_read_over_http_and_its_advert(running_api, engine) -> None:
    ref, ids, secret = await _reference_layout(engine)
    tenant = ref.split("/")[2]
    async with await running_api.client_for(tenant) as http:
        answer = await http.get("/v1/host/memory", params={"memoryRef": ref, "tokenBudget": BUDGET})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert [e["id"] for e in body["entries"]] == [ids["sr1"], ids["f2"], ids["f1"]]
        assert body["tokensUsed"] <= body["tokenBudget"] == BUDGET
        assert body["tokenCounter"] == TOKENIZER_NAME and secret not in answer.text
        refused = await http.get(
            "/v1/host/memory", params={"memoryRef": ref, "tokenBudget": BUDGET, "rank": "relevance"}
        )
        assert refused.status_code == 422 and refused.json()["field"] == "query"
        relevant = await http.get(
            "/v1/host/memory",
            params={
                "memoryRef": ref,
                "tokenBudget": BUDGET,
                "rank": "relevance",
                "query": "filler1-0 filler1-1 filler1-2",
            },
        )
        assert relevant.status_code == 200, relevant.text
        assert relevant.json()["entries"][0]["id"] == ids["f1"]
        assert relevant.json()["tokensUsed"] <= BUDGET
        advert = (await http.get("/.well-known/openwop")).json()["memory"]["injectionBudget"]
        assert advert == {"supported": True, "tokenCounter": TOKENIZER_NAME}
    # Another tenant naming this ref reads an empty memory of its own.
    async with await running_api.client_for("other" + uuid.uuid4().hex[:6]) as other:
        foreign = await other.get(
            "/v1/host/memory", params={"memoryRef": ref, "tokenBudget": BUDGET}
        )
        assert foreign.status_code == 200 and foreign.json()["entries"] == []
