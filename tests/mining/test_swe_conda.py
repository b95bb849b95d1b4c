"""A spec's conda `environment.yml` as pip requirements (issue #26 point 4/2).

Real input: xarray's `ci/requirements/environment.yml` at pydata/xarray 1c198a19 (the
`environment_setup_commit` of every SWE-bench Verified xarray 0.12 instance; xarray is
Apache-2.0), and the dependency lines of matplotlib's `environment.yml` at
matplotlib/matplotlib 0849036f (3.7's setup commit; matplotlib's licence is PSF-based),
as the two files SWE-bench builds with conda.
"""

from __future__ import annotations

import pytest

from repo2rlenv.kinds.swe_conda import (
    CORE,
    OPTIONAL,
    SCRIPT,
    EnvironmentFile,
    conda_requirement,
    conda_requirements,
    conda_version,
    environment_file,
)
from repo2rlenv.kinds.swe_recipe import recipe_lines
from repo2rlenv.kinds.swe_specs import SpecUnsupported, SweSpec, spec_for

pytestmark = pytest.mark.timeout(60)

XARRAY_ENV = """name: xarray-tests
channels:
  - conda-forge
  - nodefaults
dependencies:
  - aiobotocore
  - boto3
  - bottleneck
  - cartopy
  - cdms2
  - cfgrib
  - cftime
  - dask
  - distributed
  - h5netcdf
  - h5py
  - hdf5
  - hypothesis
  - iris
  - lxml    # Optional dep of pydap
  - matplotlib-base
  - nc-time-axis
  - netcdf4
  - numba
  - numexpr
  - numpy
  - pandas
  - pint
  - pip
  - pooch
  - pre-commit
  - pseudonetcdf
  - pydap
  # - pynio: not compatible with netCDF4>1.5.3; only tested in py37-bare-minimum
  - pytest
  - pytest-cov
  - pytest-env
  - pytest-xdist
  - rasterio
  - scipy
  - seaborn
  - setuptools
  - sparse
  - toolz
  - zarr
  - pip:
    - numbagg
"""
MATPLOTLIB_ENV = """name: mpl-dev
channels:
  - conda-forge
dependencies:
  # runtime dependencies
  - contourpy>=1.0.1
  - numpy>=1.21
  - pygobject
  - pyqt
  - python-dateutil>=2.1
  - setuptools_scm
  - graphviz
  - pip
  - pip:
      - mpl-sphinx-theme
      - sphinxcontrib-svg2pdfconverter
  - gtk4
  - nbconvert[execute]!=6.0.0,!=6.0.1,!=7.3.0,!=7.3.1
  - pandas!=0.25.0
"""
XARRAY_NEEDS = frozenset({"numpy", "pandas", "pytest", "scipy", "setuptools", "dask"})


@pytest.mark.parametrize(
    ("conda", "pip"),
    [
        ("", ""),
        ("=1.2", "==1.2.*"),
        ("=1.2.*", "==1.2.*"),
        ("=1.2=py39_0", "==1.2.*"),
        ("1.2.*", "==1.2.*"),
        ("1.2 py39_0", "==1.2"),
        ("==1.2", "==1.2"),
        (">=1.21", ">=1.21"),
        ("!=2021.7.0", "!=2021.7.0"),
        (">=1,<2", ">=1,<2"),
    ],
)
def test_conda_versions_become_pep_440(conda, pip):
    assert conda_version(conda) == pip


def test_renames_conda_only_and_channels():
    assert conda_requirement("matplotlib-base") == ("matplotlib", "")
    assert conda_requirement("dask-core>=2022") == ("dask>=2022", "")
    assert conda_requirement("conda-forge::iris=3.2") == ("scitools-iris==3.2.*", "")
    assert conda_requirement("hdf5")[0] is None
    assert "conda-only" in conda_requirement("python=3.10")[1]
    assert conda_requirement("numpy ~~1")[0] is None  # no PEP 440 form: listed


def test_xarrays_real_environment_file():
    found = conda_requirements(XARRAY_ENV, XARRAY_NEEDS)
    assert found.required == ("dask", "numpy", "pandas", "pytest", "scipy", "setuptools")
    assert "matplotlib" in found.optional and "scitools-iris" in found.optional
    assert found.optional[-1] == "numbagg"  # the pip: sub-list, as it stands
    assert "matplotlib-base" not in found.optional and "hdf5" not in found.optional
    assert len(found.required) + len(found.optional) + len(found.left_out) == 40
    assert found.left_out == (
        "hdf5: conda-only (not a Python distribution)",
        "pip: conda-only (not a Python distribution)",
    )


def test_matplotlibs_real_environment_file():
    found = conda_requirements(MATPLOTLIB_ENV, frozenset({"numpy", "contourpy"}))
    assert found.required == ("contourpy>=1.0.1", "numpy>=1.21")
    assert found.optional == (
        "pygobject",
        "PyQt5",
        "python-dateutil>=2.1",
        "setuptools_scm",
        "mpl-sphinx-theme",
        "sphinxcontrib-svg2pdfconverter",
        "nbconvert[execute]!=6.0.0,!=6.0.1,!=7.3.0,!=7.3.1",
        "pandas!=0.25.0",
    )
    left = [line.split(":")[0] for line in found.left_out]
    assert left == ["graphviz", "pip", "gtk4"]


