"""`manifest.jsonl`: one row per task folder under a mining run's output (id, kind, source
record, content hash), rebuilt from the folders themselves after every run, so it never
disagrees with what is on disk and a resumed run writes the same bytes as an
uninterrupted one. `emit.emit_all` keeps it in step; readers of a run's output read it.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from schemas import ManifestRow

MANIFEST = "manifest.jsonl"


def manifest_row(out_dir: Path, task_dir: Path) -> ManifestRow | None:
    tree = read_task_dir(task_dir)
    if tree.config is None or tree.content_hash is None:
        return None
    block = tree.config.metadata.repo2rlenv
    source = block.source if block else None
    return ManifestRow(
        task_id=tree.name,
        path=task_dir.relative_to(out_dir).as_posix(),
        kind=block.kind if block else None,
        generator=block.generator if block else None,
        source_dataset=source.dataset if source else None,
        source_record_id=source.record_id if source else None,
        source_format=source.format if source else None,
        content_hash=tree.content_hash,
        evaluation=block.evaluation.status if block else "unverified",
        license=source.license if source else None,
        generator_version=(block.generator_version or None) if block else None,
        contaminated=block.decontamination.contaminated
        if block and block.decontamination
        else None,
    )


def write_manifest(out_dir: Path) -> Path:
    """Rebuild manifest.jsonl from the task folders: sorted, atomic, so it is the same
    bytes whether the run was interrupted and resumed or not."""
    out_dir = Path(out_dir)
    rows = [manifest_row(out_dir, d) for d in find_task_dirs([out_dir])] if out_dir.exists() else []
    lines = sorted(r.model_dump_json() for r in rows if r is not None)
    target = out_dir / MANIFEST
    staging = out_dir / f".{MANIFEST}.{uuid.uuid4().hex}.tmp"
    out_dir.mkdir(parents=True, exist_ok=True)
    staging.write_text("".join(line + "\n" for line in lines))
    os.replace(staging, target)
    return target


def read_manifest(out_dir: Path) -> list[ManifestRow]:
    path = Path(out_dir) / MANIFEST
    if not path.exists():
        return []
    return [ManifestRow.model_validate(json.loads(line)) for line in path.read_text().splitlines()]
