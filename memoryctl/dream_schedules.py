"""Dream schedules through the Temporal Python client (the same thing the README's
`temporal schedule ...` commands do from the CLI)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

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

from memoryctl.usage import without_typed_values
from runtime.settings import Settings
from runtime.workflow_ids import workflow_ids_for
from schemas.errors import InvalidInput
from schemas.memory_ref import MemoryRef, parse_memory_ref
from schemas.workflow_io import DreamInput
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
    schedule_id: str
    memory_ref: str
    cron: str
    next_run: str


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


async def list_dream_schedules(client: Client) -> list[ScheduleRow]:
    rows = []
    async for listed in await client.list_schedules():
        try:
            with _server_refusals(listed.id):
                description = await client.get_schedule_handle(listed.id).describe()
        except ScheduleNotFound:
            continue  # deleted between listing and describing: it is gone, not an error
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
                # The input names the memoryRef whoever created the schedule (the
                # `temporal` CLI sets no memo); the memo is the fallback.
                memory_ref=await _scheduled_ref(client, action) or str(memo.get("memoryRef", "?")),
                cron=str(memo.get("cron", "(calendar)")),
                next_run=next_times[0].isoformat() if next_times else "-",
            )
        )
    return sorted(rows, key=lambda r: r.schedule_id)


async def _scheduled_ref(client: Client, action: ScheduleActionStartWorkflow) -> str | None:
    if not action.args:
        return None
    try:
        (request,) = await client.data_converter.decode(list(action.args)[:1], [DreamInput])
    except Exception:  # an input this version cannot read: show the memo instead
        return None
    return str(request.memory_ref)


async def trigger_dream_schedule(client: Client, schedule_id: str) -> None:
    with _server_refusals(schedule_id):
        await client.get_schedule_handle(schedule_id).trigger()


async def delete_dream_schedule(client: Client, schedule_id: str) -> None:
    with _server_refusals(schedule_id):
        await client.get_schedule_handle(schedule_id).delete()
