"""The race harness (issue 20, item 5): every pair of maintenance operations on ONE
memoryRef, started within 0-300 ms of each other (seeded: either first, the second
0-300 ms later, half the time within 20 ms), many times, through the real surfaces
(workflows on a real Temporal dev server and worker, the store's own entry points),
then store-wide invariants.

    python -m tests.support.races                 # CI size: 6 trials per pair
    python -m tests.support.races --soak          # 200 trials per pair (--trials N)
    python -m tests.support.races --seed 7 --pairs infer+forget,consolidate+infer
    python -m tests.support.races --replay infer+forget:1205473036   # one trial's seed

Both start their own embedded PostgreSQL, Temporal dev server and worker, and stop by
themselves; tests/reliability/test_races.py runs the CI size on the suite's servers.

Operations (``async def op(ctx, ref)``): distill, consolidate, infer and fleet (a
FleetDreamWorkflow of the trial's tenant) start their workflow (production id from
runtime/workflow_ids.py; the second of a same-kind pair
under a suffixed id, since a second start of the production id would only be refused)
and await its result; forget (store.forget by id, the CLI/HTTP path), delete, expire
(the seeded entry's expiry passes, then store.collect_garbage), snapshot, and cancel (a
commitment inferred at setup), and propose (a dream's synthesis of the weekly routine
seeded on three past Mondays, then an apply of each open proposal through the HTTP
API's and memoryctl's path). Each trial has a memoryRef of its own (fresh tenant),
seeded with ~10 entries: one promise stated twice (consolidation merges it) and then
updated by a later entry (the update rules link them), a predicate
promise, the forget/delete target (a promise with a tag of its own, so inference has
something to race forget with), the expire target and ordinary facts.

Invariants, read from the tables once both operations returned (inference arms inside
its workflow, so the store is settled; nothing fires during a trial: the time promises
are hours ahead and the predicate never holds):

- armed_source_live: every armed commitment's source entry exists, is not invalidated
  (merged/superseded) and not expired;
- armed_once: no two armed commitments of the memoryRef are one promise (their source
  entries' words, case, spacing and punctuation aside, and the same condition and
  spec): the promise stated twice has at most one armed commitment;
- forgotten_text, forgotten_tag: after forget or expire, the target's text (and its
  tag: a column of its own) is in no text, JSON, array or bytea column of any table
  (the rows of the trial's memoryRef, of its tenant where a table has no memory_ref
  column, every row where it has neither);
- delete_reaches_copies: the same for delete, text and tag (a delete is an erasure: it
  must reach every copy; FLAGS can demote an invariant to a reported warning; the summary says
  where instead of passing silently);
- consumed_once: no source in two live archives, two lineage links to distilled
  entries or two memory.compacted events, and distilled_into agrees with the archive;
- counters: memory_ref_tier_counts / memory_ref_tag_counts equal a recount of the rows
  they count (migrations 0005/0008: invalidated_at IS NULL, expired-but-uncollected
  included);
- proposed_once: at most one proposal per routine and schedule, one proposal.created per
  proposal, one proposal.activated per applied one, and every applied one installed
  as the schedule whose artifact (read back from the server) has the stored checksum;
- superseded_unarmed: no armed or proposed commitment's source is an entry a later live
  entry supersedes (the promise stated later replaces it: one firing, never two);
- update_links_live: no update link names an entry that is gone (a forgotten entry is
  never the newer value of a fact);
- op_error: an operation raised (the exception's type only).

A violation records (pair, trial, seed, invariant, detail); details hold ids, table and
column names and counts, never entry text.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import itertools
import json
import logging
import random
import re
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from temporalio.client import Client
from temporalio.service import RPCError

from activities.automation_schedules import installed_checksum
from api.proposal_review import ProposalReview, Reviewer
from memory.entries.lineage import DISTILLED
from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from runtime.settings import Settings
from runtime.workflow_ids import PLAIN, WorkflowIds
from schemas.commitments import (
    CommitmentInferenceInput,
    InferCommitmentsRequest,
    commitment_workflow_id,
)
from schemas.consolidation import ConsolidationInput
from schemas.events import EventType
from schemas.fleet import FleetDreamInput
from schemas.memory_entry import ForgetRequest, NewMemoryEntry, Tier
from schemas.memory_ref import parse_memory_ref
from schemas.search import SearchRequest
from schemas.workflow_io import DistillationInput
from tests.support.factories import note
from tests.support.proposals import last_mondays, seed_routine
from tests.support.scan import SCANNED_TYPES, index_rows_out_of_step
from worker import build_worker
from workflows.commitment_inference import CommitmentInferenceWorkflow
from workflows.consolidation import ConsolidationWorkflow
from workflows.distillation import DistillationWorkflow
from workflows.fleet_dream import FleetDreamWorkflow

OPS = (
    "distill",
    "consolidate",
    "infer",
    "fleet",
    "forget",
    "delete",
    "expire",
    "snapshot",
    "search",
    "cancel",
    "propose",
)
PAIRS = tuple(itertools.combinations_with_replacement(OPS, 2))  # 66
INVARIANTS = (
    "armed_source_live",
    "armed_once",
    "forgotten_text",
    "forgotten_tag",
    "delete_reaches_copies",
    "consumed_once",
    "counters",
    "proposed_once",
    "index_in_step",
    "superseded_unarmed",
    "update_links_live",
    "op_error",
)
# Invariants reported as warnings instead of failures: none. (delete_reaches_copies was
# one while delete kept derived copies; a delete is an erasure now.)
FLAGS: tuple[str, ...] = ()
# 6 trials of each of the 66 pairs (396) in every test run, from a fresh seed each run
# (tests/support/fuzzing.py), so successive runs try other interleavings instead of the
# same ones (10 from one fixed seed took 90 s of a suite that must stay under 12
# minutes); the soak runs 200 of each.
CI_TRIALS, SOAK_TRIALS, CONCURRENCY = 6, 200, 6
MAX_JITTER_S, CLOSE_JITTER_S = 0.3, 0.02
EXPIRES_AFTER = timedelta(milliseconds=200)
TRIAL_TIMEOUT_S = 120.0
# Fixed texts (the same in every trial: each trial has a memoryRef of its own, and fewer
# distinct texts keep the session's history audit cheap); the targets are unique, since
# the forgotten-text scan looks for them.
PROMISE = "Remind me in 2 hours to call the landlord about the lease"
# Said after PROMISE: a later value of it, which consolidation's update rules link to it
# (issue 39), so the older promise must end however inference and a pass interleave.
UPDATED_PROMISE = "Remind me in 4 hours to call the landlord about the lease instead"
PREDICATE_PROMISE = "Follow up when the contract is signed"
SEMANTIC_FACTS = ("The customer prefers invoices in EUR", "Support hours are 9 to 5 on weekdays")
NOTES = tuple(f"Call {i}: the client asked about shipping to warehouse {i}." for i in range(3))
# A weekly request, said on three Mondays before the trial: what "propose" proposes.
ROUTINE = "Send Priya the weekly storage report."


def pair_name(pair: tuple[str, str]) -> str:
    return "+".join(pair)


# ---------------------------------------------------------------------- context


@dataclass(frozen=True)
class RaceContext:
    """What every trial shares: the Temporal client, the worker's task queue, the store
    the worker runs on."""

    client: Client
    task_queue: str
    store: PostgresMemoryStore
    ids: WorkflowIds = PLAIN
    # The scanned columns, read from the schema once (tests/support/scan.py's selection).
    columns: Sequence[Any] = ()

    @property
    def engine(self) -> AsyncEngine:
        return self.store.engine


@dataclass(frozen=True)
class Target:
    id: str
    text: str
    tag: str


@dataclass
class TrialContext:
    """One trial: its seeded memoryRef, its targets and its random choices."""

    race: RaceContext
    ref: str
    rng: random.Random
    forget_target: Target
    expire_target: Target
    expires_at: datetime
    commitment_ids: tuple[str, ...] = ()
    instances: collections.Counter[str] = field(default_factory=collections.Counter)

    def instance(self, kind: str) -> int:
        self.instances[kind] += 1
        return self.instances[kind]

    def workflow_id(self, production: str, kind: str) -> str:
        number = self.instance(kind)
        return production if number == 1 else f"{production}/race-{number}"


async def seed_ref(race: RaceContext, rng: random.Random, *, infer: bool) -> TrialContext:
    """A fresh memoryRef (a tenant of its own) with the trial's entries; with ``infer``,
    its commitments recorded too (what cancel cancels)."""
    ref = f"mem://race{uuid.uuid4().hex[:12]}/agent-1"
    unique = uuid.uuid4().hex[:8]
    forget_text = f"Remind me in 3 hours to send storage unit code {unique} to the movers"
    expire_text = f"The parking permit for bay {unique} is valid until noon"
    expires_at = race.store.now() + EXPIRES_AFTER
    entries: list[NewMemoryEntry] = [
        note(PROMISE, tier=Tier.SEMANTIC),
        note(PROMISE, tier=Tier.SEMANTIC),
        note(UPDATED_PROMISE, tier=Tier.SEMANTIC),
        note(PREDICATE_PROMISE),
        note(forget_text, f"topic-{unique}"),
        note(expire_text, f"ttl-{unique}", expires_at=expires_at),
        *(note(fact, tier=Tier.SEMANTIC) for fact in SEMANTIC_FACTS),
        *(note(line) for line in NOTES),
    ]
    stored = await race.store.put_many(ref, entries)
    await seed_routine(race.engine, ref, last_mondays(3), (ROUTINE,), tags=("request",))
    context = TrialContext(
        race=race,
        ref=ref,
        rng=rng,
        forget_target=Target(stored[4].id, forget_text, f"topic-{unique}"),
        expire_target=Target(stored[5].id, expire_text, f"ttl-{unique}"),
        expires_at=expires_at,
    )
    if infer:  # store side: no workflows to clean up
        await race.store.commitments.infer(InferCommitmentsRequest(memory_ref=ref))
        position = {entry.id: index for index, entry in enumerate(stored)}
        found = await race.store.commitments.list(ref)
        # In the order of the entries stating them, so a seed replays the same choice.
        context.commitment_ids = tuple(
            c.commitment_id for c in sorted(found, key=lambda c: position[c.memory_id])
        )
    return context


# ---------------------------------------------------------------------- operations


async def distill(ctx: TrialContext, ref: str) -> str:
    result = await ctx.race.client.execute_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref),
        id=ctx.workflow_id(ctx.race.ids.distillation(ref), "distill"),
        task_queue=ctx.race.task_queue,
    )
    return str(result.status)


async def consolidate(ctx: TrialContext, ref: str) -> str:
    result = await ctx.race.client.execute_workflow(
        ConsolidationWorkflow.run,
        ConsolidationInput(memory_ref=ref),
        id=ctx.workflow_id(ctx.race.ids.consolidation(ref), "consolidate"),
        task_queue=ctx.race.task_queue,
    )
    return f"merged {result.merged_count}"


async def infer(ctx: TrialContext, ref: str) -> str:
    result = await ctx.race.client.execute_workflow(
        CommitmentInferenceWorkflow.run,
        CommitmentInferenceInput(memory_ref=ref),
        id=ctx.workflow_id(ctx.race.ids.inference(ref), "infer"),
        task_queue=ctx.race.task_queue,
    )
    return f"created {result.inference.created}, started {result.armed.started}"


async def fleet(ctx: TrialContext, ref: str) -> str:
    """A fleet dream of the trial's tenant (its only agent): distill, consolidate, infer,
    arm and collect garbage in one batch activity (workflows/fleet_dream.py)."""
    tenant = parse_memory_ref(ref).tenant
    result = await ctx.race.client.execute_workflow(
        FleetDreamWorkflow.run,
        FleetDreamInput(tenant=tenant),
        id=ctx.workflow_id(f"fleet-dream/{tenant}", "fleet"),
        task_queue=ctx.race.task_queue,
    )
    progress = result.progress
    return f"dreamed {progress.dreamed}, more {progress.more_left}, failed {progress.failed}"


async def forget(ctx: TrialContext, ref: str) -> str:
    erased = await ctx.race.store.forget(ref, ForgetRequest(ids=(ctx.forget_target.id,)))
    return f"erased {erased}"


async def delete(ctx: TrialContext, ref: str) -> str:
    return f"deleted {await ctx.race.store.delete(ref, ctx.forget_target.id)}"


async def expire(ctx: TrialContext, ref: str) -> str:
    wait = (ctx.expires_at - ctx.race.store.now()).total_seconds() + 0.005
    if wait > 0:
        await asyncio.sleep(wait)
    report = await ctx.race.store.collect_garbage(ref)
    return f"expired {report.expired_entries}"


async def search(ctx: TrialContext, ref: str) -> str:
    """The hybrid search an agent calls, for the text a forget in the same trial erases:
    it must answer (no error, no deadlock) whatever runs beside it, and the indexes it
    reads must be in step afterwards (index_in_step)."""
    found = await ctx.race.store.search(ref, SearchRequest(query=ctx.forget_target.text, limit=10))
    return f"found {len(found.hits)}"


async def snapshot(ctx: TrialContext, ref: str) -> str:
    info = await ctx.race.store.snapshot(ref, f"race-snapshot-{ctx.instance('snapshot')}")
    return f"snapshot of {info.entry_count}"


async def cancel(ctx: TrialContext, ref: str) -> str:
    if not ctx.commitment_ids:
        return "nothing to cancel"
    record = await ctx.race.store.commitments.cancel(ref, ctx.rng.choice(ctx.commitment_ids))
    return str(record.state) if record else "no such commitment"


async def propose(ctx: TrialContext, ref: str) -> str:
    """A dream's synthesis of the weekly routine (the store's entry point the activity
    calls), then an apply of every open proposal of the ref through the path the HTTP
    API and memoryctl take (update-with-start on the proposal's workflow, install)."""
    parsed = parse_memory_ref(ref)
    run_id = f"race-propose-{ctx.instance('propose')}"
    result = await ctx.race.store.proposals.synthesize(parsed, run_id, ctx.race.task_queue)
    review = ProposalReview(
        ctx.race.store.proposals,
        ctx.race.client,
        Settings(AGENT_MEMORY_TASK_QUEUE=ctx.race.task_queue),
    )
    applied = 0
    for proposal in await ctx.race.store.proposals.list(parsed.tenant, memory_ref=parsed):
        reviewer = Reviewer(tenant=parsed.tenant, actor="race", scopes=None)
        if (await review.apply(reviewer, proposal.id)).state == "applied":
            applied += 1
    return f"created {len(result.created)}, applied {applied}"


Op = Callable[[TrialContext, str], Awaitable[str]]
OPERATIONS: dict[str, Op] = {
    "distill": distill,
    "consolidate": consolidate,
    "infer": infer,
    "fleet": fleet,
    "forget": forget,
    "delete": delete,
    "expire": expire,
    "snapshot": snapshot,
    "search": search,
    "cancel": cancel,
    "propose": propose,
}


# ---------------------------------------------------------------------- invariants


@dataclass(frozen=True)
class Violation:
    pair: str
    trial: int
    seed: int
    invariant: str
    detail: str
    # What each operation reported, in the order they started ("forget: erased 0").
    outcomes: str = ""


def _words(content: str) -> str:
    """A promise's words, case, spacing and punctuation aside."""
    return " ".join(re.findall(r"[\w']+", content.casefold()))


async def check_commitments(connection: AsyncConnection, ref: str, now: datetime) -> dict[str, str]:
    """armed_source_live and armed_once."""
    COMMITMENTS, ENTRIES = tables.commitments, tables.entries
    rows = (
        await connection.execute(
            select(
                COMMITMENTS.c.commitment_id,
                COMMITMENTS.c.memory_id,
                COMMITMENTS.c.condition,
                COMMITMENTS.c.spec,
                ENTRIES.c.id.label("source"),
                ENTRIES.c.content,
                ENTRIES.c.invalidated_at,
                ENTRIES.c.expires_at,
            )
            .select_from(
                COMMITMENTS.outerjoin(
                    ENTRIES,
                    (ENTRIES.c.memory_ref == COMMITMENTS.c.memory_ref)
                    & (ENTRIES.c.id == COMMITMENTS.c.memory_id),
                )
            )
            .where(COMMITMENTS.c.memory_ref == ref, COMMITMENTS.c.state == "armed")
            .order_by(COMMITMENTS.c.commitment_id)
        )
    ).all()
    dead = []
    for row in rows:
        if row.source is None:
            dead.append(f"{row.commitment_id} (source {row.memory_id} gone)")
        elif row.invalidated_at is not None:
            dead.append(f"{row.commitment_id} (source {row.memory_id} merged/superseded)")
        elif row.expires_at is not None and row.expires_at <= now:
            dead.append(f"{row.commitment_id} (source {row.memory_id} expired)")
    found: dict[str, str] = {}
    if dead:
        found["armed_source_live"] = f"armed for a dead source: {', '.join(dead)}"
    # One promise: the same words and the same condition (its spec: a relative time
    # resolved from when it was said), whichever entries state it.
    groups: dict[tuple[str, str], list[Any]] = collections.defaultdict(list)
    for row in rows:
        if row.content is not None:
            spec = json.dumps(row.spec, sort_keys=True)
            groups[(_words(row.content), f"{row.condition} {spec}")].append(row)
    twice = [
        f"{len(armed)} armed for one {armed[0].condition} promise "
        f"({', '.join(r.commitment_id for r in armed)})"
        for armed in groups.values()
        if len(armed) > 1
    ]
    if twice:
        found["armed_once"] = "; ".join(twice)
    return found


async def scanned_columns(engine: AsyncEngine) -> list[Any]:
    """Every column tables_holding scans, with whether its table has a memory_ref or a
    tenant column."""
    async with engine.connect() as connection:
        return list((await connection.execute(_COLUMNS, {"types": list(SCANNED_TYPES)})).all())


_COLUMNS = text(
    "SELECT c.table_name, c.column_name, c.data_type,"
    " EXISTS (SELECT 1 FROM information_schema.columns m WHERE m.table_schema = 'public'"
    "   AND m.table_name = c.table_name AND m.column_name = 'memory_ref') AS by_ref,"
    " EXISTS (SELECT 1 FROM information_schema.columns m WHERE m.table_schema = 'public'"
    "   AND m.table_name = c.table_name AND m.column_name = 'tenant') AS by_tenant"
    " FROM information_schema.columns c"
    " WHERE c.table_schema = 'public' AND c.data_type = ANY(:types)"
    " ORDER BY c.table_name, c.column_name"
)


async def holding(
    connection: AsyncConnection,
    needles: Sequence[str],
    ref: str,
    tenant: str,
    columns: Sequence[Any],
) -> dict[str, list[str]]:
    """needle -> every table.column holding it: the columns and conditions of
    tests/support/scan.py's tables_holding, one statement per table for every needle,
    over the rows of ``ref`` (``tenant`` where a table has no memory_ref, every row
    where it has neither): a scan of the whole store per trial would grow with it."""
    by_table: dict[str, list[Any]] = collections.defaultdict(list)
    for row in columns:
        by_table[row.table_name].append(row)
    found: dict[str, list[str]] = {needle: [] for needle in needles}
    params = {f"n{i}": needle for i, needle in enumerate(needles)}
    for table, table_columns in sorted(by_table.items()):
        probes, names = [], []
        for row in table_columns:
            for i, needle in enumerate(needles):
                column = f'"{row.column_name}"'
                if row.data_type == "bytea":
                    condition = f"position(convert_to(:n{i}, 'UTF8') in {column}) > 0"
                else:
                    condition = f"strpos({column}::text, :n{i}) > 0"
                probes.append(f"coalesce(bool_or({condition}), false)")
                names.append((needle, f"{table}.{row.column_name}"))
        scope, scope_params = "", {}
        if table_columns[0].by_ref:
            scope, scope_params = " WHERE memory_ref = :scope", {"scope": ref}
        elif table_columns[0].by_tenant:
            scope, scope_params = " WHERE tenant = :scope", {"scope": tenant}
        statement = text(f'SELECT {", ".join(probes)} FROM "{table}"{scope}')
        hits = (await connection.execute(statement, {**params, **scope_params})).one()
        for (needle, where), hit in zip(names, hits, strict=True):
            if hit:
                found[needle].append(where)
    return found


async def check_forgotten(
    connection: AsyncConnection, ctx: TrialContext, ran: Sequence[str]
) -> dict[str, str]:
    """forgotten_text and forgotten_tag (forget, expire), delete_reaches_copies
    (delete)."""
    checks: list[tuple[str, str, Target]] = []
    if "forget" in ran:
        checks.append(("forgotten_text", "forget target", ctx.forget_target))
    elif "delete" in ran:
        checks.append(("delete_reaches_copies", "delete target", ctx.forget_target))
    if "expire" in ran:
        checks.append(("forgotten_text", "expire target", ctx.expire_target))
    if not checks:
        return {}
    needles = [n for _, _, target in checks for n in (target.text, target.tag)]
    tenant = ctx.ref.split("/")[2]
    found = await holding(connection, needles, ctx.ref, tenant, ctx.race.columns)
    results: dict[str, list[str]] = collections.defaultdict(list)
    for invariant, label, target in checks:
        for kind, needle in (("text", target.text), ("tag", target.tag)):
            if found[needle]:
                # The text and the tag of a forgotten entry apart: two columns.
                name = f"forgotten_{kind}" if invariant == "forgotten_text" else invariant
                results[name].append(f"{label} {kind} in {', '.join(found[needle])}")
    return {invariant: "; ".join(parts) for invariant, parts in results.items()}


async def check_consumption(connection: AsyncConnection, ref: str) -> dict[str, str]:
    """consumed_once."""
    ARCHIVES, LINEAGE, ENTRIES, EVENTS = (
        tables.archives,
        tables.lineage,
        tables.entries,
        tables.events,
    )
    problems: list[str] = []
    listed: dict[str, list[str]] = collections.defaultdict(list)
    for output_id, body in await connection.execute(
        select(ARCHIVES.c.output_id, ARCHIVES.c.body).where(ARCHIVES.c.memory_ref == ref)
    ):
        for source in json.loads(body).get("sources", ()):
            listed[str(source["id"])].append(output_id)
    problems += [f"{s} in {len(o)} archives" for s, o in sorted(listed.items()) if len(o) > 1]
    links = await connection.execute(
        select(LINEAGE.c.source_id, func.count(func.distinct(LINEAGE.c.artifact_id)))
        .where(LINEAGE.c.memory_ref == ref, LINEAGE.c.artifact_kind == DISTILLED)
        .group_by(LINEAGE.c.source_id)
        .having(func.count(func.distinct(LINEAGE.c.artifact_id)) > 1)
    )
    problems += [f"{source} linked to {n} distilled entries" for source, n in links]
    compacted: collections.Counter[str] = collections.Counter()
    for (payload,) in await connection.execute(
        select(EVENTS.c.payload).where(
            EVENTS.c.memory_ref == ref, EVENTS.c.type == EventType.MEMORY_COMPACTED.value
        )
    ):
        compacted.update(str(i) for i in payload.get("sourceIds") or ())
    problems += [f"{s} in {n} memory.compacted" for s, n in sorted(compacted.items()) if n > 1]
    for entry_id, into in await connection.execute(
        select(ENTRIES.c.id, ENTRIES.c.distilled_into).where(
            ENTRIES.c.memory_ref == ref, ENTRIES.c.distilled_into.is_not(None)
        )
    ):
        if entry_id in listed and listed[entry_id] != [into]:
            problems.append(f"{entry_id} distilled_into {into}, archived in {listed[entry_id]}")
    return {"consumed_once": "; ".join(problems)} if problems else {}


_TAG_RECOUNT = text(
    "SELECT tag, count(*) FROM memory_entries, unnest(tags) AS tag"
    " WHERE memory_ref = :ref AND invalidated_at IS NULL GROUP BY tag"
)


async def check_counters(connection: AsyncConnection, ref: str) -> dict[str, str]:
    """counters: the trigger-kept counts against a recount of what they count."""
    ENTRIES, TIER_COUNTS, TAG_COUNTS = tables.entries, tables.tier_counts, tables.tag_counts
    counted = ENTRIES.c.invalidated_at.is_(None)
    tiers = dict(
        (
            await connection.execute(
                select(TIER_COUNTS.c.tier, TIER_COUNTS.c.entries).where(
                    TIER_COUNTS.c.memory_ref == ref
                )
            )
        ).all()
    )
    tier_recount: dict[str, int] = dict(
        (
            await connection.execute(
                select(ENTRIES.c.tier, func.count())
                .where(ENTRIES.c.memory_ref == ref, counted)
                .group_by(ENTRIES.c.tier)
            )
        ).all()
    )
    tags = dict(
        (
            await connection.execute(
                select(TAG_COUNTS.c.tag, TAG_COUNTS.c.entries).where(TAG_COUNTS.c.memory_ref == ref)
            )
        ).all()
    )
    tag_recount: dict[str, int] = dict((await connection.execute(_TAG_RECOUNT, {"ref": ref})).all())
    problems: list[str] = []
    for name, kept, recount in (("tier", tiers, tier_recount), ("tag", tags, tag_recount)):
        keys = {k for k, n in kept.items() if n} | set(recount)
        wrong = sorted(k for k in keys if kept.get(k, 0) != recount.get(k, 0))
        if wrong:
            problems.append(f"{len(wrong)} {name} counts differ from a recount")
    return {"counters": "; ".join(problems)} if problems else {}


async def check_proposals(connection: AsyncConnection, ctx: TrialContext) -> dict[str, str]:
    """One proposal per routine and schedule, one proposal.created per proposal, and
    each applied one installed once, as the artifact stored (checksum read back)."""
    PROPOSALS, EVENTS = tables.proposals, tables.events
    rows = (
        await connection.execute(
            select(
                PROPOSALS.c.proposal_id,
                PROPOSALS.c.schedule_key,
                PROPOSALS.c.state,
                PROPOSALS.c.artifact_sha256,
            ).where(PROPOSALS.c.memory_ref == ctx.ref)
        )
    ).all()
    problems = []
    keys = collections.Counter(row.schedule_key for row in rows)
    problems += [f"{count} proposals for one schedule" for count in keys.values() if count > 1]
    events = collections.Counter(
        (
            await connection.execute(
                select(EVENTS.c.type).where(
                    EVENTS.c.memory_ref == ctx.ref, EVENTS.c.type.like("proposal.%")
                )
            )
        ).scalars()
    )
    applied = [row for row in rows if row.state == "applied"]
    if events["proposal.created"] != len(rows):
        problems.append(f"{events['proposal.created']} proposal.created for {len(rows)}")
    if events["proposal.activated"] != len(applied):
        problems.append(f"{events['proposal.activated']} proposal.activated for {len(applied)}")
    tenant = parse_memory_ref(ctx.ref).tenant
    for row in applied:
        schedule_id = ctx.race.ids.automation(tenant, row.proposal_id)
        try:
            checksum = await installed_checksum(ctx.race.client, schedule_id)
        except RPCError:
            checksum = None
        if checksum != row.artifact_sha256:
            problems.append(f"{row.proposal_id} applied, schedule checksum {checksum}")
    return {"proposed_once": "; ".join(problems)} if problems else {}


async def check_indexes(connection: AsyncConnection, ref: str) -> dict[str, str]:
    """index_in_step: no vector of the ref computed from content its entry no longer
    holds, no term posting or count that is not its content's (memory/entries/content.py
    writes them with the content, in one transaction; tests/support/scan.py says what
    out of step means)."""
    out_of_step = await index_rows_out_of_step(connection, ref)
    vectors = [entry_id for _, entry_id, index in out_of_step if not index.startswith("term ")]
    terms = collections.Counter(index for _, _, index in out_of_step if index.startswith("term "))
    problems = [f"{n} {index} out of step" for index, n in sorted(terms.items())]
    if vectors:
        problems.insert(0, f"{len(vectors)} stale vectors, e.g. of {', '.join(vectors[:3])}")
    return {"index_in_step": "; ".join(problems)} if problems else {}


async def check_updates(connection: AsyncConnection, ref: str, now: datetime) -> dict[str, str]:
    """superseded_unarmed and update_links_live (issue 39)."""
    links = (
        await connection.execute(
            text(
                "SELECT u.older_id, u.newer_id, o.id AS older, n.id AS newer,"
                " n.invalidated_at IS NULL AND (n.expires_at IS NULL OR n.expires_at > :now)"
                " AS newer_live"
                " FROM memory_updates AS u"
                " LEFT JOIN memory_entries AS o"
                " ON o.memory_ref = u.memory_ref AND o.id = u.older_id"
                " LEFT JOIN memory_entries AS n"
                " ON n.memory_ref = u.memory_ref AND n.id = u.newer_id"
                " WHERE u.memory_ref = :ref ORDER BY u.older_id, u.newer_id"
            ),
            {"ref": ref, "now": now},
        )
    ).all()
    found: dict[str, str] = {}
    gone = [f"{r.older_id}->{r.newer_id}" for r in links if r.older is None or r.newer is None]
    if gone:
        found["update_links_live"] = f"links naming a deleted entry: {', '.join(gone)}"
    superseded = {r.older_id for r in links if r.newer is not None and r.newer_live}
    if superseded:
        armed = (
            await connection.execute(
                select(tables.commitments.c.commitment_id, tables.commitments.c.memory_id)
                .where(
                    tables.commitments.c.memory_ref == ref,
                    tables.commitments.c.state.in_(("armed", "proposed")),
                    tables.commitments.c.memory_id.in_(sorted(superseded)),
                )
                .order_by(tables.commitments.c.commitment_id)
            )
        ).all()
        if armed:
            found["superseded_unarmed"] = "armed for a superseded source: " + ", ".join(
                f"{row.commitment_id} ({row.memory_id})" for row in armed
            )
    return found


async def check(ctx: TrialContext, ran: Sequence[str]) -> dict[str, str]:
    """Every invariant of the trial's memoryRef: invariant -> content-free detail."""
    now = ctx.race.store.now()
    async with ctx.race.engine.connect() as connection:
        return {
            **await check_commitments(connection, ctx.ref, now),
            **await check_forgotten(connection, ctx, ran),
            **await check_consumption(connection, ctx.ref),
            **await check_counters(connection, ctx.ref),
            **await check_proposals(connection, ctx),
            **await check_indexes(connection, ctx.ref),
            **await check_updates(connection, ctx.ref, now),
        }


# ---------------------------------------------------------------------- trials


def jitter(rng: random.Random) -> float:
    """How long after the first operation the second starts: 0-300 ms, half the time
    0-20 ms, since store operations take a few milliseconds and only overlap when
    started that close."""
    return rng.uniform(0, CLOSE_JITTER_S if rng.random() < 0.5 else MAX_JITTER_S)


def trial_seed(seed: int, pair: tuple[str, str], trial: int) -> int:
    return random.Random(f"{seed}:{pair_name(pair)}:{trial}").getrandbits(32)


def _error_name(error: BaseException) -> str:
    names: list[str] = []
    cause: BaseException | None = error
    while cause is not None and len(names) < 4:
        kind = getattr(cause, "type", None)
        names.append(f"{type(cause).__name__}({kind})" if kind else type(cause).__name__)
        cause = cause.__cause__
    return " <- ".join(names)


async def _terminate_commitment_workflows(ctx: TrialContext) -> None:
    """The trial's commitment timers and watches (hours away) would only load the worker."""
    COMMITMENTS = tables.commitments
    async with ctx.race.engine.connect() as connection:
        ids = list(
            (
                await connection.execute(
                    select(COMMITMENTS.c.commitment_id).where(
                        COMMITMENTS.c.memory_ref == ctx.ref, COMMITMENTS.c.armed_at.is_not(None)
                    )
                )
            ).scalars()
        )
    for commitment_id in ids:
        with contextlib.suppress(RPCError):
            handle = ctx.race.client.get_workflow_handle(commitment_workflow_id(commitment_id))
            await handle.terminate("race trial checked")


async def _delete_automations(ctx: TrialContext) -> None:
    """The trial's installed automations (weekly) would only load the dev server."""
    tenant = parse_memory_ref(ctx.ref).tenant
    for proposal in await ctx.race.store.proposals.list(tenant):
        with contextlib.suppress(RPCError):
            await ctx.race.client.get_schedule_handle(
                ctx.race.ids.automation(tenant, proposal.id)
            ).delete()


async def run_trial(
    race: RaceContext, pair: tuple[str, str], trial: int, seed: int
) -> list[Violation]:
    rng = random.Random(seed)
    ctx = await seed_ref(race, rng, infer="cancel" in pair)
    first, second = pair if rng.random() < 0.5 else (pair[1], pair[0])
    delay = jitter(rng)

    async def later() -> str:
        await asyncio.sleep(delay)
        return await OPERATIONS[second](ctx, ctx.ref)

    outcomes = await asyncio.gather(
        OPERATIONS[first](ctx, ctx.ref), later(), return_exceptions=True
    )
    found = await check(ctx, pair)
    reported = [
        f"{op}: {_error_name(outcome) if isinstance(outcome, BaseException) else outcome}"
        for op, outcome in zip((first, second), outcomes, strict=True)
    ]
    errors = [
        line
        for line, outcome in zip(reported, outcomes, strict=True)
        if isinstance(outcome, BaseException)
    ]
    if errors:
        found["op_error"] = "; ".join(errors)
    await _terminate_commitment_workflows(ctx)
    await _delete_automations(ctx)
    summary = f"{' | '.join(reported)}, second after {delay * 1000:.0f} ms"
    return [
        Violation(pair_name(pair), trial, seed, name, found[name], summary)
        for name in sorted(found)
    ]


@dataclass
class RaceReport:
    seed: int
    trials: collections.Counter[str] = field(default_factory=collections.Counter)
    violations: list[Violation] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict[str, collections.Counter[str]]:
        by_pair: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for violation in self.violations:
            by_pair[violation.pair][violation.invariant] += 1
        return by_pair

    @property
    def failures(self) -> list[Violation]:
        """The violations of invariants that must hold (FLAGS aside)."""
        return [v for v in self.violations if v.invariant not in FLAGS]

    def table(self) -> str:
        """pair, trials, trials violating each invariant; then one example per failing
        (pair, invariant), with the seed that replays it."""
        short = [name.replace("_", " ") + ("*" if name in FLAGS else "") for name in INVARIANTS]
        widths = [max(len(s), 5) for s in short]
        head = f"{'pair':<24} {'trials':>6} " + " ".join(
            f"{s:>{w}}" for s, w in zip(short, widths, strict=True)
        )
        lines = [f"race harness seed {self.seed}: {self.seconds:.0f} s", head, "-" * len(head)]
        counts = self.counts()
        totals: collections.Counter[str] = collections.Counter()
        for pair in PAIRS:
            name = pair_name(pair)
            if not self.trials[name]:
                continue
            row = counts.get(name, collections.Counter())
            totals.update(row)
            cells = " ".join(f"{row[i]:>{w}}" for i, w in zip(INVARIANTS, widths, strict=True))
            lines.append(f"{name:<24} {self.trials[name]:>6} {cells}")
        cells = " ".join(f"{totals[i]:>{w}}" for i, w in zip(INVARIANTS, widths, strict=True))
        lines.append(f"{'total':<24} {sum(self.trials.values()):>6} {cells}")
        flagged = f"; reported, not failed: {', '.join(FLAGS)}" if FLAGS else ""
        lines.append(f"{len(self.failures)} violations{flagged}")
        examples: dict[tuple[str, str], Violation] = {}
        for violation in self.violations:
            examples.setdefault((violation.pair, violation.invariant), violation)
        if examples:
            lines.append("examples (pair invariant #trial, trial seed [operations]: detail):")
        for (pair_, invariant), v in sorted(examples.items()):
            lines.append(
                f"  {pair_} {invariant} #{v.trial}, seed {v.seed} [{v.outcomes}]: {v.detail[:300]}"
            )
        return "\n".join(lines)


async def run_races(
    race: RaceContext,
    *,
    trials: int,
    seed: int,
    pairs: Sequence[tuple[str, str]] = PAIRS,
    concurrency: int = CONCURRENCY,
    progress: Callable[[str], None] | None = None,
) -> RaceReport:
    """``trials`` trials of every pair, ``concurrency`` at a time, interleaved so the
    trials running at once are of different pairs."""
    report = RaceReport(seed=seed)
    jobs = collections.deque(
        (pair, trial) for trial in range(trials) for pair in pairs
    )  # round robin over the pairs
    started = time.monotonic()
    done = 0

    async def work() -> None:
        nonlocal done
        while jobs:
            pair, trial = jobs.popleft()
            number = trial_seed(seed, pair, trial)
            try:
                found = await asyncio.wait_for(
                    run_trial(race, pair, trial, number), TRIAL_TIMEOUT_S
                )
            except Exception as error:  # the harness reports, a trial never stops the run
                found = [Violation(pair_name(pair), trial, number, "op_error", _error_name(error))]
            report.trials[pair_name(pair)] += 1
            report.violations += found
            done += 1
            if progress and done % 100 == 0:
                progress(f"{done} trials, {len(report.violations)} violations")

    await asyncio.gather(*(work() for _ in range(concurrency)))
    report.seconds = time.monotonic() - started
    return report


@contextlib.asynccontextmanager
async def race_worker(
    client: Client, database_url: str, *, pool_size: int = 12
) -> AsyncIterator[RaceContext]:
    """The production worker (worker.build_worker) on a task queue of its own, over a
    store whose pool serves six trials at once."""
    engine = create_engine(database_url, pool_size=pool_size)
    try:
        store = PostgresMemoryStore(engine)
        task_queue = f"races-{uuid.uuid4().hex[:10]}"
        settings = Settings(AGENT_MEMORY_TASK_QUEUE=task_queue)
        async with build_worker(client, settings, store, StaticSecretVault({})):
            yield RaceContext(
                client=client,
                task_queue=task_queue,
                store=store,
                columns=await scanned_columns(engine),
            )
    finally:
        await engine.dispose()


# ---------------------------------------------------------------------- own servers


@contextlib.asynccontextmanager
async def own_servers(state: Path) -> AsyncIterator[tuple[Client, str]]:
    """Embedded PostgreSQL (a migrated database) and a Temporal dev server, as
    tests/conftest.py starts them; both stopped on the way out."""
    from temporalio.testing import WorkflowEnvironment

    from memory.storage.embedded import asyncpg_url_for, start_embedded_postgres
    from runtime import search_attributes
    from runtime.binaries import temporal_cli
    from runtime.converter import data_converter

    server = start_embedded_postgres(state / "postgres")
    try:
        admin = create_async_engine(asyncpg_url_for(server), isolation_level="AUTOCOMMIT")
        async with admin.connect() as connection:
            await connection.exec_driver_sql("CREATE DATABASE races")
        await admin.dispose()
        url = asyncpg_url_for(server, "races")
        engine = create_engine(url, pool_size=1)
        await migrate(engine)
        await engine.dispose()
        env = await WorkflowEnvironment.start_local(
            data_converter=data_converter,
            dev_server_existing_path=temporal_cli(),
            search_attributes=list(search_attributes.ALL),
        )
        try:
            yield env.client, url
        finally:
            await env.shutdown()
    finally:
        server.cleanup()


def _pairs(spec: str | None) -> list[tuple[str, str]]:
    if not spec:
        return list(PAIRS)
    chosen = []
    for item in spec.split(","):
        a, _, b = item.strip().partition("+")
        if a not in OPS or b not in OPS:
            raise SystemExit(f"--pairs: unknown operation in {item!r}; operations: {OPS}")
        chosen.append((a, b) if OPS.index(a) <= OPS.index(b) else (b, a))
    return chosen


async def _replay(race: RaceContext, spec: str) -> int:
    """One trial of one pair, by the trial seed a report printed."""
    name, _, number = spec.rpartition(":")
    (pair,) = _pairs(name)
    found = await run_trial(race, pair, 0, int(number))
    for violation in found:
        print(f"{violation.pair} {violation.invariant} [{violation.outcomes}]: {violation.detail}")
    failed = [v for v in found if v.invariant not in FLAGS]
    print(f"{pair_name(pair)} trial seed {number}: {len(failed)} violations")
    return 1 if failed else 0


async def _main(args: argparse.Namespace) -> int:
    # Terminating a trial's commitment workflows cancels their running evaluations; the
    # worker logs each as a failed activity, which would bury the summary.
    logging.getLogger("temporalio.activity").setLevel(logging.ERROR)
    trials = args.trials or (SOAK_TRIALS if args.soak else CI_TRIALS)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    if not args.replay:
        print(f"race harness seed {seed}: {trials} trials per pair", flush=True)
    with tempfile.TemporaryDirectory(prefix="races-") as state:
        async with (
            own_servers(Path(state)) as (client, url),
            race_worker(client, url) as race,
        ):
            if args.replay:
                return await _replay(race, args.replay)
            report = await run_races(
                race,
                trials=trials,
                seed=seed,
                pairs=_pairs(args.pairs),
                concurrency=args.concurrency,
                progress=lambda line: print(line, flush=True),
            )
    print(report.table(), flush=True)
    return 1 if report.failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.races", description=__doc__)
    parser.add_argument("--soak", action="store_true", help=f"{SOAK_TRIALS} trials per pair")
    parser.add_argument("--trials", type=int, help="trials per pair")
    parser.add_argument("--seed", type=int, help="replay a run's random choices")
    parser.add_argument("--pairs", help="comma-separated pairs, e.g. infer+forget")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    parser.add_argument("--replay", metavar="PAIR:TRIAL_SEED", help="run one trial again")
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
