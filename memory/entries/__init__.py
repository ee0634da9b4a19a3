"""Entries: the one writer of their content, puts and edits, capacity, rows, filters,
lineage."""
