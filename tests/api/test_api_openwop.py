"""openwop over HTTP against the running app: discovery from live state, the agent
inventory's degraded projection, and the sample seams' conformance scenarios (RFC 0062,
RFC 0068, RFC 0080), ported from the spec text."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest

from tests.support.factories import SECRET_CANARIES, WRITTEN_TEXTS
from tests.support.openwop_http import memory_events

pytestmark = pytest.mark.slow


async def test_discovery_is_public_and_reports_the_live_model(running_api) -> None:
    async with httpx.AsyncClient(base_url=running_api.url) as anonymous:
        response = await anonymous.get("/.well-known/openwop")
    assert response.status_code == 200
    doc = response.json()
    memory, agents = doc["memory"], doc["agents"]
    assert memory["supported"] is True and memory["writable"] is True
    assert memory["maxEntrySizeBytes"] == 65536
    assert memory["search"] == {"supported": True, "modes": ["semantic", "filter"]}
    assert memory["retention"] == {"ttl": True, "forget": True}
    distillation = memory["distillation"]
    assert distillation["supported"] is True and distillation["maxTokenBudget"] >= 1
    assert distillation["tokenizerName"] == "cl100k_base"
    assert agents["memoryBackends"] == ["long-term"]
    assert agents["memoryConsolidation"]["supported"] is True
    assert agents["commitments"] == {"supported": True, "fireConditions": ["time", "predicate"]}
    assert all(doc["memoryDimensions"].values())
    assert doc["x-host-agent-memory-status"]["worker"]["available"] is True


async def test_capability_model_shape_validates_against_the_exported_schemas(running_api) -> None:
    """memory-capability-model-shape: the served document and inventory validate against
    schemas/json; the dimension names are the spec's; retention.ttl "yes" is refused."""
    import jsonschema

    schemas = Path(__file__).resolve().parents[2] / "schemas" / "json"
    document_schema = json.loads((schemas / "discovery-document.schema.json").read_text())
    inventory_schema = json.loads((schemas / "agent-inventory.schema.json").read_text())
    tenant = _tenant()
    async with await running_api.client_for(tenant) as http:
        doc = (await http.get("/.well-known/openwop")).json()
        await http.put("/v1/agents/researcher", json={"memoryShape": {"longTerm": True}})
        inventory = (await http.get("/v1/agents")).json()
    jsonschema.validate(doc, document_schema)
    jsonschema.validate(inventory, inventory_schema)
    assert list(doc["memoryDimensions"]) == [
        "read",
        "write",
        "search",
        "long-term-durability",
        "compaction",
        "attribution",
        "replay-snapshot",
        "retention",
    ]
    broken = json.loads(json.dumps(doc))
    broken["memory"]["retention"]["ttl"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, document_schema)
    stamped = json.loads(json.dumps(inventory))
    stamped["agents"][0]["degradedMemoryDimensions"] = ["long-term"]  # the backend id
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(stamped, inventory_schema)


def _tenant() -> str:
    return "t" + uuid.uuid4().hex[:10]


CALL_NOTES = [f"Call {i}: the customer asked about invoice {100 + i}" for i in range(6)]
SOURCES = [{"content": text, "tags": ["call"]} for text in CALL_NOTES]
SPEC_CORPUS = [
    "The customer prefers invoices in EUR",
    "Note: the customer prefers invoices in EUR.",
    "The trial lasts 14 days",
    "Support hours are 9 to 5 on weekdays",
]
_DISTILLATION_KEYS = {"tokenBudget", "tokensUsed", "indexUpdated"}
INTENTION = "Follow up with Dana when the contract is signed"
# The end-of-session history audit (tests/support/session_history_audit.py) checks that none of this
# text, written through HTTP, reached a workflow history.
WRITTEN_TEXTS.update(CALL_NOTES, SPEC_CORPUS, [INTENTION])


async def test_distillation_shape_budget_and_index_roundtrip(running_api) -> None:
    tenant = _tenant()
    ref = f"mem://{tenant}/agent-1"
    async with await running_api.client_for(tenant) as http:
        response = await http.post(
            "/v1/host/sample/memory/distill",
            json={
                "memoryRef": ref,
                "tokenBudget": 4000,
                "sources": SOURCES,
                "indexEmitted": True,
            },
        )
        assert response.status_code == 200, response.text
        answer = response.json()
        event = answer["event"]
        assert event["type"] == "memory.compacted"
        assert "payload" not in event  # the payload's fields sit on the event (contract §3.1)
        payload = event
        # distillation-shape: the memory.compacted payload and its sub-object.
        assert payload["memoryRef"] == ref and payload["outputId"]
        assert payload["sourceCount"] == len(SOURCES) and payload["byteSize"] >= 0
        assert payload["trigger"] in {"host-managed", "client-requested", "both"}
        sub = payload["distillation"]
        assert set(sub) <= _DISTILLATION_KEYS and {"tokenBudget", "tokensUsed"} <= set(sub)
        # distillation-token-budget: within budget.
        assert 0 < sub["tokensUsed"] <= sub["tokenBudget"] == 4000
        assert len(answer["archiveChecksum"]) == 64
        # distillation-index-roundtrip: the index is retrievable and workspace.updated fired.
        assert answer["indexUpdated"] is True
        index = answer["indexFile"]
        assert index["path"] == "MEMORY-INDEX.json" and index["content"]["archiveCount"] >= 1
        updates = await memory_events(http, ref, "workspace.updated")
        assert {"path": "MEMORY-INDEX.json", "version": index["version"]} in [
            e["payload"] for e in updates
        ]
        # The distilled output is an entry readable over the OpenIntent surface.
        output = await http.get(
            f"/api/v1/memory/{payload['outputId']}", headers={"X-Agent-ID": "agent-1"}
        )
        assert output.status_code == 200


