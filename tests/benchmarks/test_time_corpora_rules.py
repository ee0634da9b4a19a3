"""The corpus rules that decide what a row expects, and the verdicts of the benchmark,
on hand-made inputs (no fetched data)."""

from __future__ import annotations

from datetime import date, datetime

from benchmarks.time_corpora.judging import PAST_INSTANT, PAST_LEANING, expect_instant
from benchmarks.time_corpora.language import fixes_clock, has_own_year, is_english
from benchmarks.time_corpora.rows import Instant, NoCommitment, Recurrence
from benchmarks.time_corpora.scoring import Answer, verdict
from benchmarks.time_corpora.testcode import Opaque, cases

REFERENCE = datetime(2015, 2, 15, 15, 30)  # a Sunday

TEST_CODE = """
class TestX(BaseTestCase):
    @parameterized.expand([
        param("Friday", datetime(2015, 2, 20)),
        param(date_string="10:04am", expected=datetime(2012, 11, 13, 10, 4)),
        param(f"{2 * 3} days ago", datetime(2015, 2, 9)),
    ])
    def test_a(self, date_string, expected):
        self.given_parser(settings={"RELATIVE_BASE": datetime(2015, 2, 15, 15, 30)})

@pytest.mark.parametrize("test_input, expected", [
    ('5p', [datetime.datetime(2018, 8, 4, 17, 0)]),
])
def test_b(now, test_input, expected):
    pass
"""


def test_cases_are_read_from_test_code_without_running_it() -> None:
    found = sorted(cases("tests/x.py", TEST_CODE), key=lambda c: (c.function, c.index))
    assert [(c.function, c.index) for c in found] == [
        ("test_a", 0),
        ("test_a", 1),
        ("test_a", 2),
        ("test_b", 0),
    ]
    assert found[0].args == {"date_string": "Friday", "expected": datetime(2015, 2, 20)}
    assert found[1].args["expected"] == datetime(2012, 11, 13, 10, 4)
    assert isinstance(found[2].args["date_string"], Opaque)
    assert found[3].args["expected"] == [datetime(2018, 8, 4, 17, 0)]
    assert found[0].key.startswith("tests/x.py::TestX.test_a::0::")
    assert len({c.key for c in found}) == 4


def test_fields_follow_the_phrase() -> None:
    assert expect_instant(
        "10:04am", datetime(2015, 2, 16, 10, 4), REFERENCE, forward=True
    ) == Instant(date(2015, 2, 16), (10, 4))
    # A date-only phrase: its time is each parser's convention, not judged.
    assert expect_instant("Friday", datetime(2015, 2, 20), REFERENCE, forward=True) == Instant(
        date(2015, 2, 20), None
    )
    assert (
        fixes_clock("in 2 hours")
        and fixes_clock("noon")
        and not fixes_clock("second Wednesday of December")
    )


def test_past_instants_expect_nothing_only_when_the_phrase_says_so() -> None:
    past = datetime(2015, 2, 13)
    assert expect_instant("2 days ago", past, REFERENCE, forward=False) == NoCommitment(
        PAST_INSTANT
    )
    assert expect_instant("Feb 13 2015", past, REFERENCE, forward=False) == NoCommitment(
        PAST_INSTANT
    )
    # "Friday" read backwards by a past-preferring test: a reminder reads it forward.
    assert expect_instant("Friday", past, REFERENCE, forward=False) == PAST_LEANING
    assert expect_instant("3/3/50", datetime(1950, 3, 3), REFERENCE, forward=False) == PAST_LEANING
    assert has_own_year("29.01.2008. 00:00") and not has_own_year("1/1/95")


def test_english_is_decided_by_vocabulary() -> None:
    assert is_english("Aug. 9, 2012 at 2:57 p.m.")
    assert is_english("in about 23 hours")
    assert not is_english("vor 2 Stunden")
    assert not is_english("il y a 2 jours")
    assert not is_english("24 \u044f\u043d 2015")  # Cyrillic "jan"


def test_verdicts() -> None:
    one_off = Instant(date(2015, 2, 20), (9, 0))
    assert verdict(one_off, Answer(instant=datetime(2015, 2, 20, 9, 0)), REFERENCE) == "correct"
    assert verdict(one_off, Answer(instant=datetime(2015, 2, 20, 10, 0)), REFERENCE) == "wrong"
    assert verdict(one_off, Answer(rule={"FREQ": "WEEKLY", "BYDAY": "FR"}), REFERENCE) == "wrong"
    assert verdict(one_off, Answer(condition=True), REFERENCE) == "wrong"
    assert verdict(one_off, Answer(), REFERENCE) == "none"
    assert verdict(one_off, Answer(error="AttributeError"), REFERENCE) == "none"
    nothing = NoCommitment("past instant")
    assert verdict(nothing, Answer(), REFERENCE) == "correct"
    assert verdict(nothing, Answer(instant=datetime(2015, 2, 20)), REFERENCE) == "wrong"
    weekly = Recurrence({"freq": "weekly", "interval": 1}, representable=True)
    # Bare "weekly" said on a Sunday: the rule's weekday is the reference's.
    assert (
        verdict(weekly, Answer(rule={"FREQ": "WEEKLY", "INTERVAL": "1", "BYDAY": "SU"}), REFERENCE)
        == "correct"
    )
    assert verdict(weekly, Answer(rule={"FREQ": "WEEKLY", "BYDAY": "MO"}), REFERENCE) == "wrong"
    assert verdict(weekly, Answer(instant=datetime(2015, 2, 22)), REFERENCE) == "wrong"
    bounded = Recurrence({"freq": "weekly", "count": 3}, representable=False)
    assert verdict(bounded, Answer(), REFERENCE) == "correct"
    assert verdict(bounded, Answer(rule={"FREQ": "WEEKLY"}), REFERENCE) == "wrong"
