"""A SWE-bench spec (or a row's `install_config`) as Dockerfile steps of the task image.

The spec is trusted: it comes from the pinned `swebench` package or from an instance
table the user chose, never from the mined run. Its `packages`, `pip_packages`,
`pre_install` and `install` are run by the image build, in SWE-bench's order, exactly
as the benchmark runs them (any `install` shape: `pip install -e .`, `pip install .`,
`python setup.py develop`), so an sdist without a wheel for the image's Python is built
there (when the spec's step fails, its exact pins without a wheel fall back to the
newest wheel of their series: `swe_pins`) and a `pre_install` `sed` over the checkout
changes the image's start state as it changes SWE-bench's. Nothing runs on the host.
What the run says never reaches a step: every line here is the project's own text or a
spec field.

Reproducibility: every pip of the build (the spec's own, and the isolated build
environments pip starts for sdists, which inherit the variable) asks the index for
what it offered at the instance's dependency date (`PIP_UPLOADED_PRIOR_TO`, a build
`ARG`, so it does not stay in the task container's environment); pip itself is pinned
to a release that knows the option. Debian packages come from the base image's
release. What cannot be built fails the image build at its own step (the builder's
message names the step and ends with its last line, `run.build-failed` in validate);
a conda `environment.yml` is translated to pip requirements (`swe_conda`: required
entries fail the build, optional ones are best-effort and listed in the image); what
cannot be expressed at all is refused when mining (`SpecUnsupported`).
"""

from __future__ import annotations

import re
import shlex

from pydantic import BaseModel, ConfigDict

from repo2rlenv.kinds.requirement_files import provenance_lines
from repo2rlenv.kinds.scm_version import ScmVersion, pretend_version
from repo2rlenv.kinds.swe_conda import CondaError, EnvironmentFile, conda_steps
from repo2rlenv.kinds.swe_offline import offline_steps
from repo2rlenv.kinds.swe_pins import PinnedStep, pinned_step
from repo2rlenv.kinds.swe_specs import SpecUnsupported, SweSpec, spec_requirement_file

IMAGE_PIP = "pip==26.0.1"
"""The image's pip: the first releases with `--uploaded-prior-to` (26.0); exact, so a
rebuild gets the same installer."""
PIP_OVER_DEBIAN = {"3.13": "--ignore-installed "}
"""How the image's pip goes over Debian's, per image Python: trixie's pip 25.1 has no
RECORD file, so pip cannot uninstall it ("uninstall-no-record-file", measured on the
trixie base); pip 26 is installed beside it in /usr/local, which comes first on the
path. Bullseye's and bookworm's are replaced as before (their lines unchanged)."""
BUILD_PACKAGES = ("python3-pip", "python3-dev", "build-essential")
"""Debian packages every recipe needs: a pip to run the spec with, and a compiler and
Python headers for the sdists of the instance's time that have no wheel for the image's
Python (MarkupSafe 2.1.1 on 3.11)."""
PYTHON_RELEASED = {
    "3.9": "2020-10-06",
    "3.10": "2021-10-05",
    "3.11": "2022-10-25",
    "3.12": "2023-10-03",
    "3.13": "2024-10-08",
}
"""The day after each Python's release: the earliest date the recipe's pip is dated at
for an image of that Python. pip builds a project without `pyproject.toml` in an
isolated environment that sees the same date, and build tools older than the image's
Python do not run on it: at requests 1.1's and 2.0's own date (2013) no setuptools
satisfied pip's `setuptools>=40.8.0`, and at 2019-02-06 setuptools 40.8 stopped on 3.11
(`HTMLParser.unescape`, removed in 3.9)."""
EDITABLE_FLOOR = "2022-08-12"
"""The day after setuptools 64.0.0 (the first with PEP 660's `build_editable`): the
image's pip (26) has no `setup.py develop` fallback, so a spec's `pip install -e .`
of a project built by setuptools needs one at least that new in its isolated build
environment, which pip resolves at the recipe's date. On bookworm's base the Python
floor (3.11, 2022-10-25) is later anyway; on bullseye's (3.9, 2020-10-06) pytest 4.5's
editable install stopped: "missing the 'build_editable' hook"."""
SPEC_RELEASED = {"swebench 4.1.0": "2025-09-12"}
"""The day after the pinned spec package's upload to PyPI (the index's own time): its
`pip_packages` pins name versions newer than many instances (flask 2.3's spec pins
Werkzeug 2.3.7 of 2023-08 and setuptools 70.0.0 of 2024-05 for an instance of 2023-03),
so that step is dated at the spec's release, which no pin of it can postdate, and the
rest of the build at the instance's date again."""
EVAL_PACKAGES = ("locales",)
"""Debian packages a spec's `eval_commands` build steps need: SWE-bench's base image has
`locales` (Django 3.x's steps uncomment `en_US.UTF-8` in `/etc/locale.gen` and run
`locale-gen`); the offline bases have no locale but `C.utf8`."""
EVAL = "eval.sh"
RECIPE_DIR = "recipe"
"""Under environment/: files the recipe installs from (a requirements file read from
the checkout), copied before the workspace so tasks of one version share the layer."""
REQUIREMENTS = "requirements.txt"
SETUP = "setup.sh"
ZIP_EPOCH = 315532800
"""1980-01-01T00:00:00Z, the earliest time a zip entry can carry."""
RECIPE_TARGET = f"/tmp/rlenv-{RECIPE_DIR}"
PIP = "python3 -m pip install"
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+)?(Z|[+-][0-9]{2}:?[0-9]{2})?")
"""A dependency date as it may stand unquoted in an `ARG` line."""


