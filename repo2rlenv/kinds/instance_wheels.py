"""The environment of an instance repair's task image: a spec's recipe, or wheels.

With a spec (SWE-bench's for the repository and version, or the row's own
`install_config`), the image build runs it (`swe_recipe`): nothing is fetched here.
Without one, the packages the run installed at the versions pip reported plus what the
checkout declares, fetched as wheels on the host (`instance_deps`). The checkout's own
project is never a dependency wheel (it is on the path from /workspace); its
metadata-only wheel goes into a later layer so tasks of one version share the
dependency layer. Apart from `instance_repair` because choosing and fetching the
environment is its own job, and the largest part of the kind.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any, NamedTuple

from packaging.requirements import InvalidRequirement, Requirement

from repo2rlenv.kinds.common import Reject, SessionContext
from repo2rlenv.kinds.declared_requirements import (
    declared_runtime_requirements,
    declared_test_requirements,
)
from repo2rlenv.kinds.installs import canonical_name, project_name, session_installs
from repo2rlenv.kinds.instance_deps import (
    PROVENANCE,
    DependencyDate,
    DependencyError,
    fetch_wheels,
)
from repo2rlenv.kinds.requirement_files import fetch_with_test_files
from repo2rlenv.kinds.scm_version import ScmVersion
from repo2rlenv.kinds.swe_conda import EnvironmentFile, environment_file
from repo2rlenv.kinds.swe_recipe import Recipe, recipe_lines
from repo2rlenv.kinds.swe_specs import SpecUnsupported, SweSpec, spec_for
from repo2rlenv.kinds.verifier_pytest import verifier_pytest
from repo2rlenv.replay.replay import Replay
from repo2rlenv.runtime.offline_bases import (
    PYTHON_UNAVAILABLE,
    PythonUnavailable,
    choose_offline_base,
    offline_base_of,
)

VERIFIER_OWN = frozenset({"pytest", "pluggy", "iniconfig", "pygments", "packaging"})
"""pytest and what it brings: the verifier installs its own (`common.PYTEST_INSTALL`)."""
IMAGE_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
"""The wheels are the host's pip's choice, for the host's Python (3.11, as the default
offline base image's Debian Python). A recipe instead runs in the image, under the
offline base whose Python is closest to its spec's (`offline_bases`), so pip resolves
there for that Python; a difference left is recorded in the task, and the oracle
decides."""


class InstanceEnvironment(NamedTuple):
    """What an instance task's image gets: dependency wheels (with `wheels.txt`), the
    checkout's own wheel, and, for a spec, the recipe the build runs instead."""

    wheels: dict[str, bytes]
    own: dict[str, bytes]
    recipe: Recipe | None = None
    spec: SweSpec | None = None
    base_image: str | None = None
    """The FROM image when not the context's: the offline base of the spec's Python."""
    image_python: str = IMAGE_PYTHON


def instance_spec(instance: Any) -> SweSpec | None:
    """The instance's recipe: the pinned package's spec for its repository and version,
    else the row's own `install_config` (a table the user chose), else None."""
    spec = spec_for(instance.repo, instance.version)
    config = getattr(instance, "install_config", None)
    if spec is None and config is not None:
        spec = SweSpec.of_install_config(instance.repo, instance.version or "", config)
    return spec


def instance_wheels(
    replay: Replay, ctx: SessionContext, instance: Any, start: dict[str, str], with_pytest: bool
) -> InstanceEnvironment:
    """The image's environment: with a spec, its recipe (built inside the image,
    `swe_recipe`; nothing fetched here); without one, wheels of what the run installed
    and the checkout declares; what cannot be had is a counted `Reject`."""
    spec = instance_spec(instance)
    dated = ctx.dependency_date or DependencyDate.of_instance(instance.created_at)
    if spec is not None:
        committed = ctx.committed_at() if ctx.committed_at else None
        conda = _conda_input(spec, ctx, instance, start)
        scm = ctx.scm_version() if ctx.scm_version else None
        return _recipe_environment(
            spec, start, dated, ctx.base_image, with_pytest, committed, conda, scm
        )
    try:
        wheels = fetch_with_test_files(
            fetch_wheels,
            _requirements(replay, start),
            start,
            base_image=ctx.base_image,
            prior_to=dated.date,
            skip=_skip(start),
        )
    except (DependencyError, OSError, subprocess.SubprocessError) as exc:
        raise Reject("instance.dependency-unavailable", str(exc)[:500]) from exc
    return InstanceEnvironment(*split_own_wheels(wheels, start, dated))


