"""Recall on public conversational memory: what the search an agent calls finds, beside
plain BM25, in the same run.

    python -m benchmarks.recall_bench [--data ../shared/data/locomo-dev]
                                      [--modes hybrid,text,semantic] [--json PATH]

For each LoCoMo development conversation (benchmarks/locomo.py; the data stays in
``../shared/data``), one agent's memoryRef holds one entry per turn, with the session's
date (metadata.saidAt) and the turn id in its metadata, and a second agent's one entry per
session, with its date. Every
question is sent verbatim to ``POST /api/v1/memory/search`` (the FastAPI app over an
in-process transport, so the route, its validation and the store's ranking are all on
the path) in each ``--modes`` mode, with limit 50; the hits' turn ids are scored:

- turn view: R@5, R@10, NDCG@10 over the evidence turns;
- session R@5: the turn ranking read as sessions (first occurrence);
- session view R@5: the search over the one-entry-per-session memoryRef.

Then the latency an agent sees at this size (about 600 turns per memoryRef): each
question once (after ANALYZE, as autovacuum would have run), one client, hybrid, over
a real socket to the API in its own process
(``python -m benchmarks.http_server``, the app ``memoryctl serve`` runs), alternated
with the same ``store.search`` called in this process (the floor: the search without
HTTP, routing and JSON); p50 and p95 of each.

The baseline is plain BM25 (``rank_bm25`` BM25Okapi over lower-cased ``\\w+`` tokens of
the same texts), ranked in the same run. Figures are given for the tuning half
(conv-26/42/47), the held-out half (conv-48/49), overall and per category; results go
to benchmarks/results/recall.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from rank_bm25 import BM25Okapi
from sqlalchemy import text
from sqlalchemy.engine import URL

from api.app import create_app
from api.services import ApiServices
from benchmarks import locomo
from benchmarks.adapter_bench import percentile
from benchmarks.common import bench_server, fresh_database
from benchmarks.http_bench import ApiProcess
from benchmarks.http_server import temporal_unavailable
from memory.redaction.vault import vault_from_settings
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.settings import Settings
from schemas.memory_entry import NewMemoryEntry, Tier
from schemas.search import SearchRequest

RESULTS = Path(__file__).with_name("results") / "recall.json"
TENANT = "locomo"
LIMIT = 50
_TOKEN = re.compile(r"\w+")

Ranker = Callable[[locomo.Conversation, locomo.Question], tuple[list[str], list[str]]]


def _agent(conversation: locomo.Conversation, view: str) -> str:
    return f"{conversation.name}-{view}"


def _turn_entry(turn: locomo.Turn) -> NewMemoryEntry:
    metadata: dict[str, Any] = {"dia_id": turn.id, "session": turn.session, "saidBy": turn.speaker}
    if turn.said_at is not None:
        metadata["saidAt"] = turn.said_at.replace(tzinfo=UTC).isoformat()
    return NewMemoryEntry(id=turn.id, content=turn.text, tier=Tier.EPISODIC, metadata=metadata)


def _session_entry(number: int, text: str, said_at: datetime | None) -> NewMemoryEntry:
    metadata = {"saidAt": said_at.replace(tzinfo=UTC).isoformat()} if said_at else {}
    return NewMemoryEntry(id=f"S{number}", content=text, tier=Tier.EPISODIC, metadata=metadata)


async def load(store: PostgresMemoryStore, conversations: Sequence[locomo.Conversation]) -> float:
    began = time.perf_counter()
    for conversation in conversations:
        await store.put_many(
            f"mem://{TENANT}/{_agent(conversation, 'turns')}",
            [_turn_entry(turn) for turn in conversation.turns],
        )
        await store.put_many(
            f"mem://{TENANT}/{_agent(conversation, 'sessions')}",
            [
                _session_entry(number, text, conversation.session_dates()[number])
                for number, text in conversation.session_texts().items()
            ],
        )
    return time.perf_counter() - began


class BM25Baseline:
    """rank_bm25's BM25Okapi, one index per conversation and view."""

    def __init__(self, conversations: Sequence[locomo.Conversation]) -> None:
        self._turns: dict[str, tuple[list[str], BM25Okapi]] = {}
        self._sessions: dict[str, tuple[list[str], BM25Okapi]] = {}
        for conversation in conversations:
            turns = conversation.turns
            self._turns[conversation.name] = (
                [turn.id for turn in turns],
                BM25Okapi([_tokens(turn.text) for turn in turns]),
            )
            sessions = conversation.session_texts()
            self._sessions[conversation.name] = (
                [f"S{number}" for number in sessions],
                BM25Okapi([_tokens(text) for text in sessions.values()]),
            )

    def rank(
        self, conversation: locomo.Conversation, question: locomo.Question
    ) -> tuple[list[str], list[str]]:
        return (
            _top(self._turns[conversation.name], question.text),
            _top(self._sessions[conversation.name], question.text),
        )


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _top(index: tuple[list[str], BM25Okapi], query: str) -> list[str]:
    ids, bm25 = index
    scores = bm25.get_scores(_tokens(query))
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))
    return [ids[i] for i in order[:LIMIT]]


async def _search(
    client: httpx.AsyncClient, key: str, agent: str, query: str, mode: str, limit: int = LIMIT
) -> list[str]:
    response = await client.post(
        "/api/v1/memory/search",
        headers={"X-API-Key": key},
        json={"query": query, "agent_id": agent, "limit": limit, "mode": mode},
    )
    response.raise_for_status()
    return [hit["entry"]["id"] for hit in response.json()["results"]]


