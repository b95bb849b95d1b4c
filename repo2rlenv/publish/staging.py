"""The folder a push uploads, laid out exactly as a pull gives it back: the chosen task
folders at their paths, `manifest.jsonl` of those tasks, the card, and
`rlenv-publish.json` (what the Hub does not keep: which files are executable, which the
content hash counts, so a pulled task hashes as it did before the push)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from repo2rlenv import __version__
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


def write_tasks(selection: Selection, into: Path) -> list[str]:
    """The chosen task folders at their manifest paths (the published bytes, executable
    bits kept) and their `manifest.jsonl`, into `into`; returns the executable files.
    What every destination holds: the Hub's upload and Harbor's task copies."""
    executables: list[str] = []
    for chosen in selection.chosen:
        base = into / chosen.row.path
        _write(base / "task.toml", chosen.folder.joinpath("task.toml").read_bytes())
        for rel, (content, executable) in sorted(chosen.files.items()):
            _write(base / rel, content, executable)
            if executable:
                executables.append(f"{chosen.row.path}/{rel}")
    rows = sorted(chosen.row.model_dump_json() for chosen in selection.chosen)
    _write(into / MANIFEST, "".join(row + "\n" for row in rows).encode())
    return sorted(executables)


def write_record(selection: Selection, executables: list[str], into: Path) -> None:
    record = PublishRecord(
        generator_version=__version__, tasks=len(selection.chosen), executables=executables
    )
    _write(into / PUBLISH_FILE, (json.dumps(record.model_dump(), indent=2) + "\n").encode())


def stage(selection: Selection, card: str, into: Path) -> Path:
    """Write the Hub dataset into the empty folder `into`; returns it."""
    executables = write_tasks(selection, into)
    _write(into / CARD_FILE, card.encode())
    write_record(selection, executables, into)
    return into


def _write(path: Path, content: bytes, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    if executable:
        path.chmod(path.stat().st_mode | 0o111)
