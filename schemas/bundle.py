"""A task as one in-memory value: config, instruction and every file, ready to write.

Producers (mining, notebooks, the bundled examples) build a `TaskBundle`; only the
bundle writer turns it into a directory, so every task on disk has the same layout,
modes and bytes.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, field_validator

from schemas.harbor import TaskConfig

BUNDLE_ROOTS: tuple[str, ...] = ("environment", "tests", "solution")
"""Top-level folders a bundle file may live in; task.toml and instruction.md are written
from the config and the instruction."""


class BundleFile(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    path: str = Field(description="POSIX path relative to the task folder.")
    content: bytes
    executable: bool = False

    @field_validator("path")
    @classmethod
    def _confined(cls, value: str) -> str:
        pure = PurePosixPath(value)
        if value != pure.as_posix() or pure.is_absolute() or ".." in pure.parts or not value:
            raise ValueError(f"bundle path must be a normalised relative path: {value!r}")
        if pure.parts[0] not in BUNDLE_ROOTS or len(pure.parts) < 2:
            raise ValueError(f"bundle path must live under one of {BUNDLE_ROOTS}: {value!r}")
        return value


class TaskBundle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,127}$", description="Folder name.")
    config: TaskConfig
    instruction: str = Field(min_length=1)
    files: list[BundleFile]

    @field_validator("files")
    @classmethod
    def _unique_paths(cls, files: list[BundleFile]) -> list[BundleFile]:
        seen: set[str] = set()
        for item in files:
            if item.path in seen:
                raise ValueError(f"duplicate bundle path: {item.path}")
            seen.add(item.path)
        return sorted(files, key=lambda f: f.path)
