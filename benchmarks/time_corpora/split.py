"""The development/test split, committed as data in ``split.json``.

    python -m benchmarks.time_corpora.split --write    # add rows the file lacks

Every row a loader yields (scored or skipped, so that a change of scope later never
creates an unassigned row) has a half: ``dev`` when the first byte of
sha256("<corpus>\\n<key>") is even, ``test`` when it is odd. The rule only fills the file;
the file is the authority: a row whose key is absent (a new corpus version, a changed
case) is reported by the benchmark and never scored, and ``--write`` adds missing keys
without changing any half already committed.

Layout: ``{corpus name: {row key: "dev" | "test"}}``, keys sorted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from benchmarks.time_corpora.rows import Row

SPLIT_FILE = Path(__file__).with_name("split.json")
Half = Literal["dev", "test"]
HALVES: tuple[Half, Half] = ("dev", "test")


def half_for(corpus: str, key: str) -> Half:
    digest = hashlib.sha256(f"{corpus}\n{key}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def load_split(path: Path = SPLIT_FILE) -> dict[str, dict[str, Half]]:
    if not path.exists():
        return {}
    data: dict[str, dict[str, Half]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def extend(
    split: Mapping[str, Mapping[str, Half]], rows: Iterable[Row]
) -> dict[str, dict[str, Half]]:
    """``split`` plus the rows it lacks, each by ``half_for``; existing halves unchanged."""
    out = {corpus: dict(keys) for corpus, keys in split.items()}
    for row in rows:
        out.setdefault(row.corpus, {}).setdefault(row.key, half_for(row.corpus, row.key))
    return out


def dump(split: Mapping[str, Mapping[str, Half]], path: Path = SPLIT_FILE) -> None:
    ordered = {c: dict(sorted(split[c].items())) for c in sorted(split)}
    path.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    from benchmarks.time_corpora import CORPORA

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="add missing rows to split.json")
    args = parser.parse_args(argv)
    split = load_split()
    rows = [row for load in CORPORA.values() for row in load()]
    extended = extend(split, rows)
    for corpus, keys in extended.items():
        added = len(keys) - len(split.get(corpus, {}))
        counts = {h: sum(1 for v in keys.values() if v == h) for h in HALVES}
        print(
            f"{corpus}: {len(keys)} rows ({counts['dev']} dev, {counts['test']} test), {added} new"
        )
    if args.write:
        dump(extended)
        print(f"wrote {SPLIT_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
