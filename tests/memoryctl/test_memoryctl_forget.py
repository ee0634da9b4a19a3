"""memoryctl forget and memoryctl lineage, run as the user runs them (a subprocess against
the test's own database): a dry run changes nothing and says what an erasure would reach,
--yes erases the entry and every derived copy of its text, the prompt guards an erasure
without --yes, bad argument combinations are one line, and lineage shows where an
entry's text went."""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
import sys
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.workflow_io import DistillationResult, DistillMemoryRequest
from tests.support.factories import note, unique_ref


def memoryctl(
    *args: str, database_url: str, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    # A wide terminal: ids in tables stay whole. No terminal on stdin unless a test gives one.
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", *args],
        env={**os.environ, "COLUMNS": "200", "DATABASE_URL": database_url},
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,  # a hang (a prompt nobody answers) fails the test instead of the suite
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], status: int) -> str:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert result.returncode == status, result.stderr
    return lines[0]


class Seeded:
    """A memoryRef with two tagged "secret" entries among others, all distilled once."""

    def __init__(self, ref: str, secret_ids: list[str], kept_ids: list[str], marker: str):
        self.ref = ref
        self.secret_ids = secret_ids
        self.kept_ids = kept_ids
        self.marker = marker  # text only the secret entries hold
        self.distillation: DistillationResult | None = None


@pytest.fixture
async def seeded(store: PostgresMemoryStore) -> Seeded:
    ref = unique_ref()
    marker = f"passport-{uuid.uuid4().hex[:12]}"
    secrets = [
        note(f"The customer's passport number is {marker}-{i}.", "secret", subject="alice")
        for i in range(2)
    ]
    kept = [note(f"Invoice {i} is due at the end of the month.", "billing") for i in range(4)]
    written = await store.put_many(ref, [*secrets, *kept])
    seeded = Seeded(ref, [e.id for e in written[:2]], [e.id for e in written[2:]], marker)
    seeded.distillation = await store.distill(
        DistillMemoryRequest(memory_ref=ref, token_budget=5000, run_key="r")
    )
    assert seeded.distillation.status == "distilled"
    assert seeded.distillation.source_count == 6
    return seeded


async def _row_counts(engine: AsyncEngine, ref: str) -> dict[str, int]:
    counts = {}
    async with engine.connect() as connection:
        for table in (tables.entries, tables.archives):
            counts[table.name] = (
                await connection.execute(select(func.count()).where(table.c.memory_ref == ref))
            ).scalar_one()
    return counts


async def _copies_of(engine: AsyncEngine, ref: str, marker: str) -> int:
    """Entries and archives of the ref that still hold the marker text."""
    async with engine.connect() as connection:
        entries = (
            await connection.execute(
                select(func.count()).where(
                    tables.entries.c.memory_ref == ref,
                    tables.entries.c.content.contains(marker),
                )
            )
        ).scalar_one()
        bodies = (
            await connection.execute(
                select(tables.archives.c.body).where(tables.archives.c.memory_ref == ref)
            )
        ).scalars()
        return int(entries) + sum(marker.encode() in bytes(body) for body in bodies)


def _report(stdout: str) -> dict[str, Any]:
    report = json.loads(stdout)
    assert isinstance(report, dict), stdout
    return report


def _without_dry_run(report: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in report.items() if key != "dryRun"}


FORGET_SECRETS = ("forget", "--tag", "secret")


# ---------------------------------------------------------------------- forget


async def test_dry_run_changes_nothing_and_counts_every_kind(
    database_url: str, engine: AsyncEngine, store: PostgresMemoryStore, seeded: Seeded
) -> None:
    before = await _row_counts(engine, seeded.ref)
    assert await _copies_of(engine, seeded.ref, seeded.marker) > 0
    out = ok(
        memoryctl(
            *FORGET_SECRETS, "--memory-ref", seeded.ref, "--dry-run", "--json",
            database_url=database_url,
        )
    )  # fmt: skip
    report = _report(out)
    assert report["dryRun"] is True
    assert report["memoryRef"] == seeded.ref
    assert report["entries"] == 2
    assert report["distilledRewritten"] > 0  # the distilled entry also holds kept text
    assert report["archivesRewritten"] > 0
    assert sorted(report["entryIds"]) == sorted(seeded.secret_ids)
    assert await _row_counts(engine, seeded.ref) == before
    assert await _copies_of(engine, seeded.ref, seeded.marker) > 0
    for entry_id in seeded.secret_ids:
        assert await store.get(seeded.ref, entry_id) is not None


