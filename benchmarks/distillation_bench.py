"""A full DreamWorkflow (distillation, consolidation, commitment inference and arming,
garbage collection) end to end at 1k, 10k and 100k entries in one memoryRef, and the
first and the nightly dream over a 10k and a 1M memoryRef side by side.

    python -m benchmarks.distillation_bench [--sizes 1000,10000,100000] [--budget 8000]
                                            [--max-budget 100000] [--backlog 1000000]
                                            [--backlog-baseline 10000] [--nights 3]
                                            [--quick] [--json PATH]

Starts an embedded PostgreSQL in a temporary directory (or uses the server named by
DATABASE_URL) with a fresh, migrated database, a Temporal dev server
(WorkflowEnvironment.start_local, the pip-installed `temporal` binary) and, in this
process, a worker from ``worker.build_worker`` whose StaticSecretVault holds 20 secrets
for the benchmark tenant.

Every dream is timed from start to result, and split into its steps (distill,
consolidate, infer, arm, gc) by activity type name from the dream's history and its
children's (benchmarks/dream_steps.py: the same code reads a dream whose steps are
children or plain activities). Its wall time is set against two tokenizer floors
measured in the same run: the PRIMARY one, tokenizing the rows the dream actually read
(the distillation queue's pages, the consolidation corpus and the inference candidates
since the watermark, replayed read-only just before the dream), and the secondary one,
tokenizing the memoryRef's whole corpus once (what a dream that read everything would
at least pay).

Size runs. For each size N it generates one corpus of agent-memory text (100-600
characters, ~5% exact duplicates, ~1% pinned, ~2% carrying a raw secret value, ~9%
read as commitments by inference's SQL pre-filter) and, for each budget (--budget and
--max-budget), loads it into a fresh memoryRef with put_many (timed separately, not
part of the dream) and times the memoryRef's first DreamWorkflow. Entries go to the
transactional tiers (working/episodic) that distillation reads; those are capped at
1,000 entries per memoryRef by default, so the store used for loading and by the worker
is built with StoreLimits(capacity={}) (uncapped). Reported: wall time, the steps, rows
read, sourceCount, tokensUsed, the commitments inferred and armed, the event count and
serialized size of every history (target: under 200 events and 1 MB each) with a
PASS/FAIL check that no entry text or secret value is in them, and an in-process replay
of the selection (``memory.distillation.run.select_sources`` with the ExtractiveDistiller's
packing, timed: read + redact, offer, finish, tokenizer calls).

First and nightly dreams (issue 24: a 1M-entry memoryRef's dream at budget 8,000 costs
within 1.5x of a 10k one, children included). Two memoryRefs are seeded inside
PostgreSQL (INSERT ... SELECT over generate_series, no put path, no events), then
VACUUM (ANALYZE)d as autovacuum would: a --backlog-baseline one (default 10,000 episodic
entries: the N=10,000 corpus's texts, pins and priorities, newest first) and a --backlog
one (default 1,000,000) holding the same entries plus older, ordinary (unpinned, normal
priority) ones, so both queues have the same head and any difference is the memory's
size. Per memoryRef: (a) the FIRST dream (its commitment inference parses every
commitment-like entry once and sets the watermark: bounded one-time work, which grows
with the memory; checked to complete and to grow at most linearly), then (b) --nights
NIGHTLY dreams, each once the worker is idle (the night between two dreams: what the
previous one armed has run) and after a night's 200 new entries (texts like the
corpus's plus 4 reminders) written through the store's put path: the steady state the
1.5x target applies to (median reported, ratio met or MISSED). Per dream: rows written
(row-count deltas of the tables a dream writes, plus the entries it claimed or parked)
and the temporary space (growth of pg_total_relation_size of memory_snapshots +
memory_snapshot_items; target 0); the plan of the first two queue pages (EXPLAIN
ANALYZE: index used, sort or not; and page 1 as a generic plan, which a pooled
connection's cached prepared statement may switch to after five executions, for
information) and the commit's MEMORY-INDEX refresh timed alone (in process, rolled
back). Checked: every dream completes and passes its history
and SR-1 checks, no temporary growth, the nightly dreams' rows read and written within
1.5x of the baseline's, the big memoryRef's queue pages read over
ix_entries_distill_queue without a sort, the first dream's time at most linear in the
memory. --backlog 0 skips these rows. --quick runs N=1,000 only and a 10,000-entry
memoryRef beside a 1,000-entry one, one night each.

Results go to benchmarks/results/distillation.json (distillation-quick.json with
--quick). The exit status is 1 when a check fails or a dream fails for a reason other
than an unmeetable budget.
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
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, literal, select, text
from sqlalchemy.dialects import postgresql
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from benchmarks.common import bench_server, fresh_database
from benchmarks.corpus import fill
from benchmarks.dream_steps import (
    STEPS,
    RowsRead,
    activity_spans,
    consolidation_and_inference_rows,
    dream_histories,
    history_span_s,
    step_times,
    wait_until_idle,
)
from memory.distillation.memory_index import refresh_index
from memory.distillation.packing import (
    DistillationOutcome,
    ExtractiveDistiller,
    Packing,
    SourceText,
    TokenCounter,
)
from memory.distillation.queue import candidates_page
from memory.distillation.run import PAGE, select_sources
from memory.redaction.chokepoint import write_redacted
from memory.redaction.vault import StaticSecretVault, registry_for_tenant
from memory.storage import tables
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore, StoreLimits
from memory.tokens import count_tokens_batch, get_encoding
from runtime import search_attributes
from runtime.binaries import temporal_cli
from runtime.converter import data_converter
from runtime.history_audit import searchable_text
from runtime.settings import Settings
from schemas.capabilities import MAX_TOKEN_BUDGET
from schemas.errors import TokenBudgetExceeded
from schemas.memory_entry import NewMemoryEntry, Priority, Tier
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DistillMemoryRequest, DreamInput, DreamResult
from worker import build_worker
from workflows.dream import DreamWorkflow

RESULTS_DIR = Path(__file__).with_name("results")
DEFAULT_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000,)
DEFAULT_BACKLOG = (1_000_000, 10_000)  # (backlog, baseline)
QUICK_BACKLOG = (10_000, 1_000)
DEFAULT_NIGHTS = 3
# A night's new entries, written through the store's put path before a nightly dream.
NIGHTLY_ENTRIES = 200
LOAD_BATCH = 1_000
TENANT = "bench"
SEED = 11
SECRET_COUNT = 20
DUPLICATE_FRACTION = 0.05
PINNED_FRACTION = 0.01
SECRET_FRACTION = 0.02
MAX_HISTORY_EVENTS = 200
MAX_HISTORY_BYTES = 1_000_000
EXPECTED_FAILURES = {TokenBudgetExceeded.code}
# Tables a dream may write; the temporary (copy) ones must not grow at all.
WRITTEN_TABLES = (
    "memory_entries",
    "memory_archives",
    "memory_events",
    "memory_snapshots",
    "memory_snapshot_items",
    "workspace_files",
    "distillation_runs",
    "memory_lineage",
    "memory_conflicts",
    "consolidation_passes",
    "commitments",
)
TEMPORARY_TABLES = ("memory_snapshots", "memory_snapshot_items")
QUEUE_INDEX = "ix_entries_distill_queue"
# The big memoryRef's nightly dream may read and write at most this many times the
# baseline's rows.
BACKLOG_SLACK = 1.5
# Issue 24: the nightly dream of a 1M-entry memoryRef within 1.5x of a 10k one. Reported
# (met/MISSED), not checked: one dream's wall time is a second of noise.
TIME_TARGET = 1.5

# ---------------------------------------------------------------------- workload

OPENERS = {
    "preference": [
        "{person} prefers {pref}.",
        "User preference: {pref}.",
        "{person} from {company} prefers {pref}.",
    ],
    "fact": [
        "{company} uses {tool} for {purpose}.",
        "{person} is the main contact for {topic} at {company}.",
        "{company} has {seats} seats on the enterprise plan.",
        "The staging environment for {company} is reset every {day}.",
    ],
    "meeting": [
        "Meeting with {person} ({company}) on {date}: discussed {topic}.",
        "Notes from the {day} sync with {company}: {topic} took most of the hour.",
        "Call on {date} with {person} and {person2} about {topic}.",
    ],
    "observation": [
        "Tool call to {tool} returned {seats} open items for {company}.",
        "While working on {topic}, noticed that {company} still uses {tool} for {purpose}.",
        "Step {seats} of the work on {topic}: waiting on {person} to {action}.",
    ],
}
TAILS = [
    "Decision: {decision}.",
    "Action item: {person2} to {action} by {day}.",
    "This came up again in the last support ticket.",
    "Confirmed twice, most recently by {person}.",
    "Worth double-checking before the next renewal conversation with {company}.",
    "{person} said it is a hard requirement, not a nice-to-have.",
    "Related: {topic} is still open on their side.",
    "If this changes, update the account plan for {company}.",
    "They asked us not to raise {topic} until the budget is approved.",
]
SECRET_SENTENCES = [
    "The {tool} API key for {company} is {secret}.",
    "Staging password for {company}: {secret} (rotate after the pilot).",
    "Use token {secret} when calling the {tool} export endpoint.",
]
KINDS = ["preference", "fact", "meeting", "observation"]
TAGS = [
    "customer",
    "billing",
    "product",
    "support",
    "sales",
    "engineering",
    "security",
    "onboarding",
    "renewal",
    "pricing",
    "contract",
    "action-item",
    "decision",
    "follow-up",
    "integration",
    "compliance",
    "infra",
    "database",
    "incident",
    "migration",
]
TAG_WEIGHTS = [1.0 / (rank + 1) for rank in range(len(TAGS))]


def make_secrets(rng: random.Random) -> dict[str, str]:
    """~20 secrets of the shapes vaults hold: API keys, tokens, passwords."""
    makers: list[Callable[[], str]] = [
        lambda: f"sk_live_{rng.getrandbits(96):024x}",
        lambda: f"ghp_{rng.getrandbits(144):036x}",
        lambda: "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16)),
        lambda: f"xoxb-{rng.randint(10**11, 10**12)}-{rng.getrandbits(64):016x}",
        lambda: f"Tr0ub4dor&{rng.getrandbits(32):08x}!",
    ]
    return {f"bench-secret-{i:02d}": makers[i % len(makers)]() for i in range(SECRET_COUNT)}


def memory_text(rng: random.Random, low: int, high: int, secret: str | None) -> str:
    """Plausible agent-memory text of low..high characters (a secret, if any, is kept)."""
    target = int(rng.triangular(low, high, low + (high - low) // 3))
    kind = rng.choice(KINDS)
    parts = [fill(rng.choice(OPENERS[kind]), rng)]
    if secret is not None:
        parts.append(fill(rng.choice(SECRET_SENTENCES), rng, secret=secret))
    keep = len(" ".join(parts))
    tails = rng.sample(TAILS, len(TAILS))  # no sentence twice in one entry
    while len(" ".join(parts)) < target and tails:
        parts.append(fill(tails.pop(), rng))
    body = " ".join(parts)
    if len(body) > high:
        cut = body.rfind(" ", keep, high)
        body = body[: cut if cut > 0 else high].rstrip(" ,.:;") + "."
    return body


@dataclass(frozen=True)
class Corpus:
    entries: list[NewMemoryEntry]
    secrets: dict[str, str]
    duplicates: int
    pinned: int
    with_secret: int

    @property
    def contents(self) -> list[str]:
        return [entry.content for entry in self.entries]

    def summary(self) -> dict[str, Any]:
        lengths = [len(c) for c in self.contents]
        return {
            "entries": len(self.entries),
            "mean_chars": round(statistics.fmean(lengths), 1),
            "min_chars": min(lengths),
            "max_chars": max(lengths),
            "total_mb": round(sum(len(c.encode()) for c in self.contents) / 1e6, 2),
            "exact_duplicates": self.duplicates,
            "pinned": self.pinned,
            "with_raw_secret": self.with_secret,
            "working_tier": sum(e.tier is Tier.WORKING for e in self.entries),
            "episodic_tier": sum(e.tier is Tier.EPISODIC for e in self.entries),
        }


def build_corpus(size: int, secrets: dict[str, str], rng: random.Random) -> Corpus:
    """Pinned entries are short, crisp facts (100-180 chars); 10% of them carry a secret,
    as a pinned credential is exactly what SR-1 must catch on the way into an archive."""
    values = list(secrets.values())
    entries: list[NewMemoryEntry] = []
    duplicates = pinned_count = with_secret = 0
    for i in range(size):
        pinned = rng.random() < PINNED_FRACTION
        if i > 0 and not pinned and rng.random() < DUPLICATE_FRACTION:
            content = entries[rng.randrange(i)].content  # an exact repeat
            duplicates += 1
        else:
            secret = None
            if rng.random() < (0.10 if pinned else SECRET_FRACTION):
                secret = rng.choice(values)
            low, high = (100, 180) if pinned else (100, 600)
            content = memory_text(rng, low, high, secret)
        with_secret += any(value in content for value in values)
        pinned_count += pinned
        want = rng.choices([1, 2, 3, 4], weights=[3, 4, 2, 1])[0]
        tags = list(dict.fromkeys(rng.choices(TAGS, weights=TAG_WEIGHTS, k=want)))
        entries.append(
            NewMemoryEntry(
                content=content,
                tags=tuple(tags),
                tier=Tier.WORKING if rng.random() < 0.25 else Tier.EPISODIC,
                pinned=pinned,
                priority=rng.choices(
                    [Priority.LOW, Priority.NORMAL, Priority.HIGH], weights=[1, 8, 1]
                )[0],
            )
        )
    return Corpus(entries, secrets, duplicates, pinned_count, with_secret)


# ---------------------------------------------------------------------- infrastructure


async def server_info(store: PostgresMemoryStore) -> dict[str, str]:
    info: dict[str, str] = {}
    async with store.engine.connect() as connection:
        for setting in (
            "server_version",
            "shared_buffers",
            "fsync",
            "synchronous_commit",
            "autovacuum",
            "plan_cache_mode",
        ):
            info[setting] = str((await connection.execute(text(f"SHOW {setting}"))).scalar())
    return info


# ---------------------------------------------------------------------- histories


def leaked(haystack: str, contents: Sequence[str], secrets: Sequence[str]) -> list[str]:
    """Which forbidden texts occur: whole entries, a 40-char middle slice of each entry
    (a truncated copy would still be caught), and every secret value."""
    found: list[str] = []
    for content in contents:
        middle = len(content) // 2
        if content in haystack or content[max(0, middle - 20) : middle + 20] in haystack:
            found.append("entry text")
            break
    found += ["secret value" for value in secrets if value in haystack][:1]
    return found


# ---------------------------------------------------------------------- one run


@dataclass
class Run:
    size: int
    budget: int
    memory_ref: str
    kind: str = "first"  # first, or nightly (after a night's new entries)
    load_s: float = 0.0
    wall_s: float = 0.0
    status: str = ""
    rows_read: int = 0  # distillation's: the queue rows its pages read
    source_count: int = 0
    tokens_used: int = 0
    deferred_count: int = 0
    oversized_count: int = 0
    output_id: str | None = None
    consolidation: dict[str, Any] = field(default_factory=dict)
    commitments: dict[str, Any] = field(default_factory=dict)
    failure: dict[str, Any] = field(default_factory=dict)
    histories: dict[str, dict[str, Any]] = field(default_factory=dict)
    activities: list[dict[str, Any]] = field(default_factory=list)
    steps: dict[str, float] = field(default_factory=dict)
    replay: dict[str, Any] = field(default_factory=dict)
    read: RowsRead = field(default_factory=RowsRead)
    writes: dict[str, Any] = field(default_factory=dict)
    sr1_output: str = "n/a"
    floor_s: float = 0.0  # tokenizing the memoryRef's whole corpus once

    @property
    def read_floor_s(self) -> float:
        """Tokenizing every row the dream read (all steps), once, serially."""
        return self.read.floor_s

    @property
    def other_s(self) -> float:
        """Wall time outside every step's activities: workflow tasks, child starts,
        the dev server's round trips."""
        return max(0.0, self.wall_s - sum(self.steps.values()))

    @property
    def replay_matches(self) -> bool | None:
        """The in-process selection read and chose exactly what the dream did."""
        if not self.replay or self.status != "distilled":
            return None
        return (
            self.replay["rows_read"] == self.rows_read
            and self.replay["consumed"] == self.source_count
            and self.replay["tokens_used"] == self.tokens_used
        )

    @property
    def completed(self) -> bool:
        return self.status in ("distilled", "nothing-to-distill")

    @property
    def checks_pass(self) -> bool:
        histories_ok = all(h["pass"] for h in self.histories.values())
        dream_ok = self.completed or self.failure.get("type") in EXPECTED_FAILURES
        temporary_ok = self.writes.get("temporary_growth_bytes", 0) == 0
        return (
            histories_ok
            and dream_ok
            and temporary_ok
            and self.sr1_output != "FAIL"
            and self.replay_matches is not False
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "dream": self.kind,
            "token_budget": self.budget,
            "memory_ref": self.memory_ref,
            "status": self.status,
            "failure": self.failure or None,
            "load_s": round(self.load_s, 3),
            "dream_wall_s": round(self.wall_s, 3),
            "steps_s": self.steps,
            "other_s": round(self.other_s, 3),
            "rows_read": self.rows_read,
            "rows_read_by_step": self.read.counts(),
            "source_count": self.source_count,
            "tokens_used": self.tokens_used,
            "deferred_count": self.deferred_count,
            "oversized_count": self.oversized_count,
            "consolidation": self.consolidation or None,
            "commitments": self.commitments or None,
            "read_floor_s": round(self.read_floor_s, 4),
            "dream_over_read_floor": (
                round(self.wall_s / self.read_floor_s, 2) if self.read_floor_s else None
            ),
            "tokenize_floor_s": round(self.floor_s, 3),
            "dream_over_floor": round(self.wall_s / self.floor_s, 2) if self.floor_s else None,
            "activities": self.activities,
            "histories": self.histories,
            "writes": self.writes or None,
            "sr1_output_check": self.sr1_output,
            "in_process_replay": self.replay,
            "replay_matches_dream": self.replay_matches,
        }