class Recipe(BaseModel):
    """Dockerfile lines of a spec: `shared` before the workspace is copied (the same for
    every task of the spec's repository version, so Docker builds them once), `after`
    once the checkout is in place (`pre_install`, `install`); `files` go under
    environment/recipe/; `provenance` says what was run and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    shared: tuple[str, ...]
    after: tuple[str, ...]
    files: dict[str, bytes]
    provenance: str


def recipe_lines(
    spec: SweSpec,
    start: dict[str, str],
    prior_to: str | None,
    image_python: str,
    verifier_pytest: tuple[str | tuple[str, ...], str] | None = None,
    committed_at: str | None = None,
    conda: tuple[EnvironmentFile | None, frozenset[str]] | None = None,
    scm: ScmVersion | None = None,
    remove: tuple[str, ...] = (),
) -> Recipe:
    """The Dockerfile steps of `spec` for the checkout `start`, pip dated `prior_to`.
    `verifier_pytest` (pin or pins, release day) is installed last, over any pytest the spec
    brings: the verifier's node ids and flags are read by that version. Its step alone
    is dated no earlier than its release (pip could not find it before); the spec's
    environment keeps the instance's date. The date is never before `committed_at` (the
    checkout's commit: its requirements files pin releases up to it) nor the image
    Python's release. `conda` is, for `packages: environment.yml`, the environment file
    read (or None) and the names it must install (`swe_conda`). `scm`: the checkout's
    `git describe` (`scm_version`), whose version setuptools-scm is given. `remove`:
    Debian packages of the base that the benchmark's environment does not have
    (`offline_bases.NOT_IN_SPEC_ENVIRONMENTS`), removed before the spec's steps."""
    steps = {
        "pre_install": [s.strip() for s in spec.pre_install if s.strip()],
        "install": [s.strip() for s in spec.install_steps() if s.strip()],
    }
    offline = offline_steps(spec.repo, [*steps["pre_install"], *steps["install"]], start)
    files: dict[str, bytes] = {}
    version, version_note = pretend_version(spec.version, scm)
    if steps["pre_install"] or steps["install"]:
        files[SETUP] = setup_script(spec, list(offline.steps), version).encode()
    eval_steps, eval_env = spec.eval_environment()
    if eval_steps:
        files[EVAL] = eval_script(spec, list(eval_steps)).encode()
    packages: list[str] = []
    read = ""
    conda_lines: list[str] = []
    if spec.packages == "environment.yml":
        conda_lines, conda_files, read = _conda(conda)
        files.update(conda_files)
    elif spec.packages == REQUIREMENTS:
        found = spec_requirement_file(spec, start)
        files[REQUIREMENTS] = "".join(f"{line}\n" for line in found.requirements).encode()
        read = provenance_lines(found)
    elif spec.packages:
        packages = shlex.split(spec.packages)
    shared = _project_steps(spec, image_python)
    if remove:  # after the compilers' layer, which stays shared with earlier builds
        shared.append(f"RUN apt-get remove -y --purge {' '.join(map(shlex.quote, remove))}")
    asked = prior_to
    editable = any(_editable(step) for step in steps["install"])
    prior_to, raised = _dependency_date(prior_to, committed_at, image_python, editable)
    if prior_to:
        shared.append(f"ARG PIP_UPLOADED_PRIOR_TO={prior_to}")
    steps_of = _pip_steps(packages, list(spec.pip_packages))
    for step in steps_of.values():
        if step.script_name and step.script:
            files[step.script_name] = step.script.encode()
    # SWE-bench's order: the environment's packages, then its pip_packages
    if files:
        shared.append(f"COPY {RECIPE_DIR}/ {RECIPE_TARGET}/")
    if EVAL in files:  # its own layers: the compilers' layer stays the same for every spec
        shared.append(
            "RUN apt-get update && apt-get install -y --no-install-recommends "
            f"{' '.join(EVAL_PACKAGES)} && rm -rf /var/lib/apt/lists/*"
        )
        shared.append(f"RUN bash {RECIPE_TARGET}/{EVAL}")
    if REQUIREMENTS in files:
        shared.append(f"RUN {PIP} -r {RECIPE_TARGET}/{REQUIREMENTS}")
    shared += conda_lines
    packages_lines, packages_note = _packages(spec, packages, prior_to, steps_of.get("packages"))
    shared += packages_lines
    pins, pins_note = _pip_packages(spec, prior_to, steps_of.get("pip_packages"))
    pins_note = packages_note + pins_note
    shared += pins
    after, steps_note = _setup_step(spec, list(offline.steps), prior_to)
    if verifier_pytest:
        pin, released = verifier_pytest
        if not DATE.fullmatch(released):
            raise SpecUnsupported(f"verifier pytest release {released[:40]!r} is not a date")
        if not prior_to or prior_to[:10] < released:
            after.append(f"ARG PIP_UPLOADED_PRIOR_TO={released}")
        pins = (pin,) if isinstance(pin, str) else pin
        after.append(f"RUN {PIP} {' '.join(shlex.quote(p) for p in pins)}")
    note = f"recipe: {spec.source} {spec.repo} {spec.version}\n"
    if spec.python and spec.python != image_python:
        note += f"python: spec {spec.python}, image {image_python} (the oracle decides)\n"
    if remove:
        note += f"removed from the base (no spec environment has them): {' '.join(remove)}\n"
    note += f"uploaded-prior-to: {prior_to or 'none (the instance has no date)'}"
    if asked != prior_to:
        note += f" (raised from {asked}: {raised})"
    note += "\n" + pins_note + "".join(step.note for step in steps_of.values())
    note += steps_note + "".join(f"{line}\n" for line in offline.replaced)
    note += version_note if files.get(SETUP) else ""
    for name, found_steps in {**steps, "eval (build)": list(eval_steps)}.items():
        note += "".join(f"{name}: {s}\n" for s in found_steps)
    note += "".join(f"eval (test run): {k}={v}\n" for k, v in sorted(eval_env.items()))
    return Recipe(shared=tuple(shared), after=tuple(after), files=files, provenance=note + read)


