"""The optional update judge (memory/consolidation/update_judge.py) against a local server
that speaks the OpenAI chat API (tests/support/chat_server.py): it is asked only about the
conflicts the rules leave open, once each, within its budget; UPDATE makes a supersession
(basis judge), anything else (or a failure) leaves the conflict; it never merges; the
texts go to the endpoint and into no event."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.consolidation.update_judge import JudgeSettings, UpdateJudge, judge_for
from memory.store import PostgresMemoryStore
from schemas.consolidation import ConsolidateMemoryRequest, ConsolidationResult
from schemas.events import EventType
from schemas.memory_entry import Tier
from tests.support.chat_server import MODEL_NAME, ChatState, chat_app
from tests.support.factories import note, unique_ref
from tests.support.http_app import serving

DISPUTES = (
    ("The trial lasts 14 days", "The trial lasts 21 days"),
    ("Support hours are 9 to 5 on weekdays", "Support hours are 8 to 4 on weekdays"),
)


async def _pass(store: PostgresMemoryStore, ref: str) -> ConsolidationResult:
    key = f"judge/{datetime.now(UTC).timestamp()}"
    return await store.consolidate(ConsolidateMemoryRequest(memory_ref=ref, run_key=key))


async def _seed(store: PostgresMemoryStore, ref: str, pairs=DISPUTES) -> None:
    for older, newer in pairs:
        await store.put(ref, note(older, tier=Tier.SEMANTIC))
        await store.put(ref, note(newer, tier=Tier.SEMANTIC))


async def test_the_judge_settles_open_conflicts_once_each(engine: AsyncEngine) -> None:
    state = ChatState(answer="UPDATE")
    async with serving(chat_app(state)) as url:
        judge = UpdateJudge(f"{url}/v1", MODEL_NAME, api_key="sk-judge")
        store = PostgresMemoryStore(engine, embedder=None, update_judge=judge)
        ref = unique_ref()
        await _seed(store, ref)
        first = await _pass(store, ref)
        assert (first.judge_calls, first.judged_updates) == (2, 2)
        assert (first.updated_count, first.conflict_count, first.merged_count) == (2, 0, 0)
        assert state.authorizations == ["Bearer sk-judge"] * 2
        asked = state.requests[0]["messages"][1]["content"]
        assert "EARLIER: The trial lasts 14 days" in asked and "LATER: The trial lasts 21" in asked
        async with engine.connect() as connection:
            bases = (
                await connection.execute(
                    text("SELECT DISTINCT basis FROM memory_updates WHERE memory_ref = :ref"),
                    {"ref": ref},
                )
            ).scalars()
            assert list(bases) == ["judge"]
        again = await _pass(store, ref)
        assert again.judge_calls == 0 and len(state.requests) == 2  # nothing open is new
        consolidated = [
            e for e in await store.events(ref) if e.type == EventType.MEMORY_CONSOLIDATED
        ]
        assert consolidated[0].payload["judgeCalls"] == 2
        for event in await store.events(ref):  # ids and counts, never the texts
            assert "trial lasts" not in str(event.payload)
        await judge.aclose()


@pytest.mark.parametrize("behaviour", ["distinct", "error", "down", "budget"])
async def test_anything_but_update_leaves_the_conflict(engine: AsyncEngine, behaviour: str) -> None:
    state = ChatState(answer="DISTINCT", behaviour="error" if behaviour == "error" else "ok")
    async with serving(chat_app(state)) as url:
        base = "http://127.0.0.1:9/v1" if behaviour == "down" else f"{url}/v1"
        max_calls = 1 if behaviour == "budget" else 20
        if behaviour == "budget":
            state.answer = "UPDATE"
        judge = UpdateJudge(base, MODEL_NAME, timeout_seconds=2, max_calls=max_calls)
        store = PostgresMemoryStore(engine, embedder=None, update_judge=judge)
        ref = unique_ref()
        await _seed(store, ref)
        result = await _pass(store, ref)
        if behaviour == "budget":
            assert (result.judge_calls, result.updated_count, result.conflict_count) == (1, 1, 1)
        else:
            assert (result.judge_calls, result.judged_updates) == (2, 0)
            assert (result.updated_count, result.conflict_count) == (0, 2)
        assert result.merged_count == 0
        await judge.aclose()


def test_the_judge_is_off_unless_configured_and_refuses_an_incomplete_endpoint() -> None:
    assert judge_for(JudgeSettings()) is None
    with pytest.raises(ValueError, match="AGENT_MEMORY_UPDATE_JUDGE_URL"):
        JudgeSettings(AGENT_MEMORY_UPDATE_JUDGE="openai-compatible")
    configured = judge_for(
        JudgeSettings(
            AGENT_MEMORY_UPDATE_JUDGE="openai-compatible",
            AGENT_MEMORY_UPDATE_JUDGE_URL="http://judge:8000/v1",
            AGENT_MEMORY_UPDATE_JUDGE_MODEL="m",
            AGENT_MEMORY_UPDATE_JUDGE_MAX_CALLS=5,
        )
    )
    assert configured is not None and configured.max_calls == 5
