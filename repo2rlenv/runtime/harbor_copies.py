"""The task folders `HarborRuntime` hands to Harbor: private copies written from the
checked `TaskTree` (regular files only, so what runs is what was hashed and a symlink
cannot point Harbor's uploads outside the task), and the derived environment folders of
harness trials (the task's environment plus the harness layer). Written once per key
and shared by every trial of that key, across the runtime's threads.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime.images import ImageBuildError

LAYER_DIR = ".rlenv-harness-layer"
"""Where a derived environment folder holds the harness layer (beside the task's files)."""
LAYER_SKIP = (".rlenv-layer.Dockerfile", ".rlenv-complete", ".dockerignore")
"""The bundle's own build files: its local-image recipe, not part of the layer."""


class TaskCopies:
    """Copies under one scratch folder, removed with this object."""

    def __init__(self) -> None:
        self._scratch = tempfile.TemporaryDirectory(prefix="rlenv-harbor-tasks-")
        self._copies: dict[str, Path] = {}
        self._derived: dict[tuple[str, str, str], Path] = {}
        self._lock = threading.Lock()

    def derived_environment(self, task: TaskTree, image: str, layer: Path, target: str) -> Path:
        """The task's environment folder plus `layer`, copied in at `target` by one
        appended `COPY` (what `train.harnesses.layer` does with a local image), written
        once per task copy, layer and target. A folder Harbor builds itself, so it works
        for any environment type that builds from a Dockerfile, hosted ones included;
        the bundle's files are hard links where the file system allows (no copy)."""
        key = (image, str(layer.resolve()), target)
        with self._lock:
            found = self._derived.get(key)
            if found is not None:
                return found
            tag = hashlib.sha256("\0".join(key).encode()).hexdigest()[:12]
            root = Path(image).parent / f"{task.name}-harness-{tag}"
            scratch = root.with_name(root.name + ".partial")
            shutil.rmtree(scratch, ignore_errors=True)
            source = Path(image) / "environment"
            if source.is_dir():
                shutil.copytree(source, scratch)
            else:
                scratch.mkdir(parents=True)
            dockerfile = scratch / "Dockerfile"
            if dockerfile.is_file():
                recipe = dockerfile.read_text().rstrip("\n") + "\n"
            elif task.config.environment.docker_image:
                reference = task.config.environment.docker_image
                if not reference.strip() or any(c.isspace() for c in reference):
                    # One line of the recipe: a newline would add instructions.
                    raise ImageBuildError(f"{task.name}: docker_image {reference!r} is no image")
                recipe = f"FROM {reference}\n"
            else:
                raise ImageBuildError(f"{task.name}: no Dockerfile and no docker_image to derive")
            shutil.copytree(
                layer,
                scratch / LAYER_DIR,
                copy_function=_link_or_copy,
                ignore=shutil.ignore_patterns(*LAYER_SKIP),
            )
            dockerfile.write_text(recipe + f"COPY {LAYER_DIR}/ {target.rstrip('/')}/\n")
            ignore = scratch / ".dockerignore"
            if ignore.is_file():  # a task's `*` must not hide the layer from the build
                text = ignore.read_text().rstrip("\n")
                ignore.write_text(f"{text}\n!{LAYER_DIR}\n!{LAYER_DIR}/**\n")
            os.replace(scratch, root)
            self._derived[key] = root
            return root

    def copy(self, task: TaskTree) -> str:
        """A private copy of the task from its checked files, one per content hash."""
        key = task.content_hash or hashlib.sha256(task.name.encode()).hexdigest()
        with self._lock:
            if key in self._copies:
                return str(self._copies[key])
            root = Path(self._scratch.name) / key[:24] / task.name
            for rel, (content, executable) in task.files.items():
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
                os.chmod(path, 0o755 if executable else 0o644)
            root.mkdir(parents=True, exist_ok=True)
            (root / "task.toml").write_text(task.config_text or "")
            self._copies[key] = root
            return str(root)


def _link_or_copy(source: str, destination: str) -> str:
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
    return destination
