"""ReembedWorkflow: give every live entry a vector of the configured embedding model,
in the background, resumably. Started after a change of model (or to catch up entries
written while an embedding endpoint was down):

    temporal workflow start --type ReembedWorkflow --task-queue agent-memory \
        --workflow-id reembed --input '{}'

Its result names the counts: ``{"embedded": N, "retired": M}``. Each activity embeds
up to 20 pages of ``batchSize`` entries, in (memoryRef, id) order from the cursor, and
hands the cursor back; the workflow shows the count in the UI (current details) and
continues as new every ACTIVITIES_PER_RUN activities, so its history stays small
whatever the fleet's size. A crash resumes from the last cursor; an entry embedded twice
is overwritten with the same vector. When nothing is left, other models' vectors are
deleted in batches.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import CATCH_UP_VECTORS, RETIRE_VECTORS
    from schemas.embeddings import (
        CatchUpVectorsRequest,
        ReembedInput,
        ReembedResult,
        RetireVectorsRequest,
    )
    from workflows import policies
    from workflows.activity_calls import call

ACTIVITIES_PER_RUN = 100


@workflow.defn
class ReembedWorkflow:
    @workflow.run
    async def run(self, request: ReembedInput) -> ReembedResult:
        embedded, after = request.embedded_so_far, request.after
        for _ in range(ACTIVITIES_PER_RUN):
            workflow.set_current_details(f"Embedding: {embedded} entries so far")
            page = await call(
                CATCH_UP_VECTORS,
                CatchUpVectorsRequest(batch_size=request.batch_size, after=after),
                policies.EMBED,
                summary="embed entries without a current vector",
            )
            embedded += page.embedded
            after = page.after
            if page.done:
                break
        else:
            workflow.continue_as_new(
                ReembedInput(batch_size=request.batch_size, after=after, embedded_so_far=embedded)
            )
        retired = 0
        while True:
            workflow.set_current_details(
                f"Embedded {embedded} entries; retiring other models' vectors ({retired} so far)"
            )
            gone = await call(
                RETIRE_VECTORS,
                RetireVectorsRequest(),
                policies.EMBED,
                summary="delete vectors of other models",
            )
            retired += gone.retired
            if gone.retired == 0:
                break
        workflow.set_current_details(
            f"Done: {embedded} entries embedded, {retired} vectors of other models retired"
        )
        return ReembedResult(embedded=embedded, retired=retired)
