"""Hostile workflow input (issue 12, the Temporal surface): Hypothesis draws inputs for
every workflow the worker runs -- hostile memoryRefs (look-alikes, traversal, NUL,
surrogates, oversize), token budgets (0, negative, fractional, strings, huge, 2^63,
booleans), unknown keys, wrong types, huge strings, nested garbage -- sent as the
Python client sends them, as raw JSON text the Temporal CLI could send (NaN, lone
surrogate escapes, invalid UTF-8), as payloads that are not JSON at all (binary/null,
raw bytes, protobuf, unknown or missing encodings) and with the wrong number of
arguments (the CLI without --input).

Two layers:
- 2,000 cases (tests/support/fuzzing.py) through the exact decode path of the worker
  (the project's data converter decoding the payloads the client would send, with the type
  hints the SDK passes, then the worker's argument check): each either decodes to the
  workflow's input model or raises a non-retryable ApplicationError (the SDK fails the
  *workflow* with it; anything else fails the workflow task, retried forever) naming the
  field, without any of the input's text.
- a few hundred of them started for real on the dev server, concurrently, by workflow
  type name with raw dicts and raw payloads: each run is FAILED within seconds, with no
  failed workflow task and no activity, a failure that names the field, no input text in
  any event after the start, and the store byte-for-byte unchanged.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.json_format import MessageToJson
from hypothesis import HealthCheck, event, given
from hypothesis import strategies as st
from pydantic import BaseModel
from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from runtime.binaries import temporal_cli
from runtime.converter import UNKNOWN_KEY, data_converter
from runtime.history_audit import searchable_text
from runtime.workflow_input import check_workflow_arguments
from schemas.errors import NON_RETRYABLE_CODES
from tests.support.fuzzing import fuzz_settings
from tests.support.hostile_input import (
    MARKER,
    hostile_refs,
    hostile_text,
    huge_text,
    json_values,
    token_budgets,
)
from tests.support.scan import fingerprint
from workflows.registry import ALL_WORKFLOWS

pytestmark = pytest.mark.slow

REAL_STARTS = 350  # about 50 per workflow, started concurrently
START_CONCURRENCY = 48
FAIL_WITHIN_S = 30.0  # per run, while all of them run at once on 2 cores
REF = "mem://fz-tenant/agent-1"
MARKERS = (MARKER, json.dumps(MARKER)[1:-1])  # as typed, and as JSON escapes it
CODES = {code.value for code in NON_RETRYABLE_CODES}


def _definitions() -> dict[str, tuple[Callable[..., Any], type[BaseModel]]]:
    """workflow type name -> (run method, input model), as the worker registers them."""
    found: dict[str, tuple[Callable[..., Any], type[BaseModel]]] = {}
    for cls in ALL_WORKFLOWS:
        definition = workflow._Definition.must_from_class(cls)
        assert definition.name and definition.arg_types and len(definition.arg_types) == 1
        model = definition.arg_types[0]
        assert isinstance(model, type) and issubclass(model, BaseModel)
        found[definition.name] = (definition.run_fn, model)
    return found


WORKFLOWS = _definitions()
ALIASES = {
    name: {info.alias or field for field, info in model.model_fields.items()}
    for name, (_, model) in WORKFLOWS.items()
}

# ------------------------------------------------------------------------ strategies

ids = st.sampled_from(["e1", "", "..", "q" * 200, "a\x00b", "a/b", " e1"]) | hostile_text
FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "memoryRef": hostile_refs("fz-tenant") | st.just(REF),
    "tokenBudget": token_budgets | st.just(8000),
    "commitmentId": st.sampled_from(["cmt-abc123", "cmt-", "CMT-ABC", "cmt-xyz", "cmt-" + "a" * 70])
    | hostile_text,
    "dueAt": st.sampled_from(
        ["2026-11-24T10:00:00Z", "2026-11-24T10:00:00", "tomorrow", "", "9999-99-99", 0, 1e20]
    )
    | hostile_text,
    "sources": st.lists(ids, max_size=4) | st.just(["e"] * 1001) | json_values,
    "memoryIds": st.lists(ids, max_size=4) | st.just(["e"] * 1001) | json_values,
    "trigger": st.sampled_from(["on-demand", "scheduled", "Scheduled", "", None]) | hostile_text,
    "whenNothingFits": st.sampled_from(["fail", "defer", "FAIL", "", None]) | hostile_text,
    "timeZone": st.sampled_from(["UTC", "Europe/Berlin", "Mars/Olympus", "../etc/localtime"])
    | hostile_text,
    "indexEmitted": st.sampled_from([True, False, "true", 1, 0, None]),
    "enqueueRuns": st.sampled_from([True, False, "true", "yes", 1, 2, None]),
    "graceSeconds": token_budgets,
    "cadenceSeconds": token_budgets,
    "evaluations": token_budgets,
    "fires": token_budgets,
}
unknown_keys = (
    st.sampled_from(["tokenbudget", "memory_ref", "MemoryRef", "token_budget", "extra", ""])
    | hostile_text
)


def _body(workflow_name: str) -> st.SearchStrategy[Any]:
    fields = {
        alias: FIELD_VALUES.get(alias, json_values) | json_values | huge_text
        for alias in ALIASES[workflow_name]
    }
    objects = st.fixed_dictionaries({}, optional=fields).flatmap(
        lambda body: (
            st.dictionaries(unknown_keys, json_values, max_size=2).map(
                lambda unknown: {**body, **unknown}
            )
            | st.just(body)
        )
    )
    return objects | json_values | huge_text | hostile_refs("fz-tenant")


def _json_payload(value: Any, ascii_only: bool) -> Payload:
    """The bytes a client could send for ``value``: NaN and lone surrogates as the JSON
    text of Python's encoder, or (not ASCII-escaped) as invalid UTF-8."""
    text = json.dumps(value, allow_nan=True, ensure_ascii=ascii_only)
    return Payload(metadata={"encoding": b"json/plain"}, data=text.encode("utf-8", "surrogatepass"))


