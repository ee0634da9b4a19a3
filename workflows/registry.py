"""Every workflow the worker runs (and the replayer checks), in one list."""

from __future__ import annotations

from workflows.agent_run import AgentRunWorkflow
from workflows.commitment import CommitmentWorkflow
from workflows.commitment_horizon import CommitmentHorizonWorkflow
from workflows.commitment_inference import CommitmentInferenceWorkflow
from workflows.consolidation import ConsolidationWorkflow
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow
from workflows.fixture_run import FixtureRunWorkflow
from workflows.fleet_dream import FleetDreamWorkflow
from workflows.predicate_watch import PredicateWatchWorkflow
from workflows.proposal import ProposalWorkflow
from workflows.reembed import ReembedWorkflow

ALL_WORKFLOWS: list[type] = [
    DreamWorkflow,
    FleetDreamWorkflow,
    DistillationWorkflow,
    ConsolidationWorkflow,
    AgentRunWorkflow,
    CommitmentInferenceWorkflow,
    CommitmentWorkflow,
    CommitmentHorizonWorkflow,
    PredicateWatchWorkflow,
    FixtureRunWorkflow,
    ReembedWorkflow,
    ProposalWorkflow,
]
