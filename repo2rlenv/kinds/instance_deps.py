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
left out.
"""

from __future__ import annotations

import ast
import configparser
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

TEST_EXTRAS = ("tests", "test", "testing")
OWN = frozenset({"pytest"})
"""Installed by the verifier's own line (`common.PYTEST_INSTALL`)."""
PIP_DOWNLOAD = (
    sys.executable,
    "-m",
    "pip",
    "download",
    "--quiet",
    "--no-deps",
    "--only-binary=:all:",
)
WHEEL_DIR = "wheels"
"""Under environment/, the image's build context."""


class DependencyError(Exception):
    """A declared test dependency has no wheel in the host's package index."""


def _setup_py_extras(source: str) -> dict[str, list[str]]:
    """The first dict literal assigned to `EXTRAS_REQUIRE`/`extras_require` or passed as
    `extras_require=`: read with `ast.literal_eval`, never run."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    for node in ast.walk(tree):
        value = None
        named = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.lower() == "extras_require" for t in node.targets
        )
        if named or (isinstance(node, ast.keyword) and node.arg == "extras_require"):
            value = node.value
        if isinstance(value, ast.Dict):
            try:
                extras = ast.literal_eval(value)
            except ValueError:
                continue
            return {str(k): [str(r) for r in v] for k, v in extras.items()}
    return {}


def _setup_cfg_extras(source: str) -> dict[str, list[str]]:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(source)
    except configparser.Error:
        return {}
    if not parser.has_section("options.extras_require"):
        return {}
    return {
        key: [line.strip() for line in value.splitlines() if line.strip()]
        for key, value in parser.items("options.extras_require")
    }


def _pyproject_extras(source: str) -> dict[str, list[str]]:
    try:
        extras = tomllib.loads(source).get("project", {}).get("optional-dependencies", {})
    except tomllib.TOMLDecodeError:
        return {}
    return {str(k): [str(r) for r in v] for k, v in extras.items() if isinstance(v, list)}


def declared_test_requirements(files: dict[str, str]) -> list[str]:
    """The requirement names the checkout declares for its tests, in declared order,
    without pytest; markers that do not hold on the host are dropped."""
    extras: dict[str, list[str]] = {}
    for path, reader in (
        ("pyproject.toml", _pyproject_extras),
        ("setup.cfg", _setup_cfg_extras),
        ("setup.py", _setup_py_extras),
    ):
        if path in files:
            for key, value in reader(files[path]).items():
                extras.setdefault(key, value)
    names: dict[str, None] = {}
    for key in TEST_EXTRAS:
        for line in extras.get(key, []):
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            if requirement.marker is not None and not requirement.marker.evaluate():
                continue
            if requirement.name.lower() not in OWN:
                names[requirement.name] = None
    return list(names)


def fetch_wheels(names: list[str]) -> dict[str, bytes]:
    """Wheel file name -> bytes for each name (no dependencies of theirs: the declared
    test extras of a project are what its tests import), from the host's index."""
    if not names:
        return {}
    with tempfile.TemporaryDirectory(prefix="rlenv-wheels-") as folder:
        done = subprocess.run(
            [*PIP_DOWNLOAD, "--dest", folder, "--", *names],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise DependencyError(done.stderr.strip().splitlines()[-1:][0][:200])
        return {p.name: p.read_bytes() for p in sorted(Path(folder).glob("*.whl"))}


def dockerfile_lines(wheels: list[str]) -> list[str]:
    """Unpack the wheels into site-packages: a wheel is a zip of the installed files."""
    if not wheels:
        return []
    return [
        "# Test dependencies the checkout declares, as wheels from the host's package index.",
        f"COPY {WHEEL_DIR}/ /tmp/rlenv-wheels/",
        'RUN python3 -c "import pathlib, site, zipfile; '
        "d = pathlib.Path(site.getsitepackages()[0]); d.mkdir(parents=True, exist_ok=True); "
        "[zipfile.ZipFile(w).extractall(d) for w in sorted(pathlib.Path('/tmp/rlenv-wheels')"
        ".glob('*.whl'))]\" && rm -rf /tmp/rlenv-wheels",
    ]