raw_payloads = st.builds(
    lambda encoding, data: Payload(metadata=encoding, data=data),
    st.sampled_from(
        [
            {"encoding": b"binary/null"},
            {"encoding": b"binary/plain"},
            {"encoding": b"json/protobuf", "messageType": b"temporal.api.common.v1.Payload"},
            {"encoding": b"binary/protobuf", "messageType": b"temporal.api.common.v1.Payload"},
            {"encoding": b"json/plain"},
            {"encoding": MARKER.encode()},
            {"encoding": b"weird/x"},
            {},
        ]
    ),
    st.binary(max_size=48) | st.just(b"") | st.just(b"{}") | st.just(b'{"memoryRef": 1'),
)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, list[Payload], Any]:
    """(workflow type, how it is sent, payloads, the JSON value when there is one)."""
    name = draw(st.sampled_from(sorted(WORKFLOWS)))
    how = draw(st.sampled_from(["client", "json", "json", "raw", "arity"]))
    if how == "raw":
        return name, how, [draw(raw_payloads)], None
    if how == "arity":
        count = draw(st.sampled_from([0, 0, 2, 3]))
        values = [draw(_body(name)) for _ in range(count)]
        return name, how, [_json_payload(v, True) for v in values], values
    value = draw(_body(name))
    if how == "client":
        try:  # what the Python client sends for a dict (pydantic JSON)
            return name, how, data_converter.payload_converter.to_payloads([value]), value
        except Exception:  # the client cannot encode it (a lone surrogate): send raw text
            how = "json"
    return name, how, [_json_payload(value, draw(st.booleans()))], value


# ------------------------------------------------------------------------ checks


async def decode_like_the_worker(name: str, payloads: list[Payload]) -> list[Any]:
    """What the worker does with a start's payloads before any workflow code runs: the
    data converter (codec, then payload converter) with the run method's type hints, which
    the SDK passes only when the count matches and skips for no payloads at all, then the
    worker's argument check (runtime/workflow_input.py)."""
    run_fn, model = WORKFLOWS[name]
    hints = [model] if len(payloads) == 1 else None
    values = await data_converter.decode(payloads, hints) if payloads else []
    check_workflow_arguments(run_fn, values)
    return values


def check_refusal(name: str, error: ApplicationError, value: Any) -> str:
    """A refusal that fails the workflow at once, names the field and quotes nothing."""
    assert error.non_retryable, (name, error.message)
    assert error.type in CODES, (name, error.type)
    shown = f"{error.message}\n{error.details!r}"
    assert not any(m in shown for m in MARKERS), (name, shown)
    assert len(error.message) < 2_000, (name, len(error.message))
    fields = error.details[0]["fields"] if error.details else []
    assert fields, (name, error.message)
    sent_keys = set(value) if isinstance(value, dict) else set()
    for field in fields:
        assert field in error.message, (name, field, error.message)
        top = field.split(".")[0]
        # A field of the input, the input as a whole, or a key that was sent.
        assert top in ALIASES[name] | {"input", UNKNOWN_KEY} or top in sent_keys, (name, field)
    return str(fields[0]).split(".")[0]


@fuzz_settings(suppress=[HealthCheck.data_too_large])  # 200 kB texts on purpose
@given(case=cases())
async def test_hostile_inputs_decode_or_fail_the_workflow_naming_the_field(case) -> None:
    name, how, payloads, value = case
    try:
        values = await decode_like_the_worker(name, payloads)
    except ApplicationError as error:
        field = check_refusal(name, error, value)
        event(f"{name} {how}: {error.type} {field if field in ALIASES[name] else '-'}")
        return
    # Anything else would fail the workflow task instead of the workflow: not caught.
    _, model = WORKFLOWS[name]
    assert len(values) == 1 and isinstance(values[0], model)
    event(f"{name} {how}: valid")


