"""A full DreamWorkflow end to end at 1k, 10k and 100k entries in one memoryRef.

    python -m benchmarks.distillation_bench [--sizes 1000,10000,100000] [--budget 8000]
                                            [--max-budget 100000] [--quick] [--json PATH]

Starts an embedded PostgreSQL in a temporary directory (or uses the server named by
DATABASE_URL) with a fresh, migrated database, a Temporal dev server
(WorkflowEnvironment.start_local, the pip-installed `temporal` binary) and, in this
process, a worker from ``worker.build_worker`` whose StaticSecretVault holds 20 secrets
for the benchmark tenant.

For each size N it generates one corpus of agent-memory text (100-600 characters, ~5%
exact duplicates, ~1% pinned, ~2% carrying a raw secret value) and, for each budget
(--budget and --max-budget), loads it into a fresh memoryRef with put_many (timed
separately, not part of the dream) and times a DreamWorkflow from start to result.
Entries go to the transactional tiers (working/episodic) that distillation reads;
those are capped at 1,000 entries per memoryRef by default, so the store used for
loading and by the worker is built with StoreLimits(capacity={}) (uncapped).

Reported per run: wall time, snapshot entries/s, sourceCount, tokensUsed,
deferredCount; the floor of tokenizing the same corpus once (serial cl100k_base) and
dream/floor; each activity's time from the histories; the event count and serialized
size of the dream's and the child DistillationWorkflow's histories (target: under 200
events and 1 MB each), with a PASS/FAIL check that no entry text or secret value is in
them; and an in-process replay of the distill activity's phases (read, redact, distill)
on the same snapshot, to show where the time goes. Results go to
benchmarks/results/distillation.json (distillation-quick.json with --quick). The exit
status is 1 when a check fails or a dream fails for a reason other than an unmeetable
budget.
"""

from __future__ import annotations

import argparse
import asyncio
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select, text
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from benchmarks.common import bench_server, fresh_database
from benchmarks.corpus import fill
from memory import tables
from memory.database import create_engine, migrate
from memory.distillation import PAGE
from memory.distiller import ExtractiveDistiller, SourceText, TokenBudgetExceeded
from memory.redaction import write_redacted
from memory.snapshots import SnapshotItem
from memory.store import PostgresMemoryStore, StoreLimits
from memory.tokens import count_tokens, count_tokens_batch, get_encoding
from memory.vault import StaticSecretVault, registry_for_tenant
from runtime import search_attributes
from runtime.binaries import temporal_cli
from runtime.history_audit import searchable_text
from runtime.settings import Settings
from schemas.capabilities import MAX_TOKEN_BUDGET
from schemas.memory_entry import NewMemoryEntry, Priority, Tier
from schemas.workflow_io import DreamInput, DreamResult
from worker import build_worker
from workflows.dream import DreamWorkflow, distillation_workflow_id

RESULTS_DIR = Path(__file__).with_name("results")
DEFAULT_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000,)
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
        for setting in ("server_version", "shared_buffers", "fsync", "synchronous_commit"):
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


def activity_spans(history: WorkflowHistory) -> list[dict[str, Any]]:
    """Per activity: queued (scheduled -> started) and run (started -> closed) seconds."""
    scheduled: dict[int, tuple[str, float]] = {}
    started: dict[int, float] = {}
    spans: list[dict[str, Any]] = []
    closing = {
        EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "completed",
        EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "failed",
        EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "timed-out",
    }
    for event in history.events:
        at = event.event_time.ToMicroseconds() / 1e6
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            scheduled[event.event_id] = (name, at)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = at
        elif event.event_type in closing:
            attributes = {
                EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed",
                EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed",
                EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out",
            }[event.event_type]
            scheduled_id = getattr(event, f"{attributes}_event_attributes").scheduled_event_id
            name, queued_at = scheduled[scheduled_id]
            begin = started.get(scheduled_id, queued_at)
            spans.append(
                {
                    "activity": name,
                    "status": closing[event.event_type],
                    "queued_s": round(begin - queued_at, 3),
                    "run_s": round(at - begin, 3),
                }
            )
    return spans


def history_span_s(history: WorkflowHistory) -> float:
    times = [event.event_time.ToMicroseconds() / 1e6 for event in history.events]
    return round(max(times) - min(times), 3) if times else 0.0


# ---------------------------------------------------------------------- one run


