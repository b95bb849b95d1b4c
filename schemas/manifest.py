"""One row of `manifest.jsonl`: the index a consumer reads before opening task folders."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from schemas.provenance import LabelStatus, TaskKind


class ManifestRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    path: str
    kind: TaskKind | None
    generator: str | None
    source_dataset: str | None
    source_record_id: str | None
    source_format: str | None
    content_hash: str
    evaluation: LabelStatus
