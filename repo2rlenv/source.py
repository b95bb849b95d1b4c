"""`--dataset`, resolved once: a `Source` every consumer takes instead of the string.

`mine` used to resolve the same `--dataset` up to four times (a check, `load_dataset`, a
file listing to decide whether it holds notebooks, `snapshot_download`), each with its
own id grammar and its own errors. `resolve_source` is now the one place: a local path
is looked at once (what it holds, notebooks included), a Hub id is asked for once (one
timed `dataset_info` call: the commit the revision points at and the file list), and the
result is pinned: every later read of a Hub dataset reads that commit, so the sessions
and the notebooks of one run come from the same files even when the branch moves.

The Hub id grammar is the Hub client's own (`huggingface_hub.utils.validate_repo_id`):
`owner/name`, or a bare `name`. Bare names are legacy canonical datasets (`squad`,
`glue`); the Hub still answers for them (it redirects to their owner), so they are
accepted; a bare word that is neither a local path nor a Hub dataset ends in
`hub.dataset-not-found`, which names the local path too.

Every failure is a `SourceUnavailable` (repo2rlenv.hub): a stable reason code
(`source.not-found`, `source.unreadable`, `source.empty`, `hub.*`) and one line.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from repo2rlenv.hub import HUB_TIMEOUT_S, SourceUnavailable, hub_error, hub_info, hub_offline

SourceKind = Literal["file", "folder", "saved-dataset", "hub"]
READABLE_SUFFIXES = (".jsonl", ".json", ".traj", ".parquet", ".ipynb")
"""What makes a local folder worth reading (sessions, notebooks)."""
NOTEBOOK_SUFFIX = ".ipynb"
SKIPPED_DIRS = frozenset({".git", ".ipynb_checkpoints", "__pycache__", "node_modules", ".venv"})
"""Folders no input is looked for in: tooling, caches, environments."""
DOWNLOADS_IN_PARALLEL = 8
"""Files of a Hub dataset fetched at once (as `snapshot_download` does)."""
_COMMIT = re.compile(r"[0-9a-f]{40}")


def dataset_label(dataset: str) -> str:
    """What a task records as its dataset: a Hub id as given, but for a local folder or
    file only its name; an absolute path would publish the miner's home directory."""
    path = Path(dataset).expanduser()
    if path.is_absolute() or path.exists() or dataset.startswith((".", "~")):
        return path.resolve().name or "local"
    return dataset


def is_hub_id(text: str) -> bool:
    """The Hub client's own rule for a repository id (see the module docstring)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(text)
    except HFValidationError:
        return False
    return bool(text)


@dataclass(frozen=True)
class Source:
    """One resolved `--dataset`. For a Hub dataset `revision` is the commit the
    requested revision pointed at when it was resolved (None only offline, where the
    cache decides); for a local source it is the `--revision` given, as before."""

    spec: str
    """As the user gave it."""
    kind: SourceKind
    label: str
    """What a task records as its dataset (`dataset_label`: never a home path)."""
    revision: str | None
    path: Path | None = None
    """The local file or folder; None for a Hub dataset (see `root`)."""
    files: tuple[str, ...] = ()
    """A Hub dataset's file names at `revision` (from the one resolving call)."""
    has_notebooks: bool = False
    asked: str | None = None
    """A Hub dataset's revision as given (None: the default branch), before pinning."""

    @property
    def is_hub(self) -> bool:
        return self.kind == "hub"

    @cached_property
    def root(self) -> Path:
        """The files, on this machine: the local path, or the Hub dataset downloaded at
        the pinned commit (once, on first use: a run that only streams never does)."""
        if self.path is not None:
            return self.path
        return _download(self.spec, self.revision, self.files, self.asked)

    @property
    def links_into(self) -> Path | None:
        """The folder a Hub snapshot's links point into (the Hub cache's copy of this
        dataset: `huggingface_hub` links each file of a snapshot to its blob there);
        None for a local source, whose links are never followed."""
        return self.root.parent.parent if self.is_hub else None


def resolve_source(spec: str, revision: str | None = None) -> Source:
    """The one resolution of `spec`; raises `SourceUnavailable`."""
    local = Path(spec).expanduser()
    if local.exists():
        return _local(spec, local, revision)
    _require_hub_id(spec)
    if hub_offline():
        return _cached_hub(spec, revision)
    sha, files = hub_info(spec, revision)
    return Source(
        spec=spec,
        kind="hub",
        label=spec,
        revision=sha or revision,
        files=files,
        has_notebooks=_any_notebook(files),
        asked=revision,
    )


