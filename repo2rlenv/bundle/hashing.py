"""The content hash: one identity for a task, whether computed from a model or a folder."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from repo2rlenv.bundle.toml_io import canonical_config_bytes
from schemas import TaskConfig

HASH_PREFIX = "sha256:"


def content_hash(config: TaskConfig, files: Mapping[str, tuple[bytes, bool]]) -> str:
    """Hash over the canonical config plus every other file (path, exec bit, bytes).

    `files` maps a relative POSIX path to (content, executable) and includes
    instruction.md but not task.toml, which enters through `config`.
    """
    return hash_canonical(canonical_config_bytes(config), files)


def hash_canonical(canonical: bytes, files: Mapping[str, tuple[bytes, bool]]) -> str:
    """`content_hash` from the config's canonical bytes (see `canonical_config_bytes`)."""
    digest = hashlib.sha256()
    digest.update(b"config\0" + canonical + b"\0")
    for path in sorted(files):
        content, executable = files[path]
        digest.update(f"file\0{path}\0{int(executable)}\0{len(content)}\0".encode())
        digest.update(content)
    return HASH_PREFIX + digest.hexdigest()
