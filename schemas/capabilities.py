"""The distillation limits this host honours (RFC 0062 §A). One place, so the
workflows' clamp, the archive retention and the discovery document (api/discovery.py,
which adds what is live right now) agree."""

from __future__ import annotations

from datetime import timedelta

# The tokenizer every budget is counted with (memory/tokens.py loads it offline).
TOKENIZER_NAME = "cl100k_base"
# Largest per-run budget we honour; absent budgets default to it (RFC 0062 §B.2).
MAX_TOKEN_BUDGET = 100_000
# How long an archive stays addressable before garbage collection.
ARCHIVE_RETENTION = timedelta(days=30)
ARCHIVE_RETENTION_ISO = "P30D"
# MEMORY-INDEX.json is loaded at every session start; its size is capped so that cost
# is bounded and known (Claude Code, for comparison, loads at most 25 KB of its index).
MEMORY_INDEX_MAX_TOKENS = 2_000
