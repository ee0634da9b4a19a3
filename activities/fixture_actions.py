"""The conformance fixtures' memory actions (contract §4.2, §4.3), run against the real
store as the run's tenant. Each action checks its own precondition and fails the run with
a code instead of landing an empty variable (upstream found that an empty variable let
scenarios pass vacuously). Refs are the contract's opaque names, resolved within the
run's tenant exactly as the HTTP edge resolves them (api/tenancy.py's mapping, in
memory/keyed_ids/opaque_refs.py). Every write the run makes for its tenant is recorded as a
``memory.written`` event (RFC 0057: ids and tags only).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from memory.fixture_runs.records import FixtureOutcome, RunEvent
from memory.keyed_ids.opaque_refs import resolve_ref
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.store import PostgresMemoryStore
from memory.tokens import count_tokens
from schemas.capabilities import TOKENIZER_NAME
from schemas.events import EventType, MemoryWritten
from schemas.fixture_runs import (
    CROSS_TENANT,
    INJECTION_BUDGET,
    NOOP,
    REDACTION,
    ROUNDTRIP,
    TTL,
)
from schemas.memory_entry import HostMemoryEntry, MemoryListOptions, NewMemoryEntry
from schemas.memory_ref import MemoryRef

NODE_ID = "memory"
CTI_OWNER_REF = "conformance/agent-memory-cti"
BUDGET = 120
BUDGET_FILLER_WORDS = 9  # about 30% of the budget each in cl100k_base tokens
BUDGET_OVERSIZE_WORDS = 300


class FixtureFailed(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def entry_ref(ref: MemoryRef, entry_id: str) -> dict[str, Any]:
    return {"$entry": {"memoryRef": str(ref), "id": entry_id}}


def content_ref(ref: MemoryRef, entry_id: str) -> dict[str, Any]:
    return {"$content": {"memoryRef": str(ref), "id": entry_id}}


class _Run:
    """One run's context: its tenant, store, per-run secrets and the events so far."""

    def __init__(self, store: PostgresMemoryStore, tenant: str, run_id: str) -> None:
        self.store = store
        self.tenant = tenant
        self.run_id = run_id
        self.secrets = MemorySecretRegistry(run_id)
        self.outcome = FixtureOutcome()

    def ref(self, name: str) -> MemoryRef:
        return resolve_ref(self.tenant, name)

    async def write(
        self,
        ref: MemoryRef,
        entry: NewMemoryEntry,
        *,
        store: PostgresMemoryStore | None = None,
    ) -> HostMemoryEntry:
        stored = await (store or self.store).put(ref, entry, secrets=self.secrets)
        written = MemoryWritten(
            memory_ref=str(ref),
            memory_id=stored.id,
            node_id=NODE_ID,
            agent_id=ref.agent,
            tags=stored.tags,
        )
        self.outcome.events.append(RunEvent(EventType.MEMORY_WRITTEN.value, written.to_wire()))
        return stored

    def require(self, holds: bool, code: str, message: str) -> None:
        if not holds:
            raise FixtureFailed(code, message)


class _StepClock:
    """A store clock a millisecond later on every call, from ``start``: writes in a row
    get strictly increasing creation times, so most-recent-first is their order."""

    def __init__(self, start: datetime) -> None:
        self.at = start

    def __call__(self) -> datetime:
        self.at += timedelta(milliseconds=1)
        return self.at


async def _noop(run: _Run) -> None:
    # A run summary on completion: the write the attribution check reads (§5).
    await run.write(
        run.ref("conformance-noop"),
        NewMemoryEntry(content=f"Run {run.run_id} completed.", tags=("run-summary",)),
    )


async def _roundtrip(run: _Run) -> None:
    ref = run.ref("conformance/agent-memory-roundtrip")
    written = await run.write(
        ref,
        NewMemoryEntry(
            content=f"Round-trip note written by run {run.run_id}.", tags=("conformance",)
        ),
    )
    read = await run.store.get(ref, written.id)
    run.require(read is not None, "readback_missing", "the written entry did not read back")
    run.outcome.variables["memoryReadback"] = entry_ref(ref, written.id)


