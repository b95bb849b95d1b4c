"""A spec's conda `environment.yml` (xarray, matplotlib 3.5+) as pip requirements.

SWE-bench builds these environments with conda (`conda env create` / `conda env
update -f environment.yml`, read at the instance's `environment_setup_commit`). No
conda or conda channel is reachable here; PyPI is. So the recipe installs the closest
pip can give, inside the image build, and records what it left out:

- **conda-only entries** (`CONDA_ONLY`: the interpreter, pip itself, compilers, C
  libraries and tools conda packages for itself, such as hdf5, libnetcdf, geos, proj,
  graphviz, gtk) are not asked of pip, and are listed in `wheels.txt`;
- **renamed packages** (`CONDA_TO_PYPI`) take their PyPI name;
- the `pip:` sub-list is taken as it stands (it is already pip's);
- **version specs** are conda's MatchSpec turned into PEP 440: `=1.2` is `==1.2.*`,
  `1.2.*` or `1.2` after a space is `==1.2.*` / `==1.2`, a build string is dropped.
- entries the checkout itself needs (its declared runtime requirements, and the names
  the spec's `pip_packages` pin) are **required**: one pip step, which fails the build
  with pip's reason. The rest are **optional**: each is tried on its own, with the
  required set held at what was installed (a constraints file), and one that pip cannot
  install is written to `NOT_INSTALLED` in the image, which the verifier prints. So a
  package without a wheel for the image's Python, or whose sdist needs a C library the
  image lacks, costs the tests that import it (the oracle decides), never the build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict

from schemas import BundleFile

NOT_INSTALLED = "/etc/rlenv/not-installed.txt"
"""What the optional step could not install (or uninstalled); the verifier of a task
whose image has this step prints it, so a test that fails on a missing optional
package says why in its log."""

CONDA_ONLY = frozenset(
    {
        *("python", "pip", "nodefaults"),
        *("compilers", "c-compiler", "cxx-compiler", "fortran-compiler", "gcc", "gxx"),
        *("make", "pkg-config", "libblas", "liblapack", "openblas", "mkl"),
        *("hdf5", "libnetcdf", "netcdf-fortran", "geos", "proj", "libgdal"),
        *("graphviz", "gtk3", "gtk4", "tk", "cairo", "freetype", "qhull", "libpng"),
        *("ffmpeg", "imagemagick", "ghostscript-bin", "nodejs", "zlib"),
    }
)
"""conda packages that are not Python distributions (or are conda's own): a C library,
a compiler, a program. pip has nothing to install for them (conda's `graphviz` is the
C toolkit; its Python binding is `python-graphviz`). The image has Debian's compilers
and whatever the spec's `pre_install` apt-gets."""
CONDA_TO_PYPI = {
    "matplotlib-base": "matplotlib",
    "dask-core": "dask",
    "pytables": "tables",
    "pyqt": "PyQt5",
    "python-graphviz": "graphviz",
    "iris": "scitools-iris",
}
"""conda-forge names that differ from the PyPI distribution of the same project (not
by case or `_`/`-`, which PEP 503 names ignore): `matplotlib-base` is matplotlib
without conda's Qt, `dask-core` is dask without its extras, conda-forge's `iris` is
PyPI's `scitools-iris`, `pyqt` (5.x on conda-forge) is `PyQt5`."""
CORE = "conda-required.txt"
OPTIONAL = "conda-optional.txt"
SCRIPT = "conda-optional.sh"
IMPORTS = "conda-imports.py"
IMPORT_CHECK = (Path(__file__).parent / "conda_imports.py").read_text()
"""Run after an optional entry installed (`conda_imports`: a distribution's top-level
modules and their public submodules, a merely missing module kept): one that does not
import on the image's Python is uninstalled and listed; absent, it is what the tests
expect when it is missing (pydap 3.2.2's `pydap.client` stopped every xarray test)."""
MATCH = re.compile(r"(?:[\w.-]+::)?([A-Za-z0-9][A-Za-z0-9_.-]*)\s*(\[[^\]]*\])?\s*(.*)")
"""A conda MatchSpec: an optional `channel::`, the name, pip-style extras (matplotlib
writes `nbconvert[execute]`), the version part."""


class CondaError(ValueError):
    """The environment file is not one conda could read."""


class CondaRequirements(BaseModel):
    """The environment file as pip requirements, and what was left out and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    required: tuple[str, ...]
    optional: tuple[str, ...]
    left_out: tuple[str, ...]
    """`<entry>: <why>` lines for `wheels.txt`."""


def conda_version(spec: str) -> str:
    """conda's version part as a PEP 440 specifier: `=1.2` -> `==1.2.*`, `1.2.*` ->
    `==1.2.*`, `1.2` -> `==1.2`, `>=1,<2` kept, `=1.2=py_0` (a build) -> `==1.2.*`."""
    spec = spec.strip()
    if not spec:
        return ""
    if " " in spec:  # `1.2.* py39_0`: a version, then a build string
        spec = spec.split()[0]
    if spec.startswith("=") and not spec.startswith("=="):
        version = spec[1:].split("=")[0]
        return f"=={version}" if version.endswith("*") else f"=={version}.*"
    if spec.startswith("==") and spec.count("=") > 2:  # `==1.2=build`
        return "==" + spec[2:].split("=")[0]
    if spec[0].isdigit():
        return f"=={spec}"
    return spec


def conda_requirement(entry: str) -> tuple[str | None, str]:
    """(the pip requirement, '') of a conda dependency, or (None, why it is left out)."""
    match = MATCH.fullmatch(entry.strip())
    if not match:
        return None, "not a conda package spec"
    name, extras, version = match.group(1), match.group(2) or "", match.group(3)
    key = canonicalize_name(name)
    if key in CONDA_ONLY:
        return None, "conda-only (not a Python distribution)"
    pypi = next((v for k, v in CONDA_TO_PYPI.items() if canonicalize_name(k) == key), name)
    line = f"{pypi}{extras}{conda_version(version)}"
    try:
        Requirement(line)
    except InvalidRequirement:
        return None, f"version spec {version!r} has no PEP 440 form"
    return line, ""


def pip_entry(entry: str) -> tuple[str | None, str]:
    """A `pip:` sub-list entry, taken as pip reads it; an option, URL or path is left out
    (no file of the checkout is installed from this list)."""
    try:
        Requirement(entry)
    except InvalidRequirement:
        return None, "not a requirement (an option, URL or path)"
    return entry.strip(), ""


def conda_requirements(text: str, required_names: frozenset[str]) -> CondaRequirements:
    """The file's dependencies as pip requirements: those whose name is in
    `required_names` (canonical) first, then the rest; conda-only and unreadable entries
    listed with the reason. Raises `CondaError` when the YAML is not an environment."""
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CondaError(f"environment file is not YAML: {str(exc)[:200]}") from exc
    deps = data.get("dependencies") if isinstance(data, dict) else None
    if not isinstance(deps, list):
        raise CondaError("environment file has no dependencies list")
    found: list[tuple[str | None, str, str]] = []
    for dep in deps:
        if isinstance(dep, dict) and list(dep) == ["pip"] and isinstance(dep["pip"], list):
            found += [(*pip_entry(str(e)), f"pip: {e}") for e in dep["pip"]]
        elif isinstance(dep, (str, int, float)):
            found.append((*conda_requirement(str(dep)), str(dep)))
        else:
            found.append((None, "not a package entry", str(dep)[:80]))
    required: list[str] = []
    optional: list[str] = []
    left_out: list[str] = []
    for line, why, entry in found:
        if line is None:
            left_out.append(f"{entry}: {why}")
        elif canonicalize_name(Requirement(line).name) in required_names:
            required.append(line)
        else:
            optional.append(line)
    return CondaRequirements(
        required=tuple(dict.fromkeys(required)),
        optional=tuple(dict.fromkeys(optional)),
        left_out=tuple(left_out),
    )


def optional_script(target: str) -> str:
    """The build step of the optional entries: each on its own, with everything already
    installed held at its version (`pip list --format=freeze` as constraints: an
    optional package may not move numpy). A failure is a line of `NOT_INSTALLED`: the
    entry, pip's first error line (`ERROR: No matching distribution found for cdms2`;
    pip 26 ends a failed sdist build with a box `╰─> cartopy` that names only the
    package) and the log it leaves beside the list (`<n>.log`), whose build output
    says why. The step itself never fails: the list is the record."""
    logs = NOT_INSTALLED.rsplit("/", 1)[0] + "/not-installed"
    return "\n".join(
        [
            "#!/bin/bash",
            "# conda environment file: optional entries, each best-effort (rlenv recipe)",
            "set -uo pipefail",
            f"mkdir -p {logs}",
            f": > {NOT_INSTALLED}",
            "python3 -m pip list --format=freeze"
            " | grep -E '^[A-Za-z0-9._-]+==[0-9][A-Za-z0-9.+!_-]*$' > /tmp/rlenv-held.txt",
            "n=0",
            "while IFS= read -r req; do",
            '  [ -n "$req" ] || continue',
            "  n=$((n + 1))",
            f'  if ! python3 -m pip install -c /tmp/rlenv-held.txt "$req" > {logs}/$n.log 2>&1;'
            " then",
            f'    why=$(grep -E "^(ERROR|error): " {logs}/$n.log | head -n 1)',
            f'    [ -n "$why" ] || why=$(grep -v "^\\s*$" {logs}/$n.log | tail -n 1)',
            f'    echo "$req: $why (log: {logs}/$n.log)" >> {NOT_INSTALLED}',
            f'  elif ! timeout 300 python3 {target}/{IMPORTS} "$req" > {logs}/$n.log 2>&1; then',
            f"    why=$(tail -n 1 {logs}/$n.log)",
            '    python3 -m pip uninstall -y "${req%%[<>=!~;[ ]*}" >> ' + f"{logs}/$n.log 2>&1",
            f'    echo "$req: installed, but does not import here (uninstalled): $why'
            f' (log: {logs}/$n.log)" >> {NOT_INSTALLED}',
            "  else",
            f"    rm -f {logs}/$n.log",
            "  fi",
            f"done < {target}/{OPTIONAL}",
            "rm -f /tmp/rlenv-held.txt",
            f'echo "rlenv recipe: $(wc -l < {NOT_INSTALLED}) optional entries not installed"',
            f"cat {NOT_INSTALLED}",
            "",
        ]
    )


class EnvironmentFile(BaseModel):
    """The environment file the recipe reads, and from which commit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    text: str
    commit: str
    """`the instance's environment_setup_commit 1c198a19` or `the checkout`."""


