"""Dream schedules through the Temporal Python client (the same thing the README's
`temporal schedule ...` commands do from the CLI). `list_schedules` reads every schedule
of the namespace as `memoryctl schedule list` shows it: dreams, fleet dreams, the
automations applied proposals install, anything else by its workflow type, each with
the cron rendered back from the server's calendars (memoryctl/schedule_specs.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from temporalio.api.errordetails.v1 import NamespaceNotFoundFailure
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
)
from temporalio.service import RPCError, RPCStatusCode

from memoryctl.schedule_specs import jitter_text, spec_text
from memoryctl.usage import without_typed_values
from runtime.search_attributes import MEMORY_REF
from runtime.settings import Settings
from runtime.workflow_ids import workflow_ids_for
from schemas.errors import InvalidInput
from schemas.fleet import FleetDreamInput
from schemas.memory_ref import MemoryRef, parse_memory_ref, try_parse_memory_ref
from schemas.workflow_io import AgentRunInput, DreamInput
from workflows.dream import DreamWorkflow
from workflows.policies import DREAM_EXECUTION_TIMEOUT

DEFAULT_CRON = "0 23 * * *"
# How the server starts its INVALID_ARGUMENT message for a spec it cannot parse. Our spec
# holds nothing but the cron expression, so such a rejection is always about --cron.
_SPEC_REJECTED = "Invalid schedule spec: "


class ScheduleError(Exception):
    """The server refused an operation on one schedule; the message is one line naming
    the schedule id."""

    # memoryctl prints the message and exits with this status. An attribute rather than
    # a class memoryctl imports: its error path must not load Temporal or workflow code
    # for a database command.
    exit_status = 1


class ScheduleNotFound(ScheduleError):
    def __init__(self, schedule_id: str) -> None:
        super().__init__(f"schedule id {schedule_id!r}: no such schedule")
        self.schedule_id = schedule_id


class ScheduleExists(ScheduleError):
    def __init__(self, schedule_id: str) -> None:
        super().__init__(f"schedule id {schedule_id!r}: a schedule with this id already exists")
        self.schedule_id = schedule_id


def schedule_id_for(memory_ref: MemoryRef | str) -> str:
    """dream:<tenant>:<agent>[:<scope>], one id per memoryRef and never another's.

    ':' cannot occur inside a memoryRef segment (schemas/memory_ref.py), so splitting the
    id on ':' gives back the segments: distinct refs always get distinct ids. (Joining
    with '-', which segments may contain, sent mem://a-b/c and mem://a/b-c to one id.)
    Schedules created under the old dream-<tenant>-<agent> ids keep those ids; this
    function no longer names them. With payload encryption the id is opaque instead
    (runtime/workflow_ids.py).
    """
    return workflow_ids_for(Settings()).schedule(memory_ref)


def _namespace_missing(error: RPCError) -> bool:
    # NOT_FOUND also answers for an unknown namespace; that is not about the schedule.
    return any(
        detail.Is(NamespaceNotFoundFailure.DESCRIPTOR) for detail in error.grpc_status.details
    )


@contextmanager
def _server_refusals(schedule_id: str, cron: str | None = None) -> Iterator[None]:
    """Turn the server's refusals about one schedule into errors naming the field."""
    try:
        yield
    except ScheduleAlreadyRunningError:  # the client's name for ALREADY_EXISTS on create
        raise ScheduleExists(schedule_id) from None
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND and not _namespace_missing(error):
            raise ScheduleNotFound(schedule_id) from None
        if (
            cron is not None
            and error.status == RPCStatusCode.INVALID_ARGUMENT
            and error.message.startswith(_SPEC_REJECTED)
        ):
            # The server's reason may quote the expression or a field of it: neither is
            # repeated (what was typed may be anything, memoryctl/usage.py).
            reason = without_typed_values(
                error.message.removeprefix(_SPEC_REJECTED), [cron, *cron.split()], ()
            )
            raise InvalidInput("cron", f"not a valid cron expression ({reason})") from None
        raise


MAX_CRON_CHARS = 256
CRON_FIELDS = 5
# A time zone prefix the server accepts before the fields (CRON_TZ=Europe/Paris ...).
_CRON_TZ = re.compile(r"^(?:CRON_TZ|TZ)=\S+\s*")


def _check_cron(cron: str) -> None:
    """What the server cannot even be sent (a lone surrogate fails protobuf encoding with
    a traceback) or should not store (control characters, a novel), refused here; the
    rest of the grammar is the server's."""
    if len(cron) > MAX_CRON_CHARS:
        raise InvalidInput("cron", f"at most {MAX_CRON_CHARS} characters")
    # isprintable() is False for control characters and lone surrogates alike.
    if not cron.replace("\t", " ").isprintable():
        raise InvalidInput("cron", "printable text only (a cron expression)")
    fields = _CRON_TZ.sub("", cron.strip()).split()
    if fields and not fields[0].startswith("@") and len(fields) != CRON_FIELDS:
        # The server reads 6 or 7 fields as a leading seconds field or a trailing year,
        # so a Quartz-style "0 0 23 * * *" (23:00 daily, seconds first) would silently
        # become midnight on the 23rd of every month.
        raise InvalidInput(
            "cron",
            f"{CRON_FIELDS} fields (minute hour day-of-month month day-of-week), got "
            f"{len(fields)}; no seconds or year field",
        )


@dataclass(frozen=True)
class ScheduleRow:
    """One schedule of the namespace, as `memoryctl schedule list` shows it."""

    schedule_id: str
    # dream, fleet dream, automation, or the workflow type of anything else.
    kind: str
    # The memoryRef of a dream or an automation, "tenant <t>" or "every tenant" for a
    # fleet dream, "-" when the schedule does not say.
    target: str
    memory_ref: str | None
    cron: str
    jitter: str | None
    next_run: str
    paused: bool


_KINDS = {"DreamWorkflow": "dream", "FleetDreamWorkflow": "fleet dream"}
AUTOMATION_WORKFLOW = "AgentRunWorkflow"
# Schedules described at once: one describe per schedule, the input is not in the listing.
_DESCRIBES_AT_ONCE = 8


async def create_dream_schedule(
    client: Client,
    memory_ref: MemoryRef | str,
    *,
    task_queue: str,
    token_budget: int | None = None,
    cron: str = DEFAULT_CRON,
    schedule_id: str | None = None,
) -> str:
    """Create the schedule. Five fields, or a descriptor (@daily, @every 2h), optionally
    after CRON_TZ=; beyond the field count the server is the one cron parser, and its
    rejection comes back as InvalidInput('cron')."""
    request = DreamInput(memory_ref=str(parse_memory_ref(memory_ref)), token_budget=token_budget)
    _check_cron(cron)
    schedule_id = schedule_id or schedule_id_for(memory_ref)
    with _server_refusals(schedule_id, cron=cron):
        await client.create_schedule(
            schedule_id,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    DreamWorkflow.run,
                    request,
                    id=schedule_id,
                    task_queue=task_queue,
                    # A stuck run would otherwise hold the Skip-overlap schedule forever.
                    execution_timeout=DREAM_EXECUTION_TIMEOUT,
                ),
                spec=ScheduleSpec(cron_expressions=[cron]),
                # A tick that finds the previous dream still running is skipped.
                policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
            ),
            # str(): the input model may hold a parsed MemoryRef; the memo shows the text.
            memo={"memoryRef": str(request.memory_ref), "cron": cron},
        )
    return schedule_id


