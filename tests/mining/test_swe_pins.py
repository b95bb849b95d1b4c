"""Exact pins with no wheel for the image's Python (issue #26, points 3 and 4).

scikit-learn 0.20-1.3's specs pin numpy 1.19.2 and scipy 1.5.2, which have no wheel for
bullseye's Python 3.9 and whose sdists do not build there: the spec's step runs first as
written, and only if it fails are those pins replaced by the newest wheel of their
series, inside the build. The spec's `--no-use-pep517` editable install, which pip 26
no longer has, runs as what pip ran for it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from repo2rlenv.kinds.swe_offline import DEVELOP_REQUIRES, legacy_develop
from repo2rlenv.kinds.swe_pins import pinned_step, series_pin
from repo2rlenv.kinds.swe_recipe import recipe_lines
from repo2rlenv.kinds.swe_specs import SweSpec

SKLEARN_PINS = ("cython", "numpy==1.19.2", "setuptools", "scipy==1.5.2")
SKLEARN_INSTALL = "python -m pip install -v --no-use-pep517 --no-build-isolation -e ."
INSTALL = "python3 -m pip install"


@pytest.mark.parametrize(
    ("word", "series"),
    [
        ("numpy==1.19.2", "numpy>=1.19.2,==1.19.*"),
        ("scipy==1.5.2", "scipy>=1.5.2,==1.5.*"),
        ("MarkupSafe==2.1", "MarkupSafe>=2.1,==2.1.*"),
        ("cython", None),
        ("setuptools<70", None),
        ("pandas<2.0.0", None),
        ("numpy==3", None),  # no series to stay in
        ("numpy==1.19.*", None),
        ("numpy==2.0.0rc1", None),
        ("coverage[toml]==6.0.1", None),
        ("numpy==1.19.2; python_version<'3.9'", None),
        ("x==1.0;rm -rf /", None),
    ],
)
def test_only_an_exact_release_has_a_series(word, series):
    found = series_pin(0, word)
    assert (found.series if found else None) == series


def test_the_specs_step_runs_first_and_the_fallback_is_a_file_of_the_build():
    """The Dockerfile keeps the spec's own line and runs the fallback only if it fails;
    the candidates are listed in the provenance; a step without an exact pin is the
    spec's line alone."""
    spec = SweSpec(
        repo="scikit-learn/scikit-learn",
        version="0.22",
        source="swebench 4.1.0",
        python="3.6",
        packages="numpy scipy cython pytest pandas matplotlib",
        pip_packages=SKLEARN_PINS,
        install=SKLEARN_INSTALL,
    )
    recipe = recipe_lines(spec, {}, "2019-09-26T19:21:38Z", "3.9")
    shared = list(recipe.shared)
    run = (
        "RUN python3 -m pip install cython numpy==1.19.2 setuptools scipy==1.5.2"
        " || bash /tmp/rlenv-recipe/pins-pip_packages.sh"
    )
    assert run in shared
    assert "RUN python3 -m pip install numpy scipy cython pytest pandas matplotlib" in shared
    assert shared.index("COPY recipe/ /tmp/rlenv-recipe/") < shared.index(run)
    assert set(recipe.files) == {"setup.sh", "pins-pip_packages.sh"}
    assert "pip_packages fallback: numpy==1.19.2 -> numpy>=1.19.2,==1.19.*" in recipe.provenance
    assert "pip_packages fallback: scipy==1.5.2 -> scipy>=1.5.2,==1.5.*" in recipe.provenance
    assert "fallback: cython" not in recipe.provenance
    # the spec's editable install as pip ran it before 25.3
    script = recipe.files["setup.sh"].decode().splitlines()
    assert script[-3:] == ["python setup.py develop --no-deps", *DEVELOP_REQUIRES]
    assert (
        f"pip 26 has no --no-use-pep517: {SKLEARN_INSTALL} -> python setup.py develop --no-deps"
        in recipe.provenance
    )


def _fake_python(tmp_path, no_wheel: set[str]):
    """A `python3` that logs its arguments and says a dry run of `no_wheel` pins fails."""
    log = tmp_path / "calls.log"
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    missing = "|".join(sorted(no_wheel)) or "NONE"
    fake.write_text(
        "#!/bin/bash\n"
        f'echo "$*" >> {log}\n'
        'if [[ " $* " == *" --dry-run "* ]]; then\n'
        f'  case "${{@: -1}}" in {missing}) exit 1;; esac\n'
        "fi\n"
        "exit 0\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return log


@pytest.mark.timeout(60)
def test_the_fallback_replaces_only_the_pins_without_a_wheel(tmp_path):
    """Run the generated script with a fake python3: numpy 1.19.2 has no wheel, scipy
    1.5.2 has one; only numpy is replaced (a wheel only), the others stay in place and
    order, and the replacement is written where the image keeps it."""
    step = pinned_step(INSTALL, list(SKLEARN_PINS), "pip_packages", str(tmp_path))
    assert step.script_name == "pins-pip_packages.sh" and step.script
    (tmp_path / "pins.sh").write_text(step.script)
    log = _fake_python(tmp_path, {"numpy==1.19.2"})
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    subprocess.run(["bash", str(tmp_path / "pins.sh")], env=env, check=True, timeout=30)
    calls = log.read_text().splitlines()
    assert calls[-1] == (
        "-m pip install --only-binary=numpy cython numpy>=1.19.2,==1.19.* setuptools scipy==1.5.2"
    )
    assert sum("--dry-run" in c for c in calls) == 2
    assert (tmp_path / "substituted.txt").read_text() == (
        "rlenv recipe: pip_packages: numpy==1.19.2 -> numpy>=1.19.2,==1.19.* "
        "(no wheel for this python)\n"
    )


@pytest.mark.timeout(60)
def test_the_fallback_fails_when_the_step_fails_again(tmp_path):
    """No wheel for a series either: the final install fails and so does the script (the
    build stops at the spec's step, as before)."""
    step = pinned_step(INSTALL, ["MarkupSafe==1.0"], "packages", str(tmp_path))
    (tmp_path / "pins.sh").write_text(step.script or "")
    log = _fake_python(tmp_path, {"MarkupSafe==1.0"})
    (tmp_path / "bin" / "python3").write_text(
        (tmp_path / "bin" / "python3").read_text().replace("exit 0\n", "exit 3\n")
    )
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(tmp_path / "pins.sh")], env=env, timeout=30)
    assert done.returncode != 0
    assert log.read_text().splitlines()[-1] == (
        "-m pip install --only-binary=MarkupSafe MarkupSafe>=1.0,==1.0.*"
    )


