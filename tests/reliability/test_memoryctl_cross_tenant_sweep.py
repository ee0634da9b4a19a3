"""CTI-1 through memoryctl (issue 12, the CLI part of the cross-tenant sweep): tenant A
holds entries with canaries, tags, keys and a subject, a consolidation pass (lineage),
a distillation and inferred commitments; generated probes then run every read command
and every erasure as a dry run as tenant B -- on B's memoryRefs and on look-alikes of
A's (mem://ACME…, mem://acme./…, mem://acmex/…, truncated, %2F, ../, a leading space) --
carrying A's entry ids, commitment ids, pass ids, tags, keys and subjects.

No output (stdout or stderr) holds anything of A that the probe did not itself pass,
and A's rows are byte-for-byte unchanged. With the store sweep (10,000 probes) and the
HTTP sweep this makes the issue's 10,000+ probes across the three surfaces."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest

from memory.store import PostgresMemoryStore
from schemas.commitments import InferCommitmentsRequest
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.memory_ref import try_parse_memory_ref
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import SECRET_CANARIES
from tests.support.hostile_input import lookalike_refs, tenant_a_corpus
from tests.support.memoryctl_inprocess import memoryctl
from tests.support.scan import tenant_checksum

PROBES = 3_000
SEED = 20261125


@pytest.mark.slow
async def test_cli_probes_as_another_tenant_find_nothing_of_tenant_a(
    store: PostgresMemoryStore, engine, database_url: str
) -> None:
    a = "acme" + uuid.uuid4().hex[:6]
    b = "beta" + uuid.uuid4().hex[:6]
    canaries = [f"A-CLI-CANARY-{i}-{uuid.uuid4().hex[:6]}" for i in range(6)]
    SECRET_CANARIES.update(canaries)
    a_ref = f"mem://{a}/agent-1"
    written = await store.put_many(a_ref, tenant_a_corpus(canaries))
    passed = await store.consolidate(ConsolidateMemoryRequest(memory_ref=a_ref, run_key="p"))
    distilled = await store.distill(
        DistillMemoryRequest(memory_ref=a_ref, token_budget=4000, run_key="d")
    )
    await store.commitments.infer(InferCommitmentsRequest(memory_ref=a_ref))
    commitments = [c.commitment_id for c in await store.commitments.list(a_ref)]
    assert commitments and passed.merged_ids and distilled.output_id
    entry_ids = [e.id for e in written]
    a_ids = [*entry_ids, *commitments, passed.pass_id, *passed.merged_ids, distilled.output_id]
    before = await tenant_checksum(engine, a)

    refs = [f"mem://{b}/agent-1", f"mem://{b}/agent-2", f"mem://{b}/{a}"]
    # Look-alikes of A's ref that are not A's tenant (some only change the agent).
    refs += [r for r in lookalike_refs(a) if getattr(try_parse_memory_ref(r), "tenant", b) != a]
    parsed = [r for r in refs if try_parse_memory_ref(r) is not None]
    words = ["a-only", "tag-1", "private", "dana", "k-1", "commitment", canaries[0]]
    env = {"DATABASE_URL": database_url, "COLUMNS": "200", "TEMPORAL_ADDRESS": "127.0.0.1:9"}
    rng = random.Random(SEED)
    print(f"CLI sweep seed {SEED}: {len(refs)} refs x {len(a_ids)} ids x {len(words)} words")

    def probe(ref: str, value: str, word: str) -> list[str]:
        r = ["--memory-ref", ref]
        return rng.choice(
            [
                ["memory", "get", *r, value, "--json"],
                ["memory", "get", *r, value],
                ["memory", "list", *r, "--json"],
                ["memory", "list", *r, "--tag", word],
                ["forget", *r, "--id", value, "--dry-run", "--json"],
                ["memory", "forget", *r, "--tag", word, "--dry-run"],
                ["forget", *r, "--subject", "dana", "--tenant-wide", "--dry-run", "--json"],
                ["lineage", *r, "--id", value, "--json"],
                ["lineage", *r, "--id", value],
                ["events", *r],
                ["events", "tail", *r, "--json"],
                ["index", "show", *r],
                ["consolidate", "audit", *r, "--json"],
                ["consolidate", "audit", *r, "--pass", value],
                ["consolidate", "conflicts", *r, "--json"],
                ["commitments", "list", *r, "--json"],
                ["commitments", "show", *r, value, "--json"],
                ["commitments", "show", *r, value],
            ]
        )

    forbidden = [*canaries, *a_ids, a, "a-only", "The customer prefers"]
    outcomes: dict[str, int] = {}
    for _ in range(PROBES):
        # Mostly refs that parse (those reach the database), the rest refused up front.
        ref = rng.choice(parsed if rng.random() < 0.7 else refs)
        value, word = rng.choice(a_ids), rng.choice(words)
        args = probe(ref, value, word)
        ran = await asyncio.to_thread(memoryctl, args, env)
        assert ran.crash is None, (args, repr(ran.crash))
        outcomes[f"exit {ran.status}"] = outcomes.get(f"exit {ran.status}", 0) + 1
        shown = ran.stdout + ran.stderr
        # An output may repeat what the probe itself passed (its ref, the id it asked
        # for); anything else of A is a leak.
        leaked = [w for w in forbidden if w in shown and w not in " ".join(args)]
        assert not leaked, (args, leaked, shown[:500])
    print(f"{PROBES} CLI probes, outcomes {sorted(outcomes.items())}")
    assert await tenant_checksum(engine, a) == before
