"""Reading openwop surfaces over HTTP the way the conformance scenarios do, for the
tests that drive them (tests/conformance/, tests/api/)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

import httpx

TERMINAL = {"completed", "failed", "cancelled"}


async def memory_events(http: httpx.AsyncClient, ref: str, kind: str) -> list[dict[str, Any]]:
    """The memoryRef's events of one type (GET /v1/host/memory/events, a v1 host
    extension: read as v1 whatever major the client speaks)."""
    response = await http.get(
        "/v1/host/memory/events",
        params={"memoryRef": ref, "type": kind},
        headers={"OpenWOP-Version": "1.0"},
    )
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


async def settled_run(
    http: httpx.AsyncClient, fixture: str, runs: str = "/v1/runs"
) -> dict[str, Any]:
    """Start a run of ``fixture`` and poll its snapshot until it is terminal (the suite
    gives a run 10 s, polling every 250 ms; this polls faster for the same bound). The
    run id goes into the path percent-encoded, as the suite's encodeURIComponent does
    (a v2 id is ``<tenant>/<run id>``)."""
    created = await http.post(runs, json={"workflowId": fixture, "inputs": {}})
    assert created.status_code == 201, created.text
    run_id = created.json()["runId"]
    snapshot: dict[str, Any] = {}
    for _ in range(200):
        snapshot = (await http.get(f"{runs}/{quote(run_id, safe='')}")).json()
        if snapshot["status"] in TERMINAL:
            return snapshot
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} of {fixture} did not settle: {snapshot}")