async def list_schedules(client: Client) -> list[ScheduleRow]:
    """Every schedule of the namespace, by id: dreams, fleet dreams, the automations
    applied proposals installed, and whatever else, whoever created it (memoryctl, the
    `temporal` CLI, the proposal workflow)."""
    ids = [listed.id async for listed in await client.list_schedules()]
    limit = asyncio.Semaphore(_DESCRIBES_AT_ONCE)

    async def row_of(schedule_id: str) -> ScheduleRow | None:
        async with limit:
            return await _row(client, schedule_id)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(row_of(schedule_id)) for schedule_id in ids]
    rows = [row for task in tasks if (row := task.result()) is not None]
    return sorted(rows, key=lambda r: r.schedule_id)


async def _row(client: Client, schedule_id: str) -> ScheduleRow | None:
    try:
        with _server_refusals(schedule_id):
            description = await client.get_schedule_handle(schedule_id).describe()
    except ScheduleNotFound:
        return None  # deleted between listing and describing: it is gone, not an error
    schedule = description.schedule
    try:
        memo = await description.memo()
    except Exception:  # another application's memo (its own codec): one row says less
        memo = {}
    action = schedule.action
    workflow = action.workflow if isinstance(action, ScheduleActionStartWorkflow) else None
    kind = _kind(schedule_id, workflow, memo)
    memory_ref = tenant = None
    if isinstance(action, ScheduleActionStartWorkflow):
        if kind == "fleet dream":
            tenant = await _fleet_tenant(client, action)
        else:
            memory_ref = await _scheduled_ref(client, kind, action)
    # The input names the memoryRef whoever created the schedule (the `temporal` CLI
    # sets no memo); memoryctl's memo is the fallback.
    memory_ref = memory_ref or _text(memo.get("memoryRef"))
    if kind == "fleet dream":
        target = "-" if tenant is None else (f"tenant {tenant}" if tenant else "every tenant")
    else:
        target = memory_ref or "-"
    next_times = description.info.next_action_times
    return ScheduleRow(
        schedule_id=schedule_id,
        kind=kind,
        target=target,
        memory_ref=memory_ref,
        # memoryctl's memo holds the expression as typed (@daily stays @daily); any
        # other schedule's is rendered back from the calendars the server stores.
        cron=_text(memo.get("cron")) or spec_text(schedule.spec),
        jitter=jitter_text(schedule.spec),
        next_run=next_times[0].isoformat() if next_times else "-",
        paused=schedule.state.paused,
    )


