"""Test dependencies of an instance's checkout, carried into its task image as wheels.

A SWE-bench instance's tests import what the project declares for its tests
(marshmallow's `tests/base.py` imports `simplejson` and `pytz`), which the base image
may lack. The declaration is read from the checkout itself (`extras_require` of
`setup.py` as a literal, `[options.extras_require]` of `setup.cfg`,
`[project.optional-dependencies]` of `pyproject.toml`; extras named `tests`, `test` or
`testing`), never executed. The wheels are fetched at mining time with the host's
`pip download`, i.e. from the host's configured package index, and unpacked into the
image's site-packages when it is built: that needs neither a network nor pip in the
image (the offline base image has none). pytest itself is the verifier's own and is
left out. Reading the declarations is `declared_requirements`; this module fetches.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import cast

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict

from repo2rlenv.hosttools import HostToolError, pip_lacks_option, require_pip
from schemas import DependencyDateUnmet

PIP_DOWNLOAD = (
    sys.executable,
    "-m",
    "pip",
    "download",
    "--quiet",
    "--only-binary=:all:",
)
PROVENANCE = "wheels.txt"
"""Beside the wheels: the date asked of the index, whether it was met, the files taken."""
WHEEL_DIR = "wheels"
"""Under environment/, the image's build context: the dependency wheels only, so that
tasks of one repository version have the same bytes there and share the image layer."""
NO_UPLOAD_TIMES = "does not provide upload-time metadata"
"""pip's words (26.0 on) for an index that publishes no upload times."""
_NEWEST_TAKEN = re.compile(r"newest taken \((no-upload-times|no-dated-resolution)\)")
TASK_WHEEL_DIR = "task-wheels"
"""Under environment/: wheels of this task alone (the checkout's editable metadata),
unpacked in a layer after the shared ones."""


class DependencyDate(BaseModel):
    """The date the index is asked for (`--uploaded-prior-to`), and why that date."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    date: str | None
    basis: str

    @classmethod
    def of_instance(cls, created_at: str | None) -> DependencyDate:
        """The instance's own date: no version to share one with, or no table to ask."""
        return cls(date=created_at, basis="the instance's created_at")

    def line(self) -> str:
        """The `wheels.txt` line that records it."""
        return f"dependency date: {self.date or 'none'} ({self.basis})\n"


class DependencyError(Exception):
    """A declared test dependency has no wheel in the host's package index."""


def fetch_wheels(
    names: list[str],
    prior_to: str | None = None,
    skip: frozenset[str] = frozenset(),
    note: str = "",
) -> dict[str, bytes]:
    """Wheel file name -> bytes, from the host's index (its pip configuration).

    Pinned names (`name==version`, what the run's own pip reported) are taken as they
    are, without dependencies: pip listed every package it installed; when one has no
    wheel for this Python, all of them are taken by name like the others. The others (what
    the checkout declares) are resolved with their dependencies (a declared `jinja2`
    needs `markupsafe`), and `prior_to` (the instance's `created_at`, ISO 8601) asks pip
    for what the index offered then (`--uploaded-prior-to`), not the newest, so tests of
    2021 meet the libraries of 2021 and a rerun later takes the same versions. pip
    honours it only where the index publishes upload times (PyPI does; a plain folder
    index does not, and then the newest is taken). Wheels of the projects in `skip`
    (canonical names: the verifier's pytest family, the checkout's own project) are
    dropped. The versions taken are in the wheels' file names and in `wheels.txt`, with
    the date asked and whether the index could meet it (else the newest is taken: an
    image that cannot import the project proves nothing). `note` heads `wheels.txt`."""
    pinned = [n for n in names if "==" in n]
    declared = [n for n in names if "==" not in n]
    pinned_names = {canonicalize_name(n.split("==")[0]) for n in pinned}
    dated = [n for n in declared if canonicalize_name(Requirement(n).name) not in pinned_names]
    wheels: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="rlenv-wheels-") as folder:
        if pinned:
            try:
                _download(pinned, ["--no-deps"], folder)
            except DependencyError:
                # the run's Python was another (SWE-bench's astroid runs use 3.9: no
                # wrapt 1.13.3 wheel for 3.11): take those names as declared ones
                for stale in Path(folder).glob("*.whl"):
                    stale.unlink()
                # (the declared ranges come back: astroid 2.9 bounds wrapt below 1.14)
                named = {canonicalize_name(Requirement(n).name) for n in declared}
                loose = [n.split("==")[0] for n in pinned]
                dated = [*declared, *(n for n in loose if canonicalize_name(n) not in named)]
        note += f"uploaded-prior-to: {prior_to or 'none (the instance has no date)'}\n"
        if dated and prior_to:
            try:
                _download(dated, ["--uploaded-prior-to", prior_to], folder)
            except DependencyError as exc:
                # e.g. no lazy-object-proxy wheel for Python 3.11 before 2022-11: the
                # newest is taken, and the task says so (and mine counts it)
                _download(dated, [], folder)
                note += f"not met, {newest_taken(str(exc))}\n"
        elif dated:
            _download(dated, [], folder)
        for path in sorted(Path(folder).glob("*.whl")):
            if canonicalize_name(path.name.split("-")[0]) not in skip:
                wheels[path.name] = path.read_bytes()
    if wheels:
        wheels[PROVENANCE] = (note + "".join(f"{name}\n" for name in sorted(wheels))).encode()
    return wheels


