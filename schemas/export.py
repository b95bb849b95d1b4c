"""JSON Schema files for the boundary models, so non-Python consumers can check our output."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from schemas.bundle import TaskBundle
from schemas.harbor import TaskConfig
from schemas.manifest import ManifestRow
from schemas.provenance import Repo2RLEnvMetadata

SCHEMA_DIR = Path(__file__).resolve().parent

EXPORTED: dict[str, type[BaseModel]] = {
    "task_config": TaskConfig,
    "repo2rlenv_metadata": Repo2RLEnvMetadata,
    "manifest_row": ManifestRow,
    "task_bundle": TaskBundle,
}


def render(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n"


def expected_files() -> dict[Path, str]:
    return {SCHEMA_DIR / f"{name}.schema.json": render(m) for name, m in EXPORTED.items()}


def write_all() -> list[Path]:
    written = []
    for path, text in expected_files().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written