async def latency(
    url: URL, store: PostgresMemoryStore, key: str, conversations: Sequence[locomo.Conversation]
) -> dict[str, Any]:
    """One client, hybrid: HTTP to the API process against store.search in process."""
    http_ms: list[float] = []
    store_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="recall-api-") as state:
        api = ApiProcess(url.render_as_string(hide_password=False), Path(state))
        try:
            await api.ready()
            async with httpx.AsyncClient(base_url=api.url) as client:
                for conversation in conversations:
                    agent = _agent(conversation, "turns")
                    ref = f"mem://{TENANT}/{agent}"
                    for question in conversation.questions:
                        began = time.perf_counter()
                        await _search(client, key, agent, question.text, "hybrid", limit=10)
                        http_ms.append((time.perf_counter() - began) * 1000)
                        began = time.perf_counter()
                        await store.search(ref, SearchRequest(query=question.text, limit=10))
                        store_ms.append((time.perf_counter() - began) * 1000)
        finally:
            api.stop()
    figures = {
        "http_p50_ms": round(percentile(http_ms, 50), 2),
        "http_p95_ms": round(percentile(http_ms, 95), 2),
        "store_p50_ms": round(percentile(store_ms, 50), 2),
        "store_p95_ms": round(percentile(store_ms, 95), 2),
        "queries": len(http_ms),
    }
    print(
        f"latency, one client, hybrid, limit 10: HTTP p50 {figures['http_p50_ms']} ms, "
        f"p95 {figures['http_p95_ms']} ms; store.search in process p50 "
        f"{figures['store_p50_ms']} ms, p95 {figures['store_p95_ms']} ms "
        f"(HTTP/store at p50 {figures['http_p50_ms'] / figures['store_p50_ms']:.2f}x)",
        flush=True,
    )
    return figures


def report(
    name: str, scored: dict[str, locomo.Scores], questions: dict[str, locomo.Question]
) -> dict[str, Any]:
    def part(keys: Sequence[str]) -> dict[str, float | int]:
        return locomo.summary([scored[key] for key in keys])

    keys = list(scored)
    by_conversation = {key: key.split("#")[0] for key in keys}
    out: dict[str, Any] = {
        "overall": part(keys),
        "tune": part([k for k in keys if by_conversation[k] in locomo.TUNE]),
        "holdout": part([k for k in keys if by_conversation[k] in locomo.HOLDOUT]),
        "by_category": {
            label: part([k for k in keys if questions[k].category == number])
            for number, label in locomo.CATEGORIES.items()
        },
    }
    line = out["overall"]
    print(
        f"  {name:<12} turn R@5 {line['turn_r5']:.3f}  R@10 {line['turn_r10']:.3f}  "
        f"NDCG@10 {line['turn_ndcg10']:.3f}  session R@5 {line['session_r5']:.3f}  "
        f"session view R@5 {line['session_view_r5']:.3f}   "
        f"(held-out turn R@10 {out['holdout']['turn_r10']:.3f})",
        flush=True,
    )
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    conversations = locomo.load(Path(args.data))
    questions = {q.key: q for c in conversations for q in c.questions}
    print(
        f"{len(conversations)} conversations, "
        f"{sum(len(c.turns) for c in conversations):,} turns, {len(questions):,} questions"
    )
    results: dict[str, Any] = {}
    baseline = BM25Baseline(conversations)
    async with bench_server("recall-bench") as server, fresh_database(server, "recall") as url:
        engine = create_engine(url.render_as_string(hide_password=False))
        try:
            await migrate(engine)
            settings = Settings()
            store = PostgresMemoryStore(engine)
            services = ApiServices.build(
                settings,
                engine,
                vault_from_settings(settings.secrets_file),
                temporal_unavailable,
                store=store,
            )
            key = (await ApiKeyStore(engine).create(TENANT, name="recall-bench")).key
            seconds = await load(store, conversations)
            print(f"loaded in {seconds:.1f} s (put_many, inline embedding)")
            # The statistics autovacuum gathers within a minute of such a load: without
            # them the planner guesses one row per table and joins the postings badly
            # (text leg 19 ms against 7.5 ms at 600 entries).
            async with engine.connect() as connection:
                await connection.execution_options(isolation_level="AUTOCOMMIT")
                await connection.execute(text("ANALYZE"))
            results["load_seconds"] = round(seconds, 2)
            results["latency"] = await latency(url, store, key, conversations)
            transport = httpx.ASGITransport(app=create_app(services))
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                for mode in args.modes.split(","):
                    scored: dict[str, locomo.Scores] = {}
                    began = time.perf_counter()
                    for conversation in conversations:
                        for question in conversation.questions:
                            turns = await _search(
                                client, key, _agent(conversation, "turns"), question.text, mode
                            )
                            sessions = await _search(
                                client, key, _agent(conversation, "sessions"), question.text, mode
                            )
                            scored[question.key] = locomo.score(question, turns, sessions)
                    results[mode] = report(mode, scored, questions)
                    results[mode]["seconds"] = round(time.perf_counter() - began, 1)
        finally:
            await engine.dispose()
    scored = {
        q.key: locomo.score(q, *baseline.rank(c, q)) for c in conversations for q in c.questions
    }
    results["bm25 (rank_bm25)"] = report("plain BM25", scored, questions)
    results["machine"] = {"python": platform.python_version(), "cpu": platform.processor()}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default=str(locomo.DEFAULT_DATA))
    parser.add_argument("--modes", default="hybrid,text,semantic")
    parser.add_argument("--json", default=str(RESULTS))
    args = parser.parse_args()
    results = asyncio.run(run(args))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print(f"results: {args.json}")


if __name__ == "__main__":
    main()
