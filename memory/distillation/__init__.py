"""Distillation (RFC 0062): the ranked queue, packing under the token budget, the archive,
MEMORY-INDEX.json."""