async def test_an_unmeetable_budget_fails_atomically_with_token_budget_exceeded(
    running_api,
) -> None:
    tenant = _tenant()
    ref = f"mem://{tenant}/agent-1"
    async with await running_api.client_for(tenant) as http:
        response = await http.post(
            "/v1/host/sample/memory/distill",
            json={"memoryRef": ref, "tokenBudget": 1, "sources": SOURCES},
        )
        assert response.status_code == 422, response.text
        body = response.json()
        assert body["error"] == "token_budget_exceeded"
        assert body["details"]["budget"] == 1 and body["details"]["minimumRequired"] > 1
        assert "archiveChecksum" not in body
        assert await memory_events(http, ref, "memory.compacted") == []


async def test_the_same_sources_and_budget_give_a_byte_stable_archive(running_api) -> None:
    tenant = _tenant()
    ref = f"mem://{tenant}/agent-1"
    request = {"memoryRef": ref, "tokenBudget": 4000, "sources": SOURCES}
    async with await running_api.client_for(tenant) as http:
        answers = [
            (await http.post("/v1/host/sample/memory/distill", json=request)).json()
            for _ in range(2)
        ]
    assert [a["status"] for a in answers] == ["distilled", "already-distilled"]
    assert answers[0]["archiveChecksum"] == answers[1]["archiveChecksum"]
    assert answers[0]["event"] == answers[1]["event"]


async def test_a_redacted_secret_stays_redacted_in_the_archive(running_api, vault) -> None:
    tenant = _tenant()
    ref = f"mem://{tenant}/agent-1"
    secret = "sk-live-" + uuid.uuid4().hex
    SECRET_CANARIES.add(secret)
    vault.secrets[tenant] = {"stripe-key": secret}
    async with await running_api.client_for(tenant) as http:
        response = await http.post(
            "/v1/host/sample/memory/distill",
            json={
                "memoryRef": ref,
                "tokenBudget": 4000,
                "sources": [*SOURCES, f"The Stripe key is {secret}"],
                "includeSecretCanary": True,
            },
        )
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["secretLeaked"] is False
        output = await http.get(
            f"/api/v1/memory/{answer['event']['outputId']}",
            headers={"X-Agent-ID": "agent-1"},
        )
        text = output.text
        assert secret not in text and "[REDACTED:stripe-key]" in text


async def test_consolidation_shape_idempotence_and_secret_carry_forward(running_api) -> None:
    tenant = _tenant()
    ref = f"mem://{tenant}/agent-1"
    async with await running_api.client_for(tenant) as http:
        first = await http.post(
            "/v1/host/sample/memory/consolidate", json={"memoryRef": ref, "sources": SPEC_CORPUS}
        )
        assert first.status_code == 200, first.text
        body = first.json()
        assert (body["inputCount"], body["outputCount"]) == (4, 3)
        event = body["event"]
        assert event["type"] == "agent.memory.consolidated"
        assert event["memoryRef"] == ref
        assert event["outputCount"] <= event["inputCount"]
        for text in SPEC_CORPUS:
            assert text not in json.dumps(event)
        second = await http.post(
            "/v1/host/sample/memory/consolidate", json={"memoryRef": ref, "sources": SPEC_CORPUS}
        )
        assert (second.json()["inputCount"], second.json()["outputCount"]) == (3, 3)
        canary = await http.post(
            "/v1/host/sample/memory/consolidate",
            json={
                "memoryRef": f"mem://{tenant}/agent-2",
                "includeSecretCanary": True,
                "sources": SPEC_CORPUS,
            },
        )
        assert canary.status_code == 200 and canary.json()["secretLeaked"] is False


async def test_a_commitment_fires_once_and_its_event_is_content_free(running_api) -> None:
    tenant = _tenant()
    ref = f"mem://{tenant}/agent-1"
    intention = INTENTION
    async with await running_api.client_for(tenant) as http:
        answers = []
        for _ in range(2):
            response = await http.post(
                "/v1/host/sample/commitment/fire", json={"memoryRef": ref, "intention": intention}
            )
            assert response.status_code == 200, response.text
            answers.append(response.json())
        body = answers[0]
        event = body["event"]
        assert event["type"] == "commitment.fired"
        payload = event  # the payload's fields sit on the event (contract §3.3)
        assert payload["commitmentId"] == body["commitmentId"]
        assert payload["memoryRef"] == ref and payload["condition"] == "predicate"
        assert [a["fireCount"] for a in answers] == [1, 1]
        assert answers[1]["event"] == event
        assert "intentionCanary" not in body  # only when asked for
        assert "Dana" not in json.dumps(event) and "contract" not in json.dumps(event)
        fired = await memory_events(http, ref, "commitment.fired")
        assert len(fired) == 1
        # Asked for, the intention is served at the top level, never on the event.
        canary = await http.post(
            "/v1/host/sample/commitment/fire",
            json={
                "memoryRef": f"mem://{tenant}/agent-2",
                "intention": intention,
                "includeIntentionCanary": True,
            },
        )
        assert canary.status_code == 200, canary.text
        served = canary.json()["intentionCanary"]
        assert served.startswith(intention) and "canary-" in served
        assert served not in json.dumps(canary.json()["event"])
        time_intention = await http.post(
            "/v1/host/sample/commitment/fire",
            json={"memoryRef": ref, "intention": "Remind me next Friday to send the report"},
        )
        assert time_intention.status_code == 422
        assert time_intention.json()["field"] == "intention"
