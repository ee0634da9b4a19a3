"""The committed development/test split (benchmarks/time_corpora/split.json) is stable:
every row the wheel-shipped corpora yield has exactly one half, the halves are about
even, and the committed halves are the ones the documented rule gives."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime

import pytest

from benchmarks.time_corpora import CORPORA, WHEEL_SHIPPED
from benchmarks.time_corpora.rows import Row
from benchmarks.time_corpora.split import SPLIT_FILE, Half, extend, half_for, load_split


def _pairs_without_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    duplicated = [k for k, n in Counter(keys).items() if n > 1]
    assert not duplicated, f"keys listed twice in split.json: {duplicated[:5]}"
    return dict(pairs)


def test_split_file_lists_each_key_once_with_one_half() -> None:
    raw = json.loads(
        SPLIT_FILE.read_text(encoding="utf-8"), object_pairs_hook=_pairs_without_duplicates
    )
    assert set(raw) == set(CORPORA)
    for keys in raw.values():
        assert set(keys.values()) <= {"dev", "test"}


@pytest.mark.parametrize("corpus", sorted(WHEEL_SHIPPED))
def test_every_row_of_a_wheel_corpus_has_its_committed_half(corpus: str) -> None:
    split = load_split()[corpus]
    rows = list(WHEEL_SHIPPED[corpus]())
    keys = [row.key for row in rows]
    assert len(keys) == len(set(keys)), "loader keys must be unique"
    missing = [k for k in keys if k not in split]
    assert not missing, f"{len(missing)} rows absent from split.json, e.g. {missing[:3]}"
    # The file was filled by the documented rule and no half has been edited since.
    assert all(split[k] == half_for(corpus, k) for k in keys)
    scored = Counter(split[row.key] for row in rows if row.scored)
    total = scored["dev"] + scored["test"]
    assert total > 50
    assert abs(scored["dev"] - scored["test"]) <= 0.15 * total, scored


def test_loading_twice_gives_the_same_keys() -> None:
    for load in WHEEL_SHIPPED.values():
        assert [r.key for r in load()] == [r.key for r in load()]


def test_extend_adds_missing_rows_and_never_moves_a_committed_half() -> None:
    reference = load_split()["recurrent"]
    some_key = next(iter(reference))
    flipped: Half = "test" if reference[some_key] == "dev" else "dev"
    existing: dict[str, dict[str, Half]] = {"recurrent": {some_key: flipped}}
    new_row = Row(
        "recurrent",
        "a phrase no corpus has",
        "x",
        datetime(2020, 1, 1),
        None,
    )
    extended = extend(existing, [new_row])
    assert extended["recurrent"][some_key] == flipped
    assert extended["recurrent"]["a phrase no corpus has"] == half_for(
        "recurrent", "a phrase no corpus has"
    )
