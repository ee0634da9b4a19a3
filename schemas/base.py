"""Shared pydantic configuration: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel


def floor_ms(value: datetime) -> datetime:
    """Drop sub-millisecond digits: the wire and the TTL comparison use a ms floor."""
    return value.replace(microsecond=(value.microsecond // 1000) * 1000)


def _require_utc_ms(value: datetime) -> datetime:
    # The wire shape is an ISO-8601 instant with a millisecond floor (openwop TTL
    # semantics), so we normalise to UTC and drop sub-millisecond digits on the way in:
    # what a client sends is exactly what the store compares against.
    if value.tzinfo is None:
        raise ValueError("must carry a timezone (ISO 8601 with Z or an offset)")
    return floor_ms(value.astimezone(UTC))


def format_instant(value: datetime) -> str:
    """ISO 8601 UTC with milliseconds and a Z, as every instant appears on the wire."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


Instant = Annotated[
    datetime,
    AfterValidator(_require_utc_ms),
    PlainSerializer(format_instant, return_type=str, when_used="json"),
]


class WireModel(BaseModel):
    """Base for every wire shape: camelCase aliases, snake_case attributes, strict extras."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        # A validation error names the field and the rule, never the value: the value
        # may be memory content or a secret, and errors reach logs and Temporal history.
        hide_input_in_errors=True,
    )

    def to_wire(self) -> dict[str, object]:
        """The JSON-ready camelCase form, without unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class WireResult(WireModel):
    """Base of every workflow and activity result: unknown fields are ignored, so a
    result written by a newer worker still decodes in an older one (rolling deploys)."""

    model_config = ConfigDict(extra="ignore")