async def test_yes_erases_what_the_dry_run_announced(
    database_url: str, engine: AsyncEngine, store: PostgresMemoryStore, seeded: Seeded
) -> None:
    args = (*FORGET_SECRETS, "--memory-ref", seeded.ref, "--json")
    preview = _report(ok(memoryctl(*args, "--dry-run", database_url=database_url)))
    report = _report(ok(memoryctl(*args, "--yes", database_url=database_url)))
    assert report["dryRun"] is False
    assert report["entries"] == 2
    assert report["distilledRewritten"] > 0 and report["archivesRewritten"] > 0
    assert _without_dry_run(report) == _without_dry_run(preview)
    for entry_id in seeded.secret_ids:
        assert await store.get(seeded.ref, entry_id) is None
    for entry_id in seeded.kept_ids:
        assert await store.get(seeded.ref, entry_id) is not None
    assert await _copies_of(engine, seeded.ref, seeded.marker) == 0


async def test_forget_prints_a_table_of_artifact_kinds_and_ids(
    database_url: str, store: PostgresMemoryStore, seeded: Seeded
) -> None:
    target = seeded.secret_ids[0]
    args = ("forget", "--memory-ref", seeded.ref, "--id", target)
    preview = ok(memoryctl(*args, "--dry-run", database_url=database_url))
    assert "would erase" in preview
    for label in (
        "source entries", "distilled entries rewritten", "distilled entries removed",
        "archives rewritten", "archives removed", "snapshots dropped",
    ):  # fmt: skip
        assert label in preview, preview
    assert target in preview and seeded.secret_ids[1] not in preview
    assert await store.get(seeded.ref, target) is not None
    erased = ok(memoryctl(*args, "--yes", database_url=database_url))
    assert "erased" in erased and "would erase" not in erased
    assert target in erased
    assert await store.get(seeded.ref, target) is None
    assert await store.get(seeded.ref, seeded.secret_ids[1]) is not None


async def test_without_a_terminal_forget_requires_yes(
    database_url: str, engine: AsyncEngine, store: PostgresMemoryStore, seeded: Seeded
) -> None:
    before = await _row_counts(engine, seeded.ref)
    result = memoryctl(*FORGET_SECRETS, "--memory-ref", seeded.ref, database_url=database_url)
    line = one_line_error(result, 2)
    assert line == "error: forget: pass --yes to erase without a prompt (or --dry-run)"
    assert result.stdout == ""
    assert await _row_counts(engine, seeded.ref) == before
    assert await store.get(seeded.ref, seeded.secret_ids[0]) is not None