async def load(store: PostgresMemoryStore, ref: str, corpus: Corpus) -> float:
    """put_many in batches, no secret registry: the raw secrets model values that were
    written before their secret was registered, which the distill pass must redact."""
    began = time.perf_counter()
    for start in range(0, len(corpus.entries), LOAD_BATCH):
        await store.put_many(ref, corpus.entries[start : start + LOAD_BATCH])
    return time.perf_counter() - began


def _application_error(error: BaseException) -> ApplicationError | None:
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = cause.__cause__
    return cause


async def dream(
    client: Client,
    task_queue: str,
    run: Run,
    contents: Sequence[str],
    secrets: Sequence[str],
) -> None:
    """Start a dream, wait for its result, then read its steps and check every history
    (the dream's and each child's) for size and for ``contents``/``secrets``."""
    workflow_id = f"bench-dream-{uuid.uuid4().hex[:10]}"
    began = time.perf_counter()
    handle = await client.start_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=run.memory_ref, token_budget=run.budget),
        id=workflow_id,
        task_queue=task_queue,
    )
    result: DreamResult | None = None
    try:
        result = await handle.result()
    except WorkflowFailureError as error:
        cause = _application_error(error)
        run.status = "failed"
        run.failure = {
            "type": cause.type if cause else type(error.cause).__name__,
            "message": cause.message if cause else str(error.cause),
            "details": list(cause.details) if cause else [],
        }
    run.wall_s = time.perf_counter() - began
    if result is not None:
        distillation = result.distillation
        run.status = distillation.status if distillation else result.status
        if distillation is not None:
            run.rows_read = distillation.snapshot_count
            run.source_count = distillation.source_count
            run.tokens_used = distillation.tokens_used
            run.deferred_count = distillation.deferred_count
            run.oversized_count = distillation.oversized_count
            run.output_id = distillation.output_id
        if result.consolidation is not None:
            c = result.consolidation
            run.consolidation = {
                "input_count": c.input_count,
                "output_count": c.output_count,
                "merged_count": c.merged_count,
                "conflict_count": c.conflict_count,
            }
        if result.commitments is not None:
            inference, armed = result.commitments.inference, result.commitments.armed
            run.commitments = {
                "scanned": inference.scanned,
                "created": inference.created,
                "unparsable": inference.unparsable_count,
                "started": armed.started,
                "deferred_to_horizon": armed.deferred,
            }
    for label, history in (await dream_histories(client, handle)).items():
        serialized = len(history.to_json().encode())
        leaks = leaked(searchable_text(history.to_json()), contents, secrets)
        within = len(history.events) < MAX_HISTORY_EVENTS and serialized < MAX_HISTORY_BYTES
        run.histories[label] = {
            "events": len(history.events),
            "bytes": serialized,
            "span_s": history_span_s(history),
            "leaks": leaks,
            "within_target": within,
            "pass": within and not leaks,
        }
        run.activities += [{"workflow": label, **span} for span in activity_spans(history)]
    order = {step: n for n, step in enumerate(STEPS)}
    run.activities.sort(key=lambda a: order.get(a["step"], len(order)))
    run.steps = step_times(run.activities)


