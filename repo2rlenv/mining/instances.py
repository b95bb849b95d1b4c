"""SWE-bench-style instance tables, and joining a run to its instance.

A run (SWE-agent, mini-swe-agent, OpenHands...) works on one task *instance*: a
repository at a base commit, an issue, and the tests that must go from failing to
passing. Runs rarely carry all of it; SWE-bench experiment folders name each run after
its `instance_id` and publish the table separately (princeton-nlp/SWE-bench_Verified,
SWE-Gym, nebius/SWE-rebench). `--instances` supplies that table; `--exclude-instances`
names instances whose runs must not become tasks (an evaluation set).

Tables are loaded with `datasets`, as the miner loads its sources: a local .jsonl,
.json or .parquet file, or a Hub dataset id (split `test`, as SWE-bench publishes; a
dataset without one is read from its only split, as SWE-Gym publishes `train`). A Hub
id is checked first as `--dataset` is (`repo2rlenv.hub`): an unreachable Hub, a missing
or private table is one line (`hub.*`, exit 2), not the client's retries.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.swe_common import INSTANCE_ID
from repo2rlenv.hub import SourceUnavailable, is_split_error, load_error
from repo2rlenv.kinds.instance_deps import DependencyDate
from repo2rlenv.kinds.instance_wheels import instance_spec
from repo2rlenv.source import check_hub_id
from schemas.provenance import InstallConfig, SweInstanceEnvironment

_LOADERS = {".parquet": "parquet", ".json": "json", ".jsonl": "json"}


class InstanceError(Exception):
    """The table cannot be loaded (missing file, unknown format, no usable row)."""


class Instance(BaseModel):
    """The fields of one instance row this project uses; other columns are ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    instance_id: str
    repo: str = Field(description="owner/name on GitHub")
    base_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    problem_statement: str = ""
    test_patch: str = ""
    patch: str = ""
    FAIL_TO_PASS: tuple[str, ...] = ()
    PASS_TO_PASS: tuple[str, ...] = ()
    version: str | None = None
    created_at: str | None = Field(
        default=None,
        description="when the instance's pull request was opened (ISO 8601): test "
        "dependencies are taken as the package index offered them then",
    )
    environment_setup_commit: str | None = Field(
        default=None,
        description="SWE-bench / SWE-rebench: the commit the version's environment is built from",
    )
    docker_image: str | None = Field(
        default=None,
        validation_alias=AliasChoices("docker_image", "image_name"),
        description="SWE-rebench `docker_image` (SWE-rebench-V2: `image_name`): the "
        "instance's published image",
    )
    install_config: InstallConfig | None = Field(
        default=None,
        description="SWE-rebench: the row's own recipe (python, install, test_cmd, log_parser...)",
    )

    @field_validator("install_config", mode="before")
    @classmethod
    def _install_config(cls, value: Any) -> Any:
        """A parquet table may store it as a JSON string; an empty value is none."""
        if isinstance(value, str):
            return json.loads(value) if value.strip() else None
        return value or None

    @field_validator("environment_setup_commit", "docker_image", mode="before")
    @classmethod
    def _optional_text(cls, value: Any) -> Any:
        return None if value is None or value == "" else str(value)

    def environment(self) -> SweInstanceEnvironment | None:
        """What the row says about its environment, for the task's provenance (None
        when it says nothing beyond SWE-bench's repository and commit)."""
        if not (self.environment_setup_commit or self.docker_image or self.install_config):
            return None
        return SweInstanceEnvironment(
            environment_setup_commit=self.environment_setup_commit,
            docker_image=self.docker_image,
            install_config=self.install_config,
        )

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> Any:
        """SWE-bench stores these lists as JSON-encoded strings."""
        if isinstance(value, str):
            return json.loads(value) if value.strip() else ()
        return () if value is None else value

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        return None if value is None else str(value)

    @field_validator("created_at", mode="before")
    @classmethod
    def _created_at(cls, value: Any) -> Any:
        """A parquet table may hold a timestamp; an unreadable date is no date."""
        if value is None or value == "":
            return None
        if isinstance(value, datetime):
            stamp = value if value.tzinfo else value.replace(tzinfo=UTC)
        else:
            try:
                stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            except ValueError:
                return None
            stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
        return stamp.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class InstanceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    instances: dict[str, Instance]
    refused: dict[str, str] = Field(
        default_factory=dict, description="row (instance id or #index) -> why it was refused"
    )

    def environment_date(self, instance: Instance) -> DependencyDate:
        """The date the dependencies of `instance`'s image are taken as of: the latest
        `created_at` among the table's rows of its repository and version, so that every
        task of one version resolves the same wheels and shares one image layer (as
        SWE-bench and SWE-smith build one environment per version). Without a version,
        the instance's own date (rows built from a repository's history often carry an
        empty version: that is no version, not one version shared by every such row).
        The same table gives the same date on every rerun."""
        if not instance.version:
            return DependencyDate.of_instance(instance.created_at)
        dates = self._version_dates.get((instance.repo, instance.version), [])
        basis = (
            f"the latest created_at of the {len(dates)} dated rows of {instance.repo} "
            f"version {instance.version} in the instance table"
        )
        return DependencyDate(date=max(dates, default=None), basis=basis)

    @cached_property
    def _version_dates(self) -> dict[tuple[str, str], list[str]]:
        """(repo, version) -> its rows' dates, read once: tables run to tens of thousands
        of rows (SWE-Gym, SWE-rebench) and every mined run asks."""
        dates: dict[tuple[str, str], list[str]] = {}
        for row in self.instances.values():
            if row.version and row.created_at:
                dates.setdefault((row.repo, row.version), []).append(row.created_at)
        return dates


