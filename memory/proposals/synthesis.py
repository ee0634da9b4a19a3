"""From routines to proposals: which routines are new, and the draft for each. Pure.

Title and rationale are written from a template of the routine's cadence, time, count
and dates, never from the entries' text: a proposal is a derived copy that outlives its
entries, so it must hold nothing a forget would have to reach, and nothing SR-1 could
miss (they still pass the chokepoint, with the dream's secrets, in the store).

Duplicate detection (advertised as ``duplicationDetection: true``): a routine whose
entries overlap a proposal's is the same routine. With the same schedule it was proposed
already (whatever became of that proposal: a rejected routine is not proposed again);
with another (the request moved to Tuesdays) it is a new draft whose ``duplicateOf``
names the oldest overlapping proposal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.proposals.routines import Routine
from schemas.memory_ref import MemoryRef
from schemas.proposals import (
    DEMO_PROPOSAL_ID,
    WEEKDAYS,
    AutomationAction,
    AutomationArtifact,
    AutomationCalendar,
    AutomationInput,
    ProposalKind,
    Weekday,
    proposal_id_for,
)


@dataclass(frozen=True, slots=True)
class NewProposal:
    proposal_id: str
    owner_tenant: str
    memory_ref: str
    kind: ProposalKind
    title: str
    rationale: str
    artifact: dict[str, Any]
    source_run_ids: tuple[str, ...]
    source_entry_ids: tuple[str, ...]
    schedule_key: str | None
    duplicate_of: str | None


@dataclass(frozen=True, slots=True)
class SynthesisPlan:
    new: list[NewProposal]
    unchanged: int
    # Proposed by this very run already: an attempt retried after its commit reports
    # them as created, as the first attempt did.
    recorded: list[str]


@dataclass(frozen=True, slots=True)
class KnownRoutine:
    proposal_id: str
    entry_ids: frozenset[str]
    schedule_key: str | None
    source_run_ids: tuple[str, ...]


def proposals_for(
    ref: MemoryRef,
    routines: Sequence[Routine],
    known: Sequence[KnownRoutine],
    *,
    run_id: str,
    task_queue: str,
) -> SynthesisPlan:
    new: list[NewProposal] = []
    recorded: list[str] = []
    unchanged = 0
    for routine in routines:
        entries = frozenset(routine.entry_ids)
        overlapping = [item for item in known if item.entry_ids & entries]
        same = [item for item in overlapping if item.schedule_key == routine.schedule_key]
        if same and run_id in same[0].source_run_ids:
            recorded.append(same[0].proposal_id)
        elif same:
            unchanged += 1
        else:
            duplicate_of = overlapping[0].proposal_id if overlapping else None
            new.append(_draft(ref, routine, duplicate_of, run_id, task_queue))
    return SynthesisPlan(new=new, unchanged=unchanged, recorded=recorded)


def automation_artifact(routine: Routine, ref: MemoryRef, task_queue: str) -> dict[str, Any]:
    weekday: Weekday | None = None if routine.weekday is None else WEEKDAYS[routine.weekday]
    artifact = AutomationArtifact(
        schedule=AutomationCalendar(
            day_of_week=weekday,
            hour=routine.hour,
            minute=routine.minute,
            time_zone=routine.time_zone,
        ),
        action=AutomationAction(task_queue=task_queue, input=AutomationInput(memory_ref=ref)),
    )
    return artifact.to_wire()


def _when(routine: Routine) -> str:
    at = f"{routine.hour:02d}:{routine.minute:02d} ({routine.time_zone})"
    if routine.weekday is None:
        return f"every day at {at}"
    return f"every {WEEKDAYS[routine.weekday].capitalize()} at {at}"


def _draft(
    ref: MemoryRef, routine: Routine, duplicate_of: str | None, run_id: str, task_queue: str
) -> NewProposal:
    when = _when(routine)
    rationale = (
        f"The same request recurred {len(routine.entry_ids)} times, {routine.cadence}, "
        f"from {routine.first_at:%Y-%m-%d} to {routine.last_at:%Y-%m-%d}. Applying this "
        f"schedules an agent run of {ref} {when}; nothing runs until a reviewer applies it."
    )
    return NewProposal(
        proposal_id=proposal_id_for(str(ref), routine.anchor_entry_id, routine.schedule_key),
        owner_tenant=ref.tenant,
        memory_ref=str(ref),
        kind="automation",
        title=f"Run the agent {when}",
        rationale=rationale,
        artifact=automation_artifact(routine, ref, task_queue),
        source_run_ids=(run_id,),
        source_entry_ids=routine.entry_ids,
        schedule_key=routine.schedule_key,
        duplicate_of=duplicate_of,
    )


def demo_draft(tenant: str, task_queue: str) -> NewProposal:
    """The conformance seam's demo draft: an automation of the tenant's demo agent,
    weekly, inert like every draft (contract §3.5 seeds one per tenant on list)."""
    ref = MemoryRef(tenant=tenant, agent="reviewable-learning-demo", scope=None)
    artifact = AutomationArtifact(
        schedule=AutomationCalendar(day_of_week="monday", hour=9, minute=0),
        action=AutomationAction(task_queue=task_queue, input=AutomationInput(memory_ref=ref)),
    ).to_wire()
    return NewProposal(
        proposal_id=DEMO_PROPOSAL_ID,
        owner_tenant=tenant,
        memory_ref=str(ref),
        kind="automation",
        title="Demo: run the demo agent every Monday at 09:00 (UTC)",
        rationale="Seeded by the conformance seam so the proposal surface has a draft.",
        artifact=artifact,
        source_run_ids=("conformance-seam",),
        source_entry_ids=(),
        schedule_key=None,
        duplicate_of=None,
    )
