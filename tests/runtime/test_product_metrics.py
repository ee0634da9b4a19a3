"""The product's series as Prometheus reads them: names, labels, and what is recorded
once (a retried firing that finds its own claim, a distillation another run committed,
and empty counts record nothing)."""

from __future__ import annotations

from datetime import timedelta

from runtime.metrics import MetricsExporter
from runtime.product_metrics import ProductMetrics
from schemas.commitments import FireOutcome
from schemas.consolidation import ConsolidationResult
from schemas.workflow_io import DistillationResult
from tests.api.test_health_and_metrics import samples


def _distilled(status: str, sources: int) -> DistillationResult:
    return DistillationResult.model_validate(
        {
            "memoryRef": "mem://t/a",
            "status": status,
            "snapshotChecksum": "0" * 64,
            "snapshotCount": sources,
            "tokenBudget": 100,
            "tokensUsed": 40,
            "sourceCount": sources,
            "deferredCount": 2,
        }
    )


async def test_each_figure_is_recorded_once_under_its_series() -> None:
    exporter = MetricsExporter.start(process="test")
    metrics = ProductMetrics(exporter.meter)
    metrics.distillation(_distilled("distilled", 5))
    metrics.distillation(_distilled("already-consumed", 5))  # the other run recorded it
    metrics.consolidation(
        ConsolidationResult(
            memory_ref="mem://t/a",
            pass_id="p",
            trigger="scheduled",
            input_count=9,
            output_count=6,
            merged_count=2,
            superseded_count=1,
            conflict_count=0,
        )
    )
    fired = FireOutcome(commitment_id="c1", status="fired")
    metrics.fired(fired, timedelta(seconds=3))
    metrics.fired(FireOutcome(commitment_id="c2", status="missed"), timedelta(hours=2))
    metrics.fired(FireOutcome(commitment_id="c1", status="already-claimed"), timedelta(0))
    metrics.armed(0)
    metrics.proposals(2, "created")
    metrics.proposals(1, "applied")
    metrics.proposals(0, "rejected")
    text = (await exporter.exposition()).decode()

    def value(name: str, **labels: str) -> float:
        wanted = {("process", "test"), *labels.items()}
        return sum(v for have, v in samples(text, name).items() if wanted <= have)

    assert value("agent_memory_distillation_sources_total", fate="distilled") == 5
    assert value("agent_memory_distillation_sources_total", fate="deferred") == 2
    assert value("agent_memory_dream_tokens_total") == 40
    assert value("agent_memory_consolidation_merges_total") == 2
    assert value("agent_memory_consolidation_supersessions_total") == 1
    assert "agent_memory_consolidation_conflicts_total" not in text  # nothing to count
    assert "agent_memory_commitments_armed_total" not in text
    assert value("agent_memory_commitments_fired_total", status="fired") == 1
    assert value("agent_memory_commitments_fired_total", status="missed") == 1
    assert value("agent_memory_commitments_fired_total", status="already-claimed") == 0
    lateness = "agent_memory_commitment_lateness_seconds_bucket"
    assert value(lateness, status="fired", le="5") == 1
    assert value(lateness, status="fired", le="1") == 0
    assert value(lateness, status="missed", le="3600") == 0
    assert value(lateness, status="missed", le="21600") == 1
    assert value("agent_memory_commitment_lateness_seconds_sum", status="fired") == 3
    assert value("agent_memory_proposals_total", event="created") == 2
    assert value("agent_memory_proposals_total", event="applied") == 1
    assert value("agent_memory_proposals_total", event="rejected") == 0
