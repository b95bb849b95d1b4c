"""Which of a checkout's files pytest reads its configuration from.

The verifier always runs pytest with `-c` (an agent may add or edit a `pytest.ini`,
`tox.ini`, `setup.cfg` or `pyproject.toml`, and pytest must read none of those), so the
file is chosen when the task is made, from the start state, the way pytest's own
`locate_config` would choose it, and the verifier gives pytest the checkout's copy of
it (restored before the run). Without this a repository's `addopts`, plugins (`-p
pytester`, which pytest's own tests need), markers and `xfail_strict` were lost:
pytest-dev/pytest-10081 ran 64 tests and none passed, `recursive dependency involving
fixture 'pytester'`.
"""

from __future__ import annotations

import configparser
import posixpath
import tomllib
from collections.abc import Mapping

CANDIDATES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""pytest's order within one folder (`_pytest.config.findpaths.locate_config`)."""


def holds_pytest_config(name: str, text: str) -> bool:
    """Whether pytest would take this file as its configuration: a `pytest.ini` always,
    a `tox.ini` with `[pytest]`, a `setup.cfg` with `[tool:pytest]`, a `pyproject.toml`
    with `[tool.pytest.ini_options]` (or pytest 9's `[tool.pytest]`). A file the
    standard parsers cannot read holds none (pytest would stop on it anyway)."""
    if name in ("pytest.ini", ".pytest.ini"):
        return True
    if name == "pyproject.toml":
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return False
        return isinstance(tool, dict) and isinstance(tool.get("pytest"), dict)
    section = {"tox.ini": "pytest", "setup.cfg": "tool:pytest"}.get(name)
    if section is None:
        return False
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return False
    return parser.has_section(section)


def pytest_config(files: Mapping[str, str], cwd: str = "") -> str | None:
    """The path (relative to the workspace) of the file pytest would read its
    configuration from when run in `cwd`: the first match in `cwd`, then in each folder
    above it up to the workspace root; None when there is none (the verifier then
    passes `-c /dev/null`)."""
    folder = posixpath.normpath(cwd) if cwd else "."
    while True:
        for name in CANDIDATES:
            path = name if folder == "." else f"{folder}/{name}"
            text = files.get(path)
            if text is not None and holds_pytest_config(name, text):
                return path
        if folder == ".":
            return None
        folder = posixpath.dirname(folder) or "."
