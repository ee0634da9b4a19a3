"""README command #1, run as CI does (--exit-after-run), twice over one state dir: the
second run finds yesterday's memory and writes the next index version."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _quickstart_env(state_dir: Path) -> dict[str, str]:
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
    return env


def _ports_args(port: int, ui_port: int, api_port: int) -> list[str]:
    return ["--temporal-port", str(port), "--ui-port", str(ui_port), "--api-port", str(api_port)]


def _run_quickstart(state_dir: Path, port: int, ui_port: int, api_port: int, *more: str) -> str:
    completed = subprocess.run(
        [
            "bash",
            str(ROOT / "quickstart.sh"),
            "--exit-after-run",
            *_ports_args(port, ui_port, api_port),
            *more,
        ],
        env=_quickstart_env(state_dir),
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed.stdout


def test_quickstart_help_is_its_own_and_installs_nothing(tmp_path: Path) -> None:
    # It said "Usage: memoryctl demo" and showed flags as "<bool>", after an install.
    from typer.main import get_command

    from memoryctl.main import app

    venv = tmp_path / "venv"
    shown = subprocess.run(
        ["bash", str(ROOT / "quickstart.sh"), "--help"],
        env={**os.environ, "VENV": str(venv)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("Usage: ./quickstart.sh [OPTIONS]\n")
    assert not venv.exists()  # nothing installed to answer --help
    demo = get_command(app).commands["demo"]  # type: ignore[attr-defined]
    for option in (opt for param in demo.params for opt in param.opts):
        assert f"  {option} " in shown.stdout, option
    memoryctl_help = subprocess.run(
        [sys.executable, "-m", "memoryctl.main", "demo", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert "--exit-after-run" in memoryctl_help.stdout and "<bool>" not in memoryctl_help.stdout


@pytest.mark.slow
def test_quickstart_runs_a_dream_end_to_end(tmp_path: Path) -> None:
    port, ui_port, api_port = _free_port(), _free_port(), _free_port()
    first = _run_quickstart(tmp_path, port, ui_port, api_port)
    assert "memory.compacted" in first
    assert '"trigger": "host-managed"' in first
    assert "archive checksum: " in first
    assert "MEMORY-INDEX.json v1" in first
    # Counts in words, not a Python dict (issue 41): "1 archive, entries: 89 episodic, ...".
    assert re.search(r"MEMORY-INDEX.json v1: .*\d+ archives?, entries: \d+ \w+", first), first
    # The dream's consolidation: the restated fact merged, the look-alike recorded.
    assert re.search(r"consolidation pass cp-\w+: \d+ -> \d+ long-term entries, 2 merged", first)
    assert "1 new conflicts" in first
    # The dream's commitment inference: the reminders in the notes armed, as workflows
    # (due within 24 h) or left to the memoryRef's horizon workflow (due later).
    # Counts that say what they count (issue 41): found (by kind), new, armed.
    armed = re.search(
        r"commitments: (\d+) commitments? found \((\d+) time, (\d+) predicate\), (\d+) new, "
        r"(\d+) workflows? armed, (\d+) due beyond 24 h left to the horizon workflow",
        first,
    )
    assert armed, first
    found, time, predicate, new, started, deferred = (int(group) for group in armed.groups())
    assert new > 0 and started + deferred == new and time + predicate == found, first
    # Said so that it cannot read as "no secrets registered" (issue 41).
    assert "SR-1: the distilled entry holds none of the 1 secret registered for acme" in first
    assert "Created dream schedules dream:acme:support-agent, dream:globex:sales-agent" in first
    assert "triggered dream:acme:support-agent, dream:globex:sales-agent with" in first
    # The weekly routine of the demo memory: exactly one proposal, inert.
    assert first.count("proposals: ") == 1, first
    assert (
        "proposals: 1 new from 1 recurring requests, inert until applied "
        "(memoryctl proposals list --tenant acme)" in first
    )
    assert "  memoryctl proposals list --tenant acme" in first  # the next steps
    link = f"Temporal UI: http://localhost:{ui_port}/namespaces/default/workflows/dream%3Aacme%3Asupport-agent-"
    assert link in first
    # The UI's default view lists every commitment workflow too: a link to the dreams.
    dreams = "workflows?query=WorkflowType%20%3D%20%27DreamWorkflow%27"
    assert (
        f"Dreams in the Temporal UI: http://localhost:{ui_port}/namespaces/default/{dreams}"
        in first
    )
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

    # What to run next, with this run's exact environment.
    assert f'export PATH="{Path(sys.executable).parent}:$PATH"' in first
    assert f"export TEMPORAL_ADDRESS=127.0.0.1:{port}" in first
    assert f"export AGENT_MEMORY_STATE_DIR={tmp_path}" in first
    assert "Seeded " in first
    # The next run, as this one was started: its ports, not the defaults (issue 41).
    assert (
        f"Next: run ./quickstart.sh --temporal-port {port} --ui-port {ui_port} "
        f"--api-port {api_port} (it stays up until Ctrl-C)"
    ) in first

    # Another day's notes on purpose: the demo memory is otherwise seeded once.
    second = _run_quickstart(tmp_path, port, ui_port, api_port, "--new-day")
    assert key_file.read_text() == key  # the same key, still valid, is reused
    assert "MEMORY-INDEX.json v2" in second
    assert "2 archives" in second
    # The next day: the facts learned again merge into yesterday's survivors, and the
    # re-keyed plan tier supersedes yesterday's value.
    assert "1 superseded" in second
    # The same routine the next day: proposed already, nothing new.
    assert "proposals: 0 new from 1 recurring requests" in second
    assert "The dream schedules exist already (cron" in second
    assert "Created dream schedules" not in second

    # Nothing new since: the last dream's memory.compacted is not shown as this one's.
    third = _run_quickstart(tmp_path, port, ui_port, api_port)
    assert third.count("nothing new to distill since the last dream: no memory.compacted") == 2
    assert '"trigger": "host-managed"' not in third


class _Running:
    """A quick start left up (no --exit-after-run), its output read as it comes."""

    def __init__(self, state_dir: Path, ports: list[str]) -> None:
        self.process = subprocess.Popen(
            ["bash", str(ROOT / "quickstart.sh"), *ports],
            env=_quickstart_env(state_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C goes to its process group, as in a terminal
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    def wait_for(self, text: str, seconds: float = 180) -> None:
        deadline = time.monotonic() + seconds
        while not any(text in line for line in self.lines):
            assert self.process.poll() is None, "".join(self.lines)[-3000:]
            assert time.monotonic() < deadline, "".join(self.lines)[-3000:]
            time.sleep(0.05)

    def ctrl_c(self) -> tuple[int, float, list[str]]:
        """SIGINT to the process group, as the terminal sends it; (status, seconds to
        exit, the lines printed after it)."""
        before = len(self.lines)
        started = time.monotonic()
        os.killpg(self.process.pid, signal.SIGINT)
        status = self.process.wait(60)
        elapsed = time.monotonic() - started
        time.sleep(0.2)  # the reader drains the pipe
        return status, elapsed, self.lines[before:]


def _refused(state_dir: Path, ports: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ROOT / "quickstart.sh"), "--exit-after-run", *ports],
        env=_quickstart_env(state_dir),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.slow
def test_ctrl_c_mid_dream_then_again_resumes_and_a_second_quick_start_is_one_line(
    tmp_path: Path,
) -> None:
    ports = _ports_args(_free_port(), _free_port(), _free_port())
    first = _Running(tmp_path, ports)
    first.wait_for("Created dream schedules")
    status, elapsed, after = first.ctrl_c()  # mid-dream
    assert status == 130, "".join(first.lines)[-3000:]
    assert elapsed < 10, elapsed  # it took 12 s, killed together with the dev server
    assert len(after) <= 6 and "Traceback" not in "".join(after), after
    assert "A dream left running resumes on the next run." in "".join(after)

    # The next run is not blocked by the interrupted dream (the schedule skips a
    # trigger while it runs): it finishes it, and seeds nothing a second time.
    second = _Running(tmp_path, ports)
    second.wait_for("Press Ctrl-C to stop.")
    output = "".join(second.lines)
    assert "Demo memory already seeded" in output and "Seeded " not in output
    # It says what it did: nothing created, and no trigger for the resumed dream.
    assert "The dream schedules exist already" in output and "Created dream" not in output
    assert "dream complete" in output or "resumes" in output

    # A second quick start while this one runs: one line each, nothing started.
    other_ports = _ports_args(_free_port(), _free_port(), _free_port())
    locked = _refused(tmp_path, other_ports)
    assert locked.returncode == 1, locked.stdout + locked.stderr
    assert locked.stderr.splitlines() == [
        f"error: another quick start (pid {second.process.pid}) is using {tmp_path}: stop it "
        "first (Ctrl-C), or set AGENT_MEMORY_STATE_DIR to run a second one"
    ]
    clash = _refused(tmp_path / "elsewhere", ports)
    assert clash.returncode == 1, clash.stdout + clash.stderr
    (line,) = clash.stderr.splitlines()
    assert line.startswith(f"error: port {ports[1]} (--temporal-port) is in use"), line

    status, elapsed, after = second.ctrl_c()  # the stack idle: a clean stop, exit 0
    assert status == 0 and elapsed < 10, (status, elapsed)
    assert (
        "".join(after).strip().endswith("Stopped the API, the worker and the Temporal dev server.")
    ), after
