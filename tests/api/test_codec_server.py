"""The codec server (api/codec_server.py) over real HTTP: a tenant's API key decodes that
tenant's payloads and nothing of another tenant's, CORS answers the Temporal UI's origin
only, no credentials is a 401, and the real `temporal workflow show --codec-endpoint`
shows a decoded history."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shlex
import subprocess
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.app import create_app
from api.services import ApiServices
from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.binaries import temporal_cli
from runtime.converter import data_converter_for
from runtime.payload_codec import ENCODING, KEY_ID
from runtime.settings import Settings
from runtime.workflow_ids import workflow_ids_for
from schemas.consolidation import ConsolidationInput
from tests.support.docs_blocks import block_commands, doc
from tests.support.encryption import clear_text, encrypted_worker, settings_for, write_keys
from tests.support.http_app import serving
from workflows.consolidation import ConsolidationWorkflow

UI_ORIGIN = "http://localhost:8233"


@dataclass
class Codec:
    url: str
    settings: Settings
    client: Client
    acme: str
    globex: str
    keys: dict[str, str]  # tenant -> API key


@pytest.fixture
async def codec(
    temporal_env: WorkflowEnvironment,
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    tmp_path: Path,
) -> AsyncIterator[Codec]:
    acme, globex = (f"t{uuid.uuid4().hex[:10]}" for _ in range(2))
    settings = settings_for(temporal_env, write_keys(tmp_path / "keys.json", [acme, globex]))
    async with encrypted_worker(settings, store) as client:

        async def temporal() -> Client:
            return client

        services = ApiServices.build(settings, engine, StaticSecretVault({}), temporal, store=store)
        keys = ApiKeyStore(engine)
        api_keys = {t: (await keys.create(t, name="codec")).key for t in (acme, globex)}
        async with serving(create_app(services)) as url:
            yield Codec(url, settings, client, acme, globex, api_keys)


def _wire(payload: Payload) -> dict[str, object]:
    return {
        "metadata": {k: base64.b64encode(v).decode() for k, v in payload.metadata.items()},
        "data": base64.b64encode(payload.data).decode(),
    }


def _data(answer: dict[str, object]) -> bytes:
    return base64.b64decode(str(answer["data"]))


async def _sealed(settings: Settings, *values: object) -> list[Payload]:
    return await data_converter_for(settings).encode(list(values))


async def test_a_tenants_key_decodes_its_payloads_and_no_other_tenants(codec: Codec) -> None:
    acme_ref, globex_ref = f"mem://{codec.acme}/a", f"mem://{codec.globex}/a"
    payloads = await _sealed(
        codec.settings,
        {"memoryRef": acme_ref, "ids": ["e-1"]},
        {"memoryRef": globex_ref, "ids": ["e-2"]},
        {"count": 3},
        # Names two tenants: sealed under the system key, decoded for neither.
        {"refs": [acme_ref, globex_ref]},
    )
    body = {"payloads": [_wire(p) for p in payloads]}
    async with httpx.AsyncClient(base_url=codec.url) as http:
        answer = await http.post(
            "/codec/decode",
            json=body,
            headers={"Authorization": f"Bearer {codec.keys[codec.acme]}", "X-Namespace": "default"},
        )
        assert answer.status_code == 200, answer.text
        mine, theirs, system, mixed = answer.json()["payloads"]
        assert json.loads(_data(mine)) == {"memoryRef": acme_ref, "ids": ["e-1"]}
        assert base64.b64decode(mine["metadata"]["encoding"]) == b"json/plain"
        assert theirs == body["payloads"][1]  # returned exactly as sent: still encrypted
        assert json.loads(_data(system)) == {"count": 3}
        assert mixed == body["payloads"][3]

        # The other tenant's key, sent as X-API-Key: the mirror image.
        other = await http.post(
            "/codec/decode", json=body, headers={"X-API-Key": codec.keys[codec.globex]}
        )
        first, second, _, _ = other.json()["payloads"]
        assert first == body["payloads"][0]
        assert json.loads(_data(second))["memoryRef"] == globex_ref


async def test_no_credentials_is_401_and_cors_answers_the_ui_origin_only(codec: Codec) -> None:
    [payload] = await _sealed(codec.settings, {"memoryRef": f"mem://{codec.acme}/a"})
    body = {"payloads": [_wire(payload)]}
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,x-namespace",
    }
    async with httpx.AsyncClient(base_url=codec.url) as http:
        for path in ("/codec/decode", "/codec/encode"):
            refused = await http.post(path, json=body, headers={"Origin": UI_ORIGIN})
            assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
            # The UI can read the refusal: CORS headers on errors too.
            assert refused.headers["access-control-allow-origin"] == UI_ORIGIN
            unknown = await http.post(path, json=body, headers={"X-API-Key": "nope"})
            assert unknown.status_code == 401

            allowed = await http.options(path, headers={"Origin": UI_ORIGIN, **preflight})
            assert allowed.status_code == 200  # no credentials needed for a preflight
            assert allowed.headers["access-control-allow-origin"] == UI_ORIGIN
            assert "POST" in allowed.headers["access-control-allow-methods"]
            assert "authorization" in allowed.headers["access-control-allow-headers"].lower()

            elsewhere = {"Origin": "http://evil.example", **preflight}
            foreign = await http.options(path, headers=elsewhere)
            assert foreign.status_code >= 400
            assert "access-control-allow-origin" not in foreign.headers
        # The rest of the API does not answer cross-origin requests.
        other_route = await http.options("/v1/agents", headers={"Origin": UI_ORIGIN, **preflight})
        assert "access-control-allow-origin" not in other_route.headers


async def test_encode_seals_under_the_callers_key_and_refuses_another_tenants_ref(
    codec: Codec,
) -> None:
    plain = data_converter_for(Settings()).payload_converter.to_payloads(
        [{"memoryRef": f"mem://{codec.acme}/a"}, {"memoryRef": f"mem://{codec.globex}/a"}]
    )
    headers = {"Authorization": f"Bearer {codec.keys[codec.acme]}"}
    async with httpx.AsyncClient(base_url=codec.url, headers=headers) as http:
        sealed = await http.post("/codec/encode", json={"payloads": [_wire(plain[0])]})
        assert sealed.status_code == 200, sealed.text
        [answer] = sealed.json()["payloads"]
        metadata = {k: base64.b64decode(v) for k, v in answer["metadata"].items()}
        assert metadata["encoding"] == ENCODING
        assert metadata[KEY_ID] == f"{codec.acme}-1".encode()
        back = await http.post("/codec/decode", json={"payloads": [answer]})
        assert _data(back.json()["payloads"][0]) == plain[0].data

        foreign = await http.post("/codec/encode", json={"payloads": [_wire(plain[1])]})
        assert foreign.status_code == 403 and foreign.json()["field"] == "payloads[0]"
        bad = await http.post("/codec/decode", json={"payloads": [{"data": "%%%"}]})
        assert bad.status_code == 422


# ------------------------------------------------------------------ the real CLI


def _cli(command: str, address: str, url: str, api_key: str) -> subprocess.CompletedProcess[str]:
    """Run a docs/operations.md command: its endpoint becomes this test's API and
    $AGENT_MEMORY_API_KEY the tenant's key; everything else is verbatim."""
    argv = shlex.split(command.replace("http://localhost:8000", url))
    assert argv[0] == "temporal"
    argv = [arg.replace("$AGENT_MEMORY_API_KEY", api_key) for arg in argv]
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    return subprocess.run(
        [temporal_cli(), *argv[1:]], env=env, capture_output=True, text=True, timeout=60
    )