@pytest.mark.parametrize("text", ["a: [", "name: x\n", "- numpy\n"])
def test_an_unreadable_file_is_refused(text):
    spec = SweSpec(repo="o/r", version="1", source="s", packages="environment.yml")
    env = EnvironmentFile(path="environment.yml", text=text, commit="the checkout")
    with pytest.raises(SpecUnsupported, match="conda"):
        recipe_lines(spec, {}, None, "3.11", conda=(env, frozenset()))


def test_the_file_is_read_at_the_setup_commit_first():
    paths = ("ci/requirements/environment.yml", "environment.yml")
    setup = {"ci/requirements/environment.yml": "setup"}
    start = {"environment.yml": "checkout"}
    found = environment_file(paths, setup, "1c198a191127c601d091213c4b3292a8bb3054e1", start)
    assert (found.path, found.text) == ("ci/requirements/environment.yml", "setup")
    assert found.commit == "environment_setup_commit 1c198a191127"
    found = environment_file(paths, {}, None, start)
    assert (found.path, found.text, found.commit) == ("environment.yml", "checkout", "the checkout")
    assert environment_file(paths, {}, None, {}) is None


def test_the_recipe_installs_required_then_optional_then_the_specs_pins():
    """Required entries in one pip step (a failure fails the build), the optional ones
    by the best-effort script, then the spec's own pins, as SWE-bench's order."""
    spec = spec_for("pydata/xarray", "0.12")
    if spec is None:
        pytest.skip("the swebench extra is not installed")
    assert spec.environment_paths == ("ci/requirements/environment.yml", "environment.yml")
    env = EnvironmentFile(path=spec.environment_paths[0], text=XARRAY_ENV, commit="c")
    recipe = recipe_lines(spec, {}, "2022-11-01", "3.11", conda=(env, XARRAY_NEEDS))
    shared = list(recipe.shared)
    core = shared.index(f"RUN python3 -m pip install -r /tmp/rlenv-recipe/{CORE}")
    optional = shared.index(f"RUN bash /tmp/rlenv-recipe/{SCRIPT}")
    pins = next(i for i, line in enumerate(shared) if "numpy==1.23.0" in line)
    assert core < optional < pins
    assert recipe.files[CORE].decode().split() == list(
        conda_requirements(XARRAY_ENV, XARRAY_NEEDS).required
    )
    assert b"numbagg\n" in recipe.files[OPTIONAL]
    script = recipe.files[SCRIPT].decode()
    assert "-c /tmp/rlenv-held.txt" in script and "/etc/rlenv/not-installed.txt" in script
    assert "conda left out: hdf5: conda-only" in recipe.provenance
    assert "conda environment: ci/requirements/environment.yml at c" in recipe.provenance


def test_the_optional_step_lists_what_pip_could_not_install(tmp_path):
    """The step's shell, run with a stand-in `python3` (pip fails for `cdms2` with its
    real message, installs the rest) and its paths moved under tmp: the build step
    succeeds, the failure is listed with pip's first error line and its kept log, the
    installs are held to what was there (`-c`)."""
    import shutil
    import subprocess

    from repo2rlenv.kinds.swe_conda import optional_script

    if shutil.which("bash") is None:
        pytest.skip("no bash")
    stub = tmp_path / "python3"
    stub.write_text(
        "#!/bin/bash\n"
        f'echo "$*" >> {tmp_path}/calls\n'
        'if [ "$3" = list ]; then printf "numpy==1.23.4\\nodd line\\n"; exit 0; fi\n'
        'for a in "$@"; do last="$a"; done\n'
        'if [ "$last" = cdms2 ]; then echo "Collecting cdms2"; '
        'echo "ERROR: No matching distribution found for cdms2"; exit 1; fi\n'
        'case "$1" in *conda-imports.py) if [ "$2" = "pint>=0.18" ]; then '
        'echo "import pint: ImportError: no Mapping"; exit 1; fi;; esac\n'
    )
    stub.chmod(0o755)
    (tmp_path / "recipe").mkdir()
    (tmp_path / "recipe" / OPTIONAL).write_text("zarr\ncdms2\n\npint>=0.18\n")
    script = (
        optional_script(str(tmp_path / "recipe"))
        .replace("/etc/rlenv", str(tmp_path / "etc"))
        .replace("/tmp/rlenv-held.txt", str(tmp_path / "held.txt"))
        .replace("python3 ", f"{stub} ")
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    listed = (tmp_path / "etc" / "not-installed.txt").read_text()
    log = tmp_path / "etc" / "not-installed" / "2.log"
    broken = tmp_path / "etc" / "not-installed" / "3.log"
    assert listed == (
        f"cdms2: ERROR: No matching distribution found for cdms2 (log: {log})\n"
        "pint>=0.18: installed, but does not import here (uninstalled): "
        f"import pint: ImportError: no Mapping (log: {broken})\n"
    )
    assert log.read_text().startswith("Collecting cdms2")
    assert not (tmp_path / "etc" / "not-installed" / "1.log").exists()
    calls = (tmp_path / "calls").read_text().splitlines()
    imports = str(tmp_path / "recipe" / "conda-imports.py")
    assert calls[1:] == [
        f"-m pip install -c {tmp_path}/held.txt zarr",
        f"{imports} zarr",
        f"-m pip install -c {tmp_path}/held.txt cdms2",
        f"-m pip install -c {tmp_path}/held.txt pint>=0.18",
        f"{imports} pint>=0.18",
        "-m pip uninstall -y pint",
    ]
    assert not (tmp_path / "held.txt").exists()
    assert "2 optional entries not installed" in done.stdout
