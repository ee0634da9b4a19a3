"""CTI-1 through the store API (issue 12, the store part of the cross-tenant sweep):
10,000 generated probes carrying tenant A's ids, keys, tags, subjects, commitment ids,
consolidation pass ids and snapshot ids, issued on tenant B's memoryRefs and on
look-alikes of A's (mem://ACME…, mem://acme./…, mem://acmex/…), over every read, write
and maintenance call. None returns anything of A, and A's rows are byte-for-byte
unchanged."""

from __future__ import annotations

import itertools
import random
import uuid
from typing import Any

import pytest

from memory.store import PostgresMemoryStore
from schemas.commitments import InferCommitmentsRequest
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.errors import MemoryError_
from schemas.memory_entry import (
    EntryChanges,
    ForgetRequest,
    MemoryListOptions,
    MemoryQuery,
)
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import SECRET_CANARIES
from tests.support.hostile_input import tenant_a_corpus
from tests.support.scan import tenant_checksum

PROBES = 10_000


@pytest.mark.slow
async def test_ten_thousand_store_probes_find_nothing_of_the_other_tenant(
    store: PostgresMemoryStore, engine
) -> None:
    a = "acme" + uuid.uuid4().hex[:6]
    b = "beta" + uuid.uuid4().hex[:6]
    canaries = [f"A-STORE-CANARY-{i}-{uuid.uuid4().hex[:6]}" for i in range(8)]
    SECRET_CANARIES.update(canaries)
    a_refs = [f"mem://{a}/agent-1", f"mem://{a}/agent-2"]
    ids: list[str] = []
    for n, ref in enumerate(a_refs):
        written = await store.put_many(ref, tenant_a_corpus(canaries, key_prefix=f"k{n}"))
        ids += [entry.id for entry in written]
    passes = [
        (await store.consolidate(ConsolidateMemoryRequest(memory_ref=ref, run_key=f"p-{ref}")))
        for ref in a_refs
    ]
    distilled = await store.distill(
        DistillMemoryRequest(memory_ref=a_refs[0], token_budget=4000, run_key="d-1")
    )
    await store.commitments.infer(InferCommitmentsRequest(memory_ref=a_refs[0]))
    commitments = [c.commitment_id for c in await store.commitments.list(a_refs[0])]
    assert commitments and distilled.output_id
    merged = [i for p in passes for i in (p.merged_ids or ())]
    assert merged  # consolidation merged the restated fact: lineage to probe for
    a_ids: list[str] = [
        *ids,
        *commitments,
        *(p.pass_id for p in passes),
        *merged,
        distilled.output_id,
        *([distilled.snapshot_id] if distilled.snapshot_id else []),
    ]
    before = await tenant_checksum(engine, a)

    agents = ["agent-1", "agent-2", "agent-3"]
    refs = [f"mem://{b}/{agent}" for agent in agents] + [
        f"mem://{a.upper()}/agent-1",
        f"mem://{a}./agent-1",
        f"mem://{a}x/agent-1",
        f"mem://{a[:-1]}/agent-1",
        f"mem://{a}-/agent-1",
        f"mem://{b}/{a}",
    ]
    id_values = [*a_ids, *(i.upper() for i in a_ids[:5]), a_ids[0] + "x"]
    words = ["a-only", "tag-1", "private", "dana", "k0-1", "commitment", *canaries[:2]]
    rng = random.Random(20261124)
    print(
        f"store sweep seed 20261124: {len(refs)} refs x {len(id_values)} ids x {len(words)} words"
    )

    def probe(ref: str, value: str, word: str) -> Any:
        operations = [
            lambda: store.get(ref, value),
            lambda: store.get_entry(ref, value),
            lambda: store.get_by_key(ref, "private", word),
            lambda: store.list(ref, MemoryListOptions(tag=word)),
            lambda: store.query(ref, MemoryQuery(tags_all=(word,))),
            lambda: store.query(ref, MemoryQuery(namespace="private", subject="dana")),
            lambda: store.count(ref, MemoryQuery(tags_any=(word, "a-only"))),
            lambda: store.lineage(ref, value),
            lambda: store.events(ref),
            lambda: store.delete(ref, value),
            lambda: store.update(ref, value, EntryChanges(content="taken"), expected_version=1),
            lambda: store.forget(ref, ForgetRequest(ids=(value,))),
            lambda: store.forget(ref, ForgetRequest(tag=word)),
            lambda: store.forget(ref, ForgetRequest(subject="dana", tenant_wide=True)),
            lambda: store.commitments.show(ref, value),
            lambda: store.commitments.cancel(ref, value),
            lambda: store.commitments.list(ref),
            lambda: store.snapshot_info(ref, value),
            lambda: store.read_snapshot(ref, value),
            lambda: store.superseded(ref, pass_id=value if value.startswith("cp-") else None),
            lambda: store.conflicts(ref),
            lambda: store.undo_consolidation(ref, value),
            lambda: store.archive_checksum(ref, value),
        ]
        return rng.choice(operations)

    combos = list(itertools.product(refs, id_values, words))
    forbidden = [*canaries, *a_ids, a]
    outcomes: dict[str, int] = {}
    for n in range(PROBES):
        ref, value, word = combos[n % len(combos)]
        call = probe(ref, value, word)
        try:
            result = await call()
        except MemoryError_ as error:  # refused (not found, bad input): nothing returned
            result = error
        outcomes[type(result).__name__] = outcomes.get(type(result).__name__, 0) + 1
        shown = repr(result)
        # An error may name the id the probe itself passed; anything else of A is a leak.
        passed = f"{ref}\n{value}\n{word}"
        leaked = [w for w in forbidden if w in shown and w not in passed]
        assert not leaked, (ref, value, word, leaked)
    print(f"{PROBES} probes, outcomes {sorted(outcomes.items())}")
    assert await tenant_checksum(engine, a) == before
