"""Every workflow the worker runs (and the replayer checks), in one list."""

from __future__ import annotations

from workflows.agent_run import AgentRunWorkflow
from workflows.consolidation import ConsolidationWorkflow
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow

ALL_WORKFLOWS: list[type] = [
    DreamWorkflow,
    DistillationWorkflow,
    ConsolidationWorkflow,
    AgentRunWorkflow,
]
