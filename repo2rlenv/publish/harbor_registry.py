"""Harbor registry datasets: `dataset.toml` naming each task with Harbor's own digest,
and a local `registry.json` Harbor's CLI runs the same tasks from.

Harbor 0.26 knows two registries. Its package registry (`harbor publish`, `harbor run -d
org/name@ref`) reads a `dataset.toml`: `[dataset]` name/version/description and one
`[[tasks]]` entry per task, `name` (task.toml's `[task] name`) and `digest`, the
sha256 Harbor's packager computes over the task's files; `harbor sync DIR` recomputes
those digests for the tasks under DIR, so it checks this module's. Its JSON registry
(`harbor run -d name@version --registry-path registry.json`) lists datasets whose tasks
are local folders: that is what runs a dataset here, with no account and no network.

The digest is Harbor's algorithm written out (Harbor needs Python 3.12 and is not a
dependency): task.toml, instruction.md, README.md, trajectory.json, then every file
under environment/, tests/, solution/, steps/, minus Harbor's default ignores, sorted by
path; sha256 over `path NUL sha256(file) LF` lines. Harbor's ignore files (`.gitignore`
at the task root, `.harborignore`) and symlinks change what it selects; a task holding
any is refused rather than given a digest Harbor would not compute.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import uuid
from pathlib import Path

import tomli_w
from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.bundle import read_task_dir

SINGLE_FILES = ("task.toml", "instruction.md", "README.md", "trajectory.json")
TREES = ("environment", "tests", "solution", "steps")
DEFAULT_IGNORES = ("*.pyc", ".DS_Store", "*.swp", "*.swo", "*~")
IGNORED_FOLDERS = frozenset({"__pycache__"})
IGNORE_FILES = (".gitignore", ".harborignore")
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")
DATASET_FILE = "dataset.toml"
REGISTRY_FILE = "registry.json"


class RegistryError(ValueError):
    """A task or dataset Harbor's registry would not accept, said in one line."""


class TaskEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN.pattern)
    digest: str = Field(pattern=r"^sha256:[a-f0-9]{64}$")
    path: Path


class RegistryDataset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN.pattern)
    version: str = Field(min_length=1)
    description: str = ""
    tasks: tuple[TaskEntry, ...]

    @property
    def short_name(self) -> str:
        """The JSON registry's dataset name: `-d org/name` would send Harbor to its
        package registry, so the local registry names the dataset without its org."""
        return self.name.split("/", 1)[1]


def _ignored(rel: str) -> bool:
    parts = rel.split("/")
    if any(part in IGNORED_FOLDERS for part in parts[:-1]):
        return True
    return any(fnmatch.fnmatchcase(parts[-1], pattern) for pattern in DEFAULT_IGNORES)


def _selected_files(task_dir: Path) -> list[str]:
    if (task_dir / ".gitignore").exists():
        raise RegistryError(f"{task_dir}: a .gitignore changes Harbor's file selection")
    found = [name for name in SINGLE_FILES if (task_dir / name).is_file()]
    for tree in TREES:
        for dirpath, dirnames, filenames in os.walk(task_dir / tree, followlinks=False):
            here = Path(dirpath)
            for name in [*dirnames, *filenames]:
                if (here / name).is_symlink():
                    raise RegistryError(f"{here / name}: symlinks change Harbor's digest")
                if name == ".harborignore":
                    raise RegistryError(f"{here / name}: ignore rules change Harbor's digest")
            found.extend((here / name).relative_to(task_dir).as_posix() for name in filenames)
    return sorted(rel for rel in found if not _ignored(rel))


def task_digest(task_dir: Path) -> str:
    """`sha256:<hex>` as Harbor's packager computes it for this task folder."""
    task_dir = Path(task_dir).resolve()
    outer = hashlib.sha256()
    for rel in _selected_files(task_dir):
        inner = hashlib.sha256((task_dir / rel).read_bytes()).hexdigest()
        outer.update(f"{rel}\0{inner}\n".encode())
    return f"sha256:{outer.hexdigest()}"


def dataset_hash(digests: list[str]) -> str:
    """Harbor's dataset content hash (task digests only, sorted, comma-joined)."""
    base = ",".join(sorted(d.removeprefix("sha256:") for d in digests))
    return hashlib.sha256(base.encode()).hexdigest()


def build_dataset(
    name: str, task_dirs: list[Path], *, version: str | None = None, description: str = ""
) -> RegistryDataset:
    """The dataset of these task folders. `version` defaults to the first 12 hex digits
    of Harbor's dataset content hash, so the same tasks always get the same version."""
    if not NAME_PATTERN.match(name) or ".." in name:
        raise RegistryError(f"dataset name {name!r} is not Harbor's org/name")
    if not task_dirs:
        raise RegistryError("no task folders: a dataset needs at least one task")
    entries: dict[str, TaskEntry] = {}
    for task_dir in sorted(Path(d).resolve() for d in task_dirs):
        tree = read_task_dir(task_dir)
        if tree.config is None:
            raise RegistryError(f"{task_dir}: task.toml unreadable ({tree.config_error})")
        if tree.config.task is None:
            raise RegistryError(f"{task_dir}: task.toml has no [task] name Harbor can list")
        task_name = tree.config.task.name
        if task_name in entries:
            other = entries[task_name].path
            raise RegistryError(f"{task_dir}: task name {task_name} is already {other}")
        entries[task_name] = TaskEntry(name=task_name, digest=task_digest(task_dir), path=task_dir)
    tasks = tuple(sorted(entries.values(), key=lambda e: e.name))
    return RegistryDataset(
        name=name,
        version=version or dataset_hash([t.digest for t in tasks])[:12],
        description=description,
        tasks=tasks,
    )


def dataset_toml(dataset: RegistryDataset) -> str:
    """Laid out as Harbor's own `DatasetManifest.to_toml` writes it, so `harbor sync`
    on an unchanged folder leaves the file as it was."""
    info = {
        "name": dataset.name,
        "version": dataset.version,
        "description": dataset.description,
        "authors": [],
        "keywords": [],
    }
    tasks = [{"name": t.name, "digest": t.digest} for t in dataset.tasks]
    return tomli_w.dumps({"dataset": info}) + "\n" + tomli_w.dumps({"tasks": tasks}) + "\n"


def registry_json(dataset: RegistryDataset) -> str:
    """Harbor's JSON registry (a list of DatasetSpec) with absolute task paths: Harbor
    resolves a relative one against its working folder, not the registry file."""
    spec = {
        "name": dataset.short_name,
        "version": dataset.version,
        "description": dataset.description,
        "tasks": [{"name": t.name, "path": str(t.path)} for t in dataset.tasks],
        "metrics": [],
    }
    return json.dumps([spec], indent=2, sort_keys=True) + "\n"


def _write_atomic(path: Path, text: str) -> None:
    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    staging.write_text(text)
    os.replace(staging, path)


def write_dataset(dataset: RegistryDataset, out_dir: Path) -> tuple[Path, Path]:
    """Writes dataset.toml and registry.json into `out_dir`; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest, registry = out_dir / DATASET_FILE, out_dir / REGISTRY_FILE
    _write_atomic(manifest, dataset_toml(dataset))
    _write_atomic(registry, registry_json(dataset))
    return manifest, registry
