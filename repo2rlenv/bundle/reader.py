"""Read a task folder as it is on disk, without trusting it.

The reader never follows a symlink and never raises on a bad task: it reports what
it found (files, links, special files, a config or the reason there is none) and
leaves the judging to the static checks.
"""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from repo2rlenv.bundle.hashing import content_hash
from repo2rlenv.bundle.toml_io import parse_config
from schemas import TaskConfig


@dataclass
class TaskTree:
    root: Path
    files: dict[str, tuple[bytes, bool]] = field(default_factory=dict)
    """Regular files except task.toml: relative POSIX path -> (bytes, executable)."""
    symlinks: dict[str, str] = field(default_factory=dict)
    """Relative path -> link target, as found; never followed."""
    special: list[str] = field(default_factory=list)
    config_text: str | None = None
    config: TaskConfig | None = None
    config_error: str | None = None
    config_error_kind: str | None = None
    """'missing', 'toml' (not TOML at all) or 'schema' (TOML, but not a valid config)."""

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def content_hash(self) -> str | None:
        if self.config is None:
            return None
        return content_hash(self.config, self.files)

    def text(self, rel: str) -> str | None:
        item = self.files.get(rel)
        return None if item is None else item[0].decode("utf-8", errors="replace")


def read_task_dir(root: Path) -> TaskTree:
    root = Path(root)
    tree = TaskTree(root=root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames.sort()
        for name in list(dirnames):
            full = here / name
            if full.is_symlink():
                tree.symlinks[full.relative_to(root).as_posix()] = os.readlink(full)
                dirnames.remove(name)
        for name in sorted(filenames):
            full = here / name
            rel = full.relative_to(root).as_posix()
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                tree.symlinks[rel] = os.readlink(full)
            elif not stat.S_ISREG(info.st_mode):
                tree.special.append(rel)
            elif rel == "task.toml":
                tree.config_text = full.read_bytes().decode("utf-8", errors="replace")
            elif not (here == root and name.startswith(".task.toml.tmp-")):
                tree.files[rel] = (full.read_bytes(), bool(info.st_mode & 0o111))
    _parse(tree)
    return tree


def _parse(tree: TaskTree) -> None:
    if tree.config_text is None:
        tree.config_error, tree.config_error_kind = "task.toml is missing", "missing"
        return
    try:
        tree.config = parse_config(tree.config_text)
    except tomllib.TOMLDecodeError as exc:
        tree.config_error, tree.config_error_kind = f"task.toml is not valid TOML: {exc}", "toml"
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        tree.config_error = f"task.toml does not match the schema at {where}: {first['msg']}"
        tree.config_error_kind = "schema"


HARBOR_FILES = ("instruction.md", "environment/Dockerfile", "tests/test.sh", "solution/solve.sh")
"""Files of Harbor's task layout besides task.toml: a folder holding one is a task."""


def find_task_dirs(paths: list[Path], *, unconfigured: bool = False) -> list[Path]:
    """Task folders under `paths`: a folder with task.toml is a task; otherwise search
    below it (hidden folders skipped), without descending into a task.

    `unconfigured`: also a folder that holds Harbor's other task files but no task.toml,
    so validate and train report it (`task.config-missing`) instead of passing over a
    broken task in silence; a folder of anything else (`train/` outputs, ledgers) is
    still only searched."""
    found: list[Path] = []

    def visit(folder: Path) -> None:
        if (folder / "task.toml").exists() or (folder / "task.toml").is_symlink():
            found.append(folder)
            return
        if unconfigured and any((folder / name).is_file() for name in HARBOR_FILES):
            found.append(folder)
            return
        for child in sorted(folder.iterdir()):
            if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
                visit(child)

    for path in paths:
        visit(Path(path))
    return found