async def check_sr1_output(store: PostgresMemoryStore, run: Run, secrets: dict[str, str]) -> str:
    """The archive and the distilled entry carry no secret value (markers instead)."""
    if run.status != "distilled":
        return "n/a"
    ARCHIVES, ENTRIES = tables.archives, tables.entries
    async with store.engine.connect() as connection:
        bodies = (
            await connection.execute(
                select(ARCHIVES.c.body).where(ARCHIVES.c.memory_ref == run.memory_ref)
            )
        ).scalars()
        texts = [bytes(body).decode("utf-8") for body in bodies]
        texts += list(
            (
                await connection.execute(
                    select(ENTRIES.c.content).where(
                        ENTRIES.c.memory_ref == run.memory_ref,
                        ENTRIES.c.tier == Tier.SEMANTIC.value,
                    )
                )
            ).scalars()
        )
    if any(value in t for t in texts for value in secrets.values()):
        return "FAIL"
    markers = sum(t.count("[REDACTED:") for t in texts)
    return f"PASS ({markers} markers)"


# ---------------------------------------------------------------------- in-process replay


@dataclass
class TimedPacking:
    """A packing that records what it was offered and how long offer/finish took."""

    inner: Packing
    offered: list[SourceText] = field(default_factory=list)
    pages: int = 0
    offer_s: float = 0.0
    finish_s: float = 0.0

    def offer(self, page: Sequence[SourceText]) -> bool:
        began = time.perf_counter()
        try:
            return self.inner.offer(page)
        finally:
            self.offer_s += time.perf_counter() - began
            self.pages += 1
            self.offered.extend(page)

    def finish(self) -> DistillationOutcome:
        began = time.perf_counter()
        try:
            return self.inner.finish()
        finally:
            self.finish_s += time.perf_counter() - began


