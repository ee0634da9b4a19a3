"""quickstart.sh installs the project once, and again only when pyproject.toml changes
(it reinstalled on every run). Checked with a stand-in venv whose python and memoryctl
record how they are called, so no real install runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _stand_in_venv(venv: Path, calls: Path) -> None:
    bin_dir = venv / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "memoryctl"):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\n')
        script.chmod(0o755)


def _run(project: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(project / "quickstart.sh"), "--exit-after-run"],
        env={**os.environ, "VENV": str(venv), "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_install_runs_once_and_again_when_the_dependencies_change(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "quickstart.sh", project)
    shutil.copy(ROOT / "pyproject.toml", project)
    venv, calls = tmp_path / "venv", tmp_path / "calls"
    _stand_in_venv(venv, calls)

    def installs() -> int:
        return sum("-m pip install --quiet -e ." in line for line in calls.read_text().splitlines())

    first = _run(project, venv)
    assert first.returncode == 0, first.stderr
    assert installs() == 1
    second = _run(project, venv)
    assert second.returncode == 0, second.stderr
    assert installs() == 1, "reinstalled with pyproject.toml unchanged"
    assert "pyproject.toml unchanged" in second.stdout
    # Every run still starts the demo, with its arguments.
    assert calls.read_text().count("memoryctl demo --exit-after-run") == 2

    with (project / "pyproject.toml").open("a") as handle:
        handle.write("\n# a dependency changed\n")
    assert _run(project, venv).returncode == 0
    assert installs() == 2


@pytest.mark.slow
def test_the_editable_install_prints_no_warning_box(tmp_path: Path) -> None:
    # Issue 41: every first install ended in setuptools' "Editable installation ... !!"
    # box. The same two pip commands as quickstart.sh (without the dependencies, which
    # are not what is checked), in a fresh venv.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    steps = [
        [python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(ROOT)],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    shown = [line for line in done.stderr.splitlines() if not line.startswith("WARNING: Location")]
    assert not any("Editable installation" in line or "!!" in line for line in shown), shown
    pth = list((venv / "lib").glob("python3*/site-packages/__editable__*.pth"))
    assert [path.read_text().strip() for path in pth] == [str(ROOT)]
