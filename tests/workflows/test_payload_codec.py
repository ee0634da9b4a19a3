"""Payload encryption (runtime/payload_codec.py, runtime/payload_keys.py): with a keys
file, no Temporal history holds memory content, an entry id or a memoryRef outside the
MemoryRef/Tenant search attributes; the same keys decode and replay it; rotation keeps
old payloads readable; deleting a tenant's keys makes its payloads unreadable
(crypto-shredding) and leaves other tenants' readable."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import Failure
from temporalio.client import Client, WorkflowFailureError, WorkflowHistory
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer
from typer.testing import CliRunner

from memory.store import PostgresMemoryStore
from memoryctl.main import app as memoryctl
from runtime.converter import data_converter, data_converter_for
from runtime.payload_codec import ENCODING, KEY_ID, PayloadDecryptionError
from runtime.payload_keys import PayloadKeysError, load_keyring
from runtime.settings import Settings
from runtime.workflow_ids import PLAIN, workflow_ids_for
from schemas.memory_entry import Tier
from schemas.workflow_io import DistillationInput, DreamInput, DreamResult
from tests.support.encryption import (
    clear_text,
    encrypted_worker,
    search_attribute_text,
    settings_for,
    write_keys,
)
from tests.support.factories import canary, note
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow
from workflows.registry import ALL_WORKFLOWS


def _tenant() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


def _settings(keys: Path) -> Settings:
    return Settings(AGENT_MEMORY_PAYLOAD_KEYS_FILE=str(keys))


async def _encode(settings: Settings, value: object) -> Payload:
    [payload] = await data_converter_for(settings).encode([value])
    return payload


async def _decode(settings: Settings, payload: Payload) -> object:
    [value] = await data_converter_for(settings).decode([payload])
    return value


def _cli(*args: str) -> None:
    result = CliRunner().invoke(memoryctl, ["payload-keys", *args])
    assert result.exit_code == 0, result.output


# ------------------------------------------------------------------ keys and codec


async def test_a_payload_is_sealed_under_the_key_of_the_tenant_it_names(tmp_path: Path) -> None:
    acme, globex = _tenant(), _tenant()
    settings = _settings(write_keys(tmp_path / "keys.json", [acme, globex]))
    ref = f"mem://{acme}/agent-1"
    value = {"request": {"memoryRef": ref, "ids": ["e-1", "e-2"]}}

    sealed = await _encode(settings, value)
    assert sealed.metadata["encoding"] == ENCODING
    assert sealed.metadata[KEY_ID] == f"{acme}-1".encode()
    assert ref.encode() not in sealed.data and b"e-1" not in sealed.data
    assert await _decode(settings, sealed) == value
    # A ref inside a sentence (a summary) counts too; a payload naming none is the system's.
    summary = await _encode(settings, f"distill mem://{globex}/agent-1.")
    assert summary.metadata[KEY_ID] == f"{globex}-1".encode()
    assert (await _encode(settings, {"count": 3})).metadata[KEY_ID] == b"sys-1"
    # A relabelled key id fails authentication instead of decrypting.
    forged = Payload(metadata={**sealed.metadata, KEY_ID: f"{globex}-1".encode()}, data=sealed.data)
    with pytest.raises(PayloadDecryptionError, match=f"{globex}-1"):
        await _decode(settings, forged)


async def test_failure_messages_and_stack_traces_are_encrypted(tmp_path: Path) -> None:
    acme = _tenant()
    settings = _settings(write_keys(tmp_path / "keys.json", [acme]))
    converter = data_converter_for(settings)
    ref = f"mem://{acme}/agent-1"
    failure = Failure()
    try:
        raise ApplicationError(f"could not distill {ref}", {"memoryRef": ref}, type="internal")
    except ApplicationError as error:
        await converter.encode_failure(error, failure)
    assert failure.message == "Encoded failure" and failure.stack_trace == ""
    assert ref.encode() not in failure.SerializeToString()
    assert failure.application_failure_info.type == "internal"  # the code stays readable
    decoded = await converter.decode_failure(failure)
    assert isinstance(decoded, ApplicationError) and decoded.message == f"could not distill {ref}"


async def test_rotation_keeps_old_payloads_readable(tmp_path: Path) -> None:
    acme = _tenant()
    keys = write_keys(tmp_path / "keys.json", [acme])
    settings = _settings(keys)
    ref = f"mem://{acme}/agent-1"
    old = await _encode(settings, {"memoryRef": ref, "n": 1})
    old_system = await _encode(settings, {"n": 1})
    ids_before = workflow_ids_for(settings).distillation(ref)

    _cli("rotate", "--file", str(keys), "--tenant", acme)
    _cli("rotate", "--file", str(keys), "--system")

    new = await _encode(settings, {"memoryRef": ref, "n": 2})
    assert new.metadata[KEY_ID] == f"{acme}-2".encode()
    assert (await _encode(settings, {"n": 2})).metadata[KEY_ID] == b"sys-2"
    assert await _decode(settings, old) == {"memoryRef": ref, "n": 1}
    assert await _decode(settings, old_system) == {"n": 1}
    assert await _decode(settings, new) == {"memoryRef": ref, "n": 2}
    # Workflow ids survive a system-key rotation: one distillation per ref still holds.
    assert workflow_ids_for(settings).distillation(ref) == ids_before
    # What list shows a person: ids, not a Python list (issue 41).
    listed = CliRunner().invoke(memoryctl, ["payload-keys", "list", "--file", str(keys)])
    assert f"tenant {acme}: active {acme}-2; keys {acme}-1, {acme}-2" in listed.output
    assert "system: active sys-2; keys sys-1, sys-2" in listed.output


async def test_deleting_a_tenants_keys_shreds_its_payloads_only(tmp_path: Path) -> None:
    acme, globex = _tenant(), _tenant()
    keys = write_keys(tmp_path / "keys.json", [acme, globex])
    settings = _settings(keys)
    secret = canary()
    acme_payload = await _encode(settings, {"memoryRef": f"mem://{acme}/a", "note": secret})
    globex_payload = await _encode(settings, {"memoryRef": f"mem://{globex}/a"})
    system_payload = await _encode(settings, {"count": 7})

    _cli("shred", "--file", str(keys), "--tenant", acme)

    with pytest.raises(PayloadDecryptionError) as refused:
        await _decode(settings, acme_payload)
    message = str(refused.value)
    assert f"{acme}-1" in message and "not configured" in message
    assert refused.value.key_id == f"{acme}-1"
    assert secret not in message and acme_payload.data.hex()[:16] not in message
    assert await _decode(settings, globex_payload) == {"memoryRef": f"mem://{globex}/a"}
    assert await _decode(settings, system_payload) == {"count": 7}
    # New payloads of the shredded tenant fall back to the system key (no key of its own).
    again = await _encode(settings, {"memoryRef": f"mem://{acme}/a"})
    assert again.metadata[KEY_ID] == b"sys-1"


def test_a_malformed_keys_file_names_the_field_never_the_key(tmp_path: Path) -> None:
    short = "c2hvcnQta2V5LW1hdGVyaWFs"  # base64, but 18 bytes
    long_key = "A" * 43 + "="
    cases = {
        json.dumps({"system": {"active": "s", "keys": {"s": short}}}): "system.keys.s",
        json.dumps({"system": {"active": "x", "keys": {"s": long_key}}}): "active must name",
        '{"tenants": {}}': "system",
        "{not json": "not valid JSON",
    }
    for text, named in cases.items():
        path = tmp_path / "keys.json"
        path.write_text(text)
        with pytest.raises(PayloadKeysError) as error:
            load_keyring(path)
        assert named in str(error.value), str(error.value)
        assert short not in str(error.value) and "AAAA" not in str(error.value)


async def test_encode_and_decode_cost(tmp_path: Path) -> None:
    """Prints the codec's cost per payload (a typical activity request: ids and a ref)."""
    acme = _tenant()
    settings = _settings(write_keys(tmp_path / "keys.json", [acme]))
    converter = data_converter_for(settings)
    codec = converter.payload_codec
    assert codec is not None
    value = {"memoryRef": f"mem://{acme}/agent-1", "ids": [str(uuid.uuid4()) for _ in range(20)]}
    [plain] = data_converter.payload_converter.to_payloads([value])
    rounds = 2000
    started = time.perf_counter()
    sealed = [(await codec.encode([plain]))[0] for _ in range(rounds)]
    encoded = (time.perf_counter() - started) / rounds
    started = time.perf_counter()
    for payload in sealed:
        await codec.decode([payload])
    decoded = (time.perf_counter() - started) / rounds
    print(
        f"\nAES-GCM codec, {len(plain.data)} B payload: encode {encoded * 1e6:.1f} us, "
        f"decode {decoded * 1e6:.1f} us"
    )
    assert encoded < 1e-3 and decoded < 1e-3  # far below a workflow task's cost