async def _redaction(run: _Run) -> None:
    ref = run.ref("conformance/agent-memory-redaction")
    secret_id = "conformance-byok"
    value = "byok-" + secrets.token_hex(16)
    run.secrets.register(secret_id, value)  # the secret this run resolved (SR-1)
    written = await run.write(
        ref, NewMemoryEntry(content=f"The vendor API key for this run is {value}.")
    )
    read = await run.store.get(ref, written.id)
    run.require(read is not None, "readback_missing", "the written entry did not read back")
    assert read is not None
    run.require(
        value not in read.content and f"[REDACTED:{secret_id}]" in read.content,
        "not_redacted",
        "the resolved secret was not redacted at write",
    )
    run.outcome.variables["memoryReadback"] = entry_ref(ref, written.id)


async def _ttl(run: _Run) -> None:
    # A ref of the run's own: every entry listed must carry an expiry in the future.
    ref = run.ref(f"conformance-ttl-{run.run_id}")
    now = run.store.now()
    # Said two minutes ago with an expiry one minute ago: already expired now.
    earlier = PostgresMemoryStore(
        run.store.engine,
        limits=run.store.limits,
        clock=lambda: now - timedelta(minutes=2),
        intent_links=run.store.db.intent_links,
    )
    expired = await run.write(
        ref,
        NewMemoryEntry(content="An entry that has expired.", expires_at=now - timedelta(minutes=1)),
        store=earlier,
    )
    fresh = await run.write(
        ref,
        NewMemoryEntry(
            content="An entry that expires tomorrow.", expires_at=now + timedelta(days=1)
        ),
    )
    listed = await run.store.list(ref)
    ids = [entry.id for entry in listed]
    run.require(fresh.id in ids, "fresh_missing", "the unexpired entry was not listed")
    run.require(expired.id not in ids, "expired_listed", "the expired entry was listed")
    later = run.store.now()
    run.require(
        all(e.expires_at is not None and e.expires_at > later for e in listed),
        "expiry_in_past",
        "a listed entry has no expiry in the future",
    )
    run.outcome.variables.update(
        memoryList=[entry_ref(ref, i) for i in ids], freshId=fresh.id, expiredId=expired.id
    )


async def _foreign_row(run: _Run, ref_name: str) -> tuple[MemoryRef, str]:
    """A row of a synthetic tenant (not the run's), seen by that tenant; removed again
    by the caller. Its write belongs to that tenant, so it is not this run's event."""
    foreign = MemoryRef(f"synthetic-{secrets.token_hex(6)}", ref_name)
    entry = await run.store.put(foreign, NewMemoryEntry(content="A row of another tenant."))
    seen = [e.id for e in await run.store.list(foreign)]
    run.require(entry.id in seen, "foreign_row_unseen", "the synthetic tenant cannot see its row")
    return foreign, entry.id


async def _cross_tenant(run: _Run) -> None:
    owner = run.ref(CTI_OWNER_REF)
    written = await run.write(
        owner, NewMemoryEntry(content=f"Owner entry written by run {run.run_id}.")
    )
    probe = await run.store.list(owner, MemoryListOptions(limit=1000))
    run.require(
        written.id in [e.id for e in probe], "owner_probe_empty", "the owner entry is not listed"
    )
    foreign, foreign_id = await _foreign_row(run, "conformance-cti-foreign")
    try:
        # The foreign ref's name, read as this run's tenant: resolved within the tenant.
        crossed = await run.store.list(run.ref(str(foreign)))
    finally:
        await run.store.delete(foreign, foreign_id)
    run.outcome.variables.update(
        ownerEntryId=written.id,
        ownerProbe=[entry_ref(owner, e.id) for e in probe],
        crossTenantProbe=[entry_ref(owner, e.id) for e in crossed],
    )


