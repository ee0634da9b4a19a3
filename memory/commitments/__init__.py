"""Standing commitments inferred from memory entries ("remind me in 5 days to send the
invoice", "check back every Thursday at 17:00", "follow up when the contract is signed"):
the storage and firing side, over the memory store's engine (SQL, PostgreSQL).

``store.CommitmentStore`` is the API; ``scan`` reads the entries written since the
memoryRef's watermark, parses them with ``memory.commitment_parsing`` and records each
commitment once; ``records`` lists, shows and cancels them and keeps the tenant's time
zone; ``firing`` claims an occurrence and records it in one transaction (the next
instant of a recurring one from ``commitment_parsing.recurrence_dates``); ``predicates``
is the registry of what a predicate commitment evaluates (SQL reads of the memoryRef).
Tenant and memoryRef clauses come from ``memory.storage.tenant_scope`` (CTI-1).
"""