# ------------------------------------------------------------------ end to end


async def _histories(client: Client, workflow_ids: list[str]) -> dict[str, WorkflowHistory]:
    return {wid: await client.get_workflow_handle(wid).fetch_history() for wid in workflow_ids}


def _child_ids(history: WorkflowHistory) -> list[str]:
    return [
        event.start_child_workflow_execution_initiated_event_attributes.workflow_id
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    ]


async def test_an_encrypted_dream_leaves_no_ref_id_or_canary_in_history(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, tmp_path: Path
) -> None:
    tenant = _tenant()
    agent = f"agent-{uuid.uuid4().hex[:8]}"
    ref = f"mem://{tenant}/{agent}"
    settings = settings_for(temporal_env, write_keys(tmp_path / "keys.json", [tenant]))
    secrets_ = [canary() for _ in range(4)]
    episodic = await store.put_many(
        ref, [note(f"call {i} with the customer, code {secrets_[i % 2]}") for i in range(12)]
    )
    semantic = await store.put_many(
        ref,
        [
            note(f"The customer prefers invoices in EUR {secrets_[2]}", tier=Tier.SEMANTIC),
            note(f"Note: the customer prefers invoices in EUR {secrets_[2]}.", tier=Tier.SEMANTIC),
        ],
    )
    intentions = await store.put_many(
        ref,
        [
            note(f"Remind me in 5 days to renew the domain {secrets_[3]}"),
            note("Follow up when the contract is signed"),
        ],
    )
    entry_ids = [e.id for e in (*episodic, *semantic, *intentions)]
    ids = workflow_ids_for(settings)
    dream_id = ids.dream(ref)
    assert tenant not in dream_id and dream_id != PLAIN.dream(ref)

    async with encrypted_worker(settings, store) as client:
        result: DreamResult = await client.execute_workflow(
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=8000),
            id=dream_id,
            task_queue=settings.task_queue,
        )
        assert result.status == "completed" and result.distillation is not None
        # The watch starts; the reminder five days out waits for the horizon run.
        assert result.commitments is not None
        armed = result.commitments.armed
        assert (armed.started, armed.deferred) == (1, 1)
        commitments = [r.workflow_id for r in await store.commitments.list(ref) if r.workflow_id]
        assert len(commitments) == 1
        horizon_id = ids.commitment_horizon(ref)
        assert tenant not in horizon_id and horizon_id != PLAIN.commitment_horizon(ref)
        commitments.append(horizon_id)

        # Fetched with the plain client: no codec, what any reader of Temporal gets.
        plain = temporal_env.client
        dream_history = (await _histories(plain, [dream_id]))[dream_id]
        children = _child_ids(dream_history)
        # Consolidation and inference are the dream's own activities: one child.
        assert children == [ids.distillation(ref)]
        histories = {dream_id: dream_history, **await _histories(plain, children + commitments)}
        forbidden = {ref, agent, "mem://", *entry_ids, *secrets_}
        for workflow_id, history in histories.items():
            text = history.to_json()
            leaked = sorted(s for s in forbidden if s in clear_text(text))
            assert leaked == [], (workflow_id, leaked)
            assert ref in search_attribute_text(text), workflow_id  # the documented place
        # A failing run (an entry no budget of 1 token fits): its failure is encrypted.
        late = await store.put(ref, note(f"a late note {secrets_[0]}"))
        forbidden.add(late.id)
        with pytest.raises(WorkflowFailureError):
            await client.execute_workflow(
                DistillationWorkflow.run,
                DistillationInput(memory_ref=ref, token_budget=1),
                id=ids.distillation(ref),
                task_queue=settings.task_queue,
            )
        failing = await plain.get_workflow_handle(ids.distillation(ref)).fetch_history()
        assert sorted(s for s in forbidden if s in clear_text(failing.to_json())) == []
        failed = next(
            e.workflow_execution_failed_event_attributes.failure
            for e in failing.events
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED
        )
        assert failed.message == "Encoded failure" and failed.stack_trace == ""
        cause = failed.cause  # the activity's failure: the code readable, the rule sealed
        assert cause.application_failure_info.type == "token_budget_exceeded"
        assert cause.message == "Encoded failure" and "tokenBudget" not in str(cause)

        # The same keys decode every history and replay it (the plain converter cannot).
        # A time commitment held back by its start delay has run no workflow task yet:
        # its history is the started event alone, which has nothing to replay (and on
        # which the SDK's Replayer waits for ever), so its input is decoded instead.
        replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=data_converter_for(settings))
        for workflow_id, history in histories.items():
            if len(history.events) == 1:
                held = history.events[0].workflow_execution_started_event_attributes
                assert held.HasField("first_workflow_task_backoff"), workflow_id
                [argument] = await data_converter_for(settings).decode(held.input.payloads)
                assert argument["memoryRef"] == ref
                continue
            replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
            assert replayed.replay_failure is None, (workflow_id, replayed.replay_failure)
        started = dream_history.events[0].workflow_execution_started_event_attributes
        [decoded] = await data_converter_for(settings).decode(started.input.payloads)
        assert decoded["memoryRef"] == ref
        blind = Replayer(workflows=ALL_WORKFLOWS, data_converter=data_converter)
        refused = await blind.replay_workflow(dream_history, raise_on_replay_failure=False)
        assert refused.replay_failure is not None

        for workflow_id in commitments:  # long-running watches: end them with the test
            await client.get_workflow_handle(workflow_id).terminate("test over")