class TimedDistiller:
    """The ExtractiveDistiller, its packing and its tokenizer calls timed."""

    name = ExtractiveDistiller().name

    def __init__(self) -> None:
        self.packing: TimedPacking | None = None
        self.tokenizer_calls = 0
        self.tokenizer_s = 0.0

    def start(self, budget: int, count_tokens: TokenCounter) -> TimedPacking:
        def counting(text_: str) -> int:
            began = time.perf_counter()
            try:
                return count_tokens(text_)
            finally:
                self.tokenizer_calls += 1
                self.tokenizer_s += time.perf_counter() - began

        self.packing = TimedPacking(ExtractiveDistiller().start(budget, counting))
        return self.packing


async def replay(
    store: PostgresMemoryStore, vault: StaticSecretVault, memory_ref: str, budget: int
) -> tuple[dict[str, Any], list[SourceText]]:
    """The distill activity's selection (select_sources: read the queue page by page,
    redact, pack), in process on the queue the dream is about to read. It writes
    nothing; what the dream adds is the commit (claims, archive, entry, index, events)."""
    registry = registry_for_tenant(vault, TENANT, "bench-replay")
    distiller = TimedDistiller()
    request = DistillMemoryRequest(
        memory_ref=parse_memory_ref(memory_ref), token_budget=budget, run_key="bench-replay"
    )
    consumed = tokens_used = 0
    began = time.perf_counter()
    try:
        selection = await select_sources(
            store.db, request, secrets=registry, distiller=distiller, progress=lambda _: None
        )
        outcome = selection.outcome
        consumed, tokens_used = len(outcome.consumed), outcome.tokens_used
        if outcome.consumed:
            note = f"{consumed} sources, {tokens_used} tokens"
        elif outcome.minimum_required is not None:
            note = f"nothing fits (minimum {outcome.minimum_required})"
        else:
            note = "nothing to distill"
    except TokenBudgetExceeded as error:
        note = f"token_budget_exceeded (minimum {error.minimum_required})"
    select_s = time.perf_counter() - began
    packing = distiller.packing
    assert packing is not None
    texts = [source.content for source in packing.offered]
    # The floor of a budget-bounded dream: tokenizing what it read, once, serially.
    began = time.perf_counter()
    count_tokens_batch(texts)
    read_floor_s = time.perf_counter() - began
    # Redaction runs inside the read loop; re-run alone over the same texts to size it.
    began = time.perf_counter()
    for content in texts:
        write_redacted(content, registry)
    redact_s = time.perf_counter() - began
    phases = {
        "rows_read": len(texts),
        "pages": packing.pages,
        "select_s": round(select_s, 4),
        "read_and_redact_s": round(select_s - packing.offer_s - packing.finish_s, 4),
        "redact_s_approx": round(redact_s, 4),
        "offer_s": round(packing.offer_s, 4),
        "finish_s": round(packing.finish_s, 4),
        "tokenizer_calls": distiller.tokenizer_calls,
        "tokenizer_s": round(distiller.tokenizer_s, 4),
        "consumed": consumed,
        "tokens_used": tokens_used,
        "outcome": note,
        "read_floor_s": round(read_floor_s, 4),
    }
    return phases, packing.offered


async def rows_read(
    store: PostgresMemoryStore, vault: StaticSecretVault, memory_ref: str, budget: int
) -> tuple[dict[str, Any], list[SourceText], RowsRead]:
    """Just before a dream, read-only: the distillation selection replayed in process,
    and the rows the dream's consolidation and inference will load; then the tokenizer
    floor over all of them (the dream's primary floor)."""
    phases, offered = await replay(store, vault, memory_ref, budget)
    consolidate, infer = await consolidation_and_inference_rows(store, memory_ref)
    read = RowsRead(distill=[s.content for s in offered], consolidate=consolidate, infer=infer)
    read.measure_floor()
    return phases, offered, read


# ---------------------------------------------------------------------- backlog row

POOL_TABLE = """
CREATE TEMP TABLE bench_pool (
    i integer PRIMARY KEY,
    content text NOT NULL,
    sha text NOT NULL,
    tags text[] NOT NULL,
    pinned boolean NOT NULL,
    priority smallint NOT NULL
) ON COMMIT DROP
"""
POOL_ROW = "INSERT INTO bench_pool VALUES (:i, :content, :sha, :tags, :pinned, :priority)"
# Row k is the k-th newest. Rows k < head take the head corpus's entry k (text, tags, pin,
# priority); older rows cycle through the same texts, unpinned at normal priority, so
# they rank below every pinned and high-priority head entry and below the newer
# normal ones: every backlog seeded from one corpus has the same queue head. One entry a
# second (10k span 2.8 hours, 1M 11.6 days): commitment inference's watermark re-reads
# the minute before it (memory/commitments/scan.py WATERMARK_OVERLAP), the same 60
# entries in both memoryRefs.
SEED_ROWS = """
INSERT INTO memory_entries (
    tenant, memory_ref, id, content, content_sha256, tags, tier, version, pinned,
    priority, metadata, created_at, updated_at, last_accessed_at
)
SELECT
    CAST(:tenant AS text), CAST(:ref AS text),
    'm' || lpad(to_hex(CAST(:newest_ms AS bigint) - k * 1000), 12, '0')
        || substr(md5(CAST(:ref AS text) || k::text), 1, 20),
    p.content, p.sha, p.tags, 'episodic', 1,
    k < CAST(:head AS integer) AND p.pinned,
    CASE WHEN k < CAST(:head AS integer) THEN p.priority ELSE 1 END,
    '{}'::jsonb, t.at, t.at, t.at
FROM generate_series(0, CAST(:size AS integer) - 1) AS k
JOIN bench_pool AS p ON p.i = k % CAST(:head AS integer)
CROSS JOIN LATERAL (
    SELECT CAST(:newest AS timestamptz) - k * interval '1 second' AS at
) AS t
"""


async def seed_backlog(
    store: PostgresMemoryStore, ref: str, head: Corpus, size: int
) -> tuple[float, float]:
    """Write ``size`` undistilled episodic entries into ``ref`` inside PostgreSQL, then
    VACUUM (ANALYZE) the table as autovacuum would. Returns (seed_s, vacuum_s)."""
    pool = [
        {
            "i": i,
            "content": entry.content,
            "sha": hashlib.sha256(entry.content.encode("utf-8")).hexdigest(),
            "tags": list(entry.tags),
            "pinned": entry.pinned,
            "priority": entry.priority.rank,
        }
        for i, entry in enumerate(head.entries)
    ]
    newest = store.now() - timedelta(seconds=1)
    began = time.perf_counter()
    async with store.engine.begin() as connection:
        await connection.execute(text(POOL_TABLE))
        await connection.execute(text(POOL_ROW), pool)
        await connection.execute(
            text(SEED_ROWS),
            {
                "tenant": TENANT,
                "ref": ref,
                "newest_ms": int(newest.timestamp() * 1000),
                "newest": newest,
                "head": len(pool),
                "size": size,
            },
        )
    seed_s = time.perf_counter() - began
    began = time.perf_counter()
    autocommit = store.engine.execution_options(isolation_level="AUTOCOMMIT")
    async with autocommit.connect() as connection:
        await connection.exec_driver_sql("VACUUM (ANALYZE) memory_entries")
    return seed_s, time.perf_counter() - began


async def table_state(store: PostgresMemoryStore, ref: str) -> dict[str, int]:
    """Row counts of every table a dream may write, the bytes of the temporary (copy)
    tables, and this memoryRef's entries marked consumed or parked."""
    counts = ", ".join(f"(SELECT count(*) FROM {name}) AS {name}" for name in WRITTEN_TABLES)
    sizes = " + ".join(f"pg_total_relation_size('{name}')" for name in TEMPORARY_TABLES)
    ENTRIES = tables.entries
    async with store.engine.connect() as connection:
        row = (await connection.execute(text(f"SELECT {counts}, {sizes} AS temporary"))).one()
        marked = (
            await connection.execute(
                select(
                    func.count().filter(ENTRIES.c.distilled_into.is_not(None)),
                    func.count().filter(ENTRIES.c.distill_cost.is_not(None)),
                ).where(ENTRIES.c.tenant == TENANT, ENTRIES.c.memory_ref == ref)
            )
        ).one()
    state = {name: int(row._mapping[name]) for name in WRITTEN_TABLES}
    state["temporary_bytes"] = int(row.temporary)
    state["consumed"], state["parked"] = int(marked[0]), int(marked[1])
    return state


