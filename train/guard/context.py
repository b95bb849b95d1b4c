"""What the guard knows about a session's task, and where it comes from.

A session's context is registered by the trainer (`Guard.register`, or
`PUT /guard/sessions/<id>` with this model as JSON) or read from a task folder
(`context_from_task_dir`): the instruction (its hosts are allowed), the workdir, the
tests the task marks protected (`tests/protected/<rel>` guards `<workdir>/<rel>`), and
the provenance an agent must not look up (`[metadata.repo2rlenv].source.dataset`).
A task adds to it in `[metadata.guard]` (see `TaskGuardSettings`).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repo2rlenv.bundle import TaskTree, read_task_dir

SESSION_ID = r"^[A-Za-z0-9._:-]{1,128}$"
"""A session id names its log folder: letters, digits, `._:-`, never a path separator,
and never only dots (`.`, `..` would name the log folder itself or its parent;
`safe_session_id`)."""


def safe_session_id(value: str) -> bool:
    """Whether `value` is a session id that is also a safe file name."""
    return bool(re.fullmatch(SESSION_ID, value)) and value.strip(".") != ""


LOCAL_DATASETS = frozenset({"handmade", "local", ""})
MIN_RECORD_ID = 12
"""Shorter record ids (`row-3`) are too common to be evidence of a lookup."""


class GuardContext(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(default="default", pattern=SESSION_ID)
    task_id: str | None = None
    workdir: str = "/workspace"
    instruction: str = ""
    protected_paths: list[str] = Field(
        default_factory=list, description="Absolute paths the agent must not edit or delete."
    )
    hidden_paths: list[str] = Field(default_factory=lambda: ["/tests", "/solution"])
    verifier_paths: list[str] = Field(default_factory=lambda: ["/logs/verifier"])
    dataset_ids: list[str] = Field(default_factory=list)
    source_repos: list[str] = Field(
        default_factory=list, description="owner/name or URLs of the task's source repository."
    )
    source_buckets: list[str] = Field(default_factory=list, description="s3://b, gs://b")
    lookup_terms: list[str] = Field(default_factory=list)
    allowed_hosts: list[str] = Field(default_factory=list)
    adapter: str | None = Field(default=None, description="Upstream model name to serve.")
    plugins: list[str] = Field(
        default_factory=list, description="Entry point names or 'module:attribute'."
    )
    rules_file: Path | None = Field(default=None, description="A guard.py with RULES.")
    disabled_rules: list[str] = Field(default_factory=list)

    @field_validator("session_id")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        if not safe_session_id(value):
            raise ValueError(f"session id {value!r} is not a safe name")
        return value


class SessionSettings(BaseModel):
    """What the control plane (`PUT /guard/sessions/<id>`) accepts: the session's task
    settings, never code. Rules files and plugins come from the task folder the guard
    reads itself (`task_dir`: `[metadata.guard]`, entry point names only), so nothing a
    request carries is imported or run."""

    model_config = ConfigDict(extra="forbid")

    task_dir: Path | None = Field(
        default=None, description="Read the task's context (and rules) from this folder."
    )
    task_id: str | None = None
    workdir: str | None = None
    instruction: str | None = None
    protected_paths: list[str] | None = None
    hidden_paths: list[str] | None = None
    verifier_paths: list[str] | None = None
    dataset_ids: list[str] | None = None
    source_repos: list[str] | None = None
    source_buckets: list[str] | None = None
    lookup_terms: list[str] | None = None
    allowed_hosts: list[str] | None = None
    adapter: str | None = None
    disabled_rules: list[str] | None = None

    def context(self, session_id: str) -> GuardContext:
        """The task folder's context (or the defaults), with the fields set here over it."""
        base = (
            context_from_task_dir(self.task_dir, session_id)
            if self.task_dir is not None
            else GuardContext(session_id=session_id)
        )
        update = {
            k: v
            for k, v in self.model_dump(exclude={"task_dir"}, exclude_none=True).items()
            if k in self.model_fields_set
        }
        return GuardContext.model_validate({**base.model_dump(), **update})


class TaskGuardSettings(BaseModel):
    """`[metadata.guard]` in task.toml: what a task adds to its guard context."""

    model_config = ConfigDict(extra="forbid")

    protected: list[str] = Field(default_factory=list)
    allowed_hosts: list[str] = Field(default_factory=list)
    source_repos: list[str] = Field(default_factory=list)
    source_buckets: list[str] = Field(default_factory=list)
    lookup_terms: list[str] = Field(default_factory=list)
    plugins: list[str] = Field(
        default_factory=list, description="Installed entry point names (never module:attr)."
    )
    rules_file: str | None = None
    disabled_rules: list[str] = Field(default_factory=list)

    @field_validator("plugins")
    @classmethod
    def _entry_points_only(cls, names: list[str]) -> list[str]:
        for name in names:
            if ":" in name:
                raise ValueError(
                    f"plugin {name!r}: a task names installed entry points only, "
                    "it cannot import a module"
                )
        return names


class ContextError(ValueError):
    """A task folder whose guard context cannot be built; `reason` is a stable code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def context_from_task_dir(task_dir: Path, session_id: str = "default") -> GuardContext:
    return context_from_tree(read_task_dir(Path(task_dir)), session_id)


def context_from_tree(tree: TaskTree, session_id: str = "default") -> GuardContext:
    """The context of a task folder already read (a rollout's runner reads it once)."""
    if tree.config is None:
        raise ContextError("context.task-unreadable", tree.config_error or "no task.toml")
    config = tree.config
    workdir = (config.environment.workdir if config.environment else None) or "/workspace"
    block = config.metadata.repo2rlenv
    datasets: list[str] = []
    terms: list[str] = []
    if block and block.source:
        if block.source.dataset not in LOCAL_DATASETS and not block.source.dataset.startswith(
            ("/", ".")
        ):
            datasets.append(block.source.dataset)
        if len(block.source.record_id) >= MIN_RECORD_ID:
            terms.append(block.source.record_id)
    try:
        extra = TaskGuardSettings.model_validate(
            (config.metadata.model_extra or {}).get("guard") or {}
        )
    except ValidationError as exc:
        raise ContextError("context.guard-settings-invalid", str(exc)) from exc
    protected = [
        f"{workdir.rstrip('/')}/{rel[len('tests/protected/') :]}"
        for rel in sorted(tree.files)
        if rel.startswith("tests/protected/")
    ]
    protected += [p if p.startswith("/") else f"{workdir.rstrip('/')}/{p}" for p in extra.protected]
    rules_file = None
    if extra.rules_file:
        candidate = (tree.root / extra.rules_file).resolve()
        if not candidate.is_relative_to(tree.root.resolve()) or not candidate.is_file():
            raise ContextError(
                "context.rules-file-outside",
                f"{extra.rules_file} is not a file inside the task folder",
            )
        rules_file = candidate
    return GuardContext(
        session_id=session_id,
        task_id=tree.name,
        workdir=workdir,
        instruction=tree.text("instruction.md") or "",
        protected_paths=protected,
        dataset_ids=datasets,
        source_repos=extra.source_repos,
        source_buckets=extra.source_buckets,
        lookup_terms=terms + extra.lookup_terms,
        allowed_hosts=extra.allowed_hosts,
        plugins=extra.plugins,
        rules_file=rules_file,
        disabled_rules=extra.disabled_rules,
    )
