"""Where an activity's CPU-bound step runs: small jobs on the event loop, large ones in
a worker thread.

A thread keeps the loop free for heartbeats and for the worker's other activities while
a long job runs (on the loop, a first scan of a 1M-entry memory starved its heartbeats
past their timeout: tests/memory/test_inference_event_loop.py). But every hand-off has a
price beyond the thread switch: the loop and the thread then contend for the GIL, and
each waits out the other's switch interval. In a fleet dream, thousands of agents each
run a few small steps while holding a transaction open, and the hand-offs left the
memory database idle in transaction and a third of two cores unused. Up to
ON_LOOP_ITEMS items (each well under a millisecond: tokens, fact reading, time
expressions), a job runs in milliseconds, far inside any heartbeat.
"""

from __future__ import annotations

ON_LOOP_ITEMS = 500


def on_loop(items: int) -> bool:
    """Whether a job over ``items`` items runs on the event loop rather than a thread."""
    return items <= ON_LOOP_ITEMS
