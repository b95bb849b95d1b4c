"""`repo2rlenv pull harbor:ORG/NAME[@VERSION] --registry PATH --out DIR`: bring a
Harbor registry dataset that `push --to harbor:` wrote back into a task folder.

PATH is that push's OUT folder, or its `dataset.toml` or `registry.json`. The
dataset.toml is the authority: its name (and version, when asked) must be the one
named, and every task it lists must be in the folder with the digest it lists
(Harbor's own algorithm, `harbor_registry.task_digest`). The folder's `manifest.jsonl`
gives each task's path and content hash, as in a Hub pull. registry.json is not read
for the tasks: its absolute paths name where the push wrote them, which a moved or
copied folder no longer is.

The folder is read as hostile (a registry dataset is something one downloads): paths
outside it, symlinks, and tasks the dataset.toml does not list are refused. The copy
is built beside `--out` and renamed into place once every check passed."""

from __future__ import annotations

import os
import shutil
import tempfile
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repo2rlenv.bundle.reader import read_task_dir
from repo2rlenv.hub import SourceUnavailable
from repo2rlenv.manifest import MANIFEST, read_manifest
from repo2rlenv.publish.harbor_publish import HarborTarget
from repo2rlenv.publish.harbor_registry import (
    DATASET_FILE,
    NAME_PATTERN,
    REGISTRY_FILE,
    RegistryError,
    task_digest,
)
from repo2rlenv.publish.hub_pull import BAD_PATH, HASH_MISMATCH, NOT_A_TASK_SET, safe_name
from repo2rlenv.publish.staging import PUBLISH_FILE

DIGEST_MISMATCH = "publish.digest-mismatch"
WRONG_DATASET = "publish.wrong-dataset"


class _Info(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(pattern=NAME_PATTERN.pattern)
    version: str = ""


class _Task(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(pattern=NAME_PATTERN.pattern)
    digest: str = Field(pattern=r"^sha256:[a-f0-9]{64}$")


class DatasetFile(BaseModel):
    """What a pull needs of `dataset.toml`: its name, version and task digests."""

    model_config = ConfigDict(extra="ignore")

    dataset: _Info
    tasks: list[_Task] = Field(default_factory=list)


def dataset_folder(path: Path) -> Path:
    """The folder of a push: PATH itself, or the folder of its dataset.toml/registry.json."""
    path = Path(path)
    if path.is_file() and path.name in (DATASET_FILE, REGISTRY_FILE):
        return path.parent
    if path.is_dir():
        return path
    raise SourceUnavailable(
        NOT_A_TASK_SET, f"{path} is neither a push's folder, its {DATASET_FILE} nor {REGISTRY_FILE}"
    )


def read_dataset_file(folder: Path) -> DatasetFile:
    path = folder / DATASET_FILE
    try:
        return DatasetFile.model_validate(tomllib.loads(path.read_text()))
    except FileNotFoundError as exc:
        raise SourceUnavailable(NOT_A_TASK_SET, f"{folder} has no {DATASET_FILE}") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        message = f"{path} is not Harbor's dataset.toml: {first}"
        raise SourceUnavailable(NOT_A_TASK_SET, message) from exc


def pull_harbor(target: HarborTarget, registry: Path, out: Path) -> tuple[str, int]:
    """Copy the dataset `target` in `registry` to `out` (which must not exist), every
    task checked; returns `name@version` and the number of tasks."""
    folder = dataset_folder(registry)
    listed = read_dataset_file(folder)
    info = listed.dataset
    if info.name != target.name or (target.version and info.version != target.version):
        raise SourceUnavailable(
            WRONG_DATASET,
            f"{folder / DATASET_FILE} is {info.name}@{info.version}, not "
            f"{target.name}{'@' + target.version if target.version else ''}",
        )
    if not (folder / MANIFEST).is_file() or not (folder / PUBLISH_FILE).is_file():
        raise SourceUnavailable(
            NOT_A_TASK_SET, f"{folder} has no {MANIFEST} and {PUBLISH_FILE}: not what `push` wrote"
        )
    rows = read_manifest(folder)
    digests = {task.name: task.digest for task in listed.tasks}
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".pull", dir=out.parent))
    try:
        seen: set[str] = set()
        for row in rows:
            if not safe_name(row.path):
                raise SourceUnavailable(BAD_PATH, f"{MANIFEST} names a path outside: {row.path!r}")
            source = folder / row.path
            if source.is_symlink() or not source.resolve().is_relative_to(folder.resolve()):
                raise SourceUnavailable(BAD_PATH, f"task {row.path} lies outside {folder}")
            copy = staging / row.path
            shutil.copytree(source, copy, symlinks=True)
            name = _check_task(copy, row.path, row.content_hash, digests)
            if name in seen:
                raise SourceUnavailable(NOT_A_TASK_SET, f"two tasks of {MANIFEST} are {name}")
            seen.add(name)
        missing = sorted(set(digests) - seen)
        if missing:
            raise SourceUnavailable(
                NOT_A_TASK_SET, f"{DATASET_FILE} lists {missing[0]}, which {MANIFEST} does not hold"
            )
        for name in (MANIFEST, PUBLISH_FILE, DATASET_FILE):
            shutil.copyfile(folder / name, staging / name)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return f"{info.name}@{info.version}", len(rows)


def _check_task(copy: Path, path: str, content_hash: str, digests: dict[str, str]) -> str:
    """The copied task's name, once its digest is dataset.toml's and its content hash
    the manifest row's."""
    tree = read_task_dir(copy)
    name = tree.config.task.name if tree.config is not None and tree.config.task else None
    if name is None or name not in digests:
        raise SourceUnavailable(
            NOT_A_TASK_SET, f"task {path} is not one {DATASET_FILE} lists ({name or 'no name'})"
        )
    try:
        found = task_digest(copy)
    except RegistryError as exc:
        raise SourceUnavailable(BAD_PATH, str(exc).replace(str(copy), path)) from exc
    if found != digests[name]:
        raise SourceUnavailable(
            DIGEST_MISMATCH, f"task {path} ({name}) does not have the digest {DATASET_FILE} lists"
        )
    if tree.content_hash != content_hash:
        raise SourceUnavailable(HASH_MISMATCH, f"task {path} does not hash to its {MANIFEST} row")
    return name
