"""SWE-bench specifications: lookup, and the host-side pin rules of wheels (the spec's
recipe itself is `test_swe_recipe.py`)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from repo2rlenv.kinds import swe_specs
from repo2rlenv.kinds.swe_specs import SweSpec, spec_for
from schemas.provenance import InstallConfig


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
