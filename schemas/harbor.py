"""Harbor's `task.toml`, as far as this project writes and reads it.

Field names and defaults follow Harbor's own task schema (1.4). Sections keep keys
we do not model (`extra="allow"`) so a foreign task survives a read-modify-write,
for example when `validate --write-labels` adds our label to it. The legacy
top-level `version = "1.0"` spelling is accepted and read as `schema_version`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from schemas.provenance import Repo2RLEnvMetadata

HARBOR_SCHEMA_VERSION = "1.4"

NetworkMode = Literal["no-network", "public", "allowlist"]
VerifierMode = Literal["shared", "separate"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")


class Author(_Section):
    name: str
    email: str | None = None


class PackageInfo(_Section):
    """`[task]`: the task's registry name (`org/name`) and description."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
    version: str | None = None
    description: str = ""
    authors: list[Author] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _no_dot_dot(cls, value: str) -> str:
        if ".." in value:
            raise ValueError("task name must not contain '..'")
        return value


class EnvironmentConfig(_Section):
    """`[environment]`: the agent's sandbox, built from `environment/`."""

    build_timeout_sec: float = 600.0
    docker_image: str | None = None
    cpus: float | None = Field(default=None, gt=0)
    memory_mb: int | None = Field(default=None, gt=0)
    storage_mb: int | None = Field(default=None, gt=0)
    network_mode: NetworkMode = "public"
    allowed_hosts: list[str] | None = None
    workdir: str | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _legacy_allow_internet(cls, data: Any) -> Any:
        if isinstance(data, dict) and "allow_internet" in data:
            data = dict(data)
            allow = data.pop("allow_internet")
            data.setdefault("network_mode", "public" if allow else "no-network")
        return data

    @field_validator("workdir")
    @classmethod
    def _absolute_workdir(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError("workdir must be an absolute path inside the container")
        return value


class AgentConfig(_Section):
    timeout_sec: float | None = Field(default=None, gt=0)
    user: str | int | None = None
    network_mode: NetworkMode | None = None


class VerifierConfig(_Section):
    timeout_sec: float = Field(default=600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None
    network_mode: NetworkMode | None = None
    environment_mode: VerifierMode | None = None


class SolutionConfig(_Section):
    env: dict[str, str] = Field(default_factory=dict)


class TaskMetadata(_Section):
    """`[metadata]`: free-form for Harbor; our block lives under `repo2rlenv`."""

    repo2rlenv: Repo2RLEnvMetadata | None = None


class TaskConfig(_Section):
    """One `task.toml`."""

    schema_version: str = HARBOR_SCHEMA_VERSION
    task: PackageInfo | None = None
    metadata: TaskMetadata = Field(default_factory=TaskMetadata)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = None
    artifacts: list[str | dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _legacy_version_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            data.setdefault("schema_version", str(data.pop("version")))
        return data

    @property
    def verifier_mode(self) -> VerifierMode:
        """Harbor's resolution: explicit mode, else `separate` iff a verifier env is set."""
        if self.verifier.environment_mode is not None:
            return self.verifier.environment_mode
        extra = self.verifier.model_extra or {}
        return "separate" if "environment" in extra else "shared"

    @property
    def agent_network_mode(self) -> NetworkMode:
        return self.agent.network_mode or self.environment.network_mode

    @property
    def verifier_network_mode(self) -> NetworkMode:
        return self.verifier.network_mode or self.environment.network_mode
