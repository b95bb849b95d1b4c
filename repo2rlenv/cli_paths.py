"""Command-line paths made absolute once, where the arguments are parsed.

A relative path means "relative to where the user ran the command", and nothing else
does: a folder joined onto itself (`tasks_out/tasks_out/...`), a Docker bind mount
(which must be absolute), or a subprocess started in another working directory would
each read it differently. So every command makes its `Path` arguments absolute before
any work starts and hands only absolute paths onward. `os.path.abspath` rather than
`Path.resolve`: symlinks the user chose stay as they are (bind mounts follow them), and
a path that does not exist yet (an output folder) is fine.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

STDOUT = "-"
"""`--json -` means standard output, not a file named '-'."""


def absolute(path: Path) -> Path:
    """`path` with `~` expanded, relative to the current directory, `..` folded."""
    if str(path) == STDOUT:
        return path
    return Path(os.path.abspath(path.expanduser()))


def absolute_paths(args: argparse.Namespace) -> argparse.Namespace:
    """Every `Path` (or list of `Path`) attribute of `args`, made absolute in place."""
    for name, value in vars(args).items():
        if isinstance(value, Path):
            setattr(args, name, absolute(value))
        elif isinstance(value, list) and any(isinstance(item, Path) for item in value):
            setattr(args, name, [absolute(v) if isinstance(v, Path) else v for v in value])
    return args


def output_problems(
    folders: dict[str, Path | None] | None = None, files: dict[str, Path | None] | None = None
) -> list[str]:
    """What stops the named outputs from being written, one line each, naming the flag and
    the fix; empty when all can be. Checked before any work starts, so a report is never
    lost after an hour of containers. `folders` may not exist yet (they are created), but
    must not be files and must sit under a writable folder; `files` (`--json`) must name a
    file in an existing folder, or in one of `folders` (`--out X --json X/report.json`:
    the command creates X), or be '-' (standard output)."""
    problems: list[str] = []
    created = [path for path in (folders or {}).values() if path is not None]
    for flag, path in (folders or {}).items():
        if path is None:
            continue
        if path.exists() and not path.is_dir():
            problems.append(f"{flag} {path} is a file; give a folder (it is created if absent)")
        elif (why := _unwritable(path)) is not None:
            problems.append(f"{flag} {path}: {why}")
    for flag, path in (files or {}).items():
        if path is None or str(path) == STDOUT:
            continue
        if path.is_dir():
            problems.append(f"{flag} {path} is a folder; give a file name, or '-' for stdout")
        elif not path.parent.is_dir() and not _inside(path.parent, created):
            problems.append(
                f"{flag} {path}: folder {path.parent} does not exist; create it first, "
                "or give '-' for stdout"
            )
        elif (why := _unwritable(path)) is not None:
            problems.append(f"{flag} {path}: {why}")
    return problems


Named = dict[str, Path | list[Path] | None]
"""Flag -> its path(s), as parsed (a repeatable flag gives a list)."""


def _each(named: Named | None) -> list[tuple[str, Path]]:
    pairs: list[tuple[str, Path]] = []
    for flag, value in (named or {}).items():
        values = value if isinstance(value, list) else [value]
        pairs += [(flag, path) for path in values if path is not None]
    return pairs


def input_problems(folders: Named | None = None, files: Named | None = None) -> list[str]:
    """What is wrong with the named inputs (`--exclude DIR`, `--repo-map FILE`, ...), one
    line each naming the flag: a folder or file that is not there would otherwise be a
    traceback, or be passed over in silence, once the work is under way."""
    problems: list[str] = []
    for flag, path in _each(folders):
        if not path.is_dir():
            what = "is a file" if path.exists() else "does not exist"
            problems.append(f"{flag} {path} {what}; give an existing folder")
    for flag, path in _each(files):
        if not path.is_file():
            what = "is a folder" if path.is_dir() else "does not exist"
            problems.append(f"{flag} {path} {what}; give an existing file")
    return problems


def _inside(path: Path, folders: list[Path]) -> bool:
    """`path` is one of `folders` or lies under one."""
    return any(path == folder or path.is_relative_to(folder) for folder in folders)


def _unwritable(path: Path) -> str | None:
    """Why `path` (a file or folder, existing or to be created) cannot be written."""
    if path.exists():
        return None if os.access(path, os.W_OK) else "not writable; choose another path"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is a file, not a folder; choose another path"
    if not os.access(parent, os.W_OK):
        return f"{parent} is not writable; choose another path"
    return None


def write_report(path: Path, text: str) -> bool:
    """`text` into `path`, or onto standard output for '-'; True when it went to a file
    (the caller then says where)."""
    if str(path) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return False
    # whole or not at all: a report cut by a full disk or a kill would read as a short one
    path.parent.mkdir(parents=True, exist_ok=True)  # only an output folder's (checked first)
    staging = path.with_name(f".{path.name}.partial")
    staging.write_text(text)
    os.replace(staging, path)
    return True
