"""Download the source distributions whose test data the benchmark reads, once.

    python -m benchmarks.time_corpora.fetch

pip-downloads each pinned sdist into ``.cache/time-corpora/`` (at the repository root)
and checks its sha256 against the value pinned here; a mismatch deletes the file and
fails. Nothing else downloads: the benchmark and the tests only read the cache, and the
benchmark exits non-zero naming this command when a file is missing.
"""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

from benchmarks.pinned_archives import Archive, CorpusMissing, PinnedCache

__all__ = ["CACHE", "FETCH_COMMAND", "SDISTS", "CorpusMissing", "read_member", "require"]

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "time-corpora"
FETCH_COMMAND = "python -m benchmarks.time_corpora.fetch"
PINNED = PinnedCache(CACHE, FETCH_COMMAND)
Sdist = Archive


DATEPARSER = Sdist(
    "dateparser==1.5.0",
    "dateparser-1.5.0.tar.gz",
    "08d62f2c00d3a1e806fc59d40c79e7554e31d84d3b8c6145820af051c92e7292",
)
# 0.1.4 is the last timefhuman release whose sdist holds its test cases inline (0.1.5
# moved them to an eval/ package it does not ship).
TIMEFHUMAN = Sdist(
    "timefhuman==0.1.4",
    "timefhuman-0.1.4.tar.gz",
    "9ffb9401274abcc24af3ab5bba1ae8b77b6ac6bb0b89f6dfe23941710534529d",
)
SDISTS = (DATEPARSER, TIMEFHUMAN)


def require(sdist: Sdist) -> Path:
    return PINNED.require(sdist)


def read_member(sdist: Sdist, member: str) -> str:
    """The text of ``member`` (a path under the sdist's top folder) from the cached sdist."""
    path = require(sdist)
    top = sdist.filename.removesuffix(".tar.gz")
    with tarfile.open(path, "r:gz") as archive:
        handle = archive.extractfile(f"{top}/{member}")
        if handle is None:
            raise CorpusMissing(f"{member} is not a file in {sdist.filename}")
        return handle.read().decode("utf-8")


def main() -> int:
    return PINNED.fetch_all(SDISTS)


if __name__ == "__main__":
    sys.exit(main())
