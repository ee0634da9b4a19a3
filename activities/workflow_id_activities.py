"""The workflow ids a workflow cannot compute itself: with payload encryption they derive
from a key only the worker holds (runtime/workflow_ids.py). A local activity, so asking
costs no task queue round trip; its answer is recorded in history (encrypted), so replay
never recomputes it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.contracts import CHILD_WORKFLOW_IDS
from runtime.workflow_ids import WorkflowIds
from schemas.workflow_ids import ChildWorkflowIds, ChildWorkflowIdsRequest


class WorkflowIdActivities:
    def __init__(self, ids: WorkflowIds) -> None:
        self.ids = ids

    # Not wrapped in activities.boundary.content_free: the request was parsed by the data
    # converter already, nothing here can fail with content, and a local activity has no
    # heartbeat to keep.
    @activity.defn(name=CHILD_WORKFLOW_IDS.name)
    async def child_workflow_ids(self, request: ChildWorkflowIdsRequest) -> ChildWorkflowIds:
        return self.ids.children(request.memory_ref)

    def all(self) -> list[Callable[..., Any]]:
        return [self.child_workflow_ids]