def _conda(
    conda: tuple[EnvironmentFile | None, frozenset[str]] | None,
) -> tuple[list[str], dict[str, bytes], str]:
    """The steps, files and provenance of a conda environment file (`swe_conda`); one
    that cannot be read is refused (`SpecUnsupported`)."""
    env, required = conda or (None, frozenset())
    try:
        return conda_steps(env, required, RECIPE_TARGET)
    except CondaError as exc:
        raise SpecUnsupported(f"packages from a conda environment.yml: {exc}") from exc


def _project_steps(spec: SweSpec, image_python: str) -> list[str]:
    """The project's own steps before the spec's: build arguments, a check that the
    base has python3, Debian's compilers and headers, and the pip that dates. No line
    depends on the spec beyond the comment, so tasks of every spec on one base share
    these layers (the spec's Python is in `wheels.txt`)."""
    return [
        f"# SWE-bench environment recipe: {spec.source} {spec.repo} {spec.version} "
        "(trusted spec, run by the build)",
        "ARG DEBIAN_FRONTEND=noninteractive",
        "ARG PIP_BREAK_SYSTEM_PACKAGES=1",
        "ARG PIP_NO_CACHE_DIR=1",
        "ARG PIP_DISABLE_PIP_VERSION_CHECK=1",
        # the same text for every spec: a line naming the spec's Python made Docker build
        # the 406 MB of compilers again for each spec Python on one base (measured)
        'RUN command -v python3 >/dev/null || { echo "rlenv recipe: the base image has no '
        'python3"; exit 1; }',
        "RUN apt-get update && apt-get install -y --no-install-recommends "
        f"{' '.join(BUILD_PACKAGES)} && rm -rf /var/lib/apt/lists/*",
        f"RUN {PIP} {PIP_OVER_DEBIAN.get(image_python, '')}{shlex.quote(IMAGE_PIP)}",
    ]


