"""docs/conformance.md's command works against a deployment named only by the
environment: run here (for its discovery scenario) against this suite's API, in a
separate pytest process, as a user would run it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

from tests.support.docs_blocks import doc

ROOT = Path(__file__).resolve().parents[2]


async def test_the_documented_conformance_command_runs_against_a_url(running_api) -> None:
    text = doc("conformance").read_text()
    assert "OPENWOP_BASE_URL=" in text and "pytest -p no:randomly tests/conformance" in text
    a, b = ("ext" + uuid.uuid4().hex[:8] for _ in range(2))
    env = {
        **os.environ,
        "OPENWOP_BASE_URL": running_api.url,
        "OPENWOP_API_KEY": await running_api.key_for(a),
        "OPENWOP_TEST_TENANT_B_API_KEY": await running_api.key_for(b),
    }
    completed = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:randomly",
            "-p",
            "no:xdist",
            "-q",
            "tests/conformance/test_discovery.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert "1 passed" in completed.stdout
