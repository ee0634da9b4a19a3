"""The product's own Prometheus series (docs/operations.md#metrics), recorded through
the Temporal SDK's metric meter (runtime/metrics.py).

Each figure is recorded once, where it is decided:

- a dream's outcome by the workflow that dreamed (DreamWorkflow, ``path="workflow"``,
  through ``workflow.metric_meter()``, which skips replays) or by the fleet batch that
  dreamed the agent (``path="fleet"``);
- distillation, consolidation and arming figures by the activity that did the work (the
  same methods run for a DreamWorkflow's steps and inside a fleet batch);
- a commitment's firing by the activity that claimed it (``fired`` or ``missed``; a retry
  that finds its own claim reports ``already-claimed`` and records nothing);
- proposals by the activity that created or moved them (``event``: created, applied,
  rejected, archived);
- HTTP requests by the API's middleware (api/request_metrics.py); entries erased when
  their TTL ran out by the garbage collection that erased them (``reason="ttl"``).
  ``memoryctl forget`` runs in a short-lived CLI process nothing scrapes: its erasures
  are in the memory's event log (``memory.deleted``), not here.

A retried activity whose attempt committed before it failed to report returns the same
result and records it again, as Temporal's own activity series count attempts: counters
here are at least once across such retries, exactly once otherwise.

Labels carry outcomes, routes and status codes only: never a memoryRef, tenant or any
content, so the series' cardinality is fixed and nothing stored leaks into them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from temporalio import activity, workflow
from temporalio.common import MetricMeter

from schemas.commitments import FireOutcome
from schemas.consolidation import ConsolidationResult
from schemas.workflow_io import DistillationResult

DreamPath = Literal["workflow", "fleet"]
DreamOutcome = Literal["completed", "more-left", "skipped-overlap", "failed"]

# name (the exporter adds _total to counters), description, unit
DREAMS = ("agent_memory_dreams", "Dreams finished, by path and outcome")
TOKENS = ("agent_memory_dream_tokens", "Tokens written by distillations (the budget spent)")
SOURCES = ("agent_memory_distillation_sources", "Entries a distillation read, by fate")
MERGES = ("agent_memory_consolidation_merges", "Duplicate entries merged by consolidation")
SUPERSESSIONS = ("agent_memory_consolidation_supersessions", "Stale entries superseded")
CONFLICTS = ("agent_memory_consolidation_conflicts", "Contradicting look-alikes recorded")
ARMED = ("agent_memory_commitments_armed", "Commitment workflows started (armed)")
FIRED = ("agent_memory_commitments_fired", "Commitment occurrences claimed, by status")
LATENESS = (
    "agent_memory_commitment_lateness_seconds",
    "How long after its due instant a commitment occurrence was claimed",
)
ERASED = ("agent_memory_erased_entries", "Entries erased with their derived copies, by reason")
EMBEDDED = (
    "agent_memory_entries_embedded",
    "Entries given a vector by a re-embedding (ReembedWorkflow) pass",
)
PROPOSALS = (
    "agent_memory_proposals",
    "Proposals (RFC 0096) by what happened: created by a dream, applied, rejected, archived",
)
HTTP_DURATION = (
    "agent_memory_http_request_duration_seconds",
    "HTTP requests served, by route template, method and status",
)


def activity_meter() -> MetricMeter:
    """The running activity's meter; the no-op meter outside one (a store call from a
    test or the CLI records nothing)."""
    return activity.metric_meter() if activity.in_activity() else MetricMeter.noop


class ProductMetrics:
    def __init__(self, meter: MetricMeter) -> None:
        self.meter = meter

    @classmethod
    def in_activity(cls) -> ProductMetrics:
        return cls(activity_meter())

    @classmethod
    def in_workflow(cls) -> ProductMetrics:
        return cls(workflow.metric_meter())

    def _count(self, series: tuple[str, str], value: int, **labels: str) -> None:
        if value > 0:
            self.meter.create_counter(*series).add(value, labels)

    def dream(self, path: DreamPath, outcome: DreamOutcome) -> None:
        self._count(DREAMS, 1, path=path, outcome=outcome)

    def distillation(self, result: DistillationResult) -> None:
        if result.status == "already-consumed":
            return  # another run distilled these sources and recorded them
        self._count(TOKENS, result.tokens_used)
        self._count(SOURCES, result.source_count, fate="distilled")
        self._count(SOURCES, result.deferred_count, fate="deferred")
        self._count(SOURCES, result.oversized_count, fate="oversized")

    def consolidation(self, result: ConsolidationResult) -> None:
        self._count(MERGES, result.merged_count)
        self._count(SUPERSESSIONS, result.superseded_count)
        self._count(CONFLICTS, result.conflict_count)

    def armed(self, started: int) -> None:
        self._count(ARMED, started)

    def fired(self, outcome: FireOutcome, lateness: timedelta) -> None:
        if outcome.status not in ("fired", "missed"):
            return
        self._count(FIRED, 1, status=outcome.status)
        self.meter.create_histogram_float(LATENESS[0], LATENESS[1], "s").record(
            max(lateness.total_seconds(), 0.0), {"status": outcome.status}
        )

    def erased(self, entries: int, *, reason: Literal["ttl"]) -> None:
        self._count(ERASED, entries, reason=reason)

    def embedded(self, entries: int) -> None:
        self._count(EMBEDDED, entries)

    def proposals(
        self, count: int, event: Literal["created", "applied", "rejected", "archived"]
    ) -> None:
        self._count(PROPOSALS, count, event=event)
