"""Keyed digests that stand in for ids the store must not show: opaque memoryRefs and
intent links."""
