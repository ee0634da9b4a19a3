"""Lists that came back empty, and why when the likelier reason is a typo.

An empty list is a valid answer, so the exit status stays 0 and stdout stays the list
(``[]`` with --json); but a tenant with no memory at all, or an agent its tenant does
not have, is far more often a misspelt name than an empty memory. ``list_or_why`` then
adds one note on stderr naming what does exist (agent ids only, never content).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from memoryctl.cli import errors, open_store, run_action

if TYPE_CHECKING:
    from memory.store import PostgresMemoryStore

Row = TypeVar("Row")
AGENTS_NAMED = 10


async def why_empty(store: PostgresMemoryStore, tenant: str, agent: str | None) -> str | None:
    """The note for an empty list over ``tenant`` (and ``agent``), or None when the
    tenant and agent hold memory and the list is simply empty."""
    from memory.tenants.agent_manifests import AgentManifestStore

    agents = [known.agent_id for known in await AgentManifestStore(store.engine).agents(tenant)]
    if not agents:
        return f"note: tenant {tenant} has no memory here (no agent of it holds an entry)"
    if agent is not None and agent not in agents:
        named = ", ".join(agents[:AGENTS_NAMED]) + (", ..." if len(agents) > AGENTS_NAMED else "")
        return f"note: tenant {tenant} has no agent {agent}; its agents: {named}"
    return None


def list_or_why(
    load: Callable[[PostgresMemoryStore], Awaitable[Sequence[Row]]],
    tenant: str,
    agent: str | None = None,
) -> list[Row]:
    """``load``'s rows; when there are none, the note (if any) is printed on stderr."""

    async def action() -> tuple[Sequence[Row], str | None]:
        async with open_store() as store:
            rows = await load(store)
            return rows, None if rows else await why_empty(store, tenant, agent)

    rows, note = run_action(action)
    if note is not None:
        errors.print(note, markup=False, soft_wrap=True)
    return list(rows)
