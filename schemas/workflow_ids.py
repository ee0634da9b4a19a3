"""The local activity through which DreamWorkflow learns its children's workflow ids
(runtime/workflow_ids.py computes them; the worker holds the key, the workflow cannot)."""

from __future__ import annotations

from pydantic import Field

from schemas.base import WireModel, WireResult
from schemas.memory_ref import MemoryRefField


class ChildWorkflowIdsRequest(WireModel):
    memory_ref: MemoryRefField


class ChildWorkflowIds(WireResult):
    distillation: str = Field(min_length=1, max_length=1000)
    consolidation: str = Field(min_length=1, max_length=1000)
    inference: str = Field(min_length=1, max_length=1000)
