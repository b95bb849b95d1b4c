"""A spec's exact pins that no wheel serves and no sdist builds for the image's Python.

SWE-bench installs a spec's pins from conda, on the spec's own Python; the recipe has
Debian's Python of the nearest offline base (`swe_recipe`). A pin released before that
Python has no wheel for it, and pip builds its sdist in the image: that works for small
packages (MarkupSafe 2.1.1 on 3.11) and is the rule, but not for numpy 1.19.2 on 3.9
(scikit-learn 0.20-1.3's specs; its build environment takes the Cython of the step's
date, and cythonizing stops: measured on scikit-learn-14141) nor scipy 1.5.2 (Fortran
and BLAS, about half an hour on two cores).

The rule (**series wheel**): the spec's step runs first exactly as written. Only if it
fails, each exact pin `name==X.Y[.Z...]` for which pip finds no wheel for the image's
Python at the step's date (`pip install --dry-run --only-binary=:all: --no-deps`) is
replaced by `name>=X.Y.Z,==X.Y.*`, installed from a wheel only: the newest release of
the same major.minor series at the step's date (`PIP_UPLOADED_PRIOR_TO`), which is no
older than the pin (numpy 1.19.2 -> 1.19.5, scipy 1.5.2 -> 1.5.4). Pins that have a
wheel, and names without a pin, are kept; if no such release exists the step fails as
before. Everything runs inside the image build (a script of the build context, all of
its words written here from the trusted spec, each quoted); the host never asks the
index. The candidates are listed in `wheels.txt` when mining; what the build replaced
is printed in its log and kept in the image (`/tmp/rlenv-recipe/substituted.txt`).
Why the newest of the series and not the nearest: pip has no "oldest matching"
resolution, and the date makes the newest deterministic; a patch release of a series
keeps its API.
"""

from __future__ import annotations

import shlex

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict

SUBSTITUTED = "substituted.txt"
"""Under the recipe's folder in the image: one line per pin the build replaced."""


class SeriesPin(BaseModel):
    """One exact pin of a step and the series requirement that may replace it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    pin: str
    name: str
    series: str


class PinnedStep(BaseModel):
    """A pip step of the spec: its `RUN` line, the fallback script (if any exact pin
    could be replaced) and the provenance lines."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run: str
    script_name: str | None
    script: str | None
    note: str


def series_pin(index: int, word: str) -> SeriesPin | None:
    """`word` as a replaceable exact pin (`numpy==1.19.2`), or None: a requirement that
    is not one exact release of two or more components (no extras, markers, pre- or
    dev-releases, wildcards) is kept as the spec writes it."""
    try:
        req = Requirement(word)
    except InvalidRequirement:
        return None
    specs = list(req.specifier)
    if req.extras or req.marker or req.url or len(specs) != 1 or specs[0].operator != "==":
        return None
    try:
        version = Version(specs[0].version)
    except InvalidVersion:
        return None
    if len(version.release) < 2 or version.is_prerelease or version.local:
        return None
    major, minor = version.release[:2]
    return SeriesPin(
        index=index, pin=word, name=req.name, series=f"{req.name}>={version},=={major}.{minor}.*"
    )


def pinned_step(install: str, words: list[str], label: str, target: str) -> PinnedStep:
    """The spec's pip step `words` (`label`: packages, pip_packages) with the series-wheel
    fallback (module docstring): `RUN <the spec's step> || bash <script>`. A step without
    a replaceable pin is the spec's line alone."""
    line = f"{install} {' '.join(shlex.quote(w) for w in words)}"
    pins = [p for i, w in enumerate(words) if (p := series_pin(i, w))]
    if not pins:
        return PinnedStep(run=f"RUN {line}", script_name=None, script=None, note="")
    name = f"pins-{label}.sh"
    note = "".join(
        f"{label} fallback: {p.pin} -> {p.series} (a wheel only), if the step fails and "
        f"{p.pin} has no wheel for the image's python\n"
        for p in pins
    )
    return PinnedStep(
        run=f"RUN {line} || bash {target}/{name}",
        script_name=name,
        script=_script(install, words, pins, label, target),
        note=note,
    )


def _script(install: str, words: list[str], pins: list[SeriesPin], label: str, target: str) -> str:
    """The fallback: each replaceable pin checked for a wheel, the ones without replaced,
    the step run again with them (wheels only for those names)."""
    q = shlex.quote
    lines = [
        "#!/bin/bash",
        f"# the spec's {label} failed: exact pins with no wheel for this python are replaced",
        "# by the newest release of their major.minor series that has one (swe_pins)",
        "set -euo pipefail",
        f"args=({' '.join(q(w) for w in words)})",
        "only=()",
        "wheel() { python3 -m pip install --dry-run --quiet --ignore-installed --no-deps "
        '--only-binary=:all: "$1" >/dev/null 2>&1; }',
    ]
    for p in pins:
        said = q(f"rlenv recipe: {label}: {p.pin} -> {p.series} (no wheel for this python)")
        lines.append(
            f"if ! wheel {q(p.pin)}; then args[{p.index}]={q(p.series)}; "
            f"only+=(--only-binary={q(p.name)}); "
            f"echo {said} | tee -a {target}/{SUBSTITUTED}; fi"
        )
    lines.append(f'{install} "${{only[@]}}" "${{args[@]}}"')
    return "\n".join(lines) + "\n"