def writes_between(before: dict[str, int], after: dict[str, int]) -> dict[str, Any]:
    inserted = {name: after[name] - before[name] for name in WRITTEN_TABLES}
    updated = (after["consumed"] - before["consumed"]) + (after["parked"] - before["parked"])
    return {
        "inserted": inserted,
        "updated_entries": updated,
        "rows_written": sum(inserted.values()) + updated,
        "temporary_bytes_before": before["temporary_bytes"],
        "temporary_bytes_after": after["temporary_bytes"],
        "temporary_growth_bytes": after["temporary_bytes"] - before["temporary_bytes"],
    }


def _plan_nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [node]
    for child in node.get("Plans", []):
        nodes += _plan_nodes(child)
    return nodes


def _sql_literal(value: object) -> str:
    return str(
        literal(value).compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
    )


async def explain_page(
    store: PostgresMemoryStore,
    ref: str,
    budget: int,
    after: SourceText | None,
    *,
    generic: bool = False,
) -> dict[str, Any]:
    """EXPLAIN ANALYZE of one queue page as select_sources asks for it: planned for its
    values (what PostgreSQL does for the first executions of a prepared statement), or
    with ``generic`` as a generic plan, which a pooled connection's cached prepared
    statement may switch to after five executions."""
    query = candidates_page(
        parse_memory_ref(ref), store.now(), budget=budget, after=after, limit=PAGE
    )
    explain = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)"
    async with store.engine.connect() as connection:
        if generic:
            compiled = query.compile(
                dialect=connection.dialect, compile_kwargs={"render_postcompile": True}
            )
            args = ", ".join(_sql_literal(compiled.params[n]) for n in compiled.positiontup or ())
            await connection.exec_driver_sql("SET LOCAL plan_cache_mode = force_generic_plan")
            await connection.exec_driver_sql(f"PREPARE bench_queue_page AS {compiled.string}")
            try:
                raw = (
                    await connection.exec_driver_sql(f"{explain} EXECUTE bench_queue_page({args})")
                ).scalar_one()
            finally:
                await connection.rollback()
                await connection.exec_driver_sql("DEALLOCATE bench_queue_page")
        else:
            compiled = query.compile(
                dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}
            )
            raw = (await connection.exec_driver_sql(f"{explain} {compiled}")).scalar_one()
    document = json.loads(raw) if isinstance(raw, str) else raw
    top = document[0]
    nodes = _plan_nodes(top["Plan"])
    return {
        "nodes": [
            node["Node Type"] + (f" using {node['Index Name']}" if "Index Name" in node else "")
            for node in nodes
        ],
        "uses_queue_index": any(node.get("Index Name") == QUEUE_INDEX for node in nodes),
        "sort": any("Sort" in node["Node Type"] for node in nodes),
        "rows": int(top["Plan"].get("Actual Rows", 0)),
        "removed_by_filter": sum(int(node.get("Rows Removed by Filter", 0)) for node in nodes),
        "shared_blocks": int(top["Plan"].get("Shared Hit Blocks", 0))
        + int(top["Plan"].get("Shared Read Blocks", 0)),
        "temp_blocks": int(top["Plan"].get("Temp Written Blocks", 0)),
        "planning_ms": round(float(top.get("Planning Time", 0.0)), 3),
        "execution_ms": round(float(top.get("Execution Time", 0.0)), 3),
    }


async def time_index_refresh(store: PostgresMemoryStore, ref: str) -> float:
    """The commit's MEMORY-INDEX refresh alone, in process, in a transaction that is
    rolled back (so nothing is written)."""
    async with store.engine.connect() as connection:
        transaction = await connection.begin()
        began = time.perf_counter()
        await refresh_index(connection, parse_memory_ref(ref), store.now())
        elapsed = time.perf_counter() - began
        await transaction.rollback()
    return elapsed


NIGHTLY_COMMITMENTS = (
    "Remind me in 2 hours to {action} for {company}.",
    "Remind me in 3 days to {action} for {company}.",
    "Follow up with {person} when the contract with {company} is signed.",
    "Remind me on {day} to follow up with {person} about {topic}.",
)


def nightly_entries(rng: random.Random) -> list[NewMemoryEntry]:
    """A night's new entries: NIGHTLY_ENTRIES texts like the corpus's, a few of them
    commitments, in the tiers distillation reads."""
    texts = [fill(template, rng) for template in NIGHTLY_COMMITMENTS]
    texts += [memory_text(rng, 100, 600, None) for _ in range(NIGHTLY_ENTRIES - len(texts))]
    rng.shuffle(texts)
    # Ids from the seeded generator: a night's entries share one created_at, so the queue
    # orders them by id, and random ids made the nightly dream's packing (and whether it
    # read a second page) differ from run to run.
    night = rng.getrandbits(32)
    return [
        NewMemoryEntry(
            id=f"night-{night:08x}-{position:03d}",
            content=content,
            tags=tuple(dict.fromkeys(rng.choices(TAGS, weights=TAG_WEIGHTS, k=2))),
            tier=Tier.WORKING if rng.random() < 0.25 else Tier.EPISODIC,
        )
        for position, content in enumerate(texts)
    ]


@dataclass
class Backlog:
    size: int
    budget: int
    memory_ref: str
    seed_s: float = 0.0
    vacuum_s: float = 0.0
    table_entries: int = 0
    index_refresh_s: float = 0.0
    corpus_floor_s: float = 0.0
    first: Run = field(default_factory=lambda: Run(0, 0, ""))
    nights: list[Run] = field(default_factory=list)
    night_put_s: list[float] = field(default_factory=list)
    night_idle_wait_s: list[float] = field(default_factory=list)
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    generic_plans: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def dreams(self) -> list[Run]:
        return [self.first, *self.nights]

    @property
    def nightly_s(self) -> float:
        return statistics.median(d.wall_s for d in self.nights) if self.nights else 0.0

    @property
    def nightly_steps(self) -> dict[str, float]:
        """Per step, the median over the nights."""
        if not self.nights:
            return {}
        return {
            step: round(statistics.median(d.steps.get(step, 0.0) for d in self.nights), 3)
            for step in STEPS
        }

    @property
    def plans_ok(self) -> bool:
        """Every queue page is read over the queue index, with no sort. Required of the
        big memoryRef only: for a small one the planner may rightly sort a few rows."""
        return all(p["uses_queue_index"] and not p["sort"] for p in self.plans.values())

    @property
    def checks_pass(self) -> bool:
        return all(d.checks_pass and d.status == "distilled" for d in self.dreams)

    def to_json(self) -> dict[str, Any]:
        return {
            "backlog": self.size,
            "token_budget": self.budget,
            "memory_ref": self.memory_ref,
            "seed_s": round(self.seed_s, 3),
            "vacuum_analyze_s": round(self.vacuum_s, 3),
            "memory_entries_rows_in_table": self.table_entries,
            "corpus_tokenize_floor_s": round(self.corpus_floor_s, 3),
            "first_dream_s": round(self.first.wall_s, 3),
            "nightly_dream_median_s": round(self.nightly_s, 3),
            "nightly_steps_median_s": self.nightly_steps,
            "night_put_s": [round(t, 3) for t in self.night_put_s],
            "night_idle_wait_s": [round(t, 1) for t in self.night_idle_wait_s],
            "index_refresh_s": round(self.index_refresh_s, 3),
            "queue_page_plans": self.plans,
            "queue_page_generic_plans": self.generic_plans,
            "first": self.first.to_json(),
            "nights": [d.to_json() for d in self.nights],
        }


