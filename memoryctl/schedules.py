"""Dream schedules through the Temporal Python client (the same thing the README's
`temporal schedule ...` commands do from the CLI)."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
)

from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DreamInput
from workflows.dream import DreamWorkflow

DEFAULT_CRON = "0 23 * * *"


def schedule_id_for(memory_ref: str) -> str:
    """dream-<tenant>-<agent>[-<scope>]: readable in the UI, unique per memoryRef."""
    ref = parse_memory_ref(memory_ref)
    parts = [ref.tenant, ref.agent] + ([ref.scope] if ref.scope else [])
    return "dream-" + "-".join(parts)


@dataclass(frozen=True)
class ScheduleRow:
    schedule_id: str
    memory_ref: str
    cron: str
    next_run: str


async def create_dream_schedule(
    client: Client,
    memory_ref: str,
    *,
    task_queue: str,
    token_budget: int | None = None,
    cron: str = DEFAULT_CRON,
    schedule_id: str | None = None,
) -> str:
    request = DreamInput(memory_ref=str(parse_memory_ref(memory_ref)), token_budget=token_budget)
    schedule_id = schedule_id or schedule_id_for(memory_ref)
    await client.create_schedule(
        schedule_id,
        Schedule(
            action=ScheduleActionStartWorkflow(
                DreamWorkflow.run,
                request,
                id=schedule_id,
                task_queue=task_queue,
            ),
            spec=ScheduleSpec(cron_expressions=[cron]),
            # A tick that finds the previous dream still running is skipped.
            policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
        ),
        memo={"memoryRef": request.memory_ref, "cron": cron},
    )
    return schedule_id


async def list_dream_schedules(client: Client) -> list[ScheduleRow]:
    rows = []
    async for listed in await client.list_schedules():
        description = await client.get_schedule_handle(listed.id).describe()
        action = description.schedule.action
        if (
            not isinstance(action, ScheduleActionStartWorkflow)
            or action.workflow != "DreamWorkflow"
        ):
            continue
        memo = await description.memo()
        next_times = description.info.next_action_times
        rows.append(
            ScheduleRow(
                schedule_id=listed.id,
                memory_ref=str(memo.get("memoryRef", "?")),
                cron=str(memo.get("cron", "(calendar)")),
                next_run=next_times[0].isoformat() if next_times else "-",
            )
        )
    return sorted(rows, key=lambda r: r.schedule_id)


async def trigger_dream_schedule(client: Client, schedule_id: str) -> None:
    await client.get_schedule_handle(schedule_id).trigger()


async def delete_dream_schedule(client: Client, schedule_id: str) -> None:
    await client.get_schedule_handle(schedule_id).delete()
