"""The notebooks of a resolved source (`repo2rlenv.source.Source`) and their licences.

The source itself, a local folder or file or a Hub dataset at a pinned commit, is
resolved once by `repo2rlenv.source.resolve_source`; this module only walks its files.
"""

from __future__ import annotations

from pathlib import Path

from repo2rlenv.source import SKIPPED_DIRS, Source

LICENSE_NAMES = ("LICENSE", "LICENCE", "COPYING")


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


def is_notebook_source(source: str | Path | Source) -> bool:
    """True when `source` holds Jupyter notebooks: an .ipynb file or a folder with one
    on this machine, or a resolved source that has one (a Hub dataset's file list)."""
    if isinstance(source, Source):
        return source.has_notebooks
    path = Path(source).expanduser()
    return path.exists() and bool(find_notebooks(path))


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