def _editable(step: str) -> bool:
    """An install step that asks pip for an editable install (`pip install -e .`)."""
    try:
        words = shlex.split(step)
    except ValueError:
        return False
    return "pip" in words and (
        "-e" in words
        or "--editable" in words
        or any(w.startswith(("-e.", "--editable=")) for w in words)
    )


def _dependency_date(
    prior_to: str | None, committed_at: str | None, image_python: str, editable: bool = False
) -> tuple[str | None, str]:
    """The date pip resolves at, and why it was raised (empty if not): never before the
    checkout's commit, the image Python's release, nor (an editable install) a
    setuptools with PEP 660 (`EDITABLE_FLOOR`)."""
    if not prior_to:
        return prior_to, ""
    if not DATE.fullmatch(prior_to) or (committed_at and not DATE.fullmatch(committed_at)):
        raise SpecUnsupported(f"dependency date {prior_to[:40]!r} is not an ISO 8601 time")
    raised = ""
    floors = [(committed_at, "the checkout's commit")]
    floors.append((PYTHON_RELEASED.get(image_python), f"no earlier than python {image_python}"))
    if editable:
        floors.append((EDITABLE_FLOOR, "an editable install needs setuptools 64 (PEP 660)"))
    for floor, why in floors:
        if floor and prior_to[:10] < floor[:10]:
            prior_to, raised = floor, why
    return prior_to, raised


def _pip_steps(packages: list[str], pip_packages: list[str]) -> dict[str, PinnedStep]:
    """The spec's two pip steps (those it has), each with the series-wheel fallback of
    its exact pins (`swe_pins`)."""
    found = {"packages": packages, "pip_packages": pip_packages}
    return {
        label: pinned_step(PIP, words, label, RECIPE_TARGET)
        for label, words in found.items()
        if words
    }


def _packages(
    spec: SweSpec, words: list[str], prior_to: str | None, step: PinnedStep | None
) -> tuple[list[str], str]:
    """The spec's `packages` words: at the instance's date, unless they pin a release
    (`name==version`), then at the spec's release like its `pip_packages`: scikit-learn
    1.3's pin `cython==3.0.10` (2024-03) for instances of 2023-05 was found by no pip at
    the instance's date ("No matching distribution", measured on scikit-learn-25232)."""
    if step is None:
        return [], ""
    pins = sorted(w for w in words if STEP_PIN.fullmatch(w))
    if not pins:
        return [step.run], ""
    lines, later = _at_spec_release(spec, prior_to, step.run)
    why = f"the spec's release; they pin {', '.join(pins)}"
    return lines, (f"packages uploaded-prior-to: {later} ({why})\n" if later else "")


def _at_spec_release(spec: SweSpec, prior_to: str | None, run: str) -> tuple[list[str], str]:
    """`run` dated at the spec package's release when that is later than `prior_to`,
    the date put back after it; the date used ("" when none)."""
    released = SPEC_RELEASED.get(spec.source)
    later = released if released and (not prior_to or prior_to[:10] < released) else ""
    lines = [f"ARG PIP_UPLOADED_PRIOR_TO={later}"] if later else []
    lines.append(run)
    if later and prior_to:
        lines.append(f"ARG PIP_UPLOADED_PRIOR_TO={prior_to}")
    return lines, later


