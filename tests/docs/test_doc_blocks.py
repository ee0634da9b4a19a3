"""Every command block of README.md and docs/*.md, run as written against the quick
start's own stack (issue 41): `./quickstart.sh` stays up in a state dir of its own, and
each ```bash block runs in bash from the repository's root, in the second terminal the
quick start describes (the `export` lines it prints), with `set -e`: every command of
every block must succeed, in document order (README first, then docs/ by name).

The only liberty taken: the quick start here listens on free ports, so a block naming
the default ports (Temporal 7233, the API 8000) gets the ones this stack chose, which is
what "or the --temporal-port you chose" means.

A block that cannot run against the quick start is listed in NOT_HERE with the reason
and where else it is checked; a block in neither list fails the inventory test, so a new
block is run or explained, never forgotten.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.http_app import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCKER = "needs Docker: docker-compose.yml is checked by tests/docs/test_compose.py"

# (document, how the block's first line starts) -> why it does not run here, and where it
# is checked instead.
NOT_HERE = {
    ("README.md", "./quickstart.sh"): (
        "the quick start and the suite themselves: .ci/run runs both, and this test runs "
        "the quick start's stack"
    ),
    ("docs/development.md", "make setup"): (
        "make targets (the suite, benchmarks, soaks): test_every_make_target_named_exists"
    ),
    ("docs/operations.md", "docker compose up -d --build"): DOCKER,
    ("docs/operations.md", "docker compose up -d --scale"): DOCKER,
    ("docs/operations.md", "docker compose run"): DOCKER,
    ("docs/operations.md", "docker compose --profile scale-out"): DOCKER,
    ("docs/operations.md", "docker compose --profile observability"): DOCKER,
    ("docs/scale-out.md", "docker compose --profile scale-out"): DOCKER,
    ("docs/operations.md", "AGENT_MEMORY_LOG_FORMAT=json python worker.py"): (
        "starts a worker that runs until Ctrl-C: tests/docs/test_observability.py"
    ),
    ("docs/operations.md", "OTEL_EXPORTER_OTLP_ENDPOINT="): (
        "starts a worker that runs until Ctrl-C: tests/workflows/test_tracing.py"
    ),
    ("docs/operations.md", "temporal workflow show --workflow-id consolidate/h6f9"): (
        "needs payload encryption on (the quick start keeps payloads in clear): "
        "tests/api/test_codec_server.py runs it verbatim against an encrypting stack"
    ),
    ("docs/reliability.md", "python -m chaos"): (
        "starts a cluster of its own and kills it for minutes: tests/reliability/test_chaos.py"
    ),
}
# Blocks that write files where they run: run in a scratch directory, not the checkout.
IN_SCRATCH = {
    ("docs/operations.md", "memoryctl payload-keys generate"),
    ("docs/http-api.md", "memoryctl keys create"),
}
DEFAULT_PORTS = {"temporal": 7233, "api": 8000}


@dataclass(frozen=True)
class Block:
    document: str
    line: int
    text: str

    @property
    def first_line(self) -> str:
        return self.text.strip().splitlines()[0].strip()

    def is_one_of(self, keys: Iterable[tuple[str, str]]) -> bool:
        return any(
            self.document == document and self.first_line.startswith(start)
            for document, start in keys
        )


def bash_blocks() -> list[Block]:
    found = []
    for path in DOCUMENTS:
        text = path.read_text()
        # Fences indented under a list item too: the body is dedented as markdown does.
        for match in re.finditer(r"^( *)```bash\n(.*?)^\1```", text, re.S | re.M):
            line = text[: match.start()].count("\n") + 1
            body = textwrap.dedent(match.group(2))
            found.append(Block(str(path.relative_to(ROOT)), line, body))
    return found


def test_every_exception_names_exactly_one_block() -> None:
    blocks = bash_blocks()
    for key in [*NOT_HERE, *IN_SCRATCH]:
        matching = [f"{b.document}:{b.line}" for b in blocks if b.is_one_of([key])]
        assert len(matching) == 1, (key, matching)


def test_every_make_target_named_exists() -> None:
    (block,) = [b for b in bash_blocks() if b.is_one_of([("docs/development.md", "make setup")])]
    targets = re.findall(r"^make ([\w-]+)", block.text, re.M)
    assert len(targets) >= 10
    for target in targets:
        dry = subprocess.run(
            ["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert dry.returncode == 0, (target, dry.stderr)


@dataclass
class QuickStart:
    env: dict[str, str]
    exports: list[str]
    ports: dict[str, int]


@pytest.fixture(scope="module")
def quick_start() -> Iterator[QuickStart]:
    """./quickstart.sh up until this module ends, in a state dir of its own."""
    ports = {"temporal": free_port(), "ui": free_port(), "api": free_port()}
    state_dir = Path(tempfile.mkdtemp(prefix="doc-blocks-"))
    # A user's shell: none of this suite's own settings (its database, its Temporal, the
    # pytest-xdist worker's variables, which a nested pytest would take as its own).
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "TEMPORAL_ADDRESS") and not k.startswith("PYTEST_")
    }
    env.update(
        AGENT_MEMORY_STATE_DIR=str(state_dir),
        VENV=sys.prefix,  # the suite installed the project into this interpreter's venv
        QUICKSTART_SKIP_INSTALL="1",
        COLUMNS="200",
    )
    log_path = state_dir / "quickstart.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            ["bash", str(ROOT / "quickstart.sh"), *(f"--{n}-port={p}" for n, p in ports.items())],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 300
            while "The stack is up" not in log_path.read_text():
                assert process.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                time.sleep(1)
            printed = log_path.read_text()
            exports = [
                line.strip() for line in printed.splitlines() if line.startswith("  export ")
            ]
            names = {name for line in exports for name in re.findall(r"(\w+)=", line)}
            assert {"PATH", "TEMPORAL_ADDRESS", "AGENT_MEMORY_API", "AGENT_MEMORY_KEY"} <= names
            yield QuickStart(env, exports, ports)
        finally:
            process.terminate()
            process.wait(timeout=120)
            shutil.rmtree(state_dir, ignore_errors=True)


def with_ports(text: str, ports: dict[str, int]) -> str:
    for name, default in DEFAULT_PORTS.items():
        text = re.sub(rf"\b(localhost|127\.0\.0\.1):{default}\b", rf"\1:{ports[name]}", text)
    return text


def run_block(block: Block, stack: QuickStart, scratch: Path) -> subprocess.CompletedProcess[str]:
    script = "\n".join(["set -euo pipefail", *stack.exports, with_ports(block.text, stack.ports)])
    return subprocess.run(
        ["bash", "-c", script],
        cwd=scratch if block.is_one_of(IN_SCRATCH) else ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def test_every_block_runs_against_the_quick_starts_stack(
    quick_start: QuickStart, tmp_path: Path
) -> None:
    ran, failed = [], []
    for block in bash_blocks():
        if block.is_one_of(NOT_HERE):
            continue
        result = run_block(block, quick_start, tmp_path)
        ran.append(f"{block.document}:{block.line}")
        if result.returncode != 0:
            failed.append(
                f"{block.document}:{block.line} exit {result.returncode}\n"
                f"{result.stdout[-1500:]}\n{result.stderr[-1500:]}"
            )
    assert not failed, "\n\n".join(failed)
    # The blocks the docs promise run here, by name: a rename cannot drop one silently.
    for expected in ("docs/conformance.md", "docs/proposals.md", "docs/commitments.md"):
        assert any(name.startswith(expected) for name in ran), expected
    assert len(ran) >= 14, ran


def test_cli_synopses_name_commands_and_options_that_exist() -> None:
    """docs/cli.md's usage lines (```text blocks, not run): each command path exists
    and each option it shows is one of that command's."""
    from typer.main import get_command

    from memoryctl.main import app

    root = get_command(app)
    text = (ROOT / "docs" / "cli.md").read_text()
    lines = [
        line.split("#")[0]
        for block in re.findall(r"^```text\n(.*?)^```", text, re.S | re.M)
        for line in block.splitlines()
        if line.startswith("memoryctl ")
    ]
    assert len(lines) >= 15
    for line in lines:
        command, words = root, line.split()[1:]
        while words and words[0] in getattr(command, "commands", {}):
            command = command.commands[words.pop(0)]  # type: ignore[attr-defined]
        assert not getattr(command, "commands", None), f"no such command: {line}"
        known = {opt for param in command.params for opt in getattr(param, "opts", [])}
        shown = set(re.findall(r"--[a-z][a-z-]*", line))
        assert shown <= known, (line, shown - known)
