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

What of a spec goes into a task: names and pins (downloaded as wheels on the host, as
all dependencies are) and the shape of the `install`. Its shell strings are never put
into a Dockerfile: the `install` is recognised (`python -m pip install [-v]
[--no-use-pep517] [--no-build-isolation] -e .[extras]`) and realised offline
(`editable_wheel`); any other `install`, any `pre_install` (apt-get, sed over the
checkout), or an `environment.yml` refuses the task as `instance.spec-unsupported`.
"""

from __future__ import annotations

import ast
import configparser
import functools
import io
import runpy
import shlex
import tomllib
import zipfile
from importlib import metadata
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict

from repo2rlenv.kinds.declared_requirements import holding_requirements, setup_py_literals
from repo2rlenv.kinds.requirement_files import (
    RequirementFiles,
    provenance_lines,
    read_requirements_file,
)

DISTRIBUTION = "swebench"
DATA_MODULES = ("swebench/harness/constants/python.py", "swebench/harness/constants.py")
"""3.x/4.x keep the Python specs in a subpackage; 2.x in one module."""
INSTALL_FLAGS = frozenset({"-v", "--no-use-pep517", "--no-build-isolation"})
"""Flags of a spec's `install` that change nothing for an offline editable install."""
WHEEL_DATE = (1980, 1, 1, 0, 0, 0)
"""Zip member timestamp of the editable wheel: reruns give the same bytes."""


class SpecUnsupported(Exception):
    """The spec asks for something the task image cannot do offline and safely."""


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
    install: str | None = None
    pre_install: tuple[str, ...] = ()
    requirement_paths: tuple[str, ...] = ()
    """The checkout's requirements files for `packages: requirements.txt`."""
    test_cmd: str | None = None
    """How SWE-bench runs the instance's tests (`swe_runners` reads it)."""


@functools.cache
def _tables() -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """(source, repo -> version -> spec, repo -> requirements paths), or None when the
    package is not installed or holds no data module we know."""
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
                return f"{DISTRIBUTION} {dist.version}", specs, paths
    return None


def spec_for(repo: str, version: str | None) -> SweSpec | None:
    """The spec of `repo` at the instance's `version`, or None (no package, no entry)."""
    tables = _tables()
    if tables is None or not version:
        return None
    source, specs, paths = tables
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
        test_cmd=entry.get("test_cmd") if isinstance(entry.get("test_cmd"), str) else None,
    )


def install_extras(spec: SweSpec) -> tuple[str, ...]:
    """The extras of the spec's editable install (`-e .[all]` -> ("all",)); raises
    SpecUnsupported for anything but `python -m pip install [flags] -e .[extras]`."""
    if spec.pre_install:
        raise SpecUnsupported(f"pre_install steps: {spec.pre_install[0][:80]}")
    if spec.install is None:
        return ()
    try:
        words = shlex.split(spec.install)
    except ValueError as exc:
        raise SpecUnsupported(f"install: {exc}") from exc
    head = words[:4]
    rest = [w for w in words[4:] if w not in INSTALL_FLAGS]
    if head != ["python", "-m", "pip", "install"] or len(rest) != 2 or rest[0] != "-e":
        raise SpecUnsupported(f"install: {spec.install[:80]}")
    target = rest[1]
    if target == ".":
        return ()
    if target.startswith(".[") and target.endswith("]"):
        return tuple(e.strip() for e in target[2:-1].split(",") if e.strip())
    raise SpecUnsupported(f"install: {spec.install[:80]}")