def environment_file(
    paths: tuple[str, ...], setup: dict[str, str], setup_commit: str | None, start: dict[str, str]
) -> EnvironmentFile | None:
    """The first of `paths` (SWE-bench's, in its order) at the instance's
    `environment_setup_commit` (where SWE-bench reads it; `setup` holds those files), else
    in the checkout; None when neither has one."""
    for files, commit in (
        (setup, f"environment_setup_commit {(setup_commit or '')[:12]}"),
        (start, "the checkout"),
    ):
        path = next((p for p in paths or ("environment.yml",) if p in files), None)
        if path is not None:
            return EnvironmentFile(path=path, text=files[path], commit=commit)
    return None


def conda_steps(
    env: EnvironmentFile | None, required_names: frozenset[str], target: str
) -> tuple[list[str], dict[str, bytes], str]:
    """(Dockerfile lines, files for environment/recipe/, `wheels.txt` lines) of the
    environment file: the required entries in one pip step (a failure fails the build),
    the optional ones by `optional_script`. Raises `CondaError` (no file, not YAML)."""
    if env is None:
        raise CondaError("no conda environment file at SWE-bench's paths")
    found = conda_requirements(env.text, required_names)
    files: dict[str, bytes] = {
        SCRIPT: optional_script(target).encode(),
        IMPORTS: IMPORT_CHECK.encode(),
    }
    lines: list[str] = []
    if found.required:
        files[CORE] = "".join(f"{r}\n" for r in found.required).encode()
        lines.append(f"RUN python3 -m pip install -r {target}/{CORE}")
    files[OPTIONAL] = "".join(f"{r}\n" for r in found.optional).encode()
    lines.append(f"RUN bash {target}/{SCRIPT}")
    note = f"conda environment: {env.path} at {env.commit} (no conda: pip, the closest)\n"
    note += "".join(f"conda required: {r}\n" for r in found.required)
    note += "".join(
        f"conda optional (best-effort, see {NOT_INSTALLED}): {r}\n" for r in found.optional
    )
    note += "".join(f"conda left out: {r}\n" for r in found.left_out)
    return lines, files, note


LIST_LINES = (
    f"if [ -s {NOT_INSTALLED} ]; then\n"
    '  echo "rlenv: packages of the environment file the image build could not install:"\n'
    f"  cat {NOT_INSTALLED}\n"
    "fi\n"
)
"""The verifier's lines that print the optional step's list, before the tests run."""
REWARD_LINE = "echo 0 > /logs/verifier/reward.txt\n"


def verifier_prints_list(
    tests: list[BundleFile], recipe_files: dict[str, bytes]
) -> list[BundleFile]:
    """`tests` with `tests/test.sh` printing `NOT_INSTALLED` after its reward line, when
    the image has optional conda entries (a non-empty `OPTIONAL` in the recipe); every
    other task keeps its `test.sh` bytes (a verifier's bytes are part of its hash)."""
    if not recipe_files.get(OPTIONAL, b"").strip():
        return tests
    out: list[BundleFile] = []
    for file in tests:
        text = file.content.decode(errors="replace")
        if file.path == "tests/test.sh" and REWARD_LINE in text:
            text = text.replace(REWARD_LINE, REWARD_LINE + LIST_LINES, 1)
            file = file.model_copy(update={"content": text.encode()})
        out.append(file)
    return out