def _words(count: int, stem: str) -> str:
    return " ".join(f"{stem}{n}" for n in range(count))


async def _injection_budget(run: _Run) -> None:
    ref = run.ref(f"conformance-budget-{run.run_id}")
    stepped = PostgresMemoryStore(
        run.store.engine,
        limits=run.store.limits,
        clock=_StepClock(run.store.now() - timedelta(seconds=10)),
        intent_links=run.store.db.intent_links,
    )
    # The reference layout: oversize oldest, three fillers, the SR-1 entry newest.
    oversize = await run.write(
        ref, NewMemoryEntry(content=_words(BUDGET_OVERSIZE_WORDS, "oversize")), store=stepped
    )
    fillers = [
        await run.write(
            ref,
            NewMemoryEntry(content=_words(BUDGET_FILLER_WORDS, f"filler{n}-")),
            store=stepped,
        )
        for n in range(3)
    ]
    value = "byok-" + secrets.token_hex(16)
    run.secrets.register("conformance-byok", value)
    sr1 = await run.write(ref, NewMemoryEntry(content=f"The vendor key is {value}."), store=stepped)
    budgeted = await run.store.list(ref, MemoryListOptions(token_budget=BUDGET))
    ids = [e.id for e in budgeted]
    total = sum(count_tokens(e.content) for e in budgeted)
    run.require(total <= BUDGET, "over_budget", "the slice exceeds the budget")
    run.require(oversize.id not in ids, "oversize_kept", "the oversize entry was returned")
    run.require(sr1.id in ids, "sr1_entry_cut", "the newest entry is not in the slice")
    foreign, foreign_id = await _foreign_row(run, "conformance-budget-foreign")
    try:
        crossed = await run.store.list(
            run.ref(str(foreign)), MemoryListOptions(token_budget=BUDGET)
        )
    finally:
        await run.store.delete(foreign, foreign_id)
    run.outcome.variables.update(
        tokenBudget=BUDGET,
        budgetedTokenTotal=total,
        budgetedEntries=[entry_ref(ref, i) for i in ids],
        overBudgetEntryId=oversize.id,
        overBudgetEntryOmitted=oversize.id not in ids,
        redactedContentSample=content_ref(ref, sr1.id),
        crossTenantBudgetedProbe=[entry_ref(ref, e.id) for e in crossed],
        tokenCounter=TOKENIZER_NAME,
    )
    if run.store.searches.semantic:
        # Only with the semantic mode advertised (RFC 0113 §3): the whole set by recency,
        # and by relevance to the oldest filler's own words, so the two must differ.
        everything = await run.store.list(ref)
        relevant = await run.store.list(
            ref,
            MemoryListOptions(
                rank="relevance", query=fillers[0].content, limit=max(1, len(everything))
            ),
        )
        run.outcome.variables.update(
            recencyOrder=[e.id for e in everything], relevanceOrder=[e.id for e in relevant]
        )


ACTIONS: dict[str, Callable[[_Run], Awaitable[None]]] = {
    NOOP: _noop,
    ROUNDTRIP: _roundtrip,
    REDACTION: _redaction,
    TTL: _ttl,
    CROSS_TENANT: _cross_tenant,
    INJECTION_BUDGET: _injection_budget,
}


async def run_fixture(
    store: PostgresMemoryStore, tenant: str, run_id: str, fixture: str
) -> FixtureOutcome:
    run = _Run(store, tenant, run_id)
    try:
        await ACTIONS[fixture](run)
    except FixtureFailed as failure:
        run.outcome.status = "failed"
        run.outcome.error = {"error": failure.code, "message": str(failure)}
    final = "run.completed" if run.outcome.status == "completed" else "run.failed"
    # run.completed carries the run's outputs (openwop events.md); a fixture's are its
    # variables, read from the run itself.
    payload: dict[str, Any] = {"runId": run_id, "status": run.outcome.status}
    if final == "run.completed":
        payload["outputs"] = {}
    run.outcome.events.append(RunEvent(final, payload))
    return run.outcome