def test_a_step_without_an_exact_pin_is_the_specs_line():
    step = pinned_step(INSTALL, ["numpy", "setuptools<70"], "packages", "/tmp/rlenv-recipe")
    assert step.run == "RUN python3 -m pip install numpy 'setuptools<70'"
    assert step.script is None and step.note == ""


@pytest.mark.parametrize(
    ("step", "instead"),
    [
        (SKLEARN_INSTALL, "python setup.py develop --no-deps"),
        ("python3 -m pip install --no-use-pep517 -e .", "python3 setup.py develop --no-deps"),
        ("python -m pip install -e .", None),  # pip 26 builds it (PEP 660)
        ("python -m pip install -v --no-build-isolation -e .", None),
        ("python -m pip install --no-use-pep517 -e .[test]", None),
        ("python -m pip install --no-use-pep517 --user -e .", None),
        ("python -m pip install --no-use-pep517 .", None),
        ("python -m pip install 'unbalanced", None),
    ],
)
def test_only_the_legacy_editable_install_becomes_develop(step, instead):
    found = legacy_develop(step)
    assert (found[0] if found else None) == instead
    if found:  # the project's requirements by pip, after develop
        assert found[1:] == DEVELOP_REQUIRES


@pytest.mark.timeout(60)
def test_the_projects_requirements_are_read_from_its_egg_info(tmp_path):
    """The step after `develop` lists the egg-info's requirements without extras (what
    pip installed before running develop); without an egg-info it installs nothing."""
    info = tmp_path / "scikit_learn.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: scikit-learn\nVersion: 0.22\n")
    (info / "requires.txt").write_text("numpy>=1.11.0\njoblib>=0.11\n\n[alldeps]\npandas\n")
    listing = DEVELOP_REQUIRES[0].replace("python3 ", f"{sys.executable} ", 1)
    out = tmp_path / "out"
    listing = listing.replace("/tmp/rlenv-develop-requires.txt", str(out))
    subprocess.run(["bash", "-c", listing], cwd=tmp_path, check=True, timeout=30)
    assert out.read_text().split() == ["numpy>=1.11.0", "joblib>=0.11"]
    (info / "requires.txt").unlink()
    subprocess.run(["bash", "-c", listing], cwd=tmp_path, check=True, timeout=30)
    assert out.read_text().strip() == ""
    # matplotlib's package root is lib/ (`package_dir`): develop writes its egg-info there
    lib = tmp_path / "lib" / "matplotlib.egg-info"
    lib.mkdir(parents=True)
    (lib / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: matplotlib\nVersion: 3.0\n")
    (lib / "requires.txt").write_text("kiwisolver>=1.0.1\n")
    subprocess.run(["bash", "-c", listing], cwd=tmp_path, check=True, timeout=30)
    assert out.read_text().split() == ["kiwisolver>=1.0.1"]


def test_packages_that_pin_are_dated_at_the_spec_release():
    """scikit-learn 1.3's `packages` pin cython 3.0.10 (2024-03) for instances of 2023-05:
    that step is dated at the spec's release, the date put back after it; words
    without a pin (0.22's) keep the instance's date."""
    pinned = SweSpec(
        repo="scikit-learn/scikit-learn",
        version="1.3",
        source="swebench 4.1.0",
        packages="'numpy==1.19.2' 'cython==3.0.10' pytest 'pandas<2.0.0'",
        install=SKLEARN_INSTALL,
    )
    recipe = recipe_lines(pinned, {}, "2023-05-04T11:55:50Z", "3.9")
    shared = list(recipe.shared)
    run = next(line for line in shared if "cython==3.0.10" in line)
    assert run.endswith("|| bash /tmp/rlenv-recipe/pins-packages.sh")
    at = shared.index(run)
    assert shared[at - 1] == "ARG PIP_UPLOADED_PRIOR_TO=2025-09-12"
    assert shared[at + 1] == "ARG PIP_UPLOADED_PRIOR_TO=2023-05-04T11:55:50Z"
    assert "packages uploaded-prior-to: 2025-09-12 (the spec's release; they pin" in (
        recipe.provenance
    )
    plain = pinned.model_copy(update={"packages": "numpy scipy cython"})
    shared = list(recipe_lines(plain, {}, "2023-05-04T11:55:50Z", "3.9").shared)
    at = shared.index("RUN python3 -m pip install numpy scipy cython")
    assert shared[at - 1] == "COPY recipe/ /tmp/rlenv-recipe/"
