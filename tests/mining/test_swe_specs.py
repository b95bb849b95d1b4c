"""SWE-bench specifications: lookup, and the host-side pin rules of wheels (the spec's
recipe itself is `test_swe_recipe.py`)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from repo2rlenv.kinds import instance_deps, swe_specs
from repo2rlenv.kinds.instance_deps import DependencyError, PinUnmet, fetch_wheels
from repo2rlenv.kinds.swe_specs import SweSpec, spec_for
from schemas.provenance import InstallConfig

# the shape of sqlfluff's setup.py at 14e1a23a (sqlfluff-1625's base commit; MIT):
# version from a config file (not a literal), entry points as a literal
SQLFLUFF_SETUP = """
import configparser
from setuptools import find_packages, setup
config = configparser.ConfigParser()
config.read(["src/sqlfluff/config.ini"])
version = config.get("sqlfluff", "version")
setup(
    name="sqlfluff",
    version=version,
    install_requires=["click>=7.1", "pytest", "dataclasses; python_version < '3.7'"],
    entry_points={
        "console_scripts": ["sqlfluff = sqlfluff.cli.commands:cli"],
        "sqlfluff": ["sqlfluff = sqlfluff.core.plugin.lib"],
    },
)
"""
REQUIREMENTS_DEV = "# dev\nflake8\nhypothesis\npytest\n-r requirements.txt\n-r ../../etc/x\n"
REQUIREMENTS = "click>=7.1\ndataclasses; python_version < '3.7'\n--index-url http://x\ntoml\n"
SQLFLUFF_FILES = {
    "setup.py": SQLFLUFF_SETUP,
    "requirements_dev.txt": REQUIREMENTS_DEV,
    "requirements.txt": REQUIREMENTS,
    "src/sqlfluff/__init__.py": "",
}


def _spec(**fields: object) -> SweSpec:
    base = {"repo": "o/r", "version": "1.0", "source": "swebench 4.1.0"}
    return SweSpec(**(base | fields))  # type: ignore[arg-type]


def _fake_swebench(root: Path, specs: str) -> None:
    """An installed `swebench` whose package __init__ fails, as the real one does
    without its heavy dependencies: the data module must be read without it."""
    package = root / "swebench"
    (package / "harness" / "constants").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('docker, modal, datasets...')\n")
    (package / "harness" / "constants" / "python.py").write_text(specs)
    info = root / "swebench-4.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: swebench\nVersion: 4.1.0\n")


@pytest.fixture
def fake_swebench(tmp_path, monkeypatch):
    _fake_swebench(
        tmp_path,
        "SPECS_X = {k: {'python': '3.9', 'install': 'python -m pip install -e .',"
        " 'pip_packages': ['six==1.16.0'], 'test_cmd': 'pytest'} for k in ['0.6']}\n"
        "MAP_REPO_VERSION_TO_SPECS_PY = {'o/r': SPECS_X}\n"
        "MAP_REPO_TO_REQS_PATHS = {'o/r': ['requirements_dev.txt']}\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    swe_specs._tables.cache_clear()
    yield
    swe_specs._tables.cache_clear()


def test_spec_is_read_from_the_data_module_without_importing_the_package(fake_swebench):
    spec = spec_for("o/r", "0.6")
    assert spec == _spec(
        version="0.6",
        python="3.9",
        install="python -m pip install -e .",
        pip_packages=("six==1.16.0",),
        requirement_paths=("requirements_dev.txt",),
        test_cmd="pytest",
    )
    assert spec_for("o/r", "0.7") is None  # no such version
    assert spec_for("o/r", None) is None  # the row has no version
    assert spec_for("other/repo", "0.6") is None


def test_without_the_package_there_is_no_spec(monkeypatch):
    monkeypatch.setattr(swe_specs, "DISTRIBUTION", "no-such-distribution-rlenv")
    swe_specs._tables.cache_clear()
    try:
        assert spec_for("sqlfluff/sqlfluff", "0.6") is None
    finally:
        swe_specs._tables.cache_clear()


def test_real_swebench_specs_when_installed():
    try:
        metadata.distribution("swebench")
    except metadata.PackageNotFoundError:
        pytest.skip("swebench is not installed (pip install 'rlenv-harvest[swe]')")
    spec = spec_for("sqlfluff/sqlfluff", "0.6")
    assert spec is not None and spec.install == "python -m pip install -e ."
    assert spec.packages == "requirements.txt"
    assert spec.requirement_paths == ("requirements_dev.txt",)
    # what the old reader refused is now a recipe: a pre_install, a non-editable install
    sphinx = spec_for("sphinx-doc/sphinx", "7.2")
    assert sphinx is not None and any("tox.ini" in step for step in sphinx.pre_install)
    requests = spec_for("psf/requests", "2.26")
    assert requests is not None and requests.install_steps() == ("python -m pip install .",)


def test_a_rows_install_config_is_a_spec():
    config = InstallConfig(
        python="3.9",
        install=["pip install -e .", "pip install pytest"],
        pre_install=["apt-get install -y libxml2-dev"],
        pip_packages=["six==1.16.0"],
        reqs_path=["requirements/test.txt"],
        test_cmd="pytest -rA",
    )
    spec = SweSpec.of_install_config("o/r", "1.0", config)
    assert spec.install_steps() == ("pip install -e .", "pip install pytest")
    assert spec.pre_install == ("apt-get install -y libxml2-dev",)
    assert spec.requirement_paths == ("requirements/test.txt",)
    assert (spec.python, spec.source) == ("3.9", "the row's install_config")


def test_a_spec_pin_is_never_loosened(monkeypatch):
    calls: list[list[str]] = []

    def download(names, cutoff, folder):
        calls.append(names)
        if any("==" in n for n in names):
            raise DependencyError("No matching distribution found for numpy==1.19.2")

    monkeypatch.setattr(instance_deps, "_download", download)
    with pytest.raises(PinUnmet):
        fetch_wheels(["numpy==1.19.2", "scipy"], strict_pins=True)
    calls.clear()
    fetch_wheels(["numpy==1.19.2", "scipy"])  # a run's pin: loosened to its name
    assert calls[-1] == ["scipy", "numpy"]


def test_versions_are_resolved_for_the_spec_python(monkeypatch, tmp_path):
    calls: list[list[str]] = []

    def download(names, options, folder):
        calls.append(options)
        if "--uploaded-prior-to" in options:
            raise DependencyError("no wheel of that date")
        (Path(folder) / "click-8.1.8-py3-none-any.whl").write_bytes(b"")
        (Path(folder) / "MarkupSafe-3.0.4-cp39-cp39-manylinux2014_x86_64.whl").write_bytes(b"")

    monkeypatch.setattr(instance_deps, "_download", download)
    pins, note = instance_deps.resolve_for_python(["click"], "3.9", "2021-10-01")
    assert pins == ["click==8.1.8", "markupsafe==3.0.4"]
    assert calls[0][:2] == ["--python-version", "3.9"] and calls[1] == ["--python-version", "3.9"]
    assert note.startswith("resolved for python 3.9; date not met")


def test_only_optional_names_without_a_wheel_are_dropped(monkeypatch):
    def download(names, options, folder):
        if "types-pkg_resources" in names:
            raise DependencyError("ERROR: No matching distribution found for types-pkg_resources")
        if "gone" in names:
            raise DependencyError("ERROR: No matching distribution found for gone")
        (Path(folder) / "toml-0.10.2-py3-none-any.whl").write_bytes(b"")

    monkeypatch.setattr(instance_deps, "_download", download)
    optional = frozenset({"types-pkg-resources"})
    pins, note = instance_deps.resolve_for_python(
        ["toml", "types-pkg_resources"], "3.9", optional=optional
    )
    assert pins == ["toml==0.10.2"]
    assert "dropped (no wheel for python 3.9): types-pkg-resources" in note
    with pytest.raises(DependencyError, match="gone"):
        instance_deps.resolve_for_python(["toml", "gone"], "3.9", optional=optional)