EXAMPLE_ID = "consolidate/h6f9d6c0e2b7a41d3c8e5f0a9b1c2d3e4"


async def test_the_readme_codec_commands_show_a_decoded_history(
    codec: Codec, temporal_env: WorkflowEnvironment
) -> None:
    ref = f"mem://{codec.acme}/agent-1"
    workflow_id = workflow_ids_for(codec.settings).consolidation(ref)
    await codec.client.execute_workflow(
        ConsolidationWorkflow.run,
        ConsolidationInput(memory_ref=ref),
        id=workflow_id,
        task_queue=codec.settings.task_queue,
    )
    address = temporal_env.client.service_client.config.target_host
    commands = block_commands(doc("operations"), "temporal-cli-codec")
    assert [c.split()[1:3] for c in commands] == [["workflow", "show"], ["workflow", "show"]]
    assert EXAMPLE_ID in doc("operations").read_text()

    def show(command: str, api_key: str) -> str:
        result = _cli(command.replace(EXAMPLE_ID, workflow_id), address, codec.url, api_key)
        assert result.returncode == 0, result.stderr
        return result.stdout

    decoded, as_json = await asyncio.gather(
        asyncio.to_thread(show, commands[0], codec.keys[codec.acme]),
        asyncio.to_thread(show, commands[1], codec.keys[codec.acme]),
    )
    # The table shows the decoded result; the JSON holds decoded payloads (base64 JSON).
    assert '"trigger":"on-demand"' in decoded
    assert ref in clear_text(as_json)  # outside the search attributes: decoded
    assert json.loads(as_json)["events"][0]["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED"
    # Another tenant's key, and no codec at all: every payload stays sealed.
    foreign = await asyncio.to_thread(show, commands[1], codec.keys[codec.globex])
    without = await asyncio.to_thread(show, commands[1].split(" --codec-endpoint")[0], "")
    for sealed in (foreign, without):
        assert ref not in clear_text(sealed) and "on-demand" not in clear_text(sealed)
