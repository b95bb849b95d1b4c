"""SWE-bench's per-repository, per-version environment specifications, read as data.

SWE-bench states for each repository and version how its test environment is made:
the Python version, `pip_packages` (often pinned), `packages` (a requirements file of
the checkout, or a list of names), the `install` of the checkout itself (`python -m pip
install -e .`), `pre_install` shell steps. These are the `MAP_REPO_VERSION_TO_SPECS`
tables of the `swebench` package (2.x-4.x; 5.x moved them to per-instance Dockerfiles).
Using them, rather than writing them again, is what issue #19 asks.

How the package is used (optional extra `rlenv-harvest[swe]`, pinned): only its data
module `swebench/harness/constants/python.py` is loaded, found through the installed
distribution's file list, never through `import swebench`: the package's `__init__`
imports its whole harness (docker, modal, datasets, ghapi...), and the data module
itself imports nothing. It is code from a package we pin, not from the mined run, and it
is loaded the way an import would load it. Without the package there are no specs and
tasks are built as before (the checkout's own metadata).

What of a spec goes into a task: all of it, as the steps of the task image's build
(`swe_recipe`): the spec is trusted (the pinned package's, or the `install_config` of a
table the user chose), so its `pre_install` and `install` shell strings run there as
SWE-bench runs them; a conda `environment.yml` is translated to pip requirements
(`swe_conda`). Only what no build here can express (an environment file that is not
one, a requirements file the checkout lacks) refuses the task as
`instance.spec-unsupported`.
"""

from __future__ import annotations

import functools
import posixpath
import re
import runpy
import shlex
from collections.abc import Iterable
from importlib import metadata
from typing import Any

from pydantic import BaseModel, ConfigDict

from repo2rlenv.kinds.requirement_files import (
    RequirementFiles,
    read_requirements_file,
)
from schemas.provenance import InstallConfig

DISTRIBUTION = "swebench"
EXPORT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
"""One `NAME=value` word of an `export` step (after shell unquoting)."""
DATA_MODULES = ("swebench/harness/constants/python.py", "swebench/harness/constants.py")
"""3.x/4.x keep the Python specs in a subpackage; 2.x in one module."""


class SpecUnsupported(Exception):
    """The spec asks for something no image build here can express (an unreadable
    conda environment file, a missing requirements file, a date that is not one)."""


class SweSpec(BaseModel):
    """The fields of one spec this project uses, and where it came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repo: str
    version: str
    source: str
    """`swebench 4.1.0`: the distribution and version the spec was read from."""
    python: str | None = None
    pip_packages: tuple[str, ...] = ()
    packages: str | None = None
    install: str | tuple[str, ...] | None = None
    """One shell step (SWE-bench) or several (a SWE-rebench `install_config`)."""
    pre_install: tuple[str, ...] = ()
    requirement_paths: tuple[str, ...] = ()
    """The checkout's requirements files for `packages: requirements.txt`."""
    environment_paths: tuple[str, ...] = ()
    """Where SWE-bench reads a `packages: environment.yml` (`MAP_REPO_TO_ENV_YML_PATHS`:
    xarray's `ci/requirements/environment.yml`, matplotlib's `environment.yml`)."""
    test_cmd: str | None = None
    """How SWE-bench runs the instance's tests (`swe_runners` reads it)."""
    eval_commands: tuple[str, ...] = ()
    """What SWE-bench's eval script runs before the tests (Django's: generate the
    `en_US.UTF-8` locale, then export `LANG`, `LC_ALL`, `LANGUAGE`, `PYTHONIOENCODING`)."""

    def install_steps(self) -> tuple[str, ...]:
        """The `install` as its shell steps, in order."""
        if self.install is None:
            return ()
        return (self.install,) if isinstance(self.install, str) else self.install

    def eval_environment(self) -> tuple[tuple[str, ...], dict[str, str]]:
        """`eval_commands` split as the task runs them: (steps for the image build,
        the test run's environment). An `export NAME=value ...` step sets the test
        run's environment (SWE-bench's eval script exports it before the tests); any
        other step changes the system (`locale-gen`) and is run by the build, once. A
        step shlex cannot split is a build step, run as the spec wrote it."""
        steps: list[str] = []
        env: dict[str, str] = {}
        for step in (s.strip() for s in self.eval_commands):
            try:
                words = shlex.split(step)
            except ValueError:
                words = []
            assignments = words[1:]
            if (
                words[:1] == ["export"]
                and assignments
                and all(EXPORT.fullmatch(w) for w in assignments)
            ):
                for word in assignments:
                    name, value = word.split("=", 1)
                    env[name] = value
            elif step:
                steps.append(step)
        return tuple(steps), env

    def pre_install_paths(self, files: Iterable[str]) -> frozenset[str]:
        """The checkout's files among `files` that a `pre_install` step names (Sphinx's
        `sed -i 's/pytest/pytest -rA/' tox.ini`): the benchmark's start state has them
        as the step leaves them, so a run read them so, and the recipe makes them so
        again in the task image. Steps are split as the shell splits words (`shlex`;
        the spec is trusted, and a word is only compared with checkout paths); a step
        shlex cannot split names none."""
        known = set(files)
        named: set[str] = set()
        for step in self.pre_install:
            try:
                words = shlex.split(step)
            except ValueError:
                continue
            for word in words:
                path = posixpath.normpath(word.removeprefix("./")) if word else ""
                if path in known:
                    named.add(path)
        return frozenset(named)

    @classmethod
    def of_install_config(cls, repo: str, version: str, config: InstallConfig) -> SweSpec:
        """A row's own recipe (SWE-rebench's `install_config`, SWE-bench's keys), from the
        instance table the user chose: trusted as the package's specs are."""
        install = config.install
        return cls(
            repo=repo,
            version=version,
            source="the row's install_config",
            python=config.python,
            pip_packages=tuple(config.pip_packages),
            packages=config.packages,
            install=tuple(install) if isinstance(install, list) else install,
            pre_install=tuple(config.pre_install),
            requirement_paths=tuple(config.reqs_path),
            test_cmd=config.test_cmd if isinstance(config.test_cmd, str) else None,
            eval_commands=tuple(config.eval_commands),
        )


