"""The packages of an instance repair's task image, carried as wheels.

Either the environment the instance's SWE-bench spec describes (its pins, its packages,
what its `pip install -e .[extras]` brings), or, without a spec, the packages the run
installed at the versions pip reported plus what the checkout declares. Either way the
checkout's own project is never a dependency wheel (it is on the path from /workspace);
its metadata-only wheel goes into a later layer so tasks of one version share the
dependency layer. Apart from `instance_repair` because choosing and fetching the
environment is its own job, and the largest part of the kind.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from packaging.requirements import Requirement

from repo2rlenv.kinds.common import Reject, SessionContext
from repo2rlenv.kinds.declared_requirements import (
    declared_extra_requirements,
    declared_runtime_requirements,
    declared_test_requirements,
)
from repo2rlenv.kinds.installs import canonical_name, project_name, session_installs
from repo2rlenv.kinds.instance_deps import (
    PROVENANCE,
    DependencyDate,
    DependencyError,
    PinUnmet,
    fetch_wheels,
    resolve_for_python,
)
from repo2rlenv.kinds.requirement_files import fetch_with_test_files
from repo2rlenv.kinds.swe_specs import (
    SpecUnsupported,
    SweSpec,
    editable_wheel,
    entry_points,
    install_extras,
    project_version,
    provenance,
    spec_for,
    spec_requirements,
)
from repo2rlenv.kinds.verifier_pytest import verifier_pytest
from repo2rlenv.replay.replay import Replay
from repo2rlenv.settings import OFFLINE_BASE_IMAGE

VERIFIER_OWN = frozenset({"pytest", "pluggy", "iniconfig", "pygments", "packaging"})
"""pytest and what it brings: the verifier installs its own (`common.PYTEST_INSTALL`)."""
IMAGE_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
"""The wheels are the host's pip's choice, for the host's Python (3.11, as the offline
base image)."""
SPEC_PLUGGY = "pluggy"
"""Installed in a spec's environment, resolved with its pytest plugins (it shadows the
base image's 1.0.0): pytest-cov 6 and 7 use `hookimpl(wrapper=True)` (pluggy 1.2), and
without it every sqlfluff task failed the oracle before a test ran."""
SETUPTOOLS = "setuptools<82"
"""SWE-bench's environments come with setuptools (conda's), which a spec never names;
projects of their time import `pkg_resources` (sqlfluff 0.6's `__init__`), which
setuptools 82 removed."""


def instance_wheels(
    replay: Replay, ctx: SessionContext, instance: Any, start: dict[str, str], with_pytest: bool
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(dependency wheels, the checkout's own wheel) for the task image, from the
    instance's SWE-bench spec when there is one, else from what the run installed and
    the checkout declares; a dependency that cannot be had is a counted `Reject`."""
    spec = spec_for(instance.repo, instance.version)
    dated = ctx.dependency_date or DependencyDate.of_instance(instance.created_at)
    try:
        if spec is None:
            wheels = fetch_with_test_files(
                fetch_wheels,
                _requirements(replay, start),
                start,
                base_image=ctx.base_image,
                prior_to=dated.date,
                skip=_skip(start),
            )
        else:
            wheels = spec_wheels(
                spec,
                start,
                dated.date,
                instance.version,
                ctx.base_image,
                with_pytest=with_pytest,
            )
    except SpecUnsupported as exc:
        raise Reject("instance.spec-unsupported", f"{spec.source if spec else ''}: {exc}") from exc
    except PinUnmet as exc:
        raise Reject(
            "instance.spec-pin-unavailable",
            f"{spec.source if spec else ''} pins a version with no wheel for Python "
            f"{IMAGE_PYTHON} (the spec's is {spec.python if spec else '?'}): {exc}"[:200],
        ) from exc
    except (DependencyError, OSError, subprocess.SubprocessError) as exc:
        raise Reject("instance.dependency-unavailable", str(exc)[:500]) from exc
    return split_own_wheels(wheels, start, dated)


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


def spec_wheels(
    spec: SweSpec,
    start: dict[str, str],
    prior_to: str | None,
    version: str | None,
    base_image: str = OFFLINE_BASE_IMAGE,
    with_pytest: bool = True,
) -> dict[str, bytes]:
    """The environment a SWE-bench spec describes, as wheels: its `pip_packages` (pins
    kept exactly: PinUnmet when one has no wheel for the image's Python), its `packages`,
    and what its `pip install -e .[extras]` of the checkout brings (runtime
    requirements, the extras, the test extras), plus a metadata-only wheel of the
    checkout itself so its entry points exist (the `.pth` puts its code on the path).
    The run's own pip output is not used: the spec defines the environment the run
    worked in. `wheels.txt` names the spec. Without `with_pytest` (a repository tested
    by its own runner: `swe_runners`) the verifier's pytest neither constrains the
    resolution nor sets a date floor: no pytest runs, and pytest 7.2.1 has no release for
    Django 3.0's Python 3.6."""
    extras = install_extras(spec)
    pinned, named = spec_requirements(spec, start)
    skip = _skip(start) - {SPEC_PLUGGY}
    # the test extras too: a spec's `dev` extra usually holds them, but computed
    # (marshmallow: `EXTRAS_REQUIRE["dev"] = EXTRAS_REQUIRE["tests"] + ...`), which
    # reading literals cannot see
    declared = [
        *declared_runtime_requirements(start),
        *declared_extra_requirements(start, extras),
        *declared_test_requirements(start),
    ]
    names = [
        line
        for line in dict.fromkeys([*pinned, *named, *declared])
        if canonical_name(Requirement(line).name) not in skip
    ]
    if not any(canonical_name(Requirement(line).name) == "setuptools" for line in names):
        names.append(SETUPTOOLS)
    note = provenance(spec, IMAGE_PYTHON, start)
    # a requirements file's tools may be gone from the index (types-pkg_resources)
    # resolved with the verifier's pytest fixed; pluggy is the environment's (see
    # SPEC_PLUGGY), not before the verifier's pytest existed (verifier_pytest.py)
    pinned_pytest = verifier_pytest(base_image)
    verifier = (pinned_pytest.pytest,) if with_pytest else ()
    if with_pytest and prior_to and prior_to[:10] < pinned_pytest.released:
        prior_to = pinned_pytest.released
    tools = frozenset(canonical_name(Requirement(n).name) for n in named) - {
        canonical_name(Requirement(n).name) for n in [*pinned, *declared, *verifier]
    }
    # the versions SWE-bench's environment of the spec's Python gets, installed exactly
    pins, resolved = resolve_for_python(
        [*names, *verifier], spec.python or IMAGE_PYTHON, prior_to, optional=tools
    )
    pins = [p for p in pins if canonical_name(p.split("==")[0]) not in skip]
    wheels = fetch_wheels(pins, prior_to, skip=skip, strict_pins=True, note=note + resolved)
    listing = wheels.pop(PROVENANCE, note.encode()).decode()
    own = project_name("", start)
    if own:
        points = entry_points(start)
        name, data = editable_wheel(own, project_version(start, version), points)
        wheels[name] = data
        groups = ", ".join(points) or "none"
        listing += f"editable: {name} (metadata of the checkout; entry point groups: {groups})\n"
    wheels[PROVENANCE] = listing.encode()
    return wheels


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
