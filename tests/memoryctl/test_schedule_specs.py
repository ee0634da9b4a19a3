"""memoryctl/schedule_specs.py on specs the server does not make from a cron (what it
makes from one is in test_schedule_list.py, against a dev server): what five cron fields
cannot say is named, never shown as a wrong cron."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio.client import (
    ScheduleCalendarSpec,
    ScheduleIntervalSpec,
    ScheduleRange,
    ScheduleSpec,
)

from memoryctl.schedule_specs import calendar_cron, duration_text, jitter_text, spec_text


def test_a_calendar_with_seconds_or_a_year_has_no_five_field_form() -> None:
    assert calendar_cron(ScheduleCalendarSpec(second=(ScheduleRange(30),))) == (
        "(calendar: seconds set)"
    )
    assert calendar_cron(ScheduleCalendarSpec(year=(ScheduleRange(2027),))) == (
        "(calendar: year set)"
    )
    assert calendar_cron(ScheduleCalendarSpec(hour=())) == "(calendar: no hour)"


def test_ranges_lists_and_steps_render_as_cron_fields() -> None:
    calendar = ScheduleCalendarSpec(
        minute=(ScheduleRange(5, 59, 15),),
        hour=(ScheduleRange(0, 23, 2),),
        day_of_month=(ScheduleRange(1, 10), ScheduleRange(20)),
        month=(ScheduleRange(1, 12),),
        day_of_week=(ScheduleRange(1, 5, 2),),
    )
    assert calendar_cron(calendar) == "5-59/15 */2 1-10,20 * 1-5/2"


def test_several_specs_join_and_what_narrows_them_is_said() -> None:
    spec = ScheduleSpec(
        calendars=[ScheduleCalendarSpec(hour=(ScheduleRange(6),))],
        intervals=[ScheduleIntervalSpec(every=timedelta(minutes=90))],
        cron_expressions=["0 12 * * *"],
        skip=[ScheduleCalendarSpec(day_of_week=(ScheduleRange(0),))],
        end_at=datetime(2027, 1, 1, tzinfo=UTC),
        jitter=timedelta(seconds=30),
        time_zone_name="America/New_York",
    )
    assert spec_text(spec) == (
        "CRON_TZ=America/New_York 0 6 * * *; CRON_TZ=America/New_York 0 12 * * *; "
        "every 1h30m (except 1 calendar, until 2027-01-01 00:00 UTC)"
    )
    assert jitter_text(spec) == "30s"
    assert spec_text(ScheduleSpec()) == "(no times: trigger only)"
    assert jitter_text(ScheduleSpec(jitter=timedelta(0))) is None
    assert [duration_text(timedelta(seconds=s)) for s in (0, 45, 600, 7200, 90061)] == [
        "0s", "45s", "10m", "2h", "25h1m1s",
    ]  # fmt: skip
