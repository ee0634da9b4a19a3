"""Smoke test of the routine detection benchmark's timelines and scoring
(benchmarks/routine_bench.py) on a few inline rows: no wheel cache, no download, no
database. The full run needs ``python -m benchmarks.similarity_corpora.fetch``."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np

from benchmarks.routine_bench import (
    COURTESY,
    JITTER_S,
    MONDAY,
    NEGATIVE_BASE,
    PLAIN,
    SLOT,
    START,
    TAGS,
    WEEKS,
    ZONE,
    Composition,
    Planted,
    Score,
    Timeline,
    build_timelines,
    cadence_routines,
    courtesy,
    exact_groups,
    greedy_groups,
    look_alikes,
    material,
    pair_matrix,
    same_request,
    tune_pairwise,
)
from benchmarks.semantic_accuracy_bench import PARAPHRASE, token_set_scores
from benchmarks.similarity_corpora.corpora import Names, parse_misspellings, parse_sts
from memory.proposals.routines import Sighting, find_routines, request_core
from memory.sameness.fact_text import normal_form

ROWS = (
    ("0001", "4.800", "A man is playing a flute in the garden.", "A man plays the flute outside."),
    ("0002", "0.400", "The train leaves at 10 today.", "A woman is slicing an onion."),
    ("0003", "3.000", "A cat sleeps on the sofa.", "The dog sleeps."),
    ("0004", "2.000", "Kids are swimming in a pool.", "Traffic is heavy downtown."),
    ("0005", "5.000", "A plane is taking off.", "An air plane is taking off."),
    ("0006", "0.200", "John is reading a book.", "Smoke rises from a chimney."),
    ("0007", "2.600", "Two dogs run on the beach.", "Two cats play in the snow."),
    ("0008", "0.000", "A chef is cooking pasta.", "The stock market fell sharply."),
)
STS_ROWS = "".join(f"main-captions\tMSRvid\t2012test\t{i}\t{s}\t{a}\t{b}\n" for i, s, a, b in ROWS)
CODESPELL = "plaing->playing\nsleping->sleeping\ntakeing->taking\nreadng->reading\n"
NAMES = Names(first=("Alice", "Carl", "Carol", "John"), last=("Jones", "Smith"))
SMALL = Composition(positives=2, negatives=1, noise=1)


def timelines(seed: int = 3) -> list[Timeline]:
    source = material(parse_sts("test", STS_ROWS))
    return build_timelines(
        source, parse_misspellings(CODESPELL), NAMES, seed=seed, composition=SMALL
    )


def monday_slot_weeks(planted: list[Planted]) -> list[int]:
    """The weeks (from START) of sightings that must all sit in the Monday slot."""
    weeks = []
    for p in planted:
        at = p.sighting.at
        assert at.weekday() == MONDAY, p
        offset = at - (START + timedelta(weeks=(at - START).days // 7))
        assert SLOT <= offset <= SLOT + timedelta(seconds=JITTER_S), p
        weeks.append((at - START).days // 7)
    return weeks


def test_material_reads_groups_and_partners() -> None:
    source = material(parse_sts("test", STS_ROWS))
    assert len(source.groups) == len(ROWS)
    assert source.paraphrase_of["A plane is taking off."] == "An air plane is taking off."
    assert source.unrelated_to["John is reading a book."] == "Smoke rises from a chimney."
    assert "A cat sleeps on the sofa." not in source.paraphrase_of


def test_timelines_plant_weekly_routines_negatives_and_noise() -> None:
    built = timelines()
    assert len(built) == len(ROWS) // SMALL.per_timeline == 2
    assert built == timelines() and built != timelines(seed=4)  # deterministic for a seed
    used: list[str] = []
    for timeline in built:
        planted = list(timeline.planted)
        assert len(planted) == 4 * (SMALL.positives + SMALL.negatives) + SMALL.noise
        keys = [(p.sighting.at, p.sighting.entry_id) for p in planted]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert all(p.sighting.tags == TAGS for p in planted)
        assert all(START <= p.sighting.at < START + timedelta(weeks=WEEKS) for p in planted)
        positives, negatives = timeline.routines("p"), timeline.routines("n")
        assert len(positives) == SMALL.positives and len(negatives) == SMALL.negatives
        assert timeline.paraphrased == {"p0"}  # half the positives, from a paraphrase group
        for name, members in positives.items():
            weeks = monday_slot_weeks([planted[i] for i in members])
            assert weeks == list(range(weeks[0], weeks[0] + 4)), "4 Mondays in a row"
            kinds = {planted[i].kind: planted[i].sighting.text for i in members}
            assert len(kinds) == 4 and PLAIN in kinds and COURTESY in kinds
            plain = kinds[PLAIN]
            assert normal_form(request_core(kinds[COURTESY])) == normal_form(plain)
            if name in timeline.paraphrased:
                partner = material(parse_sts("test", STS_ROWS)).paraphrase_of[plain]
                assert kinds[PARAPHRASE] == partner
            used.append(plain)
        for members in negatives.values():
            weeks = monday_slot_weeks([planted[i] for i in members])
            assert weeks == list(range(weeks[0], weeks[0] + 4))
            texts = [planted[i].sighting.text for i in members]
            assert len({normal_form(t) for t in texts}) == 4, "4 different requests"
            base = next(planted[i] for i in members if planted[i].kind == NEGATIVE_BASE)
            used.append(base.sighting.text)
        noise = [p for p in planted if p.routine is None]
        assert len(noise) == SMALL.noise and all(p.kind == "noise" for p in noise)
        used.extend(p.sighting.text for p in noise)
        truth = same_request(timeline)
        assert truth.sum() == 6 * SMALL.positives  # the pairs within each positive routine
    # Each STS-B sentence group (here: one row) serves once in the whole run.
    rows = [next(n for n, row in enumerate(ROWS) if text in row[2:]) for text in used]
    assert sorted(rows) == list(range(len(ROWS)))


def test_wordings_keep_the_request_and_look_alikes_change_it() -> None:
    sentence = "A man is playing a flute in the garden."
    wrapped = {courtesy(sentence, random.Random(seed)) for seed in range(30)}
    assert wrapped == {
        "Could you a man is playing a flute in the garden?",
        "Please a man is playing a flute in the garden.",
        "A man is playing a flute in the garden, thanks!",
    }
    assert {normal_form(request_core(w)) for w in wrapped} == {normal_form(sentence)}
    alike = look_alikes("The board will get 3 reports from John.", NAMES, "A cat sleeps.")
    assert alike[0] == (NEGATIVE_BASE, "The board will get 3 reports from John.")
    assert {kind for kind, _ in alike} == {
        NEGATIVE_BASE,
        "number",
        "name",
        "negation",
        "sts_low",
    }
    texts = dict(alike)
    assert texts["number"] == "The board will get 4 reports from John."
    assert texts["negation"] == "The board will not get 3 reports from John."
    assert len({normal_form(t) for _, t in alike}) == len(alike)


def _mondays(texts: list[str], first_id: int = 0) -> list[Sighting]:
    return [
        Sighting(f"e{first_id + w}", text, TAGS, START + timedelta(weeks=w) + SLOT)
        for w, text in enumerate(texts)
    ]


def test_the_product_finds_an_obvious_routine_and_none_from_its_look_alikes() -> None:
    asked = _mondays(
        [
            "Send the sales report to the board.",
            "Could you send the sales report to the board?",
            "SEND THE SALES REPORT TO THE BOARD.",
            "Send the sales report to the board, thanks!",
        ]
    )
    (routine,) = find_routines(asked, ZONE)
    assert routine.entry_ids == ("e0", "e1", "e2", "e3")
    assert (routine.cadence, routine.weekday, routine.hour, routine.minute) == (
        "weekly",
        MONDAY,
        9,
        0,
    )
    alike = [
        text for _, text in look_alikes("The board will get 3 reports from John.", NAMES, None)
    ]
    assert len(alike) == 4
    assert find_routines(_mondays(alike, first_id=10), ZONE) == []


def _hand_made_timeline() -> Timeline:
    def planted(
        n: int, week: int, routine: str | None, kind: str, text: str, day: int = MONDAY
    ) -> Planted:
        at = START + timedelta(weeks=week, days=day) + SLOT + timedelta(minutes=n)
        return Planted(Sighting(f"x{n:02d}", text, TAGS, at), routine, kind)

    rows = [
        planted(0, 0, "p0", PLAIN, "A plane is taking off."),
        planted(1, 0, "n0", NEGATIVE_BASE, "John is reading a book."),
        planted(2, 1, "p0", COURTESY, "Please a plane is taking off."),
        planted(3, 1, "n0", "negation", "John is not reading a book."),
        planted(4, 2, "p0", "typo", "A plane is takeing off."),
        planted(5, 2, "n0", "name", "Carl is reading a book."),
        planted(6, 3, "p0", PARAPHRASE, "An air plane is taking off."),
        planted(7, 3, "n0", "sts_low", "Smoke rises from a chimney."),
        planted(8, 3, None, "noise", "A cat sleeps on the sofa."),  # a Monday, 09:08
        planted(9, 4, None, "noise", "Traffic is heavy downtown.", day=4),  # a Friday
    ]
    return Timeline(tuple(rows), frozenset({"p0"}))


def test_scoring_counts_routines_false_routines_and_pairs() -> None:
    timeline = _hand_made_timeline()
    # A grouping that keeps 3 weeks of the routine, misses the paraphrase week and
    # wrongly merges the 4 look-alikes.
    groups = [[0, 2, 4], [6], [1, 3, 5, 7], [8], [9]]
    routines = cadence_routines(timeline, groups)
    assert [len(r.entry_ids) for r in routines] == [3, 4]
    score = Score("m")
    score.add(timeline, groups, routines)
    assert (score.positives, score.found, score.whole) == (1, 1, 0)
    assert (score.paraphrased, score.paraphrased_found) == (1, 1)
    assert (score.routines, score.false_routines, score.negatives_formed) == (2, 1, 1)
    assert (score.pairs_true, score.pairs_predicted, score.pairs_actual) == (3, 3 + 6, 6)
    assert score.pair_precision == 3 / 9 and score.pair_recall == 0.5
    assert score.routine_precision == 0.5 and score.routine_f1 == 2 / 3
    assert score.join_rate(COURTESY) == 1.0 and score.join_rate("typo") == 1.0
    assert score.join_rate(PARAPHRASE) == 0.0 and score.join_rate("filler") is None
    assert score.to_json()["false_routines_per_timeline"] == 1.0
    # Noise merged on a Friday is left out of the routine: the Monday weeks are still
    # found, a true routine. Noise merged in the Monday slot joins the routine: found,
    # and a false routine too.
    friday = Score("friday")
    friday_groups = [[0, 2, 4, 9], [6], [1], [3], [5], [7], [8]]
    friday.add(timeline, friday_groups, cadence_routines(timeline, friday_groups))
    assert (friday.found, friday.routines, friday.false_routines) == (1, 1, 0)
    monday = Score("monday")
    monday_groups = [[0, 2, 4, 8], [6], [1], [3], [5], [7], [9]]
    monday.add(timeline, monday_groups, cadence_routines(timeline, monday_groups))
    assert (monday.found, monday.routines, monday.false_routines) == (1, 1, 1)


def test_greedy_grouping_exact_floor_and_pairwise_tuning() -> None:
    scores = np.array([[0, 90, 10], [90, 0, 95], [10, 95, 0]], dtype=float)
    assert greedy_groups(scores, 80) == [[0, 1], [2]]  # 2 is compared with 0, the first
    assert greedy_groups(scores, 96) == [[0], [1], [2]]
    both = np.array([[0, 10, 90], [10, 0, 95], [90, 95, 0]], dtype=float)
    assert greedy_groups(both, 80) == [[0, 2], [1]]  # the first group, not the best
    assert exact_groups(["A b.", "a   B", "c"]) == [[0, 1], [2]]
    matrix = pair_matrix(["a man b", "b a man", "smoke"], token_set_scores)
    assert matrix[0, 1] == matrix[1, 0] == 100.0 and matrix[0, 2] == matrix[2, 0] < 50
    timeline = _hand_made_timeline()
    # Positives score 90, everything else 50, except one look-alike pair at 95: the
    # lowest threshold with precision >= 0.99 is above it.
    tuned = np.full((10, 10), 50.0)
    for i in (0, 2, 4, 6):
        for j in (0, 2, 4, 6):
            tuned[i, j] = 90.0
    tuned[1, 3] = tuned[3, 1] = 95.0
    assert tune_pairwise([timeline], [tuned]) == 96.0  # none reaches it: never merges
    tuned[1, 3] = tuned[3, 1] = 10.0
    assert tune_pairwise([timeline], [tuned]) == 90.0
