"""The race harness at CI size (tests/support/races.py): every pair of the ten
maintenance operations (distill, consolidate, infer, a fleet dream, forget, delete,
expire, snapshot, cancel, propose) on one memoryRef, started within 0-300 ms of each
other, 6 trials per pair (330 in all, from the run's seed: other interleavings every
run) through the real workflows and store, six trials at once.
No invariant may be violated (delete too must reach every copy); the failure
message is the summary table, whose examples name the trial seed that replays each one
(``python -m tests.support.races --replay a+b:SEED``; the soak is
``python -m tests.support.races --soak``, 200 trials per pair).

The second test plants each defect the invariants exist to catch, so a harness that
checks nothing cannot pass."""

from __future__ import annotations

import json
import random
import warnings

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from tests.support.fuzzing import run_seed
from tests.support.races import (
    CI_TRIALS,
    FLAGS,
    INVARIANTS,
    PAIRS,
    RaceContext,
    check,
    race_worker,
    run_races,
    scanned_columns,
    seed_ref,
)


async def test_no_pair_of_maintenance_operations_breaks_an_invariant(
    temporal_env: WorkflowEnvironment, database_url: str
) -> None:
    async with race_worker(temporal_env.client, database_url) as race:
        report = await run_races(race, trials=CI_TRIALS, seed=run_seed())
    print(report.table())
    assert sum(report.trials.values()) == CI_TRIALS * len(PAIRS) == 396
    assert any("fleet" in pair for pair in report.trials)
    engine = create_async_engine(database_url)
    async with engine.connect() as connection:
        applied = await connection.scalar(
            text("SELECT count(*) FROM proposals WHERE state = 'applied'")
        )
    await engine.dispose()
    assert applied and applied >= CI_TRIALS  # propose proposed and applied, trial after trial
    if report.failures:
        replay = f"python -m tests.support.races --seed {run_seed()} --trials {CI_TRIALS}"
        pytest.fail(f"\n{report.table()}\nthe whole run again: {replay}", pytrace=False)
    copies = [v for v in report.violations if v.invariant in FLAGS]
    if copies:  # said out loud, not failed (tests/support/races.py FLAGS)
        warnings.warn(
            f"delete left copies of the deleted entry in {len(copies)} of 540 trials",
            stacklevel=1,
        )


async def test_each_invariant_catches_its_defect(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    race = RaceContext(
        client=temporal_env.client,
        task_queue="unused",
        store=store,
        columns=await scanned_columns(engine),
    )
    ctx = await seed_ref(race, random.Random(1), infer=True)
    ref, tenant = ctx.ref, ctx.ref.split("/")[2]
    promise_ids = [row[0] for row in await _rows(engine, _PROMISES, ref=ref)]
    for statement, values in (
        # an update link naming an entry that is gone; one superseding the first promise,
        # whose commitment is then armed again below
        (_LINK, {"older": promise_ids[0], "newer": "gone"}),
        (_LINK, {"older": promise_ids[0], "newer": promise_ids[1]}),
        # an armed commitment whose source is gone, and two for the same promise
        (_ARM, {"id": "cmt-planted-gone", "memory_id": "gone"}),
        (_ARM, {"id": "cmt-planted-1", "memory_id": promise_ids[0]}),
        (_ARM, {"id": "cmt-planted-2", "memory_id": promise_ids[1]}),
        # one source in two memory.compacted events
        (_COMPACTED, {"seq": 1_000_000}),
        (_COMPACTED, {"seq": 1_000_001}),
        # a counter off by one
        (_MISCOUNT, {}),
        # two proposals for one routine's schedule, neither with its proposal.created
        (_PROPOSAL, {"id": "prop-planted-1"}),
        (_PROPOSAL, {"id": "prop-planted-2"}),
        # a vector left beside text its entry no longer says
        (_STALE_VECTOR, {}),
    ):
        async with engine.begin() as connection:
            await connection.execute(statement, {"ref": ref, "tenant": tenant, **values})
    # Nothing was forgotten, deleted or expired: the targets are all still there.
    found = await check(ctx, ("forget", "expire"))
    assert set(found) == set(INVARIANTS) - {"delete_reaches_copies", "op_error"}, found
    assert "cmt-planted-gone" in found["armed_source_live"]
    assert "cmt-planted-1" in found["armed_once"] and "cmt-planted-2" in found["armed_once"]
    assert "forget target text in memory_entries.content" in found["forgotten_text"]
    assert "expire target tag in memory_entries.tags" in found["forgotten_tag"]
    assert "2 proposals for one schedule" in found["proposed_once"]
    assert "1 stale vectors" in found["index_in_step"]
    assert f"{promise_ids[0]}->gone" in found["update_links_live"]
    assert "cmt-planted-1" in found["superseded_unarmed"]
    assert set(await check(ctx, ("delete",))) >= {"delete_reaches_copies"}
    for detail in found.values():  # content-free: ids and table.column names only
        assert ctx.forget_target.text not in detail and ctx.forget_target.tag not in detail
    async with engine.begin() as connection:  # the planted vector goes (tests/conftest.py)
        await connection.execute(_UNPLANT_VECTOR, {"ref": ref})
        await connection.execute(
            text("DELETE FROM memory_updates WHERE memory_ref = :ref"), {"ref": ref}
        )


_PROMISES = text(
    "SELECT id FROM memory_entries WHERE memory_ref = :ref AND content LIKE 'Remind me in 2%'"
    " ORDER BY id"
)
_ARM = text(
    "INSERT INTO commitments (commitment_id, tenant, memory_ref, memory_id, condition, spec,"
    " time_zone, state, enqueue_run, created_at, updated_at) VALUES (:id, :tenant, :ref,"
    " :memory_id, 'predicate', '{\"kind\": \"planted\"}', 'UTC', 'armed', false, now(), now())"
)
_COMPACTED = text(
    "INSERT INTO memory_events (memory_ref, seq, tenant, type, payload, occurred_at)"
    " VALUES (:ref, :seq, :tenant, 'memory.compacted', CAST(:payload AS jsonb), now())"
).bindparams(payload=json.dumps({"sourceIds": ["planted-source"]}))
_PROPOSAL = text(
    "INSERT INTO proposals (tenant, proposal_id, memory_ref, kind, state, artifact,"
    " artifact_sha256, source_run_ids, schedule_key, owner, version, created_at, updated_at)"
    " VALUES (:tenant, :id, :ref, 'automation', 'draft', '{}', 'x', '{}', 'weekly-0@09:00/UTC',"
    " CAST(:owner AS jsonb), 1, now(), now())"
).bindparams(owner=json.dumps({"tenant": "planted"}))
_STALE_VECTOR = text(
    "UPDATE memory_embeddings SET content_sha256 = 'planted' WHERE memory_ref = :ref"
    " AND entry_id = (SELECT min(entry_id) FROM memory_embeddings WHERE memory_ref = :ref)"
)
_UNPLANT_VECTOR = text(
    "DELETE FROM memory_embeddings WHERE memory_ref = :ref AND content_sha256 = 'planted'"
)
_LINK = text(
    "INSERT INTO memory_updates (tenant, memory_ref, older_id, newer_id, basis, kinds,"
    " recorded_at) VALUES (:tenant, :ref, :older, :newer, 'rule', '{}', now())"
)
_MISCOUNT = text("UPDATE memory_ref_tier_counts SET entries = entries + 1 WHERE memory_ref = :ref")


async def _rows(engine: AsyncEngine, statement, **values):
    async with engine.connect() as connection:
        return (await connection.execute(statement, values)).all()
