"""What each activity is called and what it takes and returns: the only thing workflows
import from activities/.

Workflows run in Temporal's sandbox and must not import the store (SQLAlchemy, asyncpg,
the tokenizer). They schedule activities by the names and types declared here; the
implementations in memory_activities.py register under the same names, and a test
checks that every contract has an implementation with exactly these types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from schemas.commitments import (
    ArmCommitmentsRequest,
    ArmDeferredReport,
    ArmDeferredRequest,
    ArmReport,
    CancelCommitmentRequest,
    CancelOutcome,
    EvaluatePredicateRequest,
    FireCommitmentRequest,
    FireOutcome,
    InferCommitmentsRequest,
    InferenceResult,
    PredicateOutcome,
)
from schemas.consolidation import ConsolidateMemoryRequest, ConsolidationResult
from schemas.embeddings import (
    CatchUpVectorsRequest,
    CatchUpVectorsResult,
    RetireVectorsRequest,
    RetireVectorsResult,
)
from schemas.fixture_runs import RunFixtureRequest, RunFixtureResult
from schemas.fleet import DreamAgentsRequest, DreamAgentsResult, DueRefs, DueRefsRequest
from schemas.proposals import (
    InstallRequest,
    ProposalKey,
    ProposalStatus,
    SynthesisRequest,
    SynthesisResult,
    TransitionRequest,
)
from schemas.snapshot import SnapshotInfo
from schemas.workflow_ids import ChildWorkflowIds, ChildWorkflowIdsRequest
from schemas.workflow_io import (
    DistillationResult,
    DistillMemoryRequest,
    DistillRequest,
    GarbageReport,
    IndexDigest,
    IndexRequest,
    SnapshotRequest,
)

RequestT = TypeVar("RequestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class ActivityContract(Generic[RequestT, ResultT]):
    name: str
    request_type: type[RequestT]
    result_type: type[ResultT]


DISTILL_MEMORY = ActivityContract("distill_memory", DistillMemoryRequest, DistillationResult)
COLLECT_GARBAGE = ActivityContract("collect_garbage", IndexRequest, GarbageReport)
LOAD_MEMORY_INDEX = ActivityContract("load_memory_index", IndexRequest, IndexDigest)
CREATE_SNAPSHOT = ActivityContract("create_snapshot", SnapshotRequest, SnapshotInfo)
CONSOLIDATE_MEMORY = ActivityContract(
    "consolidate_memory", ConsolidateMemoryRequest, ConsolidationResult
)
INFER_COMMITMENTS = ActivityContract("infer_commitments", InferCommitmentsRequest, InferenceResult)
ARM_COMMITMENTS = ActivityContract("arm_commitments", ArmCommitmentsRequest, ArmReport)
# The fleet's horizon pass: every memoryRef's deferred commitments now within the horizon.
ARM_DEFERRED = ActivityContract("arm_deferred", ArmDeferredRequest, ArmDeferredReport)
FIRE_COMMITMENT = ActivityContract("fire_commitment", FireCommitmentRequest, FireOutcome)
EVALUATE_PREDICATE = ActivityContract(
    "evaluate_predicate", EvaluatePredicateRequest, PredicateOutcome
)
CANCEL_COMMITMENT = ActivityContract("cancel_commitment", CancelCommitmentRequest, CancelOutcome)
# A local activity: the worker holds the keys that opaque workflow ids derive from.
CHILD_WORKFLOW_IDS = ActivityContract(
    "child_workflow_ids", ChildWorkflowIdsRequest, ChildWorkflowIds
)
# One openwop conformance fixture's memory action (schemas/fixture_runs.py).
RUN_FIXTURE = ActivityContract("run_fixture", RunFixtureRequest, RunFixtureResult)
# Vectors of entries that have none under the configured model, and the retirement of
# other models' vectors once they have (workflows/reembed.py).
CATCH_UP_VECTORS = ActivityContract("catch_up_vectors", CatchUpVectorsRequest, CatchUpVectorsResult)
RETIRE_VECTORS = ActivityContract("retire_vectors", RetireVectorsRequest, RetireVectorsResult)
# Fleet dreams (workflows/fleet_dream.py): the memoryRefs with work, one page at a time,
# and a batch of agents dreamed in one activity.
FIND_DUE_REFS = ActivityContract("find_due_refs", DueRefsRequest, DueRefs)
DREAM_AGENTS = ActivityContract("dream_agents", DreamAgentsRequest, DreamAgentsResult)
# Proposals (workflows/proposal.py): a dream's synthesis, and a proposal's lifecycle
# steps: read its row, move it (reject, archive, a revision made through the API), and
# install its artifact as a Temporal schedule then mark it applied.
SYNTHESIZE_PROPOSALS = ActivityContract("synthesize_proposals", SynthesisRequest, SynthesisResult)
READ_PROPOSAL = ActivityContract("read_proposal", ProposalKey, ProposalStatus)
TRANSITION_PROPOSAL = ActivityContract("transition_proposal", TransitionRequest, ProposalStatus)
INSTALL_PROPOSAL = ActivityContract("install_proposal", InstallRequest, ProposalStatus)
# Scheduled only by distillations recorded before budget-bounded selection.
LEGACY_DISTILL = ActivityContract("distill", DistillRequest, DistillationResult)

ALL_CONTRACTS: tuple[ActivityContract[Any, Any], ...] = (
    DISTILL_MEMORY,
    CATCH_UP_VECTORS,
    RETIRE_VECTORS,
    COLLECT_GARBAGE,
    LOAD_MEMORY_INDEX,
    CREATE_SNAPSHOT,
    LEGACY_DISTILL,
    CONSOLIDATE_MEMORY,
    INFER_COMMITMENTS,
    ARM_COMMITMENTS,
    ARM_DEFERRED,
    FIRE_COMMITMENT,
    EVALUATE_PREDICATE,
    CANCEL_COMMITMENT,
    CHILD_WORKFLOW_IDS,
    RUN_FIXTURE,
    FIND_DUE_REFS,
    DREAM_AGENTS,
    SYNTHESIZE_PROPOSALS,
    READ_PROPOSAL,
    TRANSITION_PROPOSAL,
    INSTALL_PROPOSAL,
)
