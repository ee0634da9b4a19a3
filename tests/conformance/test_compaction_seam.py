"""The RFC 0012 compaction test seam driven as openwop's suite drives it (contract §3.4):
the probe with an empty body is answered (not 404), a seed stores the SR-1 form-leak
strings verbatim, and the compaction's event and persisted output carry neither of them
but a canonical ``[REDACTED:<id>]`` marker; a ref with nothing live is 400
nothing_to_compact; repeated runs seed the same ref again and compact what it holds."""

from __future__ import annotations

import json
import re
import time
import uuid

from tests.conformance.conftest import Target

COMPACT = "/v1/test/memory/compact"
SEED = "/v1/test/memory/seed"
REF = "mem_tenant:default_agent:conformance-rfc0012-sr1_longTerm"
LEAKS = ("[BYOK:hk_live_canary_42]", "<REDACTED:db-prod-creds>")
SR1_SEED = (
    "User confirmed: [BYOK:hk_live_canary_42]",
    "Resolved <REDACTED:db-prod-creds> outage.",
    "Customer asked about pricing tiers.",
)


def _entries(prefix: str) -> list[dict[str, object]]:
    stamp = int(time.time() * 1000)
    return [{"id": f"{prefix}-{stamp}-{n}", "content": c} for n, c in enumerate(SR1_SEED)]


async def test_the_compaction_seam_carries_secret_markers_forward(target: Target) -> None:
    async with target.client(target.key_a) as http:
        probe = await http.post(COMPACT, json={})
        assert probe.status_code == 400 and probe.json()["error"] == "invalid_argument"
        empty_ref = f"conformance-empty-{uuid.uuid4().hex[:12]}"
        empty = await http.post(COMPACT, json={"memoryRef": empty_ref})
        assert empty.status_code == 400 and empty.json()["error"] == "nothing_to_compact"
        missing = await http.post(SEED, json={"entries": _entries("rfc0012-sr1")})
        assert missing.status_code == 400 and missing.json()["field"] == "memoryRef"
        no_entries = await http.post(SEED, json={"memoryRef": REF, "entries": []})
        assert no_entries.status_code == 400 and no_entries.json()["error"] == "invalid_argument"

        for run in range(2):  # repeated suite runs seed the same ref again
            seeded = await http.post(SEED, json={"memoryRef": REF, "entries": _entries("sr1")})
            assert seeded.status_code == 201 and seeded.json() == {"seeded": 3}
            answer = await http.post(COMPACT, json={"memoryRef": REF})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert body["type"] == "memory.compacted"
            payload = body["payload"]
            assert payload["memoryRef"] and payload["outputId"]
            assert payload["sourceCount"] >= 3 and payload["byteSize"] >= 0
            assert payload["trigger"] == "client-requested"
            assert len(payload["sourceIds"]) == payload["sourceCount"]
            output = body["outputContent"]
            assert re.search(r"\[REDACTED:[^\]]+\]", output), output
            for leak in LEAKS:
                assert leak not in output and leak not in json.dumps(payload), (run, leak)
            assert "pricing tiers" in output  # the rest of the text is carried
