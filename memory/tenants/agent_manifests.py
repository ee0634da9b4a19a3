"""The agents a tenant has: registered manifests (their memoryShape, RFC 0080 §C) and
every agent that holds memory here. GET /v1/agents reads this and projects each shape
against the live capability model."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage.tables import agent_manifests as AGENT_MANIFESTS
from memory.storage.tables import ref_heads as REF_HEADS
from memory.storage.tenant_scope import tenant_scoped
from schemas.discovery import MemoryShape
from schemas.memory_ref import parse_segment, try_parse_memory_ref

MAX_AGENTS_LISTED = 1000


@dataclass(frozen=True)
class KnownAgent:
    agent_id: str
    memory_shape: MemoryShape | None


class AgentManifestStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def register(self, tenant: str, agent_id: str, shape: MemoryShape) -> None:
        tenant = parse_segment(tenant, "tenant")
        agent_id = parse_segment(agent_id, "agentId")
        values = {
            "tenant": tenant,
            "agent_id": agent_id,
            "memory_shape": shape.to_wire(),
            "updated_at": datetime.now(UTC),
        }
        statement = insert(AGENT_MANIFESTS).values(**values)
        statement = statement.on_conflict_do_update(
            index_elements=[AGENT_MANIFESTS.c.tenant, AGENT_MANIFESTS.c.agent_id],
            set_={"memory_shape": statement.excluded.memory_shape, "updated_at": func.now()},
        )
        async with self.engine.begin() as connection:
            await connection.execute(statement)

    async def agents(self, tenant: str) -> list[KnownAgent]:
        """Registered agents and agents holding memory, by id (at most MAX_AGENTS_LISTED)."""
        tenant = parse_segment(tenant, "tenant")
        async with self.engine.connect() as connection:
            manifests = (
                await connection.execute(
                    select(AGENT_MANIFESTS.c.agent_id, AGENT_MANIFESTS.c.memory_shape).where(
                        tenant_scoped(AGENT_MANIFESTS, tenant)
                    )
                )
            ).all()
            refs = (
                await connection.execute(
                    select(REF_HEADS.c.memory_ref)
                    .where(tenant_scoped(REF_HEADS, tenant))
                    .limit(MAX_AGENTS_LISTED * 4)
                )
            ).scalars()
            holders = {ref.agent for raw in refs if (ref := try_parse_memory_ref(raw))}
        shapes = {row.agent_id: MemoryShape.model_validate(row.memory_shape) for row in manifests}
        ids = sorted(set(shapes) | holders)[:MAX_AGENTS_LISTED]
        return [KnownAgent(agent_id=i, memory_shape=shapes.get(i)) for i in ids]