@dataclass
class Run:
    size: int
    budget: int
    memory_ref: str
    load_s: float = 0.0
    wall_s: float = 0.0
    status: str = ""
    snapshot_entries: int = 0
    source_count: int = 0
    tokens_used: int = 0
    deferred_count: int = 0
    failure: dict[str, Any] = field(default_factory=dict)
    histories: dict[str, dict[str, Any]] = field(default_factory=dict)
    activities: list[dict[str, Any]] = field(default_factory=list)
    replay: dict[str, Any] = field(default_factory=dict)
    sr1_output: str = "n/a"
    floor_s: float = 0.0

    @property
    def entries_per_s(self) -> float:
        return self.snapshot_entries / self.wall_s if self.wall_s else 0.0

    @property
    def checks_pass(self) -> bool:
        histories_ok = all(h["pass"] for h in self.histories.values())
        dream_ok = self.status in ("distilled", "nothing-to-distill") or (
            self.failure.get("type") in EXPECTED_FAILURES
        )
        return histories_ok and dream_ok and self.sr1_output != "FAIL"

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "token_budget": self.budget,
            "memory_ref": self.memory_ref,
            "status": self.status,
            "failure": self.failure or None,
            "load_s": round(self.load_s, 3),
            "dream_wall_s": round(self.wall_s, 3),
            "snapshot_entries": self.snapshot_entries,
            "entries_per_s": round(self.entries_per_s, 1),
            "source_count": self.source_count,
            "tokens_used": self.tokens_used,
            "deferred_count": self.deferred_count,
            "tokenize_floor_s": round(self.floor_s, 3),
            "dream_over_floor": round(self.wall_s / self.floor_s, 2) if self.floor_s else None,
            "activities": self.activities,
            "histories": self.histories,
            "sr1_output_check": self.sr1_output,
            "in_process_replay": self.replay,
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


async def snapshot_of(store: PostgresMemoryStore, ref: str) -> tuple[str, int] | None:
    S = tables.snapshots
    async with store.engine.connect() as connection:
        row = (
            await connection.execute(
                select(S.c.snapshot_id, S.c.entry_count).where(S.c.memory_ref == ref)
            )
        ).first()
    return (row.snapshot_id, row.entry_count) if row else None


async def dream(
    client: Client, task_queue: str, run: Run, store: PostgresMemoryStore, corpus: Corpus
) -> None:
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
            run.source_count = distillation.source_count
            run.tokens_used = distillation.tokens_used
            run.deferred_count = distillation.deferred_count
    snapshot = await snapshot_of(store, run.memory_ref)
    run.snapshot_entries = snapshot[1] if snapshot else 0
    if run.status == "failed":
        run.deferred_count = run.snapshot_entries

    child = client.get_workflow_handle(distillation_workflow_id(run.memory_ref))
    for label, history in (
        ("dream", await handle.fetch_history()),
        ("distillation", await child.fetch_history()),
    ):
        serialized = len(history.to_json().encode())
        leaks = leaked(
            searchable_text(history.to_json()), corpus.contents, list(corpus.secrets.values())
        )
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
    order = ["create_snapshot", "distill", "collect_garbage"]
    run.activities.sort(key=lambda a: order.index(a["activity"]) if a["activity"] in order else 9)


async def check_sr1_output(store: PostgresMemoryStore, run: Run, secrets: dict[str, str]) -> str:
    """The archive and the distilled entry carry no secret value (markers instead)."""
    if run.status != "distilled":
        return "n/a"
    A, E = tables.archives, tables.entries
    async with store.engine.connect() as connection:
        bodies = (
            await connection.execute(select(A.c.body).where(A.c.memory_ref == run.memory_ref))
        ).scalars()
        texts = [bytes(body).decode("utf-8") for body in bodies]
        texts += list(
            (
                await connection.execute(
                    select(E.c.content).where(
                        E.c.memory_ref == run.memory_ref, E.c.tier == Tier.SEMANTIC.value
                    )
                )
            ).scalars()
        )
    if any(value in t for t in texts for value in secrets.values()):
        return "FAIL"
    markers = sum(t.count("[REDACTED:") for t in texts)
    return f"PASS ({markers} markers)"


async def replay(store: PostgresMemoryStore, vault: StaticSecretVault, run: Run) -> dict[str, Any]:
    """The distill activity's phases, in process on the dream's own snapshot."""
    snapshot = await snapshot_of(store, run.memory_ref)
    if snapshot is None:
        return {}
    snapshot_id, _ = snapshot
    phases: dict[str, Any] = {}
    began = time.perf_counter()
    items: list[SnapshotItem] = []
    while True:
        page = await store.read_snapshot(run.memory_ref, snapshot_id, start=len(items), limit=PAGE)
        items.extend(page)
        if len(page) < PAGE:
            break
    phases["read_snapshot_s"] = round(time.perf_counter() - began, 3)

    registry = registry_for_tenant(vault, TENANT, "bench-replay")
    began = time.perf_counter()
    redacted = [write_redacted(item.content, registry) for item in items]
    phases["redact_s"] = round(time.perf_counter() - began, 3)

    sources = [
        SourceText(
            entry_id=item.entry_id,
            version=item.version,
            content=content,
            content_sha256=item.content_sha256,
            tags=item.tags,
            pinned=item.pinned,
            priority=item.priority.rank,
            created_at=item.created_at,
            position=item.position,
        )
        for item, content in zip(items, redacted, strict=True)
    ]
    tokenized = {"calls": 0, "seconds": 0.0}

    def counting(text_: str) -> int:
        start = time.perf_counter()
        try:
            return count_tokens(text_)
        finally:
            tokenized["calls"] += 1
            tokenized["seconds"] += time.perf_counter() - start

    began = time.perf_counter()
    try:
        ExtractiveDistiller().distill(sources, run.budget, counting)
        outcome = "ok"
    except TokenBudgetExceeded as error:
        outcome = f"token_budget_exceeded (minimum {error.minimum_required})"
    phases["distill_s"] = round(time.perf_counter() - began, 3)
    phases["distill_outcome"] = outcome
    phases["tokenizer_calls"] = tokenized["calls"]
    phases["tokenizer_s"] = round(tokenized["seconds"], 3)
    return phases


