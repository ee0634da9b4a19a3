"""ReembedWorkflow on a real Temporal dev server and PostgreSQL: entries written while
the model was down, and entries whose vectors belong to another model, all end with a
vector of the configured model; the other model's vectors are retired; the run shows its
count in the UI and carries no text (the session's history audit scans it); a second
run finds nothing to do. Run exactly as the docs show it: ``--input '{}'``."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from memory.embeddings.model import EmbeddingUnavailable, Vectors
from memory.embeddings.static_model import MODEL
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.embeddings import ReembedInput
from tests.support.factories import note, unique_ref
from workflows.reembed import ReembedWorkflow

EMBEDDINGS = tables.embeddings
OLD_MODEL = "old/model-3"


class _Down:
    model = MODEL

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbeddingUnavailable("endpoint down")


async def _models(engine: AsyncEngine, ref: str) -> dict[str, int]:
    async with engine.connect() as connection:
        rows = await connection.execute(
            select(EMBEDDINGS.c.model, func.count())
            .where(EMBEDDINGS.c.memory_ref == ref)
            .group_by(EMBEDDINGS.c.model)
        )
        return {model: count for model, count in rows.all()}


async def test_reembed_catches_up_and_retires_other_models(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
) -> None:
    ref = unique_ref()
    down = PostgresMemoryStore(engine, embedder=_Down())
    missing = await down.put_many(ref, [note(f"written while down, fact {n}") for n in range(7)])
    fine = await store.put_many(ref, [note(f"written with the model, fact {n}") for n in range(3)])
    async with engine.begin() as connection:
        await connection.execute(
            insert(EMBEDDINGS),
            [
                {
                    "tenant": ref.split("/")[2],
                    "memory_ref": ref,
                    "entry_id": entry.id,
                    "model": OLD_MODEL,
                    "dimensions": 3,
                    "content_sha256": entry.content_sha256,
                    "embedding": [0.1, 0.2, 0.3],
                    "embedded_at": store.now(),
                }
                for entry in missing
            ],
        )
    assert await _models(engine, ref) == {OLD_MODEL: 7, MODEL.id: 3}

    handle = await temporal_env.client.start_workflow(
        ReembedWorkflow.run,
        ReembedInput(batch_size=4),
        id=f"reembed-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    embedded = (await handle.result()).embedded
    assert embedded >= 7  # other tests' entries in this database may be embedded too
    assert await _models(engine, ref) == {MODEL.id: 10}
    # What the Temporal UI shows as the run's current details.
    metadata = await handle.query("__temporal_workflow_metadata")
    assert metadata.current_details.startswith(f"Done: {embedded} entries embedded")
    history = await handle.fetch_history()
    texts = [entry.content for entry in (*missing, *fine)]
    assert not any(text in history.to_json() for text in texts)

    again = await temporal_env.client.execute_workflow(
        "ReembedWorkflow",
        {},
        id=f"reembed-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    # Named counts, not a bare number (issue 41); the old model's 7 vectors went above.
    assert again == {"embedded": 0, "retired": 0}
