"""Task folders on disk: the writer (atomic, deterministic) and the reader (trusts nothing)."""

from repo2rlenv.bundle.hashing import content_hash
from repo2rlenv.bundle.reader import TaskTree, find_task_dirs, read_task_dir
from repo2rlenv.bundle.toml_io import dump_config, parse_config
from repo2rlenv.bundle.writer import (
    BundleConflictError,
    WriteOutcome,
    render_bundle,
    replace_config,
    write_bundle,
)

__all__ = [
    "BundleConflictError",
    "TaskTree",
    "WriteOutcome",
    "content_hash",
    "dump_config",
    "find_task_dirs",
    "parse_config",
    "read_task_dir",
    "render_bundle",
    "replace_config",
    "write_bundle",
]
