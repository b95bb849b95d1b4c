"""The folder a push uploads, laid out exactly as a pull gives it back: the chosen task
folders at their paths, `manifest.jsonl` of those tasks, the card, and
`rlenv-publish.json` (what the Hub does not keep: which files are executable, which the
content hash counts, so a pulled task hashes as it did before the push)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from repo2rlenv.manifest import MANIFEST
from repo2rlenv.publish.selection import Selection

PUBLISH_FILE = "rlenv-publish.json"
CARD_FILE = "README.md"


class PublishRecord(BaseModel):
    """`rlenv-publish.json`: the pusher's version and the executable files (POSIX paths
    relative to the dataset root)."""

    model_config = ConfigDict(extra="forbid")

    generator_version: str
    tasks: int
    executables: list[str]


def stage(selection: Selection, card: str, generator_version: str, into: Path) -> Path:
    """Write the dataset into the empty folder `into`; returns it."""
    executables: list[str] = []
    for chosen in selection.chosen:
        base = into / chosen.row.path
        _write(base / "task.toml", chosen.folder.joinpath("task.toml").read_bytes())
        for rel, (content, executable) in sorted(chosen.tree.files.items()):
            _write(base / rel, content)
            if executable:
                executables.append(f"{chosen.row.path}/{rel}")
    rows = sorted(chosen.row.model_dump_json() for chosen in selection.chosen)
    _write(into / MANIFEST, "".join(row + "\n" for row in rows).encode())
    _write(into / CARD_FILE, card.encode())
    record = PublishRecord(
        generator_version=generator_version,
        tasks=len(selection.chosen),
        executables=sorted(executables),
    )
    _write(into / PUBLISH_FILE, (json.dumps(record.model_dump(), indent=2) + "\n").encode())
    return into


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