def _answering(answer: str, *args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    """Run memoryctl with a terminal on stdin that types ``answer`` at the prompt."""
    controller, terminal = pty.openpty()
    try:
        os.write(controller, f"{answer}\n".encode())
        return memoryctl(*args, database_url=database_url, stdin=terminal)
    finally:
        os.close(terminal)
        os.close(controller)


async def test_declining_the_prompt_erases_nothing(
    database_url: str, engine: AsyncEngine, store: PostgresMemoryStore, seeded: Seeded
) -> None:
    before = await _row_counts(engine, seeded.ref)
    args = (*FORGET_SECRETS, "--memory-ref", seeded.ref)
    result = _answering("n", *args, database_url=database_url)
    assert result.returncode == 1, result.stderr
    assert "would erase" in result.stdout
    assert "Erase 2 entries and every derived copy? [y/N]" in result.stdout
    assert "Traceback" not in result.stderr
    assert await _row_counts(engine, seeded.ref) == before
    assert await store.get(seeded.ref, seeded.secret_ids[0]) is not None


async def test_confirming_the_prompt_erases(
    database_url: str, engine: AsyncEngine, store: PostgresMemoryStore, seeded: Seeded
) -> None:
    args = (*FORGET_SECRETS, "--memory-ref", seeded.ref)
    out = ok(_answering("y", *args, database_url=database_url))
    preview, _, after = out.partition("[y/N]")
    assert "would erase" in preview and "erased" in after and "would erase" not in after
    for entry_id in seeded.secret_ids:
        assert await store.get(seeded.ref, entry_id) is None
    assert await _copies_of(engine, seeded.ref, seeded.marker) == 0


@pytest.fixture
def unreachable_database() -> str:
    """A database URL nothing answers: a command that gets past argument checking and
    tries to connect fails with status 1, not 2."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    return f"postgresql+asyncpg://u:pw@127.0.0.1:{port}/x"


REF = "mem://acme/agent-1"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["forget", "--memory-ref", REF, "--yes"], "forget: give one of --id, --tag or --subject"),
        (["forget", "--memory-ref", REF, "--id", "a", "--tag", "t", "--yes"], "--id"),
        (["forget", "--memory-ref", REF, "--tag", "t", "--subject", "s", "--yes"], "--tag"),
        (["forget", "--memory-ref", REF, "--id", "a", "--subject", "s", "--yes"], "--subject"),
        (["forget", "--memory-ref", REF, "--id", "a", "--tenant-wide", "--yes"], "--tenant-wide"),
        (["forget", "--memory-ref", REF, "--tag", "t", "--tenant-wide", "--yes"], "--tenant-wide"),
        (["forget", "--memory-ref", REF, "--tenant-wide", "--dry-run"], "--id, --tag or --subject"),
        (["forget", "--memory-ref", REF, "--id", "no spaces", "--dry-run"], "--id:"),
        (["forget", "--memory-ref", REF, "--subject", "has space", "--dry-run"], "--subject:"),
        (["forget", "--memory-ref", "mem://../x", "--tag", "t", "--yes"], "memoryRef"),
        (["forget", "--tag", "t", "--yes"], "--memory-ref"),
        (["lineage", "--memory-ref", REF, "--id", "no spaces"], "--id:"),
        (["lineage", "--memory-ref", REF], "--id"),
    ],
)
def test_bad_arguments_are_one_line_naming_the_option(
    args: list[str], named: str, unreachable_database: str
) -> None:
    result = memoryctl(*args, database_url=unreachable_database)
    line = one_line_error(result, 2)
    assert named in line, line
    assert result.stdout == ""


# ---------------------------------------------------------------------- lineage


async def test_lineage_lists_derived_copies_until_the_entry_is_forgotten(
    database_url: str, seeded: Seeded
) -> None:
    assert seeded.distillation is not None
    source = seeded.secret_ids[0]
    lineage = ("lineage", "--memory-ref", seeded.ref, "--id", source)
    links = json.loads(ok(memoryctl(*lineage, "--json", database_url=database_url)))
    found = {(link["artifactKind"], link["artifactId"]) for link in links}
    assert ("distilled-entry", seeded.distillation.output_id) in found, links
    assert ("archive", seeded.distillation.archive_checksum) in found, links
    assert all(link["sourceId"] == source for link in links if link["artifactKind"] == "archive")
    table = ok(memoryctl(*lineage, database_url=database_url))
    assert "distilled-entry" in table and "archive" in table
    assert str(seeded.distillation.output_id) in table
    assert "no derived copies" not in table

    forget = ("forget", "--memory-ref", seeded.ref, "--id", source, "--yes")
    ok(memoryctl(*forget, database_url=database_url))
    assert json.loads(ok(memoryctl(*lineage, "--json", database_url=database_url))) == []
    assert ok(memoryctl(*lineage, database_url=database_url)).strip() == "no derived copies"


async def test_lineage_of_an_entry_never_distilled_is_empty(
    database_url: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note("A note no dream has read yet."))
    lineage = ("lineage", "--memory-ref", ref, "--id", entry.id)
    assert ok(memoryctl(*lineage, database_url=database_url)).strip() == "no derived copies"
    assert json.loads(ok(memoryctl(*lineage, "--json", database_url=database_url))) == []
