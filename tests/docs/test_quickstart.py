"""README command #1, run as CI does (--exit-after-run), twice over one state dir: the
second run finds yesterday's memory and writes the next index version."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_quickstart(state_dir: Path, port: int, ui_port: int, api_port: int) -> str:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "TEMPORAL_ADDRESS")
    }
    env.update(
        AGENT_MEMORY_STATE_DIR=str(state_dir),
        # The suite already installed the project into this interpreter's venv.
        VENV=sys.prefix,
        QUICKSTART_SKIP_INSTALL="1",
        COLUMNS="200",
    )
    completed = subprocess.run(
        [
            "bash",
            str(ROOT / "quickstart.sh"),
            "--exit-after-run",
            "--temporal-port",
            str(port),
            "--ui-port",
            str(ui_port),
            "--api-port",
            str(api_port),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed.stdout


@pytest.mark.slow
def test_quickstart_runs_a_dream_end_to_end(tmp_path: Path) -> None:
    port, ui_port, api_port = _free_port(), _free_port(), _free_port()
    first = _run_quickstart(tmp_path, port, ui_port, api_port)
    assert "memory.compacted" in first
    assert '"trigger": "host-managed"' in first
    assert "archive checksum: " in first
    assert "MEMORY-INDEX.json v1" in first
    # The dream's consolidation: the restated fact merged, the look-alike recorded.
    assert re.search(r"consolidation pass cp-\w+: \d+ -> \d+ long-term entries, 2 merged", first)
    assert "1 new conflicts" in first
    # The dream's commitment inference: the reminders in the notes armed, as workflows
    # (due within 24 h) or left to the memoryRef's horizon workflow (due later).
    armed = re.search(
        r"commitments: (\d+) new \(\d+ time, \d+ predicate\), \d+ unparsable, "
        r"(\d+) workflows armed, (\d+) due beyond 24 h left to the horizon workflow",
        first,
    )
    assert armed, first
    new, started, deferred = (int(group) for group in armed.groups())
    assert new > 0 and started + deferred == new, first
    assert "registered secrets in the distilled entry: none" in first
    link = f"Temporal UI: http://localhost:{ui_port}/namespaces/default/workflows/dream%3Aacme%3Asupport-agent-"
    assert link in first
    # The HTTP API: checked over HTTP with the demo tenant's key, then the curl lines.
    api = f"http://127.0.0.1:{api_port}"
    assert f"HTTP API at {api} (OpenAPI at {api}/docs): discovery reports 8/8 memory " in first
    assert re.search(r"; \d+ entries of mem://acme/support-agent listed with the demo key", first)
    # The dreams' figures, in the same process's /metrics as the SDK's series.
    health = re.search(
        rf"Health: {re.escape(api)}/readyz says ready; {re.escape(api)}/metrics exports "
        r"(\d+) product and (\d+) Temporal SDK series",
        first,
    )
    assert health, first
    assert int(health.group(1)) >= 6 and int(health.group(2)) >= 10, health.group(0)
    key_file = tmp_path / "api-key"
    assert f"export AGENT_MEMORY_API={api} AGENT_MEMORY_KEY=$(cat {key_file})" in first
    assert key_file.stat().st_mode & 0o777 == 0o600
    key = key_file.read_text()
    assert key.startswith("amk_") and key.strip() not in first
    assert "Stopped the API, the worker and the Temporal dev server." in first
    assert (tmp_path / "postgres").is_dir() and (tmp_path / "secrets.json").exists()

    second = _run_quickstart(tmp_path, port, ui_port, api_port)
    assert key_file.read_text() == key  # the same key, still valid, is reused
    assert "MEMORY-INDEX.json v2" in second
    assert "2 archives" in second
    # The next day: the facts learned again merge into yesterday's survivors, and the
    # re-keyed plan tier supersedes yesterday's value.
    assert "1 superseded" in second
