"""The production embedding option against a local server that speaks the OpenAI
embeddings API (tests/support/embeddings_server.py): vectors arrive by index and are
stored under the endpoint's model id; the key goes in the Authorization header; an
endpoint that fails or answers another size loses no write (the entry is stored, without
a vector) and the error names no text; the settings refuse an incomplete endpoint."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.embeddings.choice import EmbeddingSettings, embedder_for, static_embedder
from memory.embeddings.model import EmbeddingUnavailable
from memory.embeddings.openai_compatible import OpenAICompatibleEmbedder
from memory.indexes.vector_index import ensure_vector_index
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.search import SearchMode, SearchRequest
from tests.support.embeddings_server import DIMENSIONS, MODEL_NAME, EndpointState, embeddings_app
from tests.support.factories import note, unique_ref
from tests.support.http_app import serving


async def test_the_store_embeds_through_an_openai_compatible_endpoint(
    engine: AsyncEngine,
) -> None:
    state = EndpointState()
    async with serving(embeddings_app(state)) as url:
        remote = OpenAICompatibleEmbedder(f"{url}/v1", MODEL_NAME, DIMENSIONS, api_key="sk-test")
        await ensure_vector_index(engine, remote.model)
        await ensure_vector_index(engine, remote.model)  # idempotent
        store = PostgresMemoryStore(engine, embedder=remote)
        ref = unique_ref()
        texts = [f"fact number {n} about the deployment pipeline" for n in range(300)]
        stored = await store.put_many(ref, [note(t) for t in texts])
        assert len(state.requests) == 2  # 300 texts in batches of 256
        assert state.authorizations == ["Bearer sk-test"] * 2
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(tables.embeddings.c.model, tables.embeddings.c.embedding).where(
                        tables.embeddings.c.memory_ref == ref
                    )
                )
            ).all()
        assert {row.model for row in rows} == {"openai-compatible/local-static-256"}
        assert len(rows) == 300
        assert all(np.asarray(row.embedding).shape == (DIMENSIONS,) for row in rows)
        found = await store.search(
            ref, SearchRequest(query=stored[0].content, mode=SearchMode.SEMANTIC, limit=1)
        )
        assert found.model == remote.model.id and found.hits[0].entry.id == stored[0].id

        state.behaviour = "error"
        down = await store.put(ref, note("written while the endpoint is down"))
        assert await store.get(ref, down.id) is not None
        with pytest.raises(EmbeddingUnavailable) as failed:
            await remote.embed(["a secret-looking text that must not be echoed"])
        assert "secret-looking" not in str(failed.value) and "500" in str(failed.value)

        state.behaviour = "wrong-size"
        with pytest.raises(EmbeddingUnavailable) as wrong:
            await remote.embed(["x"])
        assert "shape" in str(wrong.value)

        state.behaviour = "ok"
        page = await store.vectors.catch_up(None, batch_size=10_000)
        assert page.embedded >= 1  # the entry written while down has its vector now
        await remote.aclose()


async def test_an_unreachable_endpoint_fails_cleanly() -> None:
    remote = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", MODEL_NAME, DIMENSIONS)
    with pytest.raises(EmbeddingUnavailable) as failed:
        await remote.embed(["hello"])
    assert "unreachable" in str(failed.value)
    await remote.aclose()


def test_settings_choose_the_model_and_refuse_an_incomplete_endpoint() -> None:
    assert embedder_for(EmbeddingSettings()) is static_embedder()
    assert embedder_for(EmbeddingSettings(AGENT_MEMORY_EMBEDDINGS="off")) is None
    with pytest.raises(ValueError, match="AGENT_MEMORY_EMBEDDINGS_URL"):
        EmbeddingSettings(AGENT_MEMORY_EMBEDDINGS="openai-compatible")
    chosen = embedder_for(
        EmbeddingSettings(
            AGENT_MEMORY_EMBEDDINGS="openai-compatible",
            AGENT_MEMORY_EMBEDDINGS_URL="http://vllm:8000/v1",
            AGENT_MEMORY_EMBEDDINGS_MODEL="bge-small",
            AGENT_MEMORY_EMBEDDINGS_DIMENSIONS=384,
        )
    )
    assert chosen is not None and chosen.model.id == "openai-compatible/bge-small-384"