# ---------------------------------------------------------------------- output


def fmt_bytes(size: int) -> str:
    return f"{size / 1024:.1f}KB" if size < 1_000_000 else f"{size / 1e6:.2f}MB"


def print_table(runs: Sequence[Run]) -> None:
    header = (
        f"{'N':>7} {'budget':>7} {'status':<10} {'load s':>7} {'dream s':>8} {'entries/s':>10} "
        f"{'sources':>8} {'tokens':>7} {'deferred':>8} {'floor s':>8} {'dream/floor':>11}"
    )
    print(header)
    print("-" * len(header))
    for r in runs:
        ratio = f"{r.wall_s / r.floor_s:.2f}x" if r.floor_s else "-"
        print(
            f"{r.size:>7} {r.budget:>7} {r.status:<10} {r.load_s:>7.2f} {r.wall_s:>8.2f} "
            f"{r.entries_per_s:>10.0f} {r.source_count:>8} {r.tokens_used:>7} "
            f"{r.deferred_count:>8} {r.floor_s:>8.3f} {ratio:>11}"
        )
        if r.failure:
            print(f"{'':>17}-> {r.failure['type']}: {r.failure['message']}")
    print()
    print(
        f"histories (target: < {MAX_HISTORY_EVENTS} events and < "
        f"{MAX_HISTORY_BYTES // 1_000_000} MB each; no entry text or secret in them)"
    )
    for r in runs:
        parts = []
        for label, h in r.histories.items():
            parts.append(f"{label} {h['events']} events / {fmt_bytes(h['bytes'])}")
        verdict = "PASS" if all(h["pass"] for h in r.histories.values()) else "FAIL"
        leaks = sorted({leak for h in r.histories.values() for leak in h["leaks"]})
        leak_note = f" LEAKED: {', '.join(leaks)}" if leaks else ""
        print(f"  history N={r.size} budget={r.budget}: {'; '.join(parts)} -> {verdict}{leak_note}")
    print()
    print("where the dream's time goes (activity run time from the histories; in-process replay")
    print("of the distill activity's phases on the same snapshot)")
    for r in runs:
        acts = ", ".join(
            f"{a['activity']} {a['run_s']:.2f}s"
            + (f" [{a['status']}]" if a["status"] != "completed" else "")
            for a in r.activities
        )
        rp = r.replay
        print(f"  N={r.size} budget={r.budget}: {acts}")
        if rp:
            print(
                f"    replay: read {rp['read_snapshot_s']:.2f}s, redact {rp['redact_s']:.2f}s, "
                f"distill {rp['distill_s']:.2f}s ({rp['tokenizer_calls']} texts tokenized in "
                f"{rp['tokenizer_s']:.2f}s; {rp['distill_outcome']})"
            )
        print(f"    SR-1 output (archive + distilled entry): {r.sr1_output}")


# ---------------------------------------------------------------------- main


async def run_benchmark(
    sizes: Sequence[int], budgets: Sequence[int], quick: bool
) -> dict[str, Any]:
    rng = random.Random(SEED)
    secrets = make_secrets(rng)
    vault = StaticSecretVault({TENANT: secrets})
    get_encoding()  # load the rank file once, outside every timing
    runs: list[Run] = []
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
            info = await server_info(store)
            env = await WorkflowEnvironment.start_local(
                data_converter=pydantic_data_converter,
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
                    "(default caps them at 1,000 entries per memoryRef)"
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
                            run.load_s = await load(store, ref, corpus)
                            await dream(env.client, task_queue, run, store, corpus)
                            run.sr1_output = await check_sr1_output(store, run, secrets)
                            run.replay = await replay(store, vault, run)
                            runs.append(run)
                            print(
                                f"  budget {budget}: loaded in {run.load_s:.1f}s, dream "
                                f"{run.status} in {run.wall_s:.2f}s"
                            )
            finally:
                await env.shutdown()
        finally:
            await engine.dispose()
    print()
    print_table(runs)
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
        "pass": all(run.checks_pass for run in runs),
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--max-budget", type=int, default=MAX_TOKEN_BUDGET)
    parser.add_argument("--quick", action="store_true", help="N=1000 only (smoke test)")
    parser.add_argument("--json", type=Path, default=None)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = list(QUICK_SIZES) if args.quick else [int(s) for s in args.sizes.split(",") if s]
    budgets = list(dict.fromkeys([args.budget, args.max_budget]))
    report = asyncio.run(run_benchmark(sizes, budgets, args.quick))
    target = args.json or RESULTS_DIR / (
        "distillation-quick.json" if args.quick else "distillation.json"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"\n{'PASS' if report['pass'] else 'FAIL'}; results written to {target}")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
