"""A reminder deferred to a horizon and then forgotten: the horizon stops waiting for it
(issue 41). Before, the memoryRef's CommitmentHorizonWorkflow slept until half a horizon
before the forgotten promise's instant and its details in the Temporal UI kept
announcing that due time. Now the entry's deletion ends the commitment, the trigger of
migration 0027 notifies, the change listener signals the horizon, and its pass finds
nothing left: it completes, its details naming no instant. Real dev server, real worker,
real listener, no manual signal."""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from memory.commitments.predicates import default_predicates
from memory.store import PostgresMemoryStore
from runtime.change_listener import ChangeListener
from runtime.workflow_ids import PLAIN
from schemas.commitments import CommitmentInferenceInput
from schemas.memory_entry import ForgetRequest
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.waiting import eventually
from workflows.commitment_horizon import CommitmentHorizonWorkflow
from workflows.commitment_inference import CommitmentInferenceWorkflow


async def test_forgetting_a_deferred_reminder_ends_its_horizons_wait(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    kept = await store.put(ref, note("Remind me in 5 days to book the venue"))
    gone = await store.put(ref, note("Remind me in 3 days to renew the domain"))
    listener = ChangeListener.for_store(
        engine, client, default_predicates(), coalesce_seconds=0.05, sweep_seconds=3600.0
    )
    async with listener:
        inferred = await client.execute_workflow(
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=parse_memory_ref(ref), enqueue_runs=False),
            id=f"infer-{uuid.uuid4().hex[:8]}",
            task_queue=worker_task_queue,
        )
        assert (inferred.armed.started, inferred.armed.deferred) == (0, 2)
        by_entry = {c.memory_id: c for c in await store.commitments.list(ref)}
        soon, later = by_entry[gone.id].next_at, by_entry[kept.id].next_at
        assert soon is not None and later is not None
        horizon = client.get_workflow_handle_for(
            CommitmentHorizonWorkflow.run, PLAIN.commitment_horizon(ref)
        )

        async def details() -> str:
            metadata = await horizon.query("__temporal_workflow_metadata")
            return str(metadata.current_details)

        async def waiting_for(instant: object) -> bool:
            return f"due {instant.isoformat()}" in await details()  # type: ignore[attr-defined]

        await eventually(lambda: waiting_for(soon))
        await store.forget(ref, ForgetRequest(ids=(gone.id,)))
        # The other promise is what the horizon waits for now; the forgotten one's
        # instant is named nowhere.
        await eventually(lambda: waiting_for(later))
        assert soon.isoformat() not in await details()

        await store.forget(ref, ForgetRequest(ids=(kept.id,)))
        result = await asyncio.wait_for(horizon.result(), timeout=30)
    assert result.started == 0
    final = await details()
    assert final.startswith("Done: no deferred commitment left")
    assert soon.isoformat() not in final and later.isoformat() not in final
    assert listener.stats.rechecks >= 2
