"""Discovery as the memory scenarios read it (contract §2): the document answers with
and without credentials and carries the same families both ways; every gate the memory
scenarios check is open, so none of them can soft-skip; the fixture list is in the
header-less, unauthenticated document."""

from __future__ import annotations

from typing import Any

from schemas.fixture_runs import FIXTURES
from tests.conformance.conftest import Target


def _gates(document: dict[str, Any]) -> dict[str, object]:
    memory, agents = document["memory"], document["agents"]
    return {
        "memory.supported": memory["supported"],
        "memory.writable": memory["writable"],
        "memory.distillation.supported": memory["distillation"]["supported"],
        "memory.distillation.indexEmitted": memory["distillation"]["indexEmitted"],
        "memory.compaction.supported": memory["compaction"]["supported"],
        "memory.attribution.supported": memory["attribution"]["supported"],
        "memory.attribution.emitsWriteEvents": memory["attribution"]["emitsWriteEvents"],
        "memory.injectionBudget.supported": memory["injectionBudget"]["supported"],
        "agents.memoryBackends has long-term": "long-term" in agents["memoryBackends"],
        "agents.memoryConsolidation.supported": agents["memoryConsolidation"]["supported"],
        "agents.commitments.supported": agents["commitments"]["supported"],
    }


async def test_discovery_opens_every_memory_gate_with_and_without_credentials(
    target: Target,
) -> None:
    async with target.client() as public:
        anonymous = await public.get("/.well-known/openwop")
    async with target.client(target.key_a) as http:
        signed = await http.get("/.well-known/openwop")
    assert (anonymous.status_code, signed.status_code) == (200, 200)
    for document in (anonymous.json(), signed.json()):
        gates = _gates(document)
        assert all(value is True for value in gates.values()), gates
        assert "capabilities" not in document  # families at the root (RFC 0073)
        trigger = document["memory"]["compaction"]["trigger"]
        assert trigger in {"host-managed", "client-requested", "both"}
        assert document["memory"]["injectionBudget"]["tokenCounter"] in {
            "o200k_base",
            "cl100k_base",
            "chars",
            "host-defined",
        }
        modes = document["memory"]["search"].get("modes", [])
        assert len(set(modes)) == len(modes) and set(modes) <= {"semantic", "filter"}
    assert set(anonymous.json()["fixtures"]) >= set(FIXTURES)
    assert _gates(anonymous.json()) == _gates(signed.json())
