"""FleetDreamWorkflow: one schedule dreams every agent that has something new.

    temporal workflow start --type FleetDreamWorkflow --task-queue agent-memory \
        --workflow-id fleet-dream --input '{"tenant": "acme"}'

It reads the memoryRefs with work a page at a time (one range scan of an index that holds
only due refs: memory/fleet/selection.py), so an idle agent costs nothing: no workflow, no
activity, no row read. Each page is cut into batches of ``batchSize`` agents, and each
batch is one activity that dreams its agents one after another with the same steps a
DreamWorkflow runs (activities/fleet_activities.py); ``concurrency`` batches run at
once, which bounds the load on the memory database; the next page is read while the
last batches of the current one still run, so slots stay busy across page boundaries.
The Temporal server pays per batch, not per agent: that is what lets one dev server
dream thousands of agents a minute.

Progress is in the UI (current details: dreamed, left for later, failed, batches in
flight) and in the ``progress`` query. A batch that still fails after its retries (an
outage past the activity's tolerance) counts its agents as failed and the run goes on:
they stay due for the next night. The run continues as new every PAGES_PER_RUN pages
(or when Temporal suggests it), carrying the cursor and the totals, so its history stays
small however large the fleet.

For one agent, the per-agent DreamWorkflow and its schedule are unchanged.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.contracts import DREAM_AGENTS, FIND_DUE_REFS
    from schemas.fleet import (
        MAX_NAMED_FAILURES,
        AgentDream,
        DreamAgentsRequest,
        DueRefsRequest,
        FleetDreamInput,
        FleetDreamResult,
        FleetProgress,
    )
    from schemas.memory_ref import parse_memory_ref
    from workflows import policies
    from workflows.activity_calls import call
    from workflows.distillation import effective_budget

PAGES_PER_RUN = 5
PIPELINED_PAGES = "fleet-dream-pipelined-pages"


@workflow.defn
class FleetDreamWorkflow:
    def __init__(self) -> None:
        self._progress = FleetProgress()
        self._in_flight = 0
        # Batches started that wait for a slot.
        self._queued = 0
        self._no_memory = False

    @workflow.query
    def progress(self) -> FleetProgress:
        return self._progress

    @workflow.run
    async def run(self, request: FleetDreamInput) -> FleetDreamResult:
        self._progress = request.progress
        budget = effective_budget(request.token_budget)
        info = workflow.info()
        # Names every step's run key: a retried batch finds what its first attempt did.
        # Each agent is dreamed by one run only (the cursor moves forward).
        run_key = f"fleet/{info.run_id}"
        slots = asyncio.Semaphore(request.concurrency)
        # Runs begun before pages were pipelined replay as they ran: page by page.
        pipelined = workflow.patched(PIPELINED_PAGES)
        dreaming: list[asyncio.Task[None]] = []
        after = request.after
        done = False
        for _ in range(PAGES_PER_RUN):
            if pipelined:
                # The next page is read while the last round of this one still runs, so
                # no slot idles at a page boundary waiting for the slowest batch.
                await workflow.wait_condition(lambda: self._queued < request.concurrency)
            self._show(request.tenant, "reading the next page of agents with work")
            page = await call(
                FIND_DUE_REFS,
                DueRefsRequest(tenant=request.tenant, after=after, limit=request.page_size),
                policies.INDEX,
                summary=f"find up to {request.page_size} agents with work",
            )
            refs = page.memory_refs
            if page.tenant_has_memory is False:
                self._no_memory = True
                workflow.logger.warning(
                    "tenant %r has no memory at all: nothing to dream (check the schedule's "
                    "tenant)",
                    request.tenant,
                )
            self._progress = self._progress.model_copy(update={"pages": self._progress.pages + 1})
            if refs:
                batches = [
                    refs[i : i + request.batch_size]
                    for i in range(0, len(refs), request.batch_size)
                ]
                self._queued += len(batches)
                started = [
                    asyncio.create_task(self._dream(batch, budget, run_key, slots, request))
                    for batch in batches
                ]
                if pipelined:
                    dreaming += started
                else:
                    await asyncio.gather(*started)
                after = parse_memory_ref(refs[-1])
            if len(refs) < request.page_size:
                done = True
                break
            if workflow.info().is_continue_as_new_suggested():
                break
        # Every batch this run started ends in this run (continue-as-new carries none).
        await asyncio.gather(*dreaming)
        if done:
            self._show(
                request.tenant,
                "done: this tenant has no memory at all (check the tenant name)"
                if self._no_memory
                else "done",
            )
            return FleetDreamResult(tenant=request.tenant, progress=self._progress)
        workflow.continue_as_new(
            request.model_copy(update={"after": after, "progress": self._progress})
        )

    async def _dream(
        self,
        batch: tuple[str, ...],
        budget: int,
        run_key: str,
        slots: asyncio.Semaphore,
        request: FleetDreamInput,
    ) -> None:
        async with slots:
            self._queued -= 1
            self._in_flight += len(batch)
            self._show(request.tenant, "dreaming")
            try:
                result = await call(
                    DREAM_AGENTS,
                    DreamAgentsRequest(
                        memory_refs=tuple(parse_memory_ref(ref) for ref in batch),
                        token_budget=budget,
                        run_key=run_key,
                    ),
                    policies.FLEET_BATCH,
                    summary=f"dream {len(batch)} agents",
                )
                agents = list(result.agents)
            except ActivityError:
                # Past its outage tolerance: these agents stay due for the next run.
                workflow.logger.warning("a fleet batch of %d agents failed", len(batch))
                agents = [AgentDream(memory_ref=ref, status="failed") for ref in batch]
            finally:
                self._in_flight -= len(batch)
            self._count(agents)
            self._show(request.tenant, "dreaming")

    def _count(self, agents: list[AgentDream]) -> None:
        p = self._progress
        failed = [agent.memory_ref for agent in agents if agent.status == "failed"]
        named = (p.failed_refs + tuple(failed))[:MAX_NAMED_FAILURES]
        self._progress = p.model_copy(
            update={
                "dreamed": p.dreamed + sum(agent.status == "dreamed" for agent in agents),
                "more_left": p.more_left + sum(agent.status == "more-left" for agent in agents),
                "failed": p.failed + len(failed),
                "batches": p.batches + 1,
                "failed_refs": named,
            }
        )

    def _show(self, tenant: str | None, phase: str) -> None:
        p = self._progress
        workflow.set_current_details(
            f"Fleet dream of {tenant or 'every tenant'}: {phase}; {p.dreamed} dreamed, "
            f"{p.more_left} left with more to do, {p.failed} failed, "
            f"{self._in_flight} in flight, {p.batches} batches, {p.pages} pages"
        )
