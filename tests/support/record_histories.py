"""Record the example workflow histories checked in under tests/histories/.

    python -m tests.support.record_histories
    python -m tests.support.record_histories commitment_horizon.json   # only that one

Runs DreamWorkflow, DistillationWorkflow, ConsolidationWorkflow, AgentRunWorkflow and
the commitment workflows (inference, a time commitment that fires, a predicate watch
that fires once and ends on cancel) against a throwaway embedded PostgreSQL and dev
server, and writes each history as JSON.
Re-record only when a workflow change is meant to be incompatible (and then use
workflow.patched instead if runs may be in flight); tests/workflows/test_replay.py replays
every file here.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import create_async_engine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.storage.embedded import asyncpg_url_for, start_embedded_postgres
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from runtime import search_attributes
from runtime.binaries import temporal_cli
from runtime.converter import data_converter
from runtime.settings import Settings
from runtime.workflow_ids import PLAIN
from schemas.commitments import (
    DEFERRED_SIGNAL,
    CommitmentHorizonInput,
    CommitmentInferenceInput,
    DeferredNotice,
    InferCommitmentsRequest,
    commitment_workflow_id,
)
from schemas.consolidation import ConsolidationInput
from schemas.embeddings import ReembedInput
from schemas.fixture_runs import ROUNDTRIP, FixtureRunInput, fixture_run_workflow_id
from schemas.fleet import FleetDreamInput
from schemas.memory_entry import NewMemoryEntry, Tier
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import AgentRunInput, DistillationInput, DreamInput
from worker import build_worker
from workflows.agent_run import AgentRunWorkflow
from workflows.commitment import CommitmentWorkflow
from workflows.commitment_horizon import WAKE_BEFORE, CommitmentHorizonWorkflow
from workflows.commitment_inference import CommitmentInferenceWorkflow
from workflows.consolidation import ConsolidationWorkflow
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow
from workflows.fixture_run import FixtureRunWorkflow
from workflows.fleet_dream import FleetDreamWorkflow
from workflows.predicate_watch import PredicateWatchWorkflow
from workflows.reembed import ReembedWorkflow

HISTORY_DIR = Path(__file__).resolve().parents[1] / "histories"
REF = "mem://example-tenant/agent-1"
COMMITMENT_REF = "mem://example-tenant/agent-2"
TASK_QUEUE = "record-histories"


def example_entries() -> list[NewMemoryEntry]:
    notes = [
        "Prefers email follow-up for billing questions.",
        "Invoice INV-1042 is waiting for the finance team's approval.",
        "Weekly sync moved to Thursdays at 10:00.",
        "Weekly sync moved to Thursdays at 10:00.",
        "Asked to be reminded on Friday about the renewal quote.",
    ]
    return [NewMemoryEntry(content=text, tags=("example",), tier=Tier.EPISODIC) for text in notes]


def example_facts() -> list[NewMemoryEntry]:
    """Long-term entries with a duplicate, a look-alike conflict and a re-keyed value."""
    facts = [
        ("The customer prefers invoices in EUR.", None),
        ("Note: the customer prefers invoices in EUR", None),
        ("The trial lasts 14 days.", None),
        ("The trial lasts 21 days.", None),
        ("Plan tier: basic", "plan_tier"),
    ]
    return [
        NewMemoryEntry(
            content=text,
            tier=Tier.SEMANTIC,
            namespace="billing" if key else None,
            key=key,
        )
        for text, key in facts
    ]


async def record_all(client: Client, task_queue: str, store: PostgresMemoryStore) -> dict[str, str]:
    """Run each workflow once and return {file name: history JSON}."""
    await store.put_many(REF, example_entries())
    await store.put_many(REF, example_facts())
    runs = {
        "distillation": (
            DistillationWorkflow.run,
            DistillationInput(memory_ref=REF, token_budget=2000),
            "example-distillation",
        ),
        "dream": (
            DreamWorkflow.run,
            DreamInput(memory_ref=REF, token_budget=2000),
            "example-dream",
        ),
        "consolidation": (
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=REF),
            "example-consolidation",
        ),
        "agent_run": (AgentRunWorkflow.run, AgentRunInput(memory_ref=REF), "example-agent-run"),
    }
    # Between the first distillation and the dream, new memory arrives.
    histories: dict[str, str] = {}
    for name, (run, arg, workflow_id) in runs.items():
        if name == "dream":
            await store.put(REF, NewMemoryEntry(content="Renewal quote sent on Tuesday."))
            await store.put(REF, NewMemoryEntry(content="Remind me in 3 days to check the renewal"))
        if name == "consolidation":
            await store.put_many(
                REF,
                [
                    NewMemoryEntry(
                        content="Plan tier: premium",
                        tier=Tier.SEMANTIC,
                        namespace="Billing",
                        key="PlanTier",
                    ),
                    NewMemoryEntry(
                        content="THE CUSTOMER PREFERS INVOICES IN EUR", tier=Tier.SEMANTIC
                    ),
                ],
            )
        handle: WorkflowHandle[Any, Any] = await client.start_workflow(
            run,  # type: ignore[arg-type]
            arg,
            id=workflow_id,
            task_queue=task_queue,
        )
        await handle.result()
        histories[f"{name}.json"] = (await handle.fetch_history()).to_json()
    histories.update(await record_commitments(client, task_queue, store))
    histories.update(await record_horizon(client, task_queue, store))
    histories.update(await record_fixture_run(client, task_queue, store))
    histories.update(await record_reembed(client, task_queue))
    histories.update(await record_fleet_dream(client, task_queue, store))
    histories.update(await record_proposals(client, task_queue, store))
    return histories


PROPOSAL_REF = "mem://example-tenant/agent-5"


async def record_proposals(
    client: Client, task_queue: str, store: PostgresMemoryStore
) -> dict[str, str]:
    """A dream that proposes a weekly routine, and that proposal revised and applied."""
    from schemas.proposals import ProposalCommand, ProposalRevision, ProposalStatus
    from tests.support.proposals import last_mondays, seed_routine
    from workflows.proposal import ProposalWorkflow

    await seed_routine(store.engine, PROPOSAL_REF, last_mondays(4))
    dream = await client.start_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=PROPOSAL_REF),
        id="example-dream-proposals",
        task_queue=task_queue,
    )
    result = await dream.result()
    assert result.proposals is not None
    (proposal_id,) = result.proposals.created
    tenant = PROPOSAL_REF.split("/")[2]
    revised = await store.proposals.revise(
        tenant, proposal_id, ProposalRevision(title="Weekly pipeline report run")
    )
    handle = client.get_workflow_handle_for(
        ProposalWorkflow.run, PLAIN.proposal(tenant, proposal_id)
    )
    for update, command in (
        ("revise", ProposalCommand(actor="example", artifact_sha256=revised.artifact_sha256)),
        ("apply", ProposalCommand(actor="example")),
    ):
        await handle.execute_update(update, command, result_type=ProposalStatus)
    await handle.result()
    await client.get_schedule_handle(PLAIN.automation(tenant, proposal_id)).delete()
    return {
        "dream_proposals.json": (await dream.fetch_history()).to_json(),
        "proposal.json": (await handle.fetch_history()).to_json(),
    }


async def _inferred(client: Client, task_queue: str, store: PostgresMemoryStore) -> str:
    await client.execute_workflow(
        CommitmentInferenceWorkflow.run,
        CommitmentInferenceInput(memory_ref=parse_memory_ref(COMMITMENT_REF)),
        id=f"example-commitment-inference-{len(await store.commitments.list(COMMITMENT_REF))}",
        task_queue=task_queue,
    )
    return (await store.commitments.list(COMMITMENT_REF))[-1].commitment_id


async def record_commitments(
    client: Client, task_queue: str, store: PostgresMemoryStore
) -> dict[str, str]:
    """A time commitment said five days ago (due in two seconds) that fires, and a
    predicate watch that fires on its first false -> true and ends when cancelled."""
    histories: dict[str, str] = {}
    said = datetime.now(UTC) - timedelta(days=5) + timedelta(seconds=2)
    back_dated = PostgresMemoryStore(store.engine, clock=lambda: said)
    await back_dated.put(
        COMMITMENT_REF, NewMemoryEntry(content="Remind me in 5 days to send the renewal quote")
    )
    fired = await _inferred(client, task_queue, store)
    inference = client.get_workflow_handle("example-commitment-inference-0")
    histories["commitment_inference.json"] = (await inference.fetch_history()).to_json()
    timed = client.get_workflow_handle_for(CommitmentWorkflow.run, commitment_workflow_id(fired))
    await timed.result()
    histories["commitment.json"] = (await timed.fetch_history()).to_json()

    await store.put(
        COMMITMENT_REF, NewMemoryEntry(content="Remind me when the SOC2 report is filed")
    )
    watched = await _inferred(client, task_queue, store)
    watch = client.get_workflow_handle_for(
        PredicateWatchWorkflow.run, commitment_workflow_id(watched)
    )
    await store.put(
        COMMITMENT_REF, NewMemoryEntry(content="Filed today", tags=("soc2-report-filed",))
    )
    await watch.signal(PredicateWatchWorkflow.memory_changed)
    for _ in range(300):  # the evaluation after the signal fires it
        status = await watch.query(PredicateWatchWorkflow.status)
        if status is not None and status.fires:
            break
        await asyncio.sleep(0.1)
    await store.commitments.cancel(COMMITMENT_REF, watched)
    await watch.signal(PredicateWatchWorkflow.memory_changed)
    await watch.result()
    histories["predicate_watch.json"] = (await watch.fetch_history()).to_json()
    return histories


HORIZON_REF = "mem://example-tenant/agent-3"
FLEET_HORIZON_REF = "mem://example-tenant/agent-4"


async def record_horizon(
    client: Client, task_queue: str, store: PostgresMemoryStore
) -> dict[str, str]:
    """A horizon run signal-with-started as arming does, for an instant half a horizon
    and three seconds away: it wakes in three seconds, starts the commitment's held-back
    run, finds nothing more deferred and finishes. (Real deferrals wake hours later.)
    Recorded for a memoryRef's horizon and for the fleet's (no memoryRef: its pass arms
    every memoryRef)."""
    return {
        "commitment_horizon.json": await _horizon(
            client, task_queue, store, HORIZON_REF, fleet=False
        ),
        "commitment_horizon_fleet.json": await _horizon(
            client, task_queue, store, FLEET_HORIZON_REF, fleet=True
        ),
    }


async def _horizon(
    client: Client, task_queue: str, store: PostgresMemoryStore, ref: str, *, fleet: bool
) -> str:
    said = datetime.now(UTC) - timedelta(days=5) + WAKE_BEFORE + timedelta(seconds=3)
    back_dated = PostgresMemoryStore(store.engine, clock=lambda: said)
    await back_dated.put(ref, NewMemoryEntry(content="Remind me in 5 days to renew the lease"))
    # Recorded in the store, not yet started: what a deferral leaves.
    await store.commitments.infer(
        InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
    )
    (commitment,) = await store.commitments.list(ref)
    assert commitment.next_at is not None
    handle = await client.start_workflow(
        CommitmentHorizonWorkflow.run,
        CommitmentHorizonInput(
            memory_ref=None if fleet else parse_memory_ref(ref), earliest_at=commitment.next_at
        ),
        id=PLAIN.fleet_commitment_horizon() if fleet else PLAIN.commitment_horizon(ref),
        task_queue=task_queue,
        start_signal=DEFERRED_SIGNAL,
        start_signal_args=[DeferredNotice(at=commitment.next_at)],
    )
    if fleet:
        # The fleet's pass also sees the dream's deferred reminder recorded above, so the
        # run sleeps on after it: recorded up to that sleep.
        await _after_first_pass(handle)
        await handle.terminate("recorded")
    else:
        await handle.result()
    await client.get_workflow_handle(commitment_workflow_id(commitment.commitment_id)).terminate(
        "recorded"
    )
    return (await handle.fetch_history()).to_json()


async def _after_first_pass(handle: WorkflowHandle[Any, Any]) -> None:
    """Until the run has finished its first pass and started its next sleep."""
    while True:
        events = [e.event_type async for e in handle.fetch_history_events()]
        if EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED in events and (
            events[-1] == EventType.EVENT_TYPE_TIMER_STARTED
        ):
            return
        await asyncio.sleep(0.2)


async def record_fixture_run(
    client: Client, task_queue: str, store: PostgresMemoryStore
) -> dict[str, str]:
    """An openwop run of the round-trip fixture, as POST /v1/runs starts it."""
    run_id = await store.fixture_runs.create("example-tenant", ROUNDTRIP)
    handle = await client.start_workflow(
        FixtureRunWorkflow.run,
        FixtureRunInput(run_id=run_id, fixture=ROUNDTRIP),
        id=fixture_run_workflow_id(run_id),
        task_queue=task_queue,
    )
    await handle.result()
    return {"fixture_run.json": (await handle.fetch_history()).to_json()}


async def record_reembed(client: Client, task_queue: str) -> dict[str, str]:
    """A re-embed run as the docs start it (``--input '{}'``): every entry recorded
    above already has its vector, so one page finds nothing and nothing is retired."""
    handle = await client.start_workflow(
        ReembedWorkflow.run, ReembedInput(), id="example-reembed", task_queue=task_queue
    )
    await handle.result()
    return {"reembed.json": (await handle.fetch_history()).to_json()}


async def record_fleet_dream(
    client: Client, task_queue: str, store: PostgresMemoryStore
) -> dict[str, str]:
    """A fleet dream as the docs start it (``--input '{}'``), after a second agent wrote:
    one page, one batch of the agents with work."""
    await store.put_many(
        "mem://acme/agent-2", [NewMemoryEntry(content="Standup moved to 9:30 on Mondays.")]
    )
    handle = await client.start_workflow(
        FleetDreamWorkflow.run, FleetDreamInput(), id="example-fleet-dream", task_queue=task_queue
    )
    await handle.result()
    return {"fleet_dream.json": (await handle.fetch_history()).to_json()}


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = start_embedded_postgres(Path(tmp) / "pg")
        admin = create_async_engine(asyncpg_url_for(server), isolation_level="AUTOCOMMIT")
        async with admin.connect() as connection:
            await connection.exec_driver_sql("CREATE DATABASE record")
        await admin.dispose()
        engine = create_engine(asyncpg_url_for(server, "record"))
        await migrate(engine)
        store = PostgresMemoryStore(engine)
        env = await WorkflowEnvironment.start_local(
            data_converter=data_converter,
            dev_server_existing_path=temporal_cli(),
            search_attributes=list(search_attributes.ALL),
        )
        try:
            settings = Settings(AGENT_MEMORY_TASK_QUEUE=TASK_QUEUE)
            async with build_worker(env.client, settings, store, StaticSecretVault({})):
                histories = await record_all(env.client, TASK_QUEUE, store)
        finally:
            await env.shutdown()
            await engine.dispose()
            server.cleanup()
    HISTORY_DIR.mkdir(exist_ok=True)
    only = set(sys.argv[1:])
    for name, text in histories.items():
        if only and name not in only:
            continue
        # Pretty-printed so a reviewer can read what a run records.
        (HISTORY_DIR / name).write_text(json.dumps(json.loads(text), indent=2) + "\n")
        print(f"wrote {HISTORY_DIR / name}")


if __name__ == "__main__":
    asyncio.run(main())
