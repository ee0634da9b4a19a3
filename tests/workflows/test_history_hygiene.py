"""Workflows carry ids, counts and checksums, never memory content: a dream over memory
holding a secret canary leaves neither the canary nor any entry text in any history."""

from __future__ import annotations

import uuid

from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from runtime.history_audit import leaks
from schemas.workflow_io import AgentRunInput, DreamInput
from tests.support.factories import canary, note, unique_ref
from workflows.agent_run import AgentRunWorkflow
from workflows.dream import DreamWorkflow, distillation_workflow_id


async def test_dream_and_session_histories_hold_no_content(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    vault: StaticSecretVault,
) -> None:
    ref = unique_ref()
    tenant = ref.split("/")[2]
    secret = canary()
    texts = [
        f"Customer account {i} escalated a billing dispute about invoice {i * 7}."
        for i in range(12)
    ]
    # Stored before the vault knew the secret, so the raw row holds the plaintext: only
    # the distillation's SR-1 carry-forward stands between it and the archive.
    await store.put_many(ref, [note(t, "billing") for t in texts])
    leaky = await store.put(ref, note(f"the vault token is {secret} for the billing API"))
    vault.secrets[tenant] = {"billing-token": secret}

    client = temporal_env.client
    dream = await client.start_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=ref, token_budget=6000),
        id=f"dream-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    result = await dream.result()
    assert result.distillation is not None and result.distillation.source_count == 13
    session = await client.start_workflow(
        AgentRunWorkflow.run,
        AgentRunInput(memory_ref=ref),
        id=f"session-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    await session.result()

    histories = [
        (await handle.fetch_history()).to_json()
        for handle in (
            dream,
            client.get_workflow_handle(distillation_workflow_id(ref)),
            session,
        )
    ]
    forbidden = {secret, *texts, leaky.content}
    for history in histories:
        assert leaks(history, forbidden) == []
        # Sanity: the scan does see payloads (the ref and ids are there).
        assert leaks(history, {ref}) == [ref]
    # And the distilled entry itself carries the marker, not the secret.
    output = await store.get(ref, result.distillation.output_id or "")
    assert output is not None
    assert secret not in output.content and "[REDACTED:billing-token]" in output.content
