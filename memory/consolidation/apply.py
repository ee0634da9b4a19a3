"""One consolidation pass against the store: read, plan, commit, in one transaction.

Exactly once: passes over one memoryRef are serialised by an advisory lock; a pass is
recorded under the key of the run that made it, so a retried activity (the commit
landed, the completion did not) returns the recorded result and plans nothing. Every
planned entry is claimed at the version the plan read (FOR UPDATE): a cluster with an
entry edited, forgotten or merged since is left for the next pass, so a concurrent write
is never lost and no merge is applied twice.

Survivors are strengthened: their corroboration counts the entries merged into them,
their tags gain the merged entries' tags, and their content passes the SR-1 chokepoint
again (a secret registered after the write is redacted now). Merged and superseded rows
stay, marked with the survivor's id, the reason and the pass, invisible to list/get.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import any_, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.consolidation.corpus import read_corpus
from memory.consolidation.planner import Cluster, Plan, PlanEntry, plan_pass
from memory.consolidation.update_judge import JudgeRound, UpdateJudge
from memory.consolidation.update_links import (
    drop_linked_conflicts,
    record_updates,
    settle_with_judge,
)
from memory.cpu_work import on_loop
from memory.entries.content import rewrite_contents
from memory.entries.lineage import MERGED_INTO
from memory.events.event_log import PendingEvent, append_events, long_term_update
from memory.keyed_ids.intent_links import IntentLinks, intent_id_column
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.redaction.entry_fields import redact_tags
from memory.snapshots.frozen import get_snapshot_info
from memory.storage import tables
from memory.storage.locks import consolidation_pass, lock, memory_ref_order
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.consolidation import (
    MAX_EVENT_MERGED_IDS,
    ConsolidateMemoryRequest,
    ConsolidationResult,
)
from schemas.errors import ConsolidationRefused
from schemas.events import (
    AgentMemoryConsolidated,
    EventType,
    MemoryConflict,
    MemoryWritten,
)
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
CONSOLIDATION_PASSES = tables.consolidation_passes
Progress = Callable[[dict[str, object]], None]


def pass_id_for(ref: MemoryRef, run_key: str) -> str:
    digest = hashlib.sha256(f"{ref}\n{run_key}".encode()).hexdigest()
    return f"cp-{digest[:20]}"


async def consolidate(
    connection: AsyncConnection,
    request: ConsolidateMemoryRequest,
    *,
    now: datetime,
    secrets: MemorySecretRegistry | None,
    progress: Progress,
    links: IntentLinks,
    rewritten: set[str] | None = None,
    judge: UpdateJudge | None = None,
) -> ConsolidationResult:
    """One pass, inside the caller's transaction. ``rewritten`` collects the survivors
    whose content re-redaction changed (left without a vector until the caller embeds
    them after the commit). ``judge``: asked about the conflicts the update rules leave
    open (memory/consolidation/update_judge.py), within its budget."""
    ref = request.memory_ref
    await lock(connection, consolidation_pass(ref))
    await lock(connection, memory_ref_order(ref))
    recorded = (
        await connection.execute(
            select(CONSOLIDATION_PASSES.c.result).where(
                scoped(CONSOLIDATION_PASSES, ref), CONSOLIDATION_PASSES.c.run_key == request.run_key
            )
        )
    ).scalar_one_or_none()
    if recorded is not None:
        return ConsolidationResult.model_validate(recorded)
    if request.requested_by_session and await get_snapshot_info(
        connection, ref, request.requested_by_session
    ):
        raise ConsolidationRefused(
            "a run may not consolidate the memoryRef it is reading mid-run; "
            "consolidate from a dream, memoryctl or the Temporal CLI"
        )
    pass_id = pass_id_for(ref, request.run_key)
    entries = await read_corpus(connection, ref, now)
    progress({"phase": "read", "entries": len(entries)})
    planner = functools.partial(plan_pass, paraphrases=request.paraphrases, updates=request.updates)
    # A small pass plans on the loop, a large one in a thread (memory/cpu_work.py).
    plan = (
        planner(entries, progress)
        if on_loop(len(entries))
        else await asyncio.to_thread(planner, entries, _thread_safe(progress))
    )
    await drop_linked_conflicts(connection, ref, plan)
    judging = JudgeRound(judge) if judge is not None and request.updates else None
    if judging is not None:
        await settle_with_judge(connection, ref, plan, entries, judging, progress)
    applied = await _apply(connection, ref, plan, entries, pass_id, now, secrets, links)
    if rewritten is not None:
        rewritten.update(applied.rewritten)
    updated = await record_updates(connection, ref, plan, entries, applied.clusters, pass_id, now)
    conflicts = await _record_conflicts(connection, ref, plan, pass_id, now)
    removed = [i for c in applied.clusters for i in (*c.merged, *c.superseded)]
    merged_ids = tuple(sorted(removed)) if len(removed) <= MAX_EVENT_MERGED_IDS else None
    output_count = plan.input_count - len(removed)
    consolidated = AgentMemoryConsolidated(
        memory_ref=str(ref),
        input_count=plan.input_count,
        output_count=output_count,
        merged_ids=merged_ids,
        trigger=request.trigger,
        pass_id=pass_id,
        merged_count=sum(len(c.merged) for c in applied.clusters),
        superseded_count=sum(len(c.superseded) for c in applied.clusters),
        updated_count=len(updated),
        conflict_count=len(conflicts),
        judge_calls=judging.calls if judging else None,
    )
    pending = [
        *applied.events,
        *(
            long_term_update(
                ref, older, version, "superseded", intent=links.digest(ref.tenant, intent)
            )
            for older, version, intent in updated
        ),
        *(
            PendingEvent(
                EventType.MEMORY_CONFLICT,
                MemoryConflict(
                    memory_ref=str(ref),
                    memory_ids=(first, second),
                    kinds=kinds,
                    pass_id=pass_id,
                ),
                dedupe_key=f"conflict:{first}:{second}",
            )
            for first, second, kinds in conflicts
        ),
        PendingEvent(
            EventType.MEMORY_CONSOLIDATED, consolidated, dedupe_key=f"consolidated:{pass_id}"
        ),
    ]
    seqs = await append_events(connection, ref, pending, now)
    result = ConsolidationResult(
        memory_ref=str(ref),
        pass_id=pass_id,
        trigger=request.trigger,
        input_count=plan.input_count,
        output_count=output_count,
        merged_count=consolidated.merged_count or 0,
        superseded_count=consolidated.superseded_count or 0,
        updated_count=len(updated),
        judge_calls=judging.calls if judging else 0,
        judged_updates=judging.updates if judging else 0,
        survivors_changed=len(applied.clusters),
        conflict_count=len(conflicts),
        skipped_clusters=applied.skipped,
        rounds=plan.rounds,
        pairs_checked=plan.pairs_checked,
        merged_ids=merged_ids,
        consolidated_event_seq=seqs[-1],
    )
    await connection.execute(
        CONSOLIDATION_PASSES.insert().values(
            tenant=ref.tenant,
            memory_ref=str(ref),
            pass_id=pass_id,
            run_key=request.run_key,
            result=result.to_wire(),
            created_at=now,
        )
    )
    progress({"phase": "committed", "merged": len(removed)})
    return result


def _thread_safe(progress: Progress) -> Progress:
    """The planner runs in a worker thread (so heartbeats keep flowing from the event
    loop); its progress reports are handed back to the loop."""
    loop = asyncio.get_running_loop()

    def report(details: dict[str, object]) -> None:
        loop.call_soon_threadsafe(progress, details)

    return report


@dataclass
class _Applied:
    clusters: list[Cluster]
    events: list[PendingEvent]
    skipped: int
    rewritten: tuple[str, ...] = ()


async def _apply(
    connection: AsyncConnection,
    ref: MemoryRef,
    plan: Plan,
    entries: Sequence[PlanEntry],
    pass_id: str,
    now: datetime,
    secrets: MemorySecretRegistry | None,
    links: IntentLinks,
) -> _Applied:
    planned = {e.id: e.version for e in entries}
    ids = sorted({i for c in plan.clusters for i in (c.survivor, *c.merged, *c.superseded)})
    if not ids:
        return _Applied([], [], 0)
    # The claim: lock every planned row and keep only clusters whose rows are all still
    # live at the version planned.
    current = {
        row.id: row
        for row in (
            await connection.execute(
                select(
                    *(
                        ENTRIES.c.id,
                        ENTRIES.c.version,
                        ENTRIES.c.invalidated_at,
                        ENTRIES.c.tags,
                        ENTRIES.c.content,
                    ),
                    intent_id_column(ENTRIES),
                )
                .where(scoped(ENTRIES, ref), ENTRIES.c.id == any_(texts("claimed", ids)))
                .with_for_update()
            )
        ).all()
    }

    def intent(entry_id: str) -> str | None:
        return links.digest(ref.tenant, current[entry_id].intent_id)

    def unchanged(entry_id: str) -> bool:
        row = current.get(entry_id)
        return row is not None and row.invalidated_at is None and row.version == planned[entry_id]

    clusters = [
        c for c in plan.clusters if all(map(unchanged, (c.survivor, *c.merged, *c.superseded)))
    ]
    members: list[tuple[str, str, str]] = []  # (member, survivor, reason)
    events: list[PendingEvent] = []
    survivors: list[tuple[str, list[str], str, int]] = []  # (id, tags, content, count)
    for cluster in clusters:
        for reason, group in (("merged", cluster.merged), ("superseded", cluster.superseded)):
            for member in group:
                members.append((member, cluster.survivor, reason))
                events.append(
                    long_term_update(ref, member, planned[member], reason, intent=intent(member))
                )
        survivor = current[cluster.survivor]
        tags = list(survivor.tags)
        for member in cluster.merged:
            tags += [t for t in current[member].tags if t not in tags]
        content = write_redacted(survivor.content, secrets)
        survivors.append(
            (cluster.survivor, redact_tags(tags, secrets), content, cluster.corroboration)
        )
        events += _survivor_events(
            ref, cluster.survivor, planned[cluster.survivor] + 1, intent(cluster.survivor)
        )
    scope = {"tenant": ref.tenant, "ref": str(ref), "pass_id": pass_id, "now": now}
    if members:
        member_ids, survivor_ids, reasons = (list(column) for column in zip(*members, strict=True))
        await connection.execute(
            text(
                "UPDATE memory_entries AS e SET superseded_by = v.survivor, "
                "superseded_reason = v.reason, consolidation_pass = :pass_id, "
                "invalidated_at = :now "
                "FROM unnest(:ids, :survivors, :reasons) AS v(id, survivor, reason) "
                "WHERE e.tenant = :tenant AND e.memory_ref = :ref AND e.id = v.id"
            ).bindparams(
                texts("ids", member_ids),
                texts("survivors", survivor_ids),
                texts("reasons", reasons),
            ),
            scope,
        )
        await connection.execute(
            text(
                "INSERT INTO memory_lineage (tenant, memory_ref, source_id, artifact_kind, "
                "artifact_id) SELECT :tenant, :ref, v.id, :kind, v.survivor "
                "FROM unnest(:ids, :survivors) AS v(id, survivor) ON CONFLICT DO NOTHING"
            ).bindparams(texts("ids", member_ids), texts("survivors", survivor_ids)),
            {**scope, "kind": MERGED_INTO},
        )
    if survivors:
        await connection.execute(
            text(
                "UPDATE memory_entries AS e SET "
                "tags = ARRAY(SELECT jsonb_array_elements_text(v.tags::jsonb)), "
                "corroboration = v.corroboration::integer, "
                "version = e.version + 1, updated_at = :now "
                "FROM unnest(:ids, :tags, :counts) AS v(id, tags, corroboration) "
                "WHERE e.tenant = :tenant AND e.memory_ref = :ref AND e.id = v.id"
            ).bindparams(
                texts("ids", [s[0] for s in survivors]),
                texts("tags", [json.dumps(s[1]) for s in survivors]),
                texts("counts", [str(s[3]) for s in survivors]),
            ),
            scope,
        )
        # Merged content is re-redacted: a secret registered since a survivor was written
        # changes its text, which the one writer sets with its indexes.
        redacted = {s[0]: s[2] for s in survivors if s[2] != current[s[0]].content}
        await rewrite_contents(connection, ref, redacted, now)
        return _Applied(clusters, events, len(plan.clusters) - len(clusters), tuple(redacted))
    return _Applied(clusters, events, len(plan.clusters) - len(clusters))


def _survivor_events(
    ref: MemoryRef, memory_id: str, version: int, intent: str | None
) -> list[PendingEvent]:
    """memory.written without a nodeId: a consolidation pass is a host background writer,
    not a workflow node (RFC 0068 unresolved question 4)."""
    return [
        long_term_update(
            ref, memory_id, version, "consolidated", previous_version=version - 1, intent=intent
        ),
        PendingEvent(
            EventType.MEMORY_WRITTEN,
            MemoryWritten(memory_ref=str(ref), memory_id=memory_id, agent_id="consolidation"),
        ),
    ]


async def _record_conflicts(
    connection: AsyncConnection, ref: MemoryRef, plan: Plan, pass_id: str, now: datetime
) -> list[tuple[str, str, tuple[str, ...]]]:
    """Insert the plan's conflicts not recorded before; returns the new ones."""
    if not plan.conflicts:
        return []
    inserted = await connection.execute(
        text(
            "INSERT INTO memory_conflicts (tenant, memory_ref, first_id, second_id, kinds, "
            "pass_id, detected_at) SELECT :tenant, :ref, v.first, v.second, "
            "string_to_array(v.kinds, ','), :pass_id, :now "
            "FROM unnest(:firsts, :seconds, :kinds) AS v(first, second, kinds) "
            "ON CONFLICT DO NOTHING RETURNING first_id, second_id, kinds"
        ).bindparams(
            texts("firsts", [c.first for c in plan.conflicts]),
            texts("seconds", [c.second for c in plan.conflicts]),
            texts("kinds", [",".join(c.kinds) for c in plan.conflicts]),
        ),
        {"tenant": ref.tenant, "ref": str(ref), "pass_id": pass_id, "now": now},
    )
    return sorted((r.first_id, r.second_id, tuple(r.kinds)) for r in inserted)
