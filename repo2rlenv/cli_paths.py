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