async def observed_dream(
    client: Client,
    task_queue: str,
    store: PostgresMemoryStore,
    vault: StaticSecretVault,
    run: Run,
    contents: Sequence[str],
) -> list[SourceText]:
    """One dream with what it read replayed just before it and what it wrote counted
    around it; returns the distillation replay's offered rows (for the queue plans)."""
    run.replay, offered, run.read = await rows_read(store, vault, run.memory_ref, run.budget)
    before = await table_state(store, run.memory_ref)
    secrets = list(vault.secrets_for(TENANT).values())
    await dream(client, task_queue, run, contents, secrets)
    after = await table_state(store, run.memory_ref)
    run.writes = writes_between(before, after)
    run.sr1_output = await check_sr1_output(store, run, dict(vault.secrets_for(TENANT)))
    return offered


async def run_backlog(
    client: Client,
    task_queue: str,
    store: PostgresMemoryStore,
    vault: StaticSecretVault,
    head: Corpus,
    size: int,
    budget: int,
    nights: int,
) -> Backlog:
    """Seed a memoryRef of ``size`` entries, then its first dream and ``nights`` nightly
    dreams, each after a night's new entries written through ``store.put_many``."""
    ref = f"mem://{TENANT}/backlog-{size}-{uuid.uuid4().hex[:6]}"
    row = Backlog(size=size, budget=budget, memory_ref=ref)
    row.seed_s, row.vacuum_s = await seed_backlog(store, ref, head, size)
    # The secondary floor: the memoryRef's whole corpus (the seeded rows cycle the head
    # corpus's texts), tokenized once.
    texts = head.contents
    began = time.perf_counter()
    count_tokens_batch([texts[k % len(texts)] for k in range(size)])
    row.corpus_floor_s = time.perf_counter() - began
    row.plans["page 1"] = await explain_page(store, ref, budget, None)
    row.generic_plans["page 1"] = await explain_page(store, ref, budget, None, generic=True)
    row.first = Run(size=size, budget=budget, memory_ref=ref, floor_s=row.corpus_floor_s)
    offered = await observed_dream(client, task_queue, store, vault, row.first, head.contents)
    if len(offered) >= PAGE:
        # The page the first dream's second page was (it is consumed now: the plan is of
        # the same statement with the same cursor, over what is left).
        row.plans["page 2"] = await explain_page(store, ref, budget, offered[PAGE - 1])
    rng = random.Random(SEED + size + 1)
    contents = list(head.contents)
    for _ in range(nights):
        row.night_idle_wait_s.append(await wait_until_idle(client, task_queue))
        entries = nightly_entries(rng)
        contents += [entry.content for entry in entries]
        began = time.perf_counter()
        await store.put_many(ref, entries)
        row.night_put_s.append(time.perf_counter() - began)
        night = Run(
            size=size, budget=budget, memory_ref=ref, kind="nightly", floor_s=row.corpus_floor_s
        )
        await observed_dream(client, task_queue, store, vault, night, contents)
        row.nights.append(night)
    row.table_entries = (await table_state(store, ref))["memory_entries"]
    row.index_refresh_s = await time_index_refresh(store, ref)
    print(
        f"  memoryRef of {size}: seeded in {row.seed_s:.1f}s (+ VACUUM ANALYZE "
        f"{row.vacuum_s:.1f}s); first dream {row.first.status} in {row.first.wall_s:.2f}s; "
        f"{nights} nightly dream(s): "
        + ", ".join(f"{d.status} in {d.wall_s:.2f}s" for d in row.nights)
        + " (the worker idle before each after "
        + ", ".join(f"{t:.0f}s" for t in row.night_idle_wait_s)
        + ")",
        flush=True,
    )
    return row


# ---------------------------------------------------------------------- output


def fmt_bytes(size: int) -> str:
    return f"{size / 1024:.1f}KB" if size < 1_000_000 else f"{size / 1e6:.2f}MB"


def fmt_ratio(big: float, small: float) -> str:
    return f"{big / small:.2f}x" if small else "-"


STEP_HEADER = " ".join(f"{step:>7}" for step in (*STEPS, "other"))


def step_cells(r: Run) -> str:
    return " ".join(f"{r.steps.get(step, 0.0):>7.2f}" for step in STEPS) + f" {r.other_s:>7.2f}"


def floor_cells(r: Run) -> str:
    counts = r.read.counts()
    read = f"{counts['distill']}/{counts['consolidate']}/{counts['infer']}"
    return (
        f"{read:>17} {r.read_floor_s:>8.3f} {fmt_ratio(r.wall_s, r.read_floor_s):>9} "
        f"{r.floor_s:>8.3f} {fmt_ratio(r.wall_s, r.floor_s):>9}"
    )


FLOOR_HEADER = (
    f"{'rows read d/c/i':>17} {'read fl':>8} {'/read fl':>9} {'corp fl':>8} {'/corp fl':>9}"
)
FLOOR_NOTE = (
    "(steps: seconds from the histories, by activity type; other: the rest of the wall time "
    "(workflow tasks, child starts); rows read d/c/i: the rows distillation, consolidation "
    "and inference loaded, replayed just before the dream; read fl: tokenizing those rows "
    "once, serially, the PRIMARY floor; corp fl: tokenizing the memoryRef's whole corpus "
    "once; /read fl and /corp fl: the dream's wall time over each)"
)


def commitment_note(r: Run) -> str:
    c = r.commitments
    if not c:
        return "no commitment step in the result"
    return (
        f"inference scanned {c['scanned']}, {c['created']} new commitments "
        f"({c['unparsable']} unparsable); arming started {c['started']}, "
        f"{c['deferred_to_horizon']} left to the horizon workflow"
    )


def print_table(runs: Sequence[Run]) -> None:
    print("first dream of a freshly loaded memoryRef (put_many), per budget")
    header = (
        f"{'N':>7} {'budget':>7} {'status':<10} {'load s':>7} {'dream s':>8} "
        f"{STEP_HEADER} {FLOOR_HEADER}"
    )
    print(header)
    print("-" * len(header))
    for r in runs:
        print(
            f"{r.size:>7} {r.budget:>7} {r.status:<10} {r.load_s:>7.2f} {r.wall_s:>8.2f} "
            f"{step_cells(r)} {floor_cells(r)}"
        )
        if r.failure:
            print(f"{'':>17}-> {r.failure['type']}: {r.failure['message']}")
    print(FLOOR_NOTE)
    for r in runs:
        print(
            f"  N={r.size} budget={r.budget}: {r.source_count} sources, {r.tokens_used} "
            f"tokens, {r.deferred_count} deferred; {commitment_note(r)}"
        )
    print()
    print(
        f"histories (target: < {MAX_HISTORY_EVENTS} events and < "
        f"{MAX_HISTORY_BYTES // 1_000_000} MB each; no entry text or secret in them)"
    )
    for r in runs:
        print_history(r, f"N={r.size} budget={r.budget}")
    print()
    print("where the dream's time goes (activity run time from the histories; in-process")
    print("replay of the selection, select_sources, on the same queue just before the dream)")
    for r in runs:
        print_breakdown(r, f"N={r.size} budget={r.budget}")


def print_history(r: Run, label: str) -> None:
    parts = [
        f"{name} {h['events']} events / {fmt_bytes(h['bytes'])}" for name, h in r.histories.items()
    ]
    verdict = "PASS" if all(h["pass"] for h in r.histories.values()) else "FAIL"
    leaks = sorted({leak for h in r.histories.values() for leak in h["leaks"]})
    leak_note = f" LEAKED: {', '.join(leaks)}" if leaks else ""
    print(f"  history {label}: {'; '.join(parts)} -> {verdict}{leak_note}")