def newest_taken(pip_line: str) -> str:
    """The `wheels.txt` words for a date not met: why (a `DependencyDateUnmet`), and pip's line."""
    why: DependencyDateUnmet = (
        "no-upload-times" if NO_UPLOAD_TIMES in pip_line else "no-dated-resolution"
    )
    return f"newest taken ({why}): {pip_line}"


def date_unmet(wheels: dict[str, bytes]) -> DependencyDateUnmet | None:
    """Why the wheels of a task are the newest rather than the date's, read back from
    the `wheels.txt` lines `newest_taken` wrote; None when the date held (or none was
    asked). The first reason wins."""
    found = _NEWEST_TAKEN.search(wheels.get(PROVENANCE, b"").decode(errors="replace"))
    return cast(DependencyDateUnmet, found.group(1)) if found else None


def _download(names: list[str], cutoff: list[str], folder: str) -> None:
    """`pip download`; DependencyError with what `pip_failure` reads when it fails. A pip
    without `--uploaded-prior-to` is a HostToolError: never read as an index without upload
    times, which would take the newest of everything (issue 28)."""
    done = subprocess.run(
        [*PIP_DOWNLOAD, *cutoff, "--dest", folder, "--", *names],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        if pip_lacks_option(done.stderr):
            require_pip()  # says which pip, and the fix
            raise HostToolError(f"host.pip-too-old: {done.stderr.strip().splitlines()[-1]}")
        raise DependencyError(pip_failure(done.stderr))


def pip_failure(stderr: str) -> str:
    """pip's last line; for a `ResolutionImpossible`, which alone names no package (pylint
    2.13's runs were refused with nothing to act on), the conflict pip states above it:
    `Cannot install A and B ...` (what `--quiet` keeps) and, when printed, the lines under
    `The conflict is caused by:`."""
    lines = [line.strip() for line in stderr.strip().splitlines()] or ["pip failed"]
    if "ResolutionImpossible" not in lines[-1]:
        return lines[-1][:200]
    said = [line.removeprefix("ERROR: ") for line in lines if "Cannot install" in line]
    if "The conflict is caused by:" in lines:
        first = lines.index("The conflict is caused by:") + 1
        said += lines[first : lines.index("", first) if "" in lines[first:] else len(lines) - 1]
    return f"ResolutionImpossible: {'; '.join(said) or 'no conflict named'}"[:500]


def dockerfile_lines(wheels: list[str], folder: str = WHEEL_DIR) -> list[str]:
    """Unpack the wheels of `folder` into site-packages: a wheel is a zip of the
    installed files."""
    if not any(name.endswith(".whl") for name in wheels):
        return []
    comment = {
        WHEEL_DIR: "# Test dependencies the checkout declares, as wheels from the host's "
        "package index.",
        TASK_WHEEL_DIR: "# This task's own wheels (the checkout's editable metadata).",
    }[folder]
    target = f"/tmp/rlenv-{folder}"
    return [
        comment,
        f"COPY {folder}/ {target}/",
        'RUN python3 -c "import pathlib, site, zipfile; '
        "d = pathlib.Path(site.getsitepackages()[0]); d.mkdir(parents=True, exist_ok=True); "
        f"[zipfile.ZipFile(w).extractall(d) for w in sorted(pathlib.Path('{target}')"
        f".glob('*.whl'))]\" && rm -rf {target}",
    ]
