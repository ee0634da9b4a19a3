"""The chaos run's proposals operation: a weekly request said on three past Mondays, a
DreamWorkflow (which proposes automating it), then an apply through the HTTP API's and
memoryctl's path (retried through restarts, as a client retries). Exactly one
proposal, one proposal.created, one proposal.activated and one installed schedule,
whose artifact read back from the server has the stored checksum, must result."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

from temporalio.service import RPCError

from activities.automation_schedules import installed_checksum
from api.proposal_review import ProposalReview, Reviewer
from chaos.operations import (
    Context,
    Operation,
    SettableClock,
    Verdict,
    exactly_once,
    retrying,
    run_workflow,
)
from memory.store import PostgresMemoryStore
from runtime.settings import Settings
from runtime.workflow_ids import PLAIN
from schemas.memory_entry import NewMemoryEntry
from schemas.memory_ref import parse_memory_ref
from schemas.proposals import Proposal
from schemas.workflow_io import DreamInput
from workflows.dream import dream_workflow_id


class Proposals(Operation):
    kind = "proposals"
    REQUEST = "Send Priya the weekly storage report."

    async def prepare(self, context: Context) -> None:
        now = datetime.now(UTC)
        last = now - timedelta(days=now.weekday() + 7)
        for weeks in (2, 1, 0):
            said_at = (last - timedelta(weeks=weeks)).replace(hour=9, minute=weeks)
            store = PostgresMemoryStore(context.engine, clock=SettableClock.at(said_at))
            entry = NewMemoryEntry(content=self.REQUEST, tags=("request",), id=f"req-{weeks}")
            await retrying(functools.partial(store.put_many, self.ref, [entry]))

    async def run(self, context: Context) -> None:
        ref = parse_memory_ref(self.ref)
        await run_workflow(
            context, "DreamWorkflow", DreamInput(memory_ref=ref), dream_workflow_id(ref)
        )
        settings = Settings(AGENT_MEMORY_TASK_QUEUE=context.task_queue)
        review = ProposalReview(context.store.proposals, context.client, settings)
        reviewer = Reviewer(tenant=ref.tenant, actor="chaos", scopes=None)
        listed = await retrying(functools.partial(self._proposals, context))
        for proposal in listed:
            await retrying(functools.partial(review.apply, reviewer, proposal.id), seconds=300)
            context.workflows_completed += 1

    async def _proposals(self, context: Context) -> list[Proposal]:
        ref = parse_memory_ref(self.ref)
        return await context.store.proposals.list(ref.tenant, memory_ref=ref)

    async def verify(self, context: Context) -> Verdict:
        ref = parse_memory_ref(self.ref)
        proposals = await retrying(functools.partial(self._proposals, context))
        verdict = exactly_once(
            self,
            {
                "proposal": len(proposals),
                "proposal.created": await self.events(context, "proposal.created"),
                "proposal.activated": await self.events(context, "proposal.activated"),
            },
        )
        for proposal in proposals:
            schedule = context.client.get_schedule_handle(PLAIN.automation(ref.tenant, proposal.id))
            try:
                checksum = await installed_checksum(context.client, schedule.id)
                await schedule.delete()  # weekly: it would only load the dev server
            except RPCError:
                checksum = None  # not installed
            if proposal.state != "applied" or checksum != proposal.artifact_sha256:
                verdict.losses += 1
                verdict.problems.append(f"{self.ref}: {proposal.state}, schedule {checksum}")
        return verdict