@functools.cache
def _tables() -> tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]] | None:
    """(source, repo -> version -> spec, repo -> requirements paths, repo -> conda
    environment file paths), or None when the package is not installed or holds no data
    module we know."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    for relative in DATA_MODULES:
        path = dist.locate_file(relative)
        if path.is_file():  # type: ignore[union-attr]
            found = runpy.run_path(str(path))
            specs = found.get("MAP_REPO_VERSION_TO_SPECS_PY") or found.get(
                "MAP_REPO_VERSION_TO_SPECS"
            )
            if isinstance(specs, dict):
                paths = found.get("MAP_REPO_TO_REQS_PATHS") or {}
                envs = found.get("MAP_REPO_TO_ENV_YML_PATHS") or {}
                return f"{DISTRIBUTION} {dist.version}", specs, paths, envs
    return None


def spec_for(repo: str, version: str | None) -> SweSpec | None:
    """The spec of `repo` at the instance's `version`, or None (no package, no entry)."""
    tables = _tables()
    if tables is None or not version:
        return None
    source, specs, paths, envs = tables
    entry = specs.get(repo, {}).get(version)
    if not isinstance(entry, dict):
        return None
    return SweSpec(
        repo=repo,
        version=version,
        source=source,
        python=entry.get("python"),
        pip_packages=tuple(entry.get("pip_packages") or ()),
        packages=entry.get("packages"),
        install=entry.get("install"),
        pre_install=tuple(entry.get("pre_install") or ()),
        requirement_paths=tuple(paths.get(repo) or ()),
        environment_paths=tuple(envs.get(repo) or ()),
        test_cmd=entry.get("test_cmd") if isinstance(entry.get("test_cmd"), str) else None,
        eval_commands=tuple(entry.get("eval_commands") or ()),
    )


def spec_requirement_file(spec: SweSpec, files: dict[str, str]) -> RequirementFiles:
    """The checkout's requirements file a spec's `packages: requirements.txt` means (the
    first of `requirement_paths` the checkout has), read by the one requirements reader:
    `-r` inside the checkout only; `-e`, URLs, paths and options are left out with a
    reason (`provenance` lists them)."""
    path = next((p for p in spec.requirement_paths if p in files), None)
    if path is None:
        raise SpecUnsupported(f"none of {list(spec.requirement_paths)} in the checkout")
    return read_requirements_file(files, path)