def _pip_packages(
    spec: SweSpec, prior_to: str | None, step: PinnedStep | None
) -> tuple[list[str], str]:
    """The spec's `pip_packages` step, dated no earlier than the spec's release (its
    pins are often newer than the instance), and the provenance line saying so."""
    if not spec.pip_packages or step is None:
        return [], ""
    lines, later = _at_spec_release(spec, prior_to, step.run)
    note = f"pip_packages uploaded-prior-to: {later} (the spec's release)\n" if later else ""
    return lines, note


STEP_PIN = re.compile(r"(?<![\w.-])([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)")
"""A `name==version` pin inside a spec's shell step (astropy 4.1-5.2's `pre_install`
rewrites `pyproject.toml`'s build requirement to `setuptools==68.0.0`)."""


def _setup_step(spec: SweSpec, steps: list[str], prior_to: str | None) -> tuple[list[str], str]:
    """The `RUN` of the setup script, and why its date differs from the instance's (empty
    if not). A step that pins a release (`setuptools==68.0.0`, of 2023-06, written by
    astropy's `pre_install` into the build requirements of instances of 2022) is dated,
    like the spec's `pip_packages`, at the spec package's release: asked at the
    instance's date, pip's isolated build environment finds no such version and the
    install stops ("No matching distribution found for setuptools==68.0.0", measured on
    astropy-12907). Steps without a pin keep the instance's date."""
    if not steps:
        return [], ""
    run = [f"RUN bash {RECIPE_TARGET}/{SETUP}"]
    pins = sorted({m.group(0) for step in steps for m in STEP_PIN.finditer(step)})
    released = SPEC_RELEASED.get(spec.source)
    if not pins or not released or (prior_to and prior_to[:10] >= released):
        return run, ""
    lines = [f"ARG PIP_UPLOADED_PRIOR_TO={released}", *run]
    if prior_to:
        lines.append(f"ARG PIP_UPLOADED_PRIOR_TO={prior_to}")
    why = f"the spec's release; they pin {', '.join(pins)}"
    return lines, f"setup steps uploaded-prior-to: {released} ({why})\n"


def setup_script(spec: SweSpec, steps: list[str], version: str) -> str:
    """The spec's `pre_install` and `install` steps as one bash script, run in the
    checkout as SWE-bench runs its repository script: one shell (matplotlib's steps set
    variables that later steps use), `set -euxo pipefail` (the first failing step stops
    the build, and the builder's log shows it as the last traced command), and
    `/testbed`, where SWE-bench keeps the repository and some steps name it, pointing at
    /workspace. Task files carry fixed old mtimes (reruns give the same bytes), which
    a zip cannot hold: wheel builders (flit's, Sphinx 7's) take SOURCE_DATE_EPOCH instead,
    set to the first time a zip can. The checkout has no `.git` (no history reaches the agent), so a
    project versioned by setuptools-scm (pytest, pylint's plugins) is given `version`:
    the one its tags give (`scm_version`), else the spec's, as a PyPI sdist carries one."""
    head = [
        "#!/bin/bash",
        f"# {spec.source} {spec.repo} {spec.version}: pre_install and install (trusted spec)",
        "set -euxo pipefail",
        "[ -e /testbed ] || ln -s /workspace /testbed",
        f'export SETUPTOOLS_SCM_PRETEND_VERSION="${{SETUPTOOLS_SCM_PRETEND_VERSION:-{version}}}"',
        f'export SOURCE_DATE_EPOCH="${{SOURCE_DATE_EPOCH:-{ZIP_EPOCH}}}"',
        "cd /workspace",
    ]
    return "\n".join([*head, *steps]) + "\n"


def eval_script(spec: SweSpec, steps: list[str]) -> str:
    """The spec's `eval_commands` that change the system, as one bash script the build
    runs before the checkout is copied (they do not read it): SWE-bench runs them before
    every test run, and a locale generated once stays generated."""
    head = [
        "#!/bin/bash",
        f"# {spec.source} {spec.repo} {spec.version}: eval_commands (trusted spec)",
        "set -euxo pipefail",
    ]
    return "\n".join([*head, *steps]) + "\n"
