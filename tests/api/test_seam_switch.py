"""The conformance seams are an operator's choice (contract §1): with
OPENWOP_TEST_SEAM_ENABLED off they answer 404, which openwop's suite reads as "not
wired"; nothing runs and nothing is written."""

from __future__ import annotations

import uuid

from tests.support.openwop_http import memory_events

DISTILL = "/v1/host/sample/memory/distill"
CONSOLIDATE = "/v1/host/sample/memory/consolidate"
FIRE = "/v1/host/sample/commitment/fire"
SEED = "/v1/test/memory/seed"
COMPACT = "/v1/test/memory/compact"


async def test_the_seams_answer_404_unless_an_operator_turns_them_on(running_api) -> None:
    """Conformance-only (contract §1): OPENWOP_TEST_SEAM_ENABLED off is a 404, which the
    suite reads as "not wired"; nothing runs and nothing is written."""
    services = running_api.services
    services.settings = services.settings.model_copy(update={"test_seams": False})
    try:
        async with await running_api.client_for("sw" + uuid.uuid4().hex[:8]) as http:
            for path, body in (
                (DISTILL, {"memoryRef": "conformance-distill", "tokenBudget": 8000}),
                (CONSOLIDATE, {"memoryRef": "mem://conformance/consolidation"}),
                (FIRE, {"memoryRef": "mem://conformance/commitments", "condition": "predicate"}),
                (SEED, {"memoryRef": "r", "entries": [{"id": "e-1", "content": "x"}]}),
                (COMPACT, {"memoryRef": "r"}),
            ):
                response = await http.post(path, json=body)
                assert response.status_code == 404, (path, response.text)
                assert response.json()["error"] == "not_found"
            assert await memory_events(http, "conformance-distill", "memory.compacted") == []
    finally:
        services.settings = services.settings.model_copy(update={"test_seams": True})
