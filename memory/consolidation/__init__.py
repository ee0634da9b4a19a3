"""Consolidation (RFC 0068 §D): a deterministic merge/dedup/supersede pass over one
memoryRef's long-term entries.

The funnel, cheapest first, with the rules of memory/sameness/: exact duplicates after
normalisation (fact_text.py), then near-duplicates from MinHash/LSH candidates verified
token by token (candidates.py, conflict_guard.py); entries that differ in a number,
date, negation, name or identifier are conflicts, never duplicates. Here, corpus.py reads
what a pass plans over, planner.py clusters with union-find, keeping every
cluster free of conflicts, and picks survivors; supersession of re-keyed facts is
decided there too. apply.py commits a plan in one transaction, claiming each member at
the version planned; undo.py reverts a pass; passes.py is the store's entry to all three.
"""