# ------------------------------------------------------------------------ real starts


def _collect(count: int) -> list[tuple[str, str, list[Payload], Any]]:
    """``count`` drawn cases, from the run's seed (tests/support/fuzzing.py)."""
    drawn: list[tuple[str, str, list[Payload], Any]] = []

    @fuzz_settings(max_examples=count * 3, suppress=list(HealthCheck))
    @given(case=cases())
    def collect(case: tuple[str, str, list[Payload], Any]) -> None:
        if len(drawn) < count:
            drawn.append(case)

    collect()
    return drawn


async def _refused_locally(case: tuple[str, str, list[Payload], Any]) -> bool:
    try:
        await decode_like_the_worker(case[0], case[2])
    except ApplicationError:
        return True
    return False


def _later_events_text(events: list[Any]) -> str:
    # Event 1 (WorkflowExecutionStarted) holds the input itself; nothing after it may.
    return "\n".join(searchable_text(MessageToJson(e)) for e in events[1:])


async def test_hostile_starts_fail_within_seconds_and_change_nothing(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, engine
) -> None:
    client = temporal_env.client
    drawn = _collect(REAL_STARTS * 2)
    cases_ = [c for c in drawn if await _refused_locally(c)][:REAL_STARTS]
    assert len(cases_) == REAL_STARTS
    before = await fingerprint(engine)
    gate = asyncio.Semaphore(START_CONCURRENCY)
    outcomes: dict[str, int] = {}

    async def start_and_check(n: int, case: tuple[str, str, list[Payload], Any]) -> None:
        name, how, payloads, value = case
        # By type name, as the Temporal CLI does: a dict the client encodes itself, or
        # the raw payloads as they are.
        if how == "client":
            args: list[Any] = [value]
        else:
            args = [RawValue(p) for p in payloads]
        async with gate:
            handle = await client.start_workflow(
                name,
                args=args,
                id=f"fz-{n}-{uuid.uuid4().hex[:6]}",
                task_queue=worker_task_queue,
            )
            try:
                await asyncio.wait_for(handle.result(), FAIL_WITHIN_S)
            except WorkflowFailureError as failure:
                error = failure.cause
            except TimeoutError:
                status = (await handle.describe()).status
                await handle.terminate()
                raise AssertionError(f"case {n} ({name} {how}) still {status}") from None
            else:
                raise AssertionError(f"case {n} ({name} {how}) completed")
            assert isinstance(error, ApplicationError), (n, name, how, error)
            check_refusal(name, error, value)
            events = [e async for e in handle.fetch_history_events()]
        kinds = [e.event_type for e in events]
        assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds, (n, name, how)
        assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in kinds, (n, name, how)
        assert EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED not in kinds
        assert kinds[-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, (n, name, how)
        assert (await handle.describe()).status == WorkflowExecutionStatus.FAILED
        later = _later_events_text(events)
        assert not any(m in later for m in MARKERS), (n, name, how)
        outcomes[f"{name} {how}"] = outcomes.get(f"{name} {how}", 0) + 1

    await asyncio.gather(*(start_and_check(n, c) for n, c in enumerate(cases_)))
    print(f"{REAL_STARTS} hostile starts, all FAILED: {sorted(outcomes.items())}")
    assert await fingerprint(engine) == before


@pytest.mark.parametrize(
    "inputs",
    [[], ["null"], [json.dumps({"memoryRef": REF}), json.dumps({"memoryRef": REF})]],
    ids=["no-input", "null", "two-inputs"],
)
async def test_temporal_cli_start_without_one_input_fails_the_run(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, inputs: list[str]
) -> None:
    """What an operator types most often by mistake: `temporal workflow start` without
    --input (or with two) used to leave the run RUNNING, its workflow task retried."""
    address = temporal_env.client.service_client.config.target_host
    workflow_id = f"fz-cli-{uuid.uuid4().hex[:8]}"
    command = [temporal_cli(), "workflow", "start", "--address", address, "--type"]
    command += ["DreamWorkflow", "--task-queue", worker_task_queue, "--workflow-id", workflow_id]
    for text in inputs:
        command += ["--input", text]
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, stderr
    handle = temporal_env.client.get_workflow_handle(workflow_id)
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 15)
    error = info.value.cause
    assert isinstance(error, ApplicationError) and error.non_retryable
    assert error.type == "invalid_input" and "input" in error.message
    kinds = [e.event_type async for e in handle.fetch_history_events()]
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds
