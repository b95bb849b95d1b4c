"""Where notebooks come from: a local folder or file, or a Hub dataset downloaded with
`huggingface_hub.snapshot_download` (the remote path ends in the same local walk).

A Hub id is asked for first as every source is (`repo2rlenv.hub`: one `dataset_info`
call with a timeout), so an unreachable Hub, a missing or private dataset is one line;
the Hub client's own first calls have no timeout and its downloads retry."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from repo2rlenv.emit import dataset_label
from repo2rlenv.hub import (
    HUB_TIMEOUT_S,
    check_hub,
    hub_error,
    hub_files,
    hub_offline,
)

SKIPPED_DIRS = {".git", ".ipynb_checkpoints", "__pycache__", "node_modules", ".venv"}
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
LICENSE_NAMES = ("LICENSE", "LICENCE", "COPYING")


class SourceError(Exception):
    """The dataset cannot be opened at all (a usage or set-up error, not a skip)."""


@dataclass(frozen=True)
class ResolvedSource:
    root: Path
    dataset: str
    revision: str | None


def _hub_snapshot(repo_id: str, revision: str | None) -> ResolvedSource:
    from huggingface_hub import snapshot_download

    try:
        if not hub_offline():  # offline: the cache answers, or the client says it is not there
            check_hub(repo_id, revision)
        path = Path(
            snapshot_download(
                repo_id=repo_id,
                repo_type="dataset",
                revision=revision,
                etag_timeout=HUB_TIMEOUT_S,
            )
        )
    except Exception as exc:  # the hub client raises many types; all mean "cannot open"
        raise SourceError(str(hub_error(exc, repo_id, revision))) from exc
    commit = path.name if re.fullmatch(r"[0-9a-f]{40}", path.name) else revision
    return ResolvedSource(root=path, dataset=repo_id, revision=commit)


def resolve_source(spec: str, revision: str | None = None) -> ResolvedSource:
    """A local path as given, else a Hub dataset id."""
    path = Path(spec).expanduser()
    if path.exists():
        return ResolvedSource(root=path, dataset=dataset_label(spec), revision=revision)
    if HUB_ID.match(spec):
        return _hub_snapshot(spec, revision)
    raise SourceError(f"{spec} is neither an existing path nor a Hub dataset id (owner/name)")


def find_notebooks(root: Path) -> list[tuple[Path, str]]:
    """(path, record id) of every notebook under `root`, sorted, checkpoints left out."""
    if root.is_file():
        return [(root, root.name)] if root.suffix == ".ipynb" else []
    found = []
    for path in root.rglob("*.ipynb"):
        relative = path.relative_to(root)
        if any(part in SKIPPED_DIRS or part.startswith(".") for part in relative.parts[:-1]):
            continue
        if path.is_file():
            found.append((path, relative.as_posix()))
    return sorted(found, key=lambda item: item[1])


def is_notebook_source(source: str | Path, *, probe_hub: bool = False) -> bool:
    """True when `source` holds Jupyter notebooks: an .ipynb file, a folder with one, or
    (with `probe_hub`, which asks the Hub for the file list) a Hub dataset with one."""
    path = Path(source).expanduser()
    if path.exists():
        return bool(find_notebooks(path))
    if probe_hub and HUB_ID.match(str(source)) and not hub_offline():
        # one call with a timeout; a failure is the one line `repo2rlenv.hub` gives, not
        # a silent "no notebooks" (offline, the cache cannot be listed: no probe)
        return any(f.endswith(".ipynb") for f in hub_files(str(source)))
    return False


def _identify(text: str) -> str | None:
    head = " ".join(text[:3000].split())
    if "Apache License" in head and "Version 2.0" in head:
        return "Apache-2.0"
    if "Permission is hereby granted, free of charge" in head:
        return "MIT"
    if "Redistribution and use in source and binary forms" in head:
        return "BSD-3-Clause" if "Neither the name" in head else "BSD-2-Clause"
    if "GNU GENERAL PUBLIC LICENSE" in head:
        return "GPL-3.0" if "Version 3" in head else "GPL-2.0" if "Version 2" in head else None
    if "CC0" in head or "Creative Commons Zero" in head:
        return "CC0-1.0"
    return None


def detect_license(notebook: Path, root: Path) -> str | None:
    """The SPDX id of the nearest licence file between the notebook and the dataset
    root (code licences first: LICENSE-CODE beats LICENSE-TEXT), when recognisable."""
    folder = notebook.parent
    stop = root if root.is_dir() else root.parent
    while True:
        candidates = (
            sorted(
                p
                for p in folder.iterdir()
                if p.is_file() and p.name.upper().startswith(LICENSE_NAMES)
            )
            if folder.is_dir()
            else []
        )
        candidates.sort(key=lambda p: ("CODE" not in p.name.upper(), p.name))
        for candidate in candidates:
            try:
                found = _identify(candidate.read_text(errors="replace"))
            except OSError:
                continue
            if found:
                return found
        if folder == stop or folder.parent == folder or stop not in folder.parents:
            return None
        folder = folder.parent
