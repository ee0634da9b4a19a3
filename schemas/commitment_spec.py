"""What an inferred commitment waits for, as the parser produces it and the store keeps it.

Three shapes, one per fire condition (RFC 0068 §C):
- OnceSpec: a single instant ("remind me in 5 days", "tomorrow at 8:30").
- RecurringSpec: an RFC 5545 RRULE over local wall-clock times in an IANA time zone
  ("every Thursday at 17:00"); occurrences are computed in that zone, so 17:00 stays
  17:00 across a DST change.
- PredicateSpec: a named predicate from the registry with its arguments ("when the
  contract is signed" -> memory.tag_exists {tag: contract-signed}).

These live in the store only. Workflows carry the commitmentId and instants, never a
spec: a predicate's arguments are derived from memory content.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from schemas.base import Instant, WireModel

TimeZoneName = Annotated[str, Field(min_length=1, max_length=64)]


class OnceSpec(WireModel):
    kind: Literal["once"] = "once"
    at: Instant
    time_zone: TimeZoneName = "UTC"


class RecurringSpec(WireModel):
    kind: Literal["recurring"] = "recurring"
    # The RRULE body without DTSTART, e.g.
    # "FREQ=WEEKLY;INTERVAL=1;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0".
    rrule: str = Field(min_length=1, max_length=512)
    # Local wall-clock start (no offset): occurrences are generated in time_zone.
    dtstart: datetime
    time_zone: TimeZoneName = "UTC"


class PredicateSpec(WireModel):
    kind: Literal["predicate"] = "predicate"
    predicate: str = Field(min_length=1, max_length=128)
    args: dict[str, str] = Field(default_factory=dict)


CommitmentSpec = Annotated[OnceSpec | RecurringSpec | PredicateSpec, Field(discriminator="kind")]
