"""The three memory seams driven with exactly the requests openwop's conformance suite
makes (../shared/spec/openwop-host-sample-seams.md §3), opaque refs included, and judged
by the contract's rules: the payload's fields on ``event``, 422 token_budget_exceeded
with no archiveChecksum key, the seam answering without ``sources``, consolidate's
counts on every call, commitment/fire with ``condition`` and ``includeIntentionCanary``.
Also the opaque-memoryRef mapping at the edge: bare, URI-looking and colon-separated
refs resolve within the key's tenant, and a ref naming another tenant reads as empty."""

from __future__ import annotations

import json

from tests.conformance.conftest import Target, Wire
from tests.support.openwop_http import memory_events

DISTILL = "/memory/distill"
CONSOLIDATE = "/memory/consolidate"
FIRE = "/commitment/fire"
DISTILL_CANARY = "sk-canary-rfc0062-do-not-leak-qrs456"
DISTILLATION_KEYS = {"tokenBudget", "tokensUsed", "indexUpdated"}


async def test_the_distill_seam_answers_the_suites_requests(target: Target, wire: Wire) -> None:
    ref = "conformance-distill"  # bare, as the suite sends it
    async with target.client(target.key_a, wire) as http:
        ok = await http.post(wire.seams + DISTILL, json={"memoryRef": ref, "tokenBudget": 8000})
        assert ok.status_code == 200, ok.text
        event = ok.json()["event"]
        assert "payload" not in event and event["type"] == "memory.compacted"
        sub = event["distillation"]
        assert set(sub) <= DISTILLATION_KEYS
        assert 0 <= sub["tokensUsed"] <= sub["tokenBudget"]
        assert ok.json()["archiveChecksum"]

        # Asked again with no sources and a budget nothing fits in: refused, atomically.
        refused = await http.post(wire.seams + DISTILL, json={"memoryRef": ref, "tokenBudget": 1})
        assert refused.status_code == 422, refused.text
        body = refused.json()
        assert body["error"] == "token_budget_exceeded"
        assert body["details"]["budget"] == 1 and body["details"]["minimumRequired"] > 1
        assert "archiveChecksum" not in body
        archives_after_refusal = await memory_events(http, ref, "memory.compacted")

        stable = [
            await http.post(
                wire.seams + DISTILL,
                json={"memoryRef": ref, "tokenBudget": 8000, "sources": ["s1", "s2", "s3"]},
            )
            for _ in range(2)
        ]
        assert [r.status_code for r in stable] == [200, 200]
        assert stable[0].json()["archiveChecksum"] == stable[1].json()["archiveChecksum"]

        indexed = await http.post(
            wire.seams + DISTILL, json={"memoryRef": ref, "tokenBudget": 8000, "indexEmitted": True}
        )
        assert indexed.status_code == 200, indexed.text
        assert indexed.json()["indexUpdated"] is True and indexed.json()["indexFile"]

        canary = await http.post(
            wire.seams + DISTILL,
            json={
                "memoryRef": ref,
                "tokenBudget": 8000,
                "sources": [{"content": f"notes with embedded secret {DISTILL_CANARY}"}],
                "includeSecretCanary": True,
            },
        )
        assert canary.status_code == 200, canary.text
        assert DISTILL_CANARY not in canary.text
    # The refusal archived nothing: the last archive before it is the first request's.
    first_output = ok.json()["event"]["outputId"]
    assert archives_after_refusal[-1]["payload"]["outputId"] == first_output


async def test_the_consolidate_seam_reports_counts_on_every_call(
    target: Target, wire: Wire
) -> None:
    ref = "mem://conformance/consolidation"  # URI-looking, naming a tenant that is not ours
    async with target.client(target.key_a, wire) as http:
        first = await http.post(
            wire.seams + CONSOLIDATE, json={"memoryRef": ref, "includeSecretCanary": True}
        )
        second = await http.post(wire.seams + CONSOLIDATE, json={"memoryRef": ref})
        assert (first.status_code, second.status_code) == (200, 200), first.text + second.text
        for answer in (first.json(), second.json()):
            event = answer["event"]
            assert "payload" not in event
            assert event["type"] == "agent.memory.consolidated"
            assert event["memoryRef"] and event["memoryRef"] != ref  # resolved in our tenant
            assert event.get("trigger", "on-demand") in {"host-managed", "scheduled", "on-demand"}
            assert event["outputCount"] <= event["inputCount"]
        assert first.json().get("secretLeaked") is not True
        # ...and the second pass over the unchanged corpus is a no-op (RFC 0068 §D.2).
        again = second.json()["event"]
        assert again["inputCount"] == again["outputCount"]


async def test_the_fire_seam_takes_condition_and_the_intention_canary(
    target: Target, wire: Wire
) -> None:
    ref = "mem://conformance/commitments"
    async with target.client(target.key_a, wire) as http:
        for condition in ("predicate", "time"):
            response = await http.post(
                wire.seams + FIRE,
                json={"memoryRef": ref, "condition": condition, "includeIntentionCanary": True},
            )
            assert response.status_code == 200, response.text
            body = response.json()
            event = body["event"]
            assert "payload" not in event and event["type"] == "commitment.fired"
            assert event["condition"] == condition
            assert event["commitmentId"] == body["commitmentId"] and event["memoryRef"]
            assert body["fireCount"] <= 1
            canary = body["intentionCanary"]
            assert canary and canary not in json.dumps(event)
            assert "customer" not in json.dumps(event)


async def test_opaque_refs_resolve_within_the_callers_tenant(target: Target, wire: Wire) -> None:
    """The same opaque ref under two tenants names two memories; the caller's own
    canonical ref is itself; a canonical ref naming tenant A, sent with B's key, is one of
    B's (empty) buckets, never A's memory."""
    colon_ref = "mem_tenant:default_agent:conformance-rfc0012-sr1_longTerm"
    refs = [colon_ref, "conformance/agent-memory-cti"]
    written: dict[str, str] = {}
    async with target.client(target.key_a, wire) as http_a:
        for ref in refs:
            answer = await http_a.post(
                wire.seams + DISTILL,
                json={"memoryRef": ref, "tokenBudget": 8000, "sources": ["s1"]},
            )
            assert answer.status_code == 200, answer.text
            written[ref] = answer.json()["event"]["memoryRef"]
        own = written["conformance/agent-memory-cti"]
        assert own.startswith("mem://") and own.endswith("/conformance/agent-memory-cti")
        tenant_a = own.split("/")[2]
        canonical = f"mem://{tenant_a}/conformance/agent-memory-cti"
        # A's own canonical ref is the same memory as the opaque one.
        assert await memory_events(http_a, canonical, "memory.compacted")
    async with target.client(target.key_b, wire) as http_b:
        for ref in [*refs, canonical]:
            # B sees nothing of A's under any of the refs A wrote.
            assert await memory_events(http_b, ref, "memory.compacted") == []