def _rows(source: str) -> Any:
    local = Path(source).expanduser()
    if local.exists():
        import datasets

        loader = _LOADERS.get(local.suffix.lower())
        if loader is None:
            raise InstanceError(f"{source}: instance tables are .jsonl, .json or .parquet")
        return datasets.load_dataset(loader, data_files=str(local), split="train")
    try:
        check_hub_id(source)
    except SourceUnavailable as exc:
        raise exc.about(f"instance table {source}") from exc
    import datasets

    try:
        try:
            return datasets.load_dataset(source, split="test")
        except ValueError as exc:
            if not is_split_error(exc):
                raise
            # SWE-Gym publishes its rows as its one split, `train`
            splits = datasets.get_dataset_split_names(source)
            if len(splits) != 1:
                raise InstanceError(
                    f"{source}: no split 'test', and several others ({', '.join(splits)})"
                ) from exc
            return datasets.load_dataset(source, split=splits[0])
    except InstanceError:
        raise
    except Exception as exc:  # datasets raises many kinds (missing repo, network, split)
        problem = load_error(exc, source, "test", None)
        if problem is not None:
            raise problem.about(f"instance table {source}") from exc
        raise InstanceError(f"{source}: not a local file, and not loadable: {exc}") from exc


def load_instances(source: str) -> InstanceTable:
    """Every row that is a valid instance; the others are listed with their reason."""
    fields = set(Instance.model_fields) | {"image_name"}
    instances: dict[str, Instance] = {}
    refused: dict[str, str] = {}
    for index, row in enumerate(_rows(source)):
        name = str(row.get("instance_id") or f"#{index}")
        try:
            instance = Instance.model_validate({k: v for k, v in row.items() if k in fields})
        except (ValidationError, ValueError) as exc:
            refused[name] = str(exc).splitlines()[0][:200]
            continue
        instances.setdefault(instance.instance_id, instance)
    if not instances:
        raise InstanceError(f"{source}: no row is a valid instance ({len(refused)} refused)")
    return InstanceTable(source=source, instances=instances, refused=refused)


def load_instance_ids(source: str) -> frozenset[str]:
    """Only the ids (for `--exclude-instances`): a list of ids needs no other column."""
    ids = set()
    for row in _rows(source):
        value = row.get("instance_id")
        if isinstance(value, str) and INSTANCE_ID.fullmatch(value):
            ids.add(value)
    if not ids:
        raise InstanceError(f"{source}: no instance_id column with SWE-bench ids")
    return frozenset(ids)


def run_instance(session: ParsedSession) -> str | None:
    """The instance id a reader found in the run (record field or file name)."""
    extra = session.trajectory.extra or {}
    block = extra.get("swe") if isinstance(extra, dict) else None
    value = block.get("instance_id") if isinstance(block, dict) else None
    return value if isinstance(value, str) else None


def join(session: ParsedSession, instance: Instance) -> None:
    """Give the run its instance's repository and base commit, which is what anchors it
    (`anchors.find` reads them from `trajectory.extra`); the table wins over the run."""
    extra = session.trajectory.extra
    if extra is None:
        extra = session.trajectory.extra = {}
    block = extra.setdefault("swe", {})
    block.update(
        instance_id=instance.instance_id,
        repo=instance.repo,
        base_commit=instance.base_commit,
        version=instance.version,
        joined_from="instances",
    )


def unexplained_mismatches(mismatches: list[str], instance: object | None) -> list[str]:
    """The files a run read otherwise than the anchored checkout has them, less those
    its instance's trusted recipe changes before any run starts (a `pre_install` step
    names them: Sphinx's `sed` over `tox.ini`): the benchmark's start state has them so,
    and the task image's recipe makes them so again."""
    spec = instance_spec(instance) if instance is not None and mismatches else None
    started = spec.pre_install_paths(mismatches) if spec is not None else frozenset()
    return [path for path in mismatches if path not in started]