def _recipe_environment(
    spec: SweSpec,
    start: dict[str, str],
    dated: DependencyDate,
    base_image: str,
    with_pytest: bool,
    committed_at: str | None = None,
    conda: tuple[EnvironmentFile | None, frozenset[str]] | None = None,
    scm: ScmVersion | None = None,
) -> InstanceEnvironment:
    """The spec as the image build's steps, at the version's dependency date (never
    before the checkout's commit nor the image Python's release), on the offline base
    closest to the spec's Python; the verifier's pytest last (not for a repository
    tested by its own runner)."""
    try:
        chosen = choose_offline_base(spec.python, base_image)
    except PythonUnavailable as exc:
        why = f"{spec.source} {spec.repo} {spec.version}: {exc}"
        raise Reject(PYTHON_UNAVAILABLE, why) from exc
    image_python = chosen.python if chosen else IMAGE_PYTHON
    pinned = verifier_pytest(chosen.tag if chosen else base_image)
    # on another suite's base all the pins: bookworm's base has Debian's pluggy and py
    # beside its pytest, bullseye's older ones (`verifier_pytest`)
    pins = pinned.pins if chosen and chosen.tag != base_image else pinned.pytest
    verifier = (pins, pinned.released) if with_pytest else None
    base = chosen or offline_base_of(base_image)  # a base the user chose stays whole
    try:
        recipe = recipe_lines(
            spec, start, dated.date, image_python, verifier, committed_at, conda, scm,
            remove=base.not_in_spec_environments if base else (),
        )  # fmt: skip
    except SpecUnsupported as exc:
        raise Reject("instance.spec-unsupported", f"{spec.source}: {exc}") from exc
    listing = dated.line() + recipe.provenance
    moved = chosen.tag if chosen and chosen.tag != base_image else None
    return InstanceEnvironment(
        {PROVENANCE: listing.encode()}, {}, recipe, spec, moved, image_python
    )


def _conda_input(
    spec: SweSpec, ctx: SessionContext, instance: Any, start: dict[str, str]
) -> tuple[EnvironmentFile | None, frozenset[str]] | None:
    """For `packages: environment.yml`: the file at SWE-bench's paths, read at the
    instance's `environment_setup_commit` as SWE-bench reads it (else the checkout's),
    and the names it must install: what the checkout declares it needs at run time and
    what the spec's `pip_packages` pin (`swe_conda`)."""
    if spec.packages != "environment.yml":
        return None
    setup_commit = getattr(instance, "environment_setup_commit", None)
    setup: dict[str, str] = {}
    if setup_commit and ctx.files_at_commit:
        setup = ctx.files_at_commit(setup_commit, spec.environment_paths or ("environment.yml",))
    env = environment_file(spec.environment_paths, setup, setup_commit, start)
    names = [Requirement(r).name for r in declared_runtime_requirements(start)]
    for pin in spec.pip_packages:
        try:
            names.append(Requirement(pin).name)
        except InvalidRequirement:
            continue
    return env, frozenset(canonical_name(n) for n in names)


def split_own_wheels(
    wheels: dict[str, bytes], start: dict[str, str], dated: DependencyDate
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(dependency wheels with `wheels.txt`, the checkout's own wheel). The dependencies
    are never the checkout's project (`_skip`), so a wheel of it is the editable
    metadata one: it differs per checkout and goes into a later layer, leaving the
    dependency layer to every task of the version that declares the same requirements.
    `wheels.txt` records the dependency date and why it is that date."""
    own_name = project_name("", start)
    own = canonical_name(own_name) if own_name else None
    mine = {
        name: data
        for name, data in wheels.items()
        if name.endswith(".whl") and own and canonical_name(name.split("-")[0]) == own
    }
    shared = {name: data for name, data in wheels.items() if name not in mine}
    if shared:
        listing = shared.get(PROVENANCE, b"")
        shared[PROVENANCE] = dated.line().encode() + listing
    return shared, mine


def _skip(start: dict[str, str]) -> frozenset[str]:
    """Never wheels: the verifier's own pytest family (two pytest versions would be laid
    over each other) and the checkout's own project (it is on the path from /workspace;
    a wheel of it would shadow the agent's edits)."""
    own = project_name("", start)
    return VERIFIER_OWN | ({canonical_name(own)} if own else frozenset())


def _requirements(replay: Replay, start: dict[str, str]) -> list[str]:
    """What the image needs: the packages the run installed, at the versions pip
    reported (astropy runs install numpy, pyerfa...), then what the checkout declares
    (its runtime requirements, as SWE-bench's `pip install -e .` installs them, and its
    test extras); `fetch_wheels` takes a declared name the run pinned at the pin, and
    at the declared range when the pin has no wheel here."""
    skip = _skip(start)
    pins = [pin for pin in session_installs(replay.session).pins if pin.split("==")[0] not in skip]
    declared = [
        line
        for line in [*declared_runtime_requirements(start), *declared_test_requirements(start)]
        if canonical_name(Requirement(line).name) not in skip
    ]
    return [*pins, *dict.fromkeys(declared)]
