"""Where sessions come from: a resolved `--dataset` (repo2rlenv.source.Source): a Hub
dataset at its pinned commit, a local file, or a local folder.

A Hub dataset's files are downloaded at the commit `resolve_source` pinned and loaded
with `datasets` as a table (rows); when they are not a table (raw session files in the
repo), the same files are read as a folder. Nothing here asks the Hub what the dataset
is again. `--streaming` is the one exception: `datasets` streams the rows from the Hub
at the pinned commit (and asks the Hub for its own file list), so a large dataset is
not downloaded first. A local folder written by `Dataset.save_to_disk` is loaded as a dataset;
any other folder is walked for session files in sorted order. Every record gets a
stable id, so output does not depend on load order or machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from repo2rlenv.formats import iter_file_records, unwrap_row
from repo2rlenv.formats.base import FormatError, Record
from repo2rlenv.formats.reasons import fail
from repo2rlenv.hub import SourceUnavailable, load_error
from repo2rlenv.source import Source

SESSION_SUFFIXES = (".jsonl", ".json", ".traj", ".parquet")
"""What `formats.iter_file_records` reads; any other file is refused with a reason."""


@dataclass(frozen=True)
class SourceSpec:
    source: Source
    split: str = "train"
    limit: int | None = None
    streaming: bool = False


class FileRevision:
    """A local file's revision ("sha256:" + 16 hex digits of its bytes), computed the first
    time it is asked for (`str()`). Only a record that becomes a task records its
    revision, and most records do not: hashing every file up front cost about a tenth
    of what parsing it does, for values nobody read."""

    __slots__ = ("_path", "_value")

    def __init__(self, path: Path) -> None:
        self._path = path
        self._value: str | None = None

    @property
    def path(self) -> Path:
        """The local file (end-state anchors find its repository and commit)."""
        return self._path

    def __str__(self) -> str:
        if self._value is None:
            self._value = _file_revision(self._path)
        return self._value


class FileIdentity:
    """A local file's record as task ids know it: the file's revision (its bytes) and the
    record's place in the file (`#<row>` for a file of rows, empty for a session file).
    The path is left out, so mining a file or its folder gives the same ids."""

    __slots__ = ("_revision", "_suffix")

    def __init__(self, revision: FileRevision, suffix: str) -> None:
        self._revision = revision
        self._suffix = suffix

    def __str__(self) -> str:
        return f"{self._revision}{self._suffix}"


@dataclass(frozen=True)
class RawRecord:
    record_id: str
    payload: Record | FormatError
    revision: str | FileRevision | None
    """Where the record came from, at which version; `str()` it to read a FileRevision."""
    identity: FileIdentity | None = None
    """What its task ids derive from, for a local file's record (None: a Hub row)."""


def _file_revision(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()[:16]


def _walk_files(root: Path) -> Iterator[Path]:
    """Every file of the folder, sessions or not, so each one is read or refused with a
    reason (`format.unsupported-file` for a README, a .yaml, a link). Hidden files and
    folders (.git, .cache) are the only ones passed over: they are tooling, not data."""
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") for p in parts):
            continue
        if path.is_symlink() or path.is_file():
            yield path


def _from_file(path: Path, base: Path, links_into: Path | None = None) -> Iterator[RawRecord]:
    """`links_into`: the one folder links may point into (a Hub snapshot's links into
    the Hub cache's blobs, placed there by `huggingface_hub`)."""
    revision = FileRevision(path)
    prefix = path.relative_to(base).as_posix() if path != base else path.name
    if path.is_symlink() and not (
        links_into is not None and path.resolve().is_relative_to(links_into.resolve())
    ):
        # A link may point anywhere on this machine: it is refused, never followed.
        yield RawRecord(prefix, fail("format.unsupported-file", f"{prefix}: symbolic link"), None)
        return
    for record_id, payload in iter_file_records(path):
        own = record_id.startswith(path.name)
        suffix = record_id[len(path.name) :] if own else f":{record_id}"
        yield RawRecord(prefix + suffix, payload, revision, FileIdentity(revision, suffix))


def _is_saved_dataset(folder: Path) -> bool:
    return (folder / "dataset_info.json").exists() or (folder / "dataset_dict.json").exists()


def _from_rows(rows, name: str, revision: str | None) -> Iterator[RawRecord]:
    for index, row in enumerate(rows):
        rid = str(row.get("id") or row.get("instance_id") or row.get("session_id") or "")
        record_id = f"{name}#{index}" + (f":{rid}" if rid else "")
        try:
            yield RawRecord(record_id, unwrap_row(dict(row)), revision)
        except FormatError as exc:
            yield RawRecord(record_id, exc, revision)


def _hub(spec: SourceSpec) -> Iterator[RawRecord]:
    """Rows of a Hub dataset; a failure a user can fix (unreachable, unknown id,
    revision or split) raises `SourceUnavailable` (repo2rlenv.hub)."""
    source = spec.source
    try:
        yield from _hub_records(spec)
    except Exception as exc:
        problem = load_error(exc, source.spec, spec.split, source.revision)
        if problem is None:
            raise
        raise problem from exc


def _hub_records(spec: SourceSpec) -> Iterator[RawRecord]:
    import datasets

    source = spec.source
    streamed = spec.streaming and source.path is None  # offline: the cached files
    try:
        rows = (
            datasets.load_dataset(
                source.spec, split=spec.split, revision=source.revision, streaming=True
            )
            if streamed
            else datasets.load_dataset(str(source.root), split=spec.split)
        )
    except (
        ValueError,
        TypeError,
        datasets.exceptions.DatasetBuildError,
        datasets.exceptions.DatasetGenerationError,
        datasets.exceptions.DataFilesNotFoundError,
        datasets.data_files.EmptyDatasetError,
    ) as exc:
        if load_error(exc, source.spec, spec.split, source.revision) is not None:
            raise  # a split that does not exist is no reason to read raw files
        # Not a table (e.g. raw session files in the repo): read the repo's files instead.
        for path in _walk_files(source.root):
            yield from _from_file(path, source.root, source.links_into)
        return
    yield from _from_rows(rows, spec.split, source.revision)


def iter_records(spec: SourceSpec) -> Iterator[RawRecord]:
    """Records of the source, at most `spec.limit` of them."""
    source = spec.source
    local = source.path
    if source.is_hub:
        records = _hub(spec)
    elif source.kind == "file" and local is not None:
        records = _from_file(local, local.parent)
    elif source.kind == "saved-dataset" and local is not None:
        import datasets

        loaded = datasets.load_from_disk(str(local))
        if isinstance(loaded, datasets.DatasetDict):
            if spec.split not in loaded:
                raise SourceUnavailable(
                    "source.split-not-found",
                    f"{local} has no split {spec.split!r} (it has {sorted(loaded)})",
                )
            loaded = loaded[spec.split]
        records = _from_rows(loaded, local.name, source.revision)
    else:
        records = (r for path in _walk_files(source.root) for r in _from_file(path, source.root))
    for count, record in enumerate(records):
        if spec.limit is not None and count >= spec.limit:
            return
        yield record
