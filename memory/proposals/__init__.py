"""Reviewable learning (RFC 0096): routines found in a memoryRef's recurring requests
(routines.py, pure), drafted as inert proposals (synthesis.py, pure) and kept in
PostgreSQL, where every move of a proposal is guarded (store.py)."""