def check_hub_id(spec: str) -> None:
    """A Hub id other than `--dataset` (an instance table), checked by the same grammar
    and the same one timed call, which `datasets` then loads itself; offline the
    cache answers and `load_error` explains a miss."""
    _require_hub_id(spec)
    if not hub_offline():
        hub_info(spec)


def _require_hub_id(spec: str) -> None:
    if not is_hub_id(spec):
        raise SourceUnavailable(
            "source.not-found",
            f"{spec} is neither an existing path nor a Hub dataset id (owner/name, or a "
            "legacy bare name)",
        )


def _local(spec: str, path: Path, revision: str | None) -> Source:
    label = dataset_label(spec)
    if path.is_file():
        return Source(spec, "file", label, revision, path, has_notebooks=_is_notebook(path))
    if (path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists():
        return Source(spec, "saved-dataset", label, revision, path)
    try:
        found = [p for p in _walk(path) if p.suffix in READABLE_SUFFIXES and p.is_file()]
    except OSError as exc:
        raise SourceUnavailable("source.unreadable", f"cannot read {path}: {exc}") from exc
    if not found:
        raise SourceUnavailable(
            "source.empty",
            f"nothing readable under {path}: no session file "
            f"({', '.join(READABLE_SUFFIXES[:4])}), notebook (.ipynb) or saved dataset",
        )
    names = (p.relative_to(path).as_posix() for p in found)
    return Source(spec, "folder", label, revision, path, has_notebooks=_any_notebook(names))


def _walk(root: Path):
    """Files under `root`, hidden ones passed over (tooling, not data: the session
    walk passes them over too), links never followed."""
    for path in root.rglob("*"):
        parts = path.relative_to(root).parts
        if not any(p.startswith(".") for p in parts) and not path.is_symlink():
            yield path


def _is_notebook(path: Path) -> bool:
    return path.suffix == NOTEBOOK_SUFFIX and path.is_file()


def _any_notebook(names) -> bool:
    """Whether any of these relative POSIX names is a notebook the notebook miner
    reads (none inside SKIPPED_DIRS: checkpoints, environments)."""
    return any(
        name.endswith(NOTEBOOK_SUFFIX) and not SKIPPED_DIRS.intersection(name.split("/")[:-1])
        for name in names
    )


def _cached_hub(spec: str, revision: str | None) -> Source:
    """Offline (HF_HUB_OFFLINE): the cache's snapshot of the revision, no network; not
    in the cache is `hub.not-cached`."""
    from huggingface_hub import snapshot_download

    try:
        root = Path(snapshot_download(spec, repo_type="dataset", revision=revision))
    except Exception as exc:  # the hub client raises many types; all mean "not there"
        raise hub_error(exc, spec, revision) from exc
    commit = root.name if _COMMIT.fullmatch(root.name) else revision
    # the snapshot's files are the cache's links to its blobs: listed, not walked
    files = tuple(sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()))
    return Source(spec, "hub", spec, commit, root, files, _any_notebook(files))


def _download(repo_id: str, commit: str | None, files: tuple[str, ...], asked: str | None) -> Path:
    """Each file at the pinned commit (`hf_hub_download`, into the Hub cache's snapshot
    folder), not `snapshot_download`: that would ask the Hub for the file list again,
    which `resolve_source` already has. The cache then maps the revision asked for to
    that commit, as `snapshot_download` would, so a later offline run finds it."""
    from huggingface_hub import hf_hub_download

    if not files:
        raise SourceUnavailable("source.empty", f"dataset {repo_id} has no files")

    def fetch(name: str) -> str:
        return hf_hub_download(
            repo_id, name, repo_type="dataset", revision=commit, etag_timeout=HUB_TIMEOUT_S
        )

    try:
        with ThreadPoolExecutor(max_workers=DOWNLOADS_IN_PARALLEL) as pool:
            paths = list(pool.map(fetch, files))
    except Exception as exc:
        raise hub_error(exc, repo_id, commit) from exc
    root = Path(paths[0]).parents[len(Path(files[0]).parts) - 1]
    if commit is not None and _COMMIT.fullmatch(root.name) and (asked or "main") != commit:
        _remember_ref(root.parent.parent / "refs" / (asked or "main"), commit)
    return root


def _remember_ref(ref: Path, commit: str) -> None:
    """`refs/<revision>` of the Hub cache (its documented layout: the file holds the
    commit), written whole or not at all; a cache we may not write to is left as is."""
    try:
        if ref.is_file() and ref.read_text() == commit:
            return
        ref.parent.mkdir(parents=True, exist_ok=True)
        partial = ref.with_name(f".{ref.name}.{os.getpid()}.partial")
        partial.write_text(commit)
        os.replace(partial, ref)
    except OSError:
        pass  # only an offline run later needs it, and it then says `hub.not-cached`
