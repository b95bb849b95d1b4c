"""What a checkout declares it needs, read from its packaging files, never executed.

`install_requires` / `extras_require` of `setup.py` (as literals), `[options]` of
`setup.cfg`, `[project]` of `pyproject.toml`. The instance repair kind carries these
into the task image as wheels (`instance_deps` fetches them); SWE-bench specs read
`setup.py` literals the same way (`swe_specs`). Apart from the fetching because reading
is pure and host-independent (markers aside), fetching asks the host's package index.
"""

from __future__ import annotations

import ast
import configparser
import tomllib
from collections.abc import Iterator
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

TEST_EXTRAS = ("tests", "test", "testing")
OWN = frozenset({"pytest"})
"""Installed by the verifier's own line (`common.PYTEST_INSTALL`)."""


def setup_py_literals(source: str, keyword: str, kinds: type | tuple[type, ...]) -> Iterator[Any]:
    """Each literal of type `kinds` assigned to `KEYWORD`/`keyword` or passed as
    `keyword=` in a setup.py, in file order, read with `ast.literal_eval`, never run."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        value = None
        named = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.lower() == keyword for t in node.targets
        )
        if named or (isinstance(node, ast.keyword) and node.arg == keyword):
            value = node.value
        if isinstance(value, kinds):
            try:
                yield ast.literal_eval(value)
            except ValueError:
                continue


def _setup_py_requires(source: str) -> list[str]:
    """The first list literal assigned to `INSTALL_REQUIRES`/`install_requires` or passed
    as `install_requires=`."""
    for found in setup_py_literals(source, "install_requires", (ast.List, ast.Tuple)):
        return [str(r) for r in found]
    return []


def _setup_cfg_requires(source: str) -> list[str]:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(source)
    except configparser.Error:
        return []
    value = parser.get("options", "install_requires", fallback="")
    return [line.strip() for line in value.splitlines() if line.strip()]


def _pyproject_requires(source: str) -> list[str]:
    try:
        found = tomllib.loads(source).get("project", {}).get("dependencies", [])
    except tomllib.TOMLDecodeError:
        return []
    return [str(r) for r in found] if isinstance(found, list) else []


def declared_runtime_requirements(files: dict[str, str]) -> list[str]:
    """What the checkout declares it needs to run (`install_requires`, `[project]
    dependencies`), first declaration found; SWE-bench's `pip install -e .` installs it.
    Markers that do not hold on the host are dropped."""
    for path, reader in (
        ("pyproject.toml", _pyproject_requires),
        ("setup.cfg", _setup_cfg_requires),
        ("setup.py", _setup_py_requires),
    ):
        lines = reader(files[path]) if path in files else []
        if lines:
            return _names(lines)
    return []


def holding_requirements(lines: list[str]) -> list[str]:
    """Requirement lines -> requirements as written (versions kept, no duplicates),
    without invalid lines and those whose marker does not hold on the host
    (`dataclasses; python_version < '3.7'`), the markers that hold dropped."""
    out: dict[str, None] = {}
    for line in lines:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        requirement.marker = None
        out[str(requirement)] = None
    return list(out)


def _names(lines: list[str]) -> list[str]:
    """`holding_requirements`, without pytest and what it brings (the verifier's own)."""
    return [r for r in holding_requirements(lines) if Requirement(r).name.lower() not in OWN]


def _setup_py_extras(source: str) -> dict[str, list[str]]:
    """The first dict literal assigned to `EXTRAS_REQUIRE`/`extras_require` or passed as
    `extras_require=`."""
    for extras in setup_py_literals(source, "extras_require", ast.Dict):
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
    return declared_extra_requirements(files, TEST_EXTRAS)


def declared_extra_requirements(files: dict[str, str], wanted: tuple[str, ...]) -> list[str]:
    """The requirement names of the checkout's extras `wanted` (a SWE-bench spec's
    `pip install -e .[all]` asks for `all`), as `declared_test_requirements`."""
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
    for key in wanted:
        for line in holding_requirements(extras.get(key, [])):
            name = Requirement(line).name
            if name.lower() not in OWN:
                names[name] = None
    return list(names)
