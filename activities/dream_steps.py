"""The steps of a dream, declared once.

Both ways a dream runs take their steps from ``DREAM_STEPS``, in its order: the
per-agent DreamWorkflow (workflows/dream.py) schedules each step's activity (distillation
inside its child DistillationWorkflow), and the fleet's batch (activities/
fleet_activities.py) calls the same activity methods in-process for each agent of a
batch. Each keeps a table from step name to how it runs the step, and refuses to start
when the table and this declaration differ; tests/workflows/test_dream_steps.py runs
both and compares the activities they ran, in order, with this list.

Every step runs whether the one before succeeded or failed: one failing step must not
also stop the others (the dream then fails with the first failure; the fleet reports
the agent's failed steps by name).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from activities.contracts import (
    ARM_COMMITMENTS,
    COLLECT_GARBAGE,
    CONSOLIDATE_MEMORY,
    DISTILL_MEMORY,
    INFER_COMMITMENTS,
    SYNTHESIZE_PROPOSALS,
    ActivityContract,
)


@dataclass(frozen=True)
class DreamStep:
    """``name``: how reports call it (the fleet's ``failedSteps``); ``activity``: the
    activity that does its work; ``summary``: what the Temporal UI shows beside it."""

    name: str
    activity: ActivityContract[Any, Any]
    summary: str


DISTILL = DreamStep(
    "distill",
    DISTILL_MEMORY,
    "distill the best-ranked new entries under the token budget",
)
CONSOLIDATE = DreamStep(
    "consolidate",
    CONSOLIDATE_MEMORY,
    "consolidate: merge duplicates, supersede stale keys, record conflicts",
)
INFER = DreamStep("infer", INFER_COMMITMENTS, "parse intentions written since the watermark")
ARM = DreamStep("arm", ARM_COMMITMENTS, "arm the commitments due within the horizon")
PROPOSE = DreamStep(
    "propose",
    SYNTHESIZE_PROPOSALS,
    "propose automations for recurring requests (inert until applied)",
)
COLLECT_GARBAGE_STEP = DreamStep(
    "collect-garbage", COLLECT_GARBAGE, "expire entries, archives and snapshots"
)

DREAM_STEPS: tuple[DreamStep, ...] = (
    DISTILL,
    CONSOLIDATE,
    INFER,
    ARM,
    PROPOSE,
    COLLECT_GARBAGE_STEP,
)


def runs_every_step(runner: str, table: Mapping[str, object]) -> None:
    """Refuse a runner whose table of steps is not exactly DREAM_STEPS (a step added to
    the declaration and not to a runner, or one a runner kept after it was removed)."""
    declared = [step.name for step in DREAM_STEPS]
    if sorted(table) != sorted(declared):
        raise RuntimeError(f"{runner} runs {sorted(table)}, the dream declares {declared}")