def print_breakdown(r: Run, label: str) -> None:
    acts = ", ".join(
        f"{a['activity']} {a['run_s']:.2f}s"
        + (f" (queued {a['queued_s']:.2f}s)" if a["queued_s"] >= 0.1 else "")
        + (f" [{a['status']}]" if a["status"] != "completed" else "")
        + (f" [attempt {a['attempt']}]" if a["attempt"] > 1 else "")
        for a in r.activities
    )
    print(f"  {label}: {acts}")
    rp = r.replay
    if rp:
        distill_s = sum(a["run_s"] for a in r.activities if a["activity"] == "distill_memory")
        match = {True: "= the dream's", False: "DIFFERS from the dream's", None: ""}
        print(
            f"    replay: {rp['rows_read']} rows in {rp['pages']} page(s), select "
            f"{rp['select_s']:.3f}s = read+redact {rp['read_and_redact_s']:.3f}s (redact "
            f"~{rp['redact_s_approx']:.3f}s) + offer {rp['offer_s']:.3f}s "
            f"({rp['tokenizer_calls']} texts tokenized in {rp['tokenizer_s']:.3f}s) + finish "
            f"{rp['finish_s']:.3f}s; {rp['outcome']} {match[r.replay_matches]}".rstrip()
        )
        if distill_s:
            rest = max(0.0, distill_s - rp["select_s"])
            print(f"    commit and the rest of distill_memory: ~{rest:.3f}s")
    print(f"    SR-1 output (archive + distilled entry): {r.sr1_output}")


def first_linear(rows: Sequence[Backlog]) -> bool:
    """The first dream of the big memoryRef completes and costs at most linearly more
    than the baseline's (its one-time inference scan grows with the memory)."""
    small, big = rows[0], rows[-1]
    return big.first.completed and big.first.wall_s <= small.first.wall_s * big.size / small.size


def backlog_pass(rows: Sequence[Backlog]) -> bool:
    if not rows:
        return True
    small, big = rows[0], rows[-1]
    if not all(row.checks_pass for row in rows) or not big.plans_ok:
        return False
    if big is small or not big.nights:
        return first_linear(rows)
    grows = any(
        b.rows_read > BACKLOG_SLACK * s.rows_read
        or b.writes["rows_written"] > BACKLOG_SLACK * s.writes["rows_written"]
        for s, b in zip(small.nights, big.nights, strict=True)
    )
    return first_linear(rows) and not grows


