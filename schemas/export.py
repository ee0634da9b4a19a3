"""Export the wire shapes as JSON Schema files (draft 2020-12) into schemas/json/.

python -m schemas.export          # write the files
python -m schemas.export --check  # exit 1 when the checked-in files are stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from schemas.registry import EXPORTED

OUTPUT_DIR = Path(__file__).with_name("json")


def render(model: type[BaseModel]) -> str:
    schema = model.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def rendered() -> dict[str, str]:
    _load_extensions()
    return {f"{name}.schema.json": render(model) for name, model in sorted(EXPORTED.items())}


def _load_extensions() -> None:
    # Import the modules that register further shapes so the export is complete no
    # matter which module ran first.
    import importlib

    for module in (
        "schemas.workflow_io",
        "schemas.fleet",
        "schemas.proposals",
        "schemas.discovery",
        "schemas.discovery_v2",
        "schemas.fixture_runs",
        "schemas.run_wire",
        "schemas.embeddings",
    ):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise


def stale_files() -> list[str]:
    expected = rendered()
    present = {p.name for p in OUTPUT_DIR.glob("*.schema.json")} if OUTPUT_DIR.exists() else set()
    stale = [
        n
        for n, text in expected.items()
        if not (OUTPUT_DIR / n).exists() or (OUTPUT_DIR / n).read_text(encoding="utf-8") != text
    ]
    return sorted(stale + sorted(present - set(expected)))


def write() -> list[str]:
    OUTPUT_DIR.mkdir(exist_ok=True)
    expected = rendered()
    for path in OUTPUT_DIR.glob("*.schema.json"):
        if path.name not in expected:
            path.unlink()
    for name, text in expected.items():
        (OUTPUT_DIR / name).write_text(text, encoding="utf-8")
    return sorted(expected)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--check" in args:
        stale = stale_files()
        if stale:
            print("stale JSON Schema exports (run `python -m schemas.export`): " + ", ".join(stale))
            return 1
        print("JSON Schema exports are up to date")
        return 0
    for name in write():
        print(f"wrote schemas/json/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