def spec_requirements(spec: SweSpec, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """(pinned, named): the spec's `pip_packages` pins (`name==version`), and the names
    of `packages` and unpinned `pip_packages`. `packages` is either `requirements.txt`
    (the checkout's files of `requirement_paths`, `-r` lines followed inside the
    checkout) or names (SWE-bench installs them with conda; the names are pip's too)."""
    pinned: list[str] = []
    named: list[str] = []
    for line in spec.pip_packages:
        (pinned if _is_pin(line) else named).append(line)
    if spec.packages == "requirements.txt":
        named += spec_requirement_file(spec, files).requirements
    elif spec.packages == "environment.yml":
        raise SpecUnsupported("packages from a conda environment.yml")
    elif spec.packages:
        named += shlex.split(spec.packages)
    return holding_requirements(pinned), holding_requirements(named)


def spec_requirement_file(spec: SweSpec, files: dict[str, str]) -> RequirementFiles:
    """The checkout's requirements file a spec's `packages: requirements.txt` means (the
    first of `requirement_paths` the checkout has), read by the one requirements reader:
    `-r` inside the checkout only; `-e`, URLs, paths and options are left out with a
    reason (`provenance` lists them)."""
    path = next((p for p in spec.requirement_paths if p in files), None)
    if path is None:
        raise SpecUnsupported(f"none of {list(spec.requirement_paths)} in the checkout")
    return read_requirements_file(files, path)


def _is_pin(line: str) -> bool:
    try:
        specifier = list(Requirement(line).specifier)
    except InvalidRequirement:
        return False
    return len(specifier) == 1 and specifier[0].operator == "=="


def _setup_cfg(files: dict[str, str]) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(files.get("setup.cfg", ""))
    except configparser.Error:
        return configparser.ConfigParser(interpolation=None)
    return parser


def entry_points(files: dict[str, str]) -> dict[str, dict[str, str]]:
    """group -> name -> object reference, as the checkout declares them (read, never
    run): `[project.scripts]` / `[project.entry-points]` of pyproject.toml,
    `[options.entry_points]` of setup.cfg, a literal `entry_points=` of setup.py.
    sqlfluff registers its own rules as a plugin this way: without them its tests find
    no default configuration."""
    groups: dict[str, dict[str, str]] = {}

    def add(group: str, lines: Any) -> None:
        items = lines.items() if isinstance(lines, dict) else None
        if items is None:
            text = lines.splitlines() if isinstance(lines, str) else lines
            items = (str(x).split("=", 1) for x in text if "=" in str(x))
        for name, value in items:
            groups.setdefault(str(group).strip(), {})[str(name).strip()] = str(value).strip()

    try:
        project = tomllib.loads(files.get("pyproject.toml", "")).get("project", {})
    except tomllib.TOMLDecodeError:
        project = {}
    for key, group in (("scripts", "console_scripts"), ("gui-scripts", "gui_scripts")):
        if isinstance(project.get(key), dict):
            add(group, project[key])
    for group, table in (project.get("entry-points") or {}).items():
        if isinstance(table, dict):
            add(group, table)
    parser = _setup_cfg(files)
    if parser.has_section("options.entry_points"):
        for group, value in parser.items("options.entry_points"):
            add(group, value)
    for literal in setup_py_literals(files.get("setup.py", ""), "entry_points", ast.Dict):
        for group, value in literal.items():
            add(group, value)
        break
    return {g: dict(sorted(v.items())) for g, v in sorted(groups.items()) if v}


def project_version(files: dict[str, str], fallback: str | None) -> str:
    """The checkout's version if it is written as a literal (pyproject `[project]
    version`, setup.cfg `[metadata] version`, setup.py `version=`), else the instance's
    version (`0.6`), else `0`: only importlib.metadata reads it."""
    try:
        found = tomllib.loads(files.get("pyproject.toml", "")).get("project", {}).get("version")
    except tomllib.TOMLDecodeError:
        found = None
    candidates = [
        found,
        _setup_cfg(files).get("metadata", "version", fallback=None),
        next(setup_py_literals(files.get("setup.py", ""), "version", ast.Constant), None),
        fallback,
    ]
    for value in candidates:
        try:
            return str(Version(str(value)))
        except InvalidVersion:
            continue
    return "0"


def editable_wheel(name: str, version: str, points: dict[str, dict[str, str]]) -> tuple[str, bytes]:
    """(file name, bytes) of a wheel that holds only the distribution metadata of the
    checkout: what `pip install -e .` leaves besides the path entry (`installs` writes
    that `.pth`). With it, `importlib.metadata` finds the project and its entry points
    (plugins, console scripts) in the image. Its requirements are installed as their
    own wheels. Written here, not built by running the checkout's setup.py."""
    dist = f"{canonicalize_name(name).replace('-', '_')}-{version}"
    info = f"{dist}.dist-info"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    for group, items in points.items():
        parser[group] = items
    text = io.StringIO()
    parser.write(text)
    members = {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: rlenv-harvest\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/INSTALLER": "rlenv-harvest\n",
        f"{info}/entry_points.txt": text.getvalue(),
    }
    members[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in [*members, f"{info}/RECORD"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in members.items():
            archive.writestr(zipfile.ZipInfo(path, WHEEL_DATE), content)
    return f"{dist}-py3-none-any.whl", buffer.getvalue()


def provenance(spec: SweSpec, image_python: str, files: dict[str, str] | None = None) -> str:
    """The `wheels.txt` lines that say which spec built the environment, and, with the
    checkout's `files`, the requirements file it read and every line left out."""
    line = f"swebench-spec: {spec.source} {spec.repo} {spec.version}"
    if spec.python and spec.python != image_python:
        line += f" (spec python {spec.python}; image python {image_python})"
    listing = line + "\n"
    if files is not None and spec.packages == "requirements.txt":
        listing += provenance_lines(spec_requirement_file(spec, files))
    return listing
