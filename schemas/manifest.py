"""One row of `manifest.jsonl`: the index a consumer reads before opening task folders."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from schemas.provenance import LabelStatus, TaskKind


class ManifestRow(BaseModel):
    """The provenance a consumer filters on without opening task.toml: source, licence,
    generator and version, evaluation label, decontamination verdict. The last three
    fields came later (issue 30); rows written before them read as None."""

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
    license: str | None = Field(default=None, description="The source's licence, as recorded.")
    generator_version: str | None = Field(
        default=None, description="Version of the generator that wrote the task."
    )
    contaminated: bool | None = Field(
        default=None,
        description="Decontamination verdict; None when the task was never checked.",
    )
