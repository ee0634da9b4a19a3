"""The development/test split of STS-B, committed as data in ``split.json``.

    python -m benchmarks.similarity_corpora.split --write    # add pairs the file lacks

No sentence may sit in both halves, so the unit is not the pair but the group of pairs
that share a sentence (connected components over sentences, compared by
``memory.sameness.fact_text.normal_form``; the largest, around "A horse is
standing.", holds about 5% of the pairs). A group goes to ``dev`` when the first byte of
sha256("sts-b\\n<its smallest normal form>") is even, to ``test`` when it is odd. The rule
only fills the file; the file is the authority: a pair whose key is absent is reported by
the benchmark and never scored, and ``--write`` adds missing keys without changing any
half already committed.

Layout: ``{"sts-b": {pair key: "dev" | "test"}}``, keys sorted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from benchmarks.similarity_corpora.corpora import StsPair, sentence_groups
from memory.sameness.fact_text import normal_form

SPLIT_FILE = Path(__file__).with_name("split.json")
CORPUS = "sts-b"
Half = Literal["dev", "test"]
HALVES: tuple[Half, Half] = ("dev", "test")


def half_for(key: str) -> Half:
    digest = hashlib.sha256(f"{CORPUS}\n{key}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def group_halves(pairs: Sequence[StsPair]) -> dict[str, Half]:
    """Each pair's half by the rule: pairs sharing a sentence share a half."""
    groups = sentence_groups(pairs)
    return {pair.key: half_for(groups[normal_form(pair.first)]) for pair in pairs}


def load_split(path: Path = SPLIT_FILE) -> dict[str, Half]:
    if not path.exists():
        return {}
    data: dict[str, dict[str, Half]] = json.loads(path.read_text(encoding="utf-8"))
    return data.get(CORPUS, {})


def extend(split: Mapping[str, Half], pairs: Sequence[StsPair]) -> dict[str, Half]:
    out = dict(split)
    for key, half in group_halves(pairs).items():
        out.setdefault(key, half)
    return out


def dump(split: Mapping[str, Half], path: Path = SPLIT_FILE) -> None:
    data = {CORPUS: dict(sorted(split.items()))}
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    from benchmarks.similarity_corpora.corpora import load_sts

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="add missing pairs to split.json")
    args = parser.parse_args(argv)
    split = load_split()
    extended = extend(split, load_sts())
    counts = {h: sum(1 for v in extended.values() if v == h) for h in HALVES}
    added = len(extended) - len(split)
    print(
        f"{CORPUS}: {len(extended)} pairs ({counts['dev']} dev, {counts['test']} test), {added} new"
    )
    if args.write:
        dump(extended)
        print(f"wrote {SPLIT_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
