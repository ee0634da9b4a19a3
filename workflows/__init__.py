"""Temporal workflows: deterministic code only (no I/O, no clock, no randomness but
workflow.*); every side effect is an activity scheduled by contract
(activities/contracts.py)."""
