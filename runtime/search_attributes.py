"""Custom search attributes that make runs findable in the Temporal UI and CLI
(`temporal workflow list --query "MemoryRef = 'mem://acme/agent-1'"`)."""

from __future__ import annotations

from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    SearchAttributeUpdate,
    TypedSearchAttributes,
)

from schemas.memory_ref import MemoryRef

MEMORY_REF = SearchAttributeKey.for_keyword("MemoryRef")
TENANT = SearchAttributeKey.for_keyword("Tenant")

ALL = (MEMORY_REF, TENANT)
# As the dev server's --search-attribute flag wants them.
DEV_SERVER_FLAGS = [f"{key.name}=Keyword" for key in ALL]


def attributes_of(ref: MemoryRef) -> TypedSearchAttributes:
    """What a run about ``ref`` is started with (child workflows, armed commitments)."""
    return TypedSearchAttributes(
        [SearchAttributePair(MEMORY_REF, str(ref)), SearchAttributePair(TENANT, ref.tenant)]
    )


def updates_of(ref: MemoryRef) -> list[SearchAttributeUpdate]:
    """What a run upserts for ``ref`` (runs started from the CLI carry none)."""
    return [MEMORY_REF.value_set(str(ref)), TENANT.value_set(ref.tenant)]
