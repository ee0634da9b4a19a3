"""Temporal activities: every side effect a workflow asks for, through the store's
protocol (memory/adapter.py), with content-free errors (boundary.py)."""
