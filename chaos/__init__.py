"""Chaos: the reliability run that SIGKILLs workers (and restarts PostgreSQL and the
Temporal server) while every workflow kind runs, then proves nothing was applied twice,
lost or left half-written. ``python -m chaos`` (CI size) or ``python -m chaos --soak``."""