def _kind(schedule_id: str, workflow: str | None, memo: Mapping[str, Any]) -> str:
    if workflow == AUTOMATION_WORKFLOW and (
        # How activities/proposal_activities.py installs an applied proposal: the id
        # from runtime/workflow_ids.py (opaque after the slash with payload encryption)
        # and the proposal in the memo.
        schedule_id.startswith("automation/") or "proposalId" in memo
    ):
        return "automation"
    if workflow is None:
        return "-"
    return _KINDS.get(workflow, workflow)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


T = TypeVar("T")


async def _decoded(client: Client, action: ScheduleActionStartWorkflow, model: type[T]) -> T | None:
    if not action.args:
        return None
    try:
        (request,) = await client.data_converter.decode(list(action.args)[:1], [model])
    except Exception:  # an input this version cannot read: the fallbacks say what they can
        return None
    return request if isinstance(request, model) else None


async def _scheduled_ref(
    client: Client, kind: str, action: ScheduleActionStartWorkflow
) -> str | None:
    request: DreamInput | AgentRunInput | None = None
    if kind == "dream":
        request = await _decoded(client, action, DreamInput)
    elif action.workflow == AUTOMATION_WORKFLOW:
        request = await _decoded(client, action, AgentRunInput)
    if request is not None:
        return str(request.memory_ref)
    # Runs about one memoryRef carry it as a search attribute (an automation's do).
    return _text(action.typed_search_attributes.get(MEMORY_REF))


async def _fleet_tenant(client: Client, action: ScheduleActionStartWorkflow) -> str | None:
    """The tenant a fleet schedule dreams; "" for every tenant; None when unreadable."""
    request = await _decoded(client, action, FleetDreamInput)
    if request is None:
        return None
    return request.tenant or ""


def fleet_overlaps(rows: list[ScheduleRow]) -> list[tuple[ScheduleRow, ScheduleRow]]:
    """(per-agent dream, fleet dream) pairs that both dream one memoryRef, neither paused:
    what the README says not to keep ("either the fleet schedule or per-agent schedules
    for an agent, not both")."""
    fleets = [r for r in rows if r.kind == "fleet dream" and not r.paused and r.target != "-"]
    pairs = []
    for row in rows:
        ref = try_parse_memory_ref(row.memory_ref) if row.kind == "dream" else None
        if ref is None or row.paused:
            continue
        pairs += [
            (row, fleet)
            for fleet in fleets
            if fleet.target in ("every tenant", f"tenant {ref.tenant}")
        ]
    return pairs


async def trigger_dream_schedule(client: Client, schedule_id: str) -> None:
    with _server_refusals(schedule_id):
        await client.get_schedule_handle(schedule_id).trigger()


async def delete_dream_schedule(client: Client, schedule_id: str) -> None:
    with _server_refusals(schedule_id):
        await client.get_schedule_handle(schedule_id).delete()
