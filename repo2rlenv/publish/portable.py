"""Portable task images: a task mined offline starts FROM an image only its machine has.

`repo2rlenv setup` builds `rlenv-harvest/offline-python:bookworm-1` from Debian's
packages with debootstrap and `docker import`; no registry serves it, so a published task
naming it cannot build anywhere else (Harbor's hosted backends included). The rewrite
here replaces that FROM line with the base's recipe: the same Debian bookworm packages
installed with apt on a public Debian bookworm image pinned by digest (the project's
public default). The recipe's starting image is a build argument, so a machine with its
own Debian bookworm image (a mirror, an air-gapped copy) can name that one instead.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from repo2rlenv.runtime.base_image import OFFLINE_PACKAGES
from repo2rlenv.runtime.offline_bases import OFFLINE_BASES, OFFLINE_DATA_IMAGE, offline_base_of
from repo2rlenv.settings import OFFLINE_BASE_IMAGE, PUBLIC_BASE_IMAGE

LOCAL_ONLY_REPOSITORIES = frozenset(
    {OFFLINE_BASE_IMAGE.rsplit(":", 1)[0], OFFLINE_DATA_IMAGE.rsplit(":", 1)[0]}
)
"""Image repositories built on the machine itself (never pushed to any registry)."""

BASE_ARG = "REPO2RLENV_DEBIAN_BASE"
"""Build argument naming the Debian bookworm image the recipe starts from."""


def recipe(packages: tuple[str, ...]) -> str:
    """The portable stand-in for an offline bookworm base holding `packages`."""
    return "\n".join(
        [
            "# Portable base (repo2rlenv.publish.portable): the offline base's recipe, Debian",
            "# bookworm's own packages on a public Debian bookworm image pinned by digest.",
            f"ARG {BASE_ARG}={PUBLIC_BASE_IMAGE}",
            f"FROM ${{{BASE_ARG}}}",
            "# Debian's python3 is the interpreter, as in the offline base, not the image's own.",
            "RUN rm -rf /usr/local/bin/python* /usr/local/bin/pip* /usr/local/lib/python3* \\",
            " && apt-get update \\",
            " && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\",
            f"    {' '.join(packages)} \\",
            " && rm -rf /var/lib/apt/lists/*",
            "ENV LANG=C.UTF-8",
        ]
    )


OTHER_SUITES = frozenset(
    b.suite for b in OFFLINE_BASES.values() if b.suite != OFFLINE_BASES[OFFLINE_BASE_IMAGE].suite
)
"""Debian suites of the offline bases the bookworm recipe cannot stand for (another Python)."""

_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE)


def _repository(ref: str) -> str:
    name = ref.split("@", 1)[0]
    head, _, tail = name.rpartition(":")
    return head if head and "/" not in tail else name


def local_only_bases(dockerfile: str) -> list[tuple[int, str]]:
    """(line number, image) for each FROM naming an image only this machine has."""
    found = []
    for number, line in enumerate(dockerfile.splitlines(), start=1):
        match = _FROM.match(line)
        if match and _repository(match.group(1)) in LOCAL_ONLY_REPOSITORIES:
            found.append((number, match.group(1)))
    return found


def portable_dockerfile(dockerfile: str) -> str:
    """The Dockerfile with each local-only FROM line replaced by the base's recipe.

    Only a plain `FROM <offline base>` is rewritten: a stage name (`AS x`) or a platform
    flag would need the recipe to keep them, and no task the project writes has one, so
    such a line is refused rather than rewritten wrongly."""
    lines = dockerfile.splitlines()
    for number, ref in reversed(local_only_bases(dockerfile)):
        if lines[number - 1].split() != ["FROM", ref]:
            raise ValueError(f"line {number} is not a plain FROM {ref}; cannot rewrite it")
        if ref.split("@", 1)[0].rpartition(":")[2].split("-")[0] in OTHER_SUITES:
            # bullseye's or trixie's base (a spec's Python, `offline_bases`): the recipe
            # is bookworm's, and would silently give the task another Python
            raise ValueError(f"line {number}: no portable recipe for {ref} (only bookworm's)")
        base = offline_base_of(ref)
        packages = base.packages if base is not None else OFFLINE_PACKAGES
        lines[number - 1 : number] = recipe(packages).splitlines()
    return "\n".join(lines) + ("\n" if dockerfile.endswith("\n") else "")


def make_portable(task_dir: Path) -> bool:
    """Rewrites the task's environment/Dockerfile in place (atomically) to start from
    the portable recipe. Returns whether anything changed; a second call changes
    nothing. task.toml is left alone: its recorded content hash then differs
    (`bundle.hash-mismatch`), which is true, as the label was earned on the offline
    base; validating again on a machine with a registry relabels it."""
    path = Path(task_dir) / "environment" / "Dockerfile"
    if path.is_symlink() or not path.is_file():
        raise ValueError(f"{path} is not a regular file")
    old = path.read_text()
    new = portable_dockerfile(old)
    if new == old:
        return False
    staging = path.with_name(f".Dockerfile.tmp-{uuid.uuid4().hex}")
    staging.write_text(new)
    os.chmod(staging, path.stat().st_mode & 0o777)
    os.replace(staging, path)
    return True
