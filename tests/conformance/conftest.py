"""The openwop memory conformance module's target: this repository's API over the test
suite's embedded PostgreSQL, Temporal dev server and worker by default, or any
deployment named by the environment (README, "Conformance against your deployment"):

    OPENWOP_BASE_URL=https://memory.example.com \\
    OPENWOP_API_KEY=<a key of tenant A> OPENWOP_TEST_TENANT_B_API_KEY=<a key of tenant B> \\
        .venv/bin/pytest -p no:randomly tests/conformance

A certification run needs keys of two different tenants and the deployment's seams
switched on (OPENWOP_TEST_SEAM_ENABLED=true). Every request carries the key as
``Authorization: Bearer``, as openwop's suite sends it. Nothing here may soft-skip: a
scenario the target cannot run fails.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

TIMEOUT_S = 60


@dataclass(frozen=True)
class Wire:
    """One openwop major as its suite speaks it: v1 under /v1 with no version header, v2
    unprefixed with ``OpenWOP-Version: 2.0`` (the v2 driver moves /v1/host/sample/ to
    /conformance/seams/sample/ and leaves the bodies alone)."""

    major: int

    @property
    def seams(self) -> str:
        return "/v1/host/sample" if self.major == 1 else "/conformance/seams/sample"

    @property
    def runs(self) -> str:
        return "/v1/runs" if self.major == 1 else "/runs"

    @property
    def headers(self) -> dict[str, str]:
        return {} if self.major == 1 else {"OpenWOP-Version": "2.0"}


V1, V2 = Wire(1), Wire(2)


@pytest.fixture(params=[V1, V2], ids=["v1", "v2"])
def wire(request: pytest.FixtureRequest) -> Wire:
    chosen: Wire = request.param
    return chosen


@dataclass(frozen=True)
class Target:
    """Where the scenarios run, with one key per tenant."""

    url: str
    key_a: str
    key_b: str
    external: bool

    def client(self, key: str | None = None, wire: Wire = V1) -> httpx.AsyncClient:
        headers = {"Accept": "application/json", **wire.headers}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=TIMEOUT_S)


@pytest.fixture
def target(request: pytest.FixtureRequest) -> Target:
    url = os.environ.get("OPENWOP_BASE_URL")
    if not url:
        local: Target = request.getfixturevalue("local_target")
        return local
    key_a = os.environ.get("OPENWOP_API_KEY", "")
    key_b = os.environ.get("OPENWOP_TEST_TENANT_B_API_KEY", "")
    if not key_a or not key_b:
        pytest.fail("OPENWOP_API_KEY and OPENWOP_TEST_TENANT_B_API_KEY are both required")
    return Target(url.rstrip("/"), key_a, key_b, external=True)


@pytest.fixture
async def local_target(running_api: Any) -> Target:
    """This repository's API in the test suite's stack, with two fresh tenants."""
    a, b = ("conf" + uuid.uuid4().hex[:8] for _ in range(2))
    return Target(
        running_api.url, await running_api.key_for(a), await running_api.key_for(b), False
    )