def print_backlog(rows: Sequence[Backlog]) -> None:
    if not rows:
        return
    small, big = rows[0], rows[-1]
    print()
    print(
        f"first and nightly dreams, budget {big.budget}, the same queue head in both "
        f"(issue 24: the nightly dream of a 1M-entry memoryRef within {TIME_TARGET}x of a "
        f"10k one, children included)"
    )
    header = (
        f"{'entries':>8} {'dream':<8} {'dream s':>8} {STEP_HEADER} {FLOOR_HEADER} {'written':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        for run in row.dreams:
            print(
                f"{row.size:>8} {run.kind:<8} {run.wall_s:>8.2f} {step_cells(run)} "
                f"{floor_cells(run)} {run.writes['rows_written']:>8}"
            )
        if row.nights:
            nightly = Run(row.size, row.budget, row.memory_ref, kind="median")
            nightly.wall_s, nightly.steps = row.nightly_s, row.nightly_steps
            print(f"{row.size:>8} {'median':<8} {nightly.wall_s:>8.2f} {step_cells(nightly)}")
    print(FLOOR_NOTE)
    print(
        "(first: the memoryRef's first dream after seeding; nightly: once the worker is "
        "idle (the night between two dreams: what the previous one armed has run), after "
        f"a night's {NIGHTLY_ENTRIES} new entries (texts like the corpus's plus 4 "
        "reminders) written with put_many; median: of the nights, per column; written: "
        "rows the dream inserted or updated)"
    )
    for row in rows:
        waits = ", ".join(f"{t:.0f}s" for t in row.night_idle_wait_s)
        print(f"  {row.size}: waited for the worker to go idle before each night: {waits}")
    for row in rows:
        for run in row.dreams:
            print(f"  {row.size} {run.kind}: {commitment_note(run)}")
    if big is not small:
        ratio = fmt_ratio(big.size, small.size)
        if big.nights and small.nights:
            met = big.nightly_s <= TIME_TARGET * small.nightly_s
            steps = ", ".join(
                f"{step} {fmt_ratio(big.nightly_steps[step], small.nightly_steps[step])}"
                for step in STEPS
            )
            print(
                f"  {big.size}/{small.size} NIGHTLY dream: "
                f"{fmt_ratio(big.nightly_s, small.nightly_s)} ({big.nightly_s:.2f}s / "
                f"{small.nightly_s:.2f}s, medians; target at most {TIME_TARGET}x: "
                f"{'met' if met else 'MISSED'}); per step: {steps}"
            )
        first_ok = first_linear(rows)
        print(
            f"  {big.size}/{small.size} FIRST dream: "
            f"{fmt_ratio(big.first.wall_s, small.first.wall_s)} ({big.first.wall_s:.2f}s / "
            f"{small.first.wall_s:.2f}s) for {ratio} the memory: "
            f"{'at most linear, completed' if first_ok else 'MORE than linear or failed'}. "
            f"Why it grows: commitment inference's first scan parses every commitment-like "
            f"entry once and sets the watermark ({big.first.commitments.get('scanned', 0)} "
            f"rows against {small.first.commitments.get('scanned', 0)}: infer "
            f"{fmt_ratio(big.first.steps['infer'], small.first.steps['infer'])}), and arming "
            f"starts the workflows of the promises among them due within a day "
            f"({big.first.commitments.get('started', 0)} against "
            f"{small.first.commitments.get('started', 0)}: arm "
            f"{big.first.steps['arm']:.2f}s against {small.first.steps['arm']:.2f}s); bounded "
            f"one-time work, the nights after it read only what changed"
        )
        print(
            f"  -> {'PASS' if backlog_pass(rows) else 'FAIL'} (checked: every dream completed "
            f"and passed its history and SR-1 checks, no temporary growth, the nightly "
            f"dreams' rows read and written within {BACKLOG_SLACK}x of the baseline's, the "
            f"big memoryRef's queue pages read over {QUEUE_INDEX} with no sort, the first "
            f"dream at most linear; the nightly time ratio is reported, not checked)"
        )
        refresh = ", ".join(f"{row.size} entries {row.index_refresh_s:.3f}s" for row in rows)
        print(
            f"  the commit's MEMORY-INDEX refresh alone (memory_index.refresh_index in process, "
            f"rolled back; counts from the maintained per-ref counters): {refresh}"
        )
    for row in rows:
        for run in row.dreams:
            w = run.writes
            inserted = ", ".join(
                f"{name.removeprefix('memory_')} +{n}" for name, n in w["inserted"].items() if n
            )
            print(
                f"  rows written, {row.size} {run.kind}: {inserted or 'none'}; "
                f"{w['updated_entries']} entries updated (claimed/parked); temporary tables "
                f"{fmt_bytes(w['temporary_bytes_before'])} -> "
                f"{fmt_bytes(w['temporary_bytes_after'])}"
            )
    for row in rows:
        plans = [(page, plan) for page, plan in row.plans.items()]
        plans += [(f"{page} (generic plan)", plan) for page, plan in row.generic_plans.items()]
        for page, plan in plans:
            print(
                f"  queue {page}, {row.size} entries: {' <- '.join(plan['nodes'])}; "
                f"{plan['rows']} rows, {plan['removed_by_filter']} removed by filter, "
                f"{plan['shared_blocks']} buffers, {plan['temp_blocks']} temp blocks, "
                f"{'a sort' if plan['sort'] else 'no sort'}; planning "
                f"{plan['planning_ms']:.2f} ms, execution {plan['execution_ms']:.2f} ms"
            )
    print(
        "  (generic plan: plan_cache_mode=force_generic_plan, the plan a pooled connection's "
        "cached prepared statement may switch to after five executions; reported, not checked)"
    )
    for row in rows:
        for run in row.dreams:
            print_history(run, f"{row.size} {run.kind}")
            print_breakdown(run, f"{row.size} {run.kind}")


# ---------------------------------------------------------------------- main


async def run_benchmark(
    sizes: Sequence[int],
    budgets: Sequence[int],
    quick: bool,
    backlog: tuple[int, int] | None = None,
    nights: int = 1,
) -> dict[str, Any]:
    rng = random.Random(SEED)
    secrets = make_secrets(rng)
    vault = StaticSecretVault({TENANT: secrets})
    get_encoding()  # load the rank file once, outside every timing
    runs: list[Run] = []
    backlogs: list[Backlog] = []
    corpora: dict[int, dict[str, Any]] = {}
    started = time.perf_counter()
    async with (
        bench_server("distillation-bench") as server,
        fresh_database(server, "distillation_bench") as url,
    ):
        engine = create_engine(url.render_as_string(hide_password=False), pool_size=4)
        try:
            await migrate(engine)
            store = PostgresMemoryStore(engine, limits=StoreLimits(capacity={}))
            # Loading is timed apart from the dream; without vectors it takes seconds
            # instead of minutes at 100k (the dream reads no stored vector: the
            # distiller's restatement check embeds what it reads itself).
            loader = PostgresMemoryStore(engine, limits=StoreLimits(capacity={}), embedder=None)
            info = await server_info(store)
            env = await WorkflowEnvironment.start_local(
                data_converter=data_converter,
                dev_server_existing_path=temporal_cli(),
                search_attributes=list(search_attributes.ALL),
            )
            try:
                task_queue = f"distillation-bench-{uuid.uuid4().hex[:8]}"
                worker = build_worker(
                    env.client, Settings(AGENT_MEMORY_TASK_QUEUE=task_queue), store, vault
                )
                print(
                    f"PostgreSQL {info['server_version']} ({server.source}), Temporal dev "
                    f"server, in-process worker; {len(secrets)} secrets in the tenant's vault"
                )
                print(
                    "store: StoreLimits(capacity={}) -- working/episodic tiers UNCAPPED "
                    "(default caps them at 1,000 entries per memoryRef); autovacuum "
                    f"{info['autovacuum']}, plan_cache_mode {info['plan_cache_mode']}"
                )
                async with worker:
                    for size in sizes:
                        corpus = build_corpus(size, secrets, random.Random(SEED + size))
                        began = time.perf_counter()
                        counts = count_tokens_batch(corpus.contents)
                        floor_s = time.perf_counter() - began
                        unique = dict(zip(corpus.contents, counts, strict=True))
                        summary = corpus.summary() | {
                            "tokens": sum(counts),
                            "unique_tokens": sum(unique.values()),
                            # each unique text once as input plus its "- text\n" line
                            "budget_to_consume_all_approx": 2 * sum(unique.values())
                            + 2 * len(unique),
                            "tokenize_floor_s": round(floor_s, 3),
                        }
                        corpora[size] = summary
                        print(
                            f"\nN={size}: {summary['mean_chars']} chars/entry mean "
                            f"({summary['min_chars']}-{summary['max_chars']}), "
                            f"{summary['total_mb']} MB, {summary['exact_duplicates']} exact "
                            f"duplicates, {summary['pinned']} pinned, "
                            f"{summary['with_raw_secret']} with a raw secret; "
                            f"{summary['tokens']} tokens, tokenize floor {floor_s:.3f}s; "
                            f"consuming everything needs ~{summary['budget_to_consume_all_approx']}"
                            f" tokens (max budget {MAX_TOKEN_BUDGET})"
                        )
                        for budget in budgets:
                            ref = f"mem://{TENANT}/n{size}-b{budget}-{uuid.uuid4().hex[:6]}"
                            run = Run(size=size, budget=budget, memory_ref=ref, floor_s=floor_s)
                            run.load_s = await load(loader, ref, corpus)
                            run.replay, _, run.read = await rows_read(store, vault, ref, budget)
                            await dream(
                                env.client, task_queue, run, corpus.contents, list(secrets.values())
                            )
                            run.sr1_output = await check_sr1_output(store, run, secrets)
                            runs.append(run)
                            print(
                                f"  budget {budget}: loaded in {run.load_s:.1f}s, dream "
                                f"{run.status} in {run.wall_s:.2f}s",
                                flush=True,
                            )
                    if backlog is not None:
                        big, baseline = backlog
                        head = build_corpus(baseline, secrets, random.Random(SEED + baseline))
                        print(
                            f"\nfirst and nightly dreams: {baseline} entries (the N={baseline} "
                            f"corpus, all episodic) and {big} (the same plus {big - baseline} "
                            f"older, ordinary ones), seeded with INSERT ... SELECT "
                            f"generate_series; {nights} night(s) of {NIGHTLY_ENTRIES} new "
                            f"entries each",
                            flush=True,
                        )
                        for size in (baseline, big):
                            backlogs.append(
                                await run_backlog(
                                    env.client,
                                    task_queue,
                                    store,
                                    vault,
                                    head,
                                    size,
                                    budgets[0],
                                    nights,
                                )
                            )
            finally:
                await env.shutdown()
        finally:
            await engine.dispose()
    print()
    print_table(runs)
    print_backlog(backlogs)
    return {
        "benchmark": "distillation_bench",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "seed": SEED,
        "server": {"source": server.source, **info},
        "temporal": "WorkflowEnvironment.start_local (dev server), worker in this process",
        "store_limits": "StoreLimits(capacity={}): working/episodic uncapped",
        "secrets_in_vault": len(secrets),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "total_seconds": round(time.perf_counter() - started, 1),
        "history_targets": {"max_events": MAX_HISTORY_EVENTS, "max_bytes": MAX_HISTORY_BYTES},
        "corpora": corpora,
        "runs": [run.to_json() for run in runs],
        "backlog": [row.to_json() for row in backlogs],
        "backlog_pass": backlog_pass(backlogs) if backlogs else None,
        "pass": all(run.checks_pass for run in runs) and backlog_pass(backlogs),
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--max-budget", type=int, default=MAX_TOKEN_BUDGET)
    parser.add_argument(
        "--backlog",
        type=int,
        default=None,
        help=f"entries in the big backlog (default {DEFAULT_BACKLOG[0]}; 0 skips the row)",
    )
    parser.add_argument(
        "--backlog-baseline",
        type=int,
        default=None,
        help=f"entries in the baseline backlog (default {DEFAULT_BACKLOG[1]})",
    )
    parser.add_argument(
        "--nights",
        type=int,
        default=None,
        help=f"nightly dreams per memoryRef after its first (default {DEFAULT_NIGHTS}; "
        "1 with --quick)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"N=1000 only, backlog {QUICK_BACKLOG[0]} beside {QUICK_BACKLOG[1]} (smoke test)",
    )
    parser.add_argument("--json", type=Path, default=None)
    return parser.parse_args(argv)


def backlog_sizes(args: argparse.Namespace) -> tuple[int, int] | None:
    big, baseline = QUICK_BACKLOG if args.quick else DEFAULT_BACKLOG
    big = big if args.backlog is None else args.backlog
    baseline = baseline if args.backlog_baseline is None else args.backlog_baseline
    if big <= 0:
        return None
    if not 0 < baseline <= big:
        raise SystemExit("--backlog-baseline must be between 1 and --backlog")
    return big, baseline


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = list(QUICK_SIZES) if args.quick else [int(s) for s in args.sizes.split(",") if s]
    budgets = list(dict.fromkeys([args.budget, args.max_budget]))
    nights = args.nights if args.nights is not None else (1 if args.quick else DEFAULT_NIGHTS)
    report = asyncio.run(
        run_benchmark(sizes, budgets, args.quick, backlog_sizes(args), max(0, nights))
    )
    target = args.json or RESULTS_DIR / (
        "distillation-quick.json" if args.quick else "distillation.json"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"\n{'PASS' if report['pass'] else 'FAIL'}; results written to {target}")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
