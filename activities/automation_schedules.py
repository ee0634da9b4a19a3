"""An automation artifact as a Temporal schedule, and back.

``schedule_of`` is the only way an applied proposal becomes something that runs: a
calendar (one weekday or every day, at hour:minute in the artifact's time zone) starting
the artifact's workflow with its input on its task queue. ``artifact_of`` reads an
installed schedule back into the artifact it runs, so "the installed schedule is exactly
the last persisted artifact" is checked on what the server holds, by checksum, not on
what the installer meant to send.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleCalendarSpec,
    ScheduleDescription,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleRange,
    ScheduleSpec,
)

from runtime.search_attributes import attributes_of
from schemas.proposals import WEEKDAYS, AutomationArtifact, artifact_sha256
from schemas.workflow_io import AgentRunInput

# Temporal counts weekdays from Sunday (0); the artifact names them.
_TEMPORAL_WEEKDAY = {name: (index + 1) % 7 for index, name in enumerate(WEEKDAYS)}
_WEEKDAY_OF = {number: name for name, number in _TEMPORAL_WEEKDAY.items()}
ALL_WEEKDAYS = (ScheduleRange(0, 6),)


def schedule_of(artifact: AutomationArtifact, schedule_id: str, memo: dict[str, Any]) -> Schedule:
    calendar = artifact.schedule
    day = calendar.day_of_week
    spec = ScheduleCalendarSpec(
        second=(ScheduleRange(0),),
        minute=(ScheduleRange(calendar.minute),),
        hour=(ScheduleRange(calendar.hour),),
        day_of_week=ALL_WEEKDAYS if day is None else (ScheduleRange(_TEMPORAL_WEEKDAY[day]),),
    )
    ref = artifact.action.input.memory_ref
    return Schedule(
        action=ScheduleActionStartWorkflow(
            artifact.action.workflow_type,
            AgentRunInput(memory_ref=ref),
            id=schedule_id,
            task_queue=artifact.action.task_queue,
            typed_search_attributes=attributes_of(ref),
            memo=memo,
        ),
        spec=ScheduleSpec(calendars=[spec], time_zone_name=calendar.time_zone),
        # A run still going at the next time is not doubled.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
    )


async def artifact_of(client: Client, description: ScheduleDescription) -> dict[str, Any] | None:
    """The automation artifact an installed schedule runs, in wire form; None when the
    schedule is not one this host installs (another action, several calendars)."""
    action = description.schedule.action
    spec = description.schedule.spec
    if not isinstance(action, ScheduleActionStartWorkflow) or len(spec.calendars) != 1:
        return None
    calendar = spec.calendars[0]
    days = calendar.day_of_week
    if len(days) != 1 or len(calendar.hour) != 1 or len(calendar.minute) != 1:
        return None
    weekday = None if (days[0].start, days[0].end) == (0, 6) else _WEEKDAY_OF.get(days[0].start)
    (decoded,) = await client.data_converter.decode(list(action.args), [AgentRunInput])
    artifact = AutomationArtifact.model_validate(
        {
            "schedule": {
                "dayOfWeek": weekday,
                "hour": calendar.hour[0].start,
                "minute": calendar.minute[0].start,
                "timeZone": spec.time_zone_name or "UTC",
            },
            "action": {
                "workflowType": action.workflow,
                "taskQueue": action.task_queue,
                "input": {"memoryRef": str(decoded.memory_ref)},
            },
        }
    )
    return artifact.to_wire()


async def installed_checksum(client: Client, schedule_id: str) -> str | None:
    """The checksum of the artifact the schedule ``schedule_id`` runs, read back."""
    description = await client.get_schedule_handle(schedule_id).describe()
    artifact = await artifact_of(client, description)
    return None if artifact is None else artifact_sha256(artifact)
