"""Finding the data files a slice reads, and where they go in the task's /workspace.

References are the string constants of the sliced code. Relative paths keep the
notebook-relative layout; raw URLs, Kaggle's `/kaggle/input/<dataset>/<file>` and
absolute paths are matched by file name against the notebook's folder and then the
extra search roots (`--data-dir`), and rewritten in the reference to the local copy.
A URL whose file is nowhere local is a network read; a path found nowhere is missing.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import os
import posixpath
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from smoldataenvs.seaborn_data import (
    SEABORN_DIR,
    SEABORN_ENV,
    data_file_name,
    dataset_loads,
    load_reference,
)
from smoldataenvs.skips import SkipError

DATA_SUFFIXES = {
    ".csv", ".tsv", ".txt", ".json", ".jsonl", ".xlsx", ".xls", ".parquet", ".feather",
    ".pkl", ".pickle", ".h5", ".hdf5", ".npy", ".npz", ".zip", ".gz", ".bz2", ".xz", ".dat",
    ".data", ".sqlite", ".db", ".xml", ".arff", ".sav", ".dta", ".tab",
}  # fmt: skip
KAGGLE_INPUT = "/kaggle/input"
URL_SCHEMES = ("http", "https", "ftp", "s3", "gs")
LOCAL_KAGGLE = "kaggle/input"
FALLBACK_DIR = "data"
MAX_DATA_BYTES = 64 * 1024 * 1024
WRITERS = ("to_", "save", "dump", "write")
SKIPPED_DIRS = {".git", ".ipynb_checkpoints", "__pycache__", "node_modules", ".venv"}
POINTER_PREFIXES = (
    b"version https://git-lfs.github.com/spec/",
    b"version https://hawser.github.com/spec/",
)
"""How a Git LFS pointer file starts: a repository fetched without its LFS objects holds
these ~130-byte stand-ins where the data should be (real: WillKoehrsen/Data-Analysis's
`student-mat.csv`), and pandas reads one as a table of one column."""


class DataError(SkipError):
    """A data file the notebook reads cannot be shipped with the task."""


@dataclass(frozen=True)
class DataFile:
    target: str
    local: Path
    sha256: str
    size: int
    reference: str


@dataclass
class DataPlan:
    files: dict[str, DataFile] = field(default_factory=dict)
    rewrites: dict[str, str] = field(default_factory=dict)

    @property
    def dataset_key(self) -> str:
        """One identity per distinct set of data contents: copies of the same file in
        different repositories count as one source dataset."""
        digests = sorted({f.sha256 for f in self.files.values()})
        return hashlib.sha256("\n".join(digests).encode()).hexdigest()[:16]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files.values())

    @property
    def environment(self) -> dict[str, str]:
        """Variables the task's image sets for the data to be found where the
        reference reads it (seaborn's cache folder when it loads one of its datasets)."""
        seaborn = any(t.startswith(SEABORN_DIR + "/") for t in self.files)
        return dict(SEABORN_ENV) if seaborn else {}


def _stamp(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


def file_sha256(path: Path) -> str:
    return _sha256(_stamp(path))


@lru_cache(maxsize=4096)
def _sha256(stamp: tuple[str, int, int]) -> str:
    """Cached by (path, size, mtime): many candidates read the same few files."""
    path = Path(stamp[0])
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class FileIndex:
    """File name -> paths under the search roots, built once per root."""

    def __init__(self, extra_roots: list[Path]) -> None:
        self.extra_roots = [r.resolve() for r in extra_roots]
        self._cache: dict[Path, dict[str, list[Path]]] = {}

    def _names(self, root: Path) -> dict[str, list[Path]]:
        if root not in self._cache:
            names: dict[str, list[Path]] = {}
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
                for name in files:
                    names.setdefault(name, []).append(Path(folder) / name)
            self._cache[root] = names
        return self._cache[root]

    def find(self, name: str, notebook_dir: Path) -> Path | None:
        direct = notebook_dir / name
        if direct.is_file():
            return direct
        for root in [notebook_dir.resolve(), *self.extra_roots]:
            hits = self._names(root).get(name, [])
            if hits:
                return min(hits, key=lambda p: (len(p.relative_to(root).parts), str(p)))
        return None


def string_constants(statements: list[ast.stmt]) -> tuple[list[str], set[str]]:
    """All string constants, and those passed to a writer (`to_csv`, `savefig`, ...)."""
    values: list[str] = []
    written: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                values.append(node.value)
            writer = (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr.startswith(WRITERS)
                and node.args
            )
            if writer:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    written.add(first.value)
    return list(dict.fromkeys(values)), written


def _is_data_name(value: str) -> bool:
    name = PurePosixPath(value.replace("\\", "/")).name.lower()
    suffix = PurePosixPath(name).suffix
    return bool(suffix) and suffix in DATA_SUFFIXES and len(value) < 500 and "\n" not in value


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def plan_data(statements: list[ast.stmt], notebook_dir: Path, index: FileIndex) -> DataPlan:
    plan = DataPlan()
    constants, written = string_constants(statements)
    kaggle_dirs = [c for c in constants if c.startswith(KAGGLE_INPUT) and not _is_data_name(c)]
    if kaggle_dirs:
        plan.rewrites[KAGGLE_INPUT] = LOCAL_KAGGLE
    for value in constants:
        if value in written or not _is_data_name(value):
            continue
        _plan_one(plan, value, notebook_dir, index, kaggle_dirs)
    for call, name in dataset_loads(statements):
        _plan_seaborn(plan, call, name, notebook_dir, index)
    if plan.total_bytes > MAX_DATA_BYTES:
        raise DataError("data.too-large", f"{plan.total_bytes} bytes (max {MAX_DATA_BYTES})")
    return plan


def _add(plan: DataPlan, target: str, local: Path, reference: str) -> None:
    if target in plan.files and plan.files[target].local.resolve() != local.resolve():
        raise DataError("data.ambiguous", f"two different files want {target}")
    if is_lfs_pointer(local):
        raise DataError("data.lfs-pointer", f"{target}: a Git LFS pointer, not the data")
    if local.stat().st_size == 0:
        # A file a mirror or a partial checkout left empty: the notebook's outputs were
        # computed from data that is not here (pandas cannot even read an empty file).
        raise DataError("data.empty", f"{target}: an empty file, not the data")
    plan.files[target] = DataFile(
        target=target,
        local=local,
        sha256=file_sha256(local),
        size=local.stat().st_size,
        reference=reference,
    )


def _plan_one(
    plan: DataPlan, value: str, notebook_dir: Path, index: FileIndex, kaggle_dirs: list[str]
) -> None:
    parsed = urlparse(value)
    if parsed.scheme in URL_SCHEMES:
        name = unquote(PurePosixPath(parsed.path).name)
        found = _find(
            index, name, notebook_dir, "code.network", f"{value[:120]} (no local file named {name})"
        )
        _add_as_local(plan, value, found, notebook_dir)
        return
    posix = value.replace("\\", "/")
    name = PurePosixPath(posix).name
    if posix.startswith(KAGGLE_INPUT + "/"):
        found = _find(
            index, name, notebook_dir, "data.missing", f"{value[:120]} (no local file named {name})"
        )
        plan.rewrites[KAGGLE_INPUT] = LOCAL_KAGGLE
        _add(plan, LOCAL_KAGGLE + posix[len(KAGGLE_INPUT) :], found, value)
        return
    if _is_local_absolute(posix):
        found = _find(index, name, notebook_dir, "data.missing", f"{value[:120]}")
        _add_as_local(plan, value, found, notebook_dir)
        return
    if "/" not in posix and kaggle_dirs:
        local = index.find(name, notebook_dir)
        if local is not None:
            base = kaggle_dirs[0].rstrip("/")
            _add(plan, LOCAL_KAGGLE + base[len(KAGGLE_INPUT) :] + "/" + name, local, value)
            return
    relative = posixpath.normpath(posix)
    candidate = notebook_dir / relative
    if candidate.is_file() and _inside(candidate, notebook_dir):
        if relative.startswith(".."):
            # `../nb/data/x.csv` from inside `nb/`: a bundle path never climbs.
            relative = _local_target(candidate, notebook_dir)
            plan.rewrites[value] = relative
        _add(plan, relative, candidate, value)
        return
    local = candidate if candidate.is_file() else index.find(name, notebook_dir)
    if local is None:
        raise DataError("data.missing", f"{value[:120]}")
    target = relative if not relative.startswith("..") else f"{FALLBACK_DIR}/{name}"
    if target != posix:
        plan.rewrites[value] = target
    _add(plan, target, local, value)


def _plan_seaborn(
    plan: DataPlan, call: ast.Call, name: str | None, notebook_dir: Path, index: FileIndex
) -> None:
    """`sns.load_dataset('titanic')`: the local `titanic.csv` goes to seaborn's cache
    folder in /workspace (`seaborn_data`); without one it is the download it was."""
    shown = ast.unparse(call)[:120]
    if name is None:
        raise DataError("code.network", f"{shown} (only a plain dataset name is read offline)")
    file = data_file_name(name)
    missing = f"{shown} (no local file named {file})"
    found = _find(index, file, notebook_dir, "code.network", missing)
    _add(plan, f"{SEABORN_DIR}/{file}", found, load_reference(name))


def _is_local_absolute(posix: str) -> bool:
    """An absolute path on the author's machine: POSIX, a drive (`C:/…`) or a share."""
    return posix.startswith("/") or (len(posix) > 2 and posix[1] == ":")


def recorded_reference(value: str) -> str:
    """How a task records the path the notebook read a file by (`referenced_as`).

    A relative path, a URL or Kaggle's `/kaggle/input/…` is recorded as written: it is
    public (the notebook's repository, the web, Kaggle's layout) and says where the file
    came from. Any other absolute path (`/home/<user>/…`, `C:\\Users\\<user>\\…`,
    `/mnt/c/Users/<user>/…`, `/data/<user>/…`) only says where the author kept it: it
    names their machine and often them, and nobody else can follow it, so only its
    file name is kept."""
    posix = value.replace("\\", "/")
    if urlparse(value).scheme in URL_SCHEMES or posix.startswith(KAGGLE_INPUT + "/"):
        return value
    return PurePosixPath(posix).name if _is_local_absolute(posix) else value


def _find(index: FileIndex, name: str, notebook_dir: Path, code: str, detail: str) -> Path:
    """The local file named `name`, or the skip (`code`, `detail`) when there is none."""
    local = index.find(name, notebook_dir)
    if local is None:
        raise DataError(code, detail)
    return local


def _add_as_local(plan: DataPlan, value: str, local: Path, notebook_dir: Path) -> None:
    """Read `value` (a URL or a foreign absolute path) from the local copy instead."""
    target = _local_target(local, notebook_dir)
    plan.rewrites[value] = target
    _add(plan, target, local, value)


def _local_target(local: Path, notebook_dir: Path) -> str:
    if _inside(local, notebook_dir):
        return local.resolve().relative_to(notebook_dir.resolve()).as_posix()
    return f"{FALLBACK_DIR}/{local.name}"


def apply_rewrites(code: str, rewrites: dict[str, str]) -> str:
    """Replace referenced paths in the reference's source text (longest first, so a
    Kaggle prefix rewrite never splits a full URL rewrite)."""
    spellings = dict(rewrites)
    # A Windows path in a plain (not raw) string literal doubles its backslashes in
    # the source: the literal 'C:\\Users\\x\\d.csv' holds the value C:\Users\x\d.csv.
    spellings.update(
        {old.replace("\\", "\\\\"): new for old, new in rewrites.items() if "\\" in old}
    )
    for old in sorted(spellings, key=len, reverse=True):
        code = code.replace(old, spellings[old])
    return code


def is_lfs_pointer(path: Path) -> bool:
    """Whether a data file is a Git LFS pointer (its object was never fetched)."""
    try:
        if path.stat().st_size > 1024:
            return False
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.startswith(POINTER_PREFIXES)


def describe_columns(path: Path, limit: int = 40) -> tuple[int | None, tuple[str, ...]]:
    """(rows, header columns) of a CSV/TSV for the instruction; (None, []) otherwise."""
    return _columns(_stamp(path), limit)


@lru_cache(maxsize=1024)
def _columns(stamp: tuple[str, int, int], limit: int) -> tuple[int | None, tuple[str, ...]]:
    path = Path(stamp[0])
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".txt", ".tab"):
        return None, ()

    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as handle:
            sample = handle.read(65536)
            handle.seek(0)
            delimiter = (
                "\t"
                if suffix in (".tsv", ".tab") or sample.count("\t") > sample.count(",")
                else ","
            )
            reader = csv.reader(handle, delimiter=delimiter)
            header = next(reader, [])
            rows = sum(1 for _ in reader)
    except (OSError, csv.Error):
        return None, ()
    return rows, tuple(h.strip() for h in header[:limit])
