"""Temporal worker entry point (filled in by the dream runtime)."""
