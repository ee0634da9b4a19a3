"""Custom search attributes that make runs findable in the Temporal UI and CLI
(`temporal workflow list --query "MemoryRef = 'mem://acme/agent-1'"`)."""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

MEMORY_REF = SearchAttributeKey.for_keyword("MemoryRef")
TENANT = SearchAttributeKey.for_keyword("Tenant")

ALL = (MEMORY_REF, TENANT)
# As the dev server's --search-attribute flag wants them.
DEV_SERVER_FLAGS = [f"{key.name}=Keyword" for key in ALL]
