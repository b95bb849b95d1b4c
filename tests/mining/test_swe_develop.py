"""`pip install -e .` of a compiled checkout without `pyproject.toml` runs as pip before
25.3 ran it, `setup.py develop` in the environment (issue #26, matplotlib 3.0-3.4).

pip 26 builds such a checkout as a PEP 660 wheel in an isolated environment: matplotlib
3.0's extensions were compiled against that environment's numpy (`numpy.core.multiarray
failed to import` at test time) and 3.4's own `build_py` failed. Pure-Python checkouts
(Django before 4.0, verified as they are) keep pip 26's install.
"""

from __future__ import annotations

import pytest

from repo2rlenv.kinds.swe_offline import (
    DEVELOP_REQUIRES,
    JQUERY_UI_DIR,
    SETUP_PY_ONLY,
    compiled_checkout,
    develops_editable,
    editable_develop,
)
from repo2rlenv.kinds.swe_recipe import recipe_lines
from repo2rlenv.kinds.swe_specs import SweSpec

SETUP = "from setuptools import setup\nsetup(name='matplotlib')\n"
MPL_30 = {
    "setup.py": SETUP + "# jquery-ui-1.12.1.zip is downloaded by develop\n",
    "src/_path_wrapper.cpp": "// C++\n",
    "lib/matplotlib/__init__.py": "",
}
MPL_34 = {"setup.py": SETUP, "src/ft2font.cpp": "// C++\n", "lib/matplotlib/__init__.py": ""}
DJANGO_30 = {"setup.py": SETUP, "django/__init__.py": "", "tests/runtests.py": ""}
INSTALL = "python -m pip install -e ."


def _spec(version: str = "3.4") -> SweSpec:
    return SweSpec(
        repo="matplotlib/matplotlib", version=version, source="swebench 4.1.0", install=INSTALL
    )


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (MPL_34, True),
        (MPL_30, True),
        ({**MPL_34, "pyproject.toml": "[build-system]\n"}, False),  # matplotlib 3.5+
        (DJANGO_30, False),  # pure Python: pip 26's install, unchanged
        ({**DJANGO_30, "tests/roots/ext/cython.pyx": ""}, False),  # a test fixture
        ({k: v for k, v in MPL_34.items() if k != "setup.py"}, False),
        ({"setup.py": SETUP, "astropy/wcs/setup_package.py": "def get_extensions():\n"}, True),
    ],
)
def test_only_a_compiled_setup_py_only_checkout_develops(start, expected):
    assert develops_editable(start) is expected


def test_c_sources_in_test_folders_are_not_extensions():
    assert not compiled_checkout({"tests/data/x.c": "", "a.py": ""})
    assert compiled_checkout({"pkg/_speedups.c": ""})


@pytest.mark.parametrize(
    ("step", "developed"),
    [
        (INSTALL, True),
        ("python -m pip install -v -e .", True),
        ("python3 -m pip install -e .", True),
        ("python -m pip install -e .[test]", False),  # extras: left to pip as written
        ("python -m pip install .", False),
        ("python -m pip install --no-build-isolation -e .", False),
        ("python setup.py develop", False),
    ],
)
def test_only_a_plain_editable_install_becomes_develop(step, developed):
    found = editable_develop(step, MPL_34)
    assert (found is not None) is developed
    if found:
        assert found[0] == f"{step.split()[0]} setup.py develop --no-deps"
        assert found[1:] == DEVELOP_REQUIRES


def test_matplotlib_30s_jquery_download_is_made_unnecessary():
    """3.0-3.2's `develop` downloads jquery-ui from jqueryui.com unless the folder exists."""
    found = editable_develop(INSTALL, MPL_30)
    assert found is not None and found[0] == f"mkdir -p {JQUERY_UI_DIR}"
    assert found[1] == "python setup.py develop --no-deps"
    assert not any("jquery" in s for s in editable_develop(INSTALL, MPL_34) or ())


def test_the_recipe_develops_a_compiled_checkout_and_says_so():
    recipe = recipe_lines(_spec(), MPL_34, "2021-06-01T00:00:00Z", "3.9")
    script = recipe.files["setup.sh"].decode().splitlines()
    assert INSTALL not in script
    assert "python setup.py develop --no-deps" in script
    assert script[-2:] == list(DEVELOP_REQUIRES)
    assert f"{SETUP_PY_ONLY}: {INSTALL} -> python setup.py develop --no-deps" in (recipe.provenance)


def test_a_pure_python_checkout_keeps_pips_install():
    """Django 3.0 (no pyproject.toml, no extension): the install stays as the spec has it."""
    spec = SweSpec(repo="django/django", version="3.0", source="swebench 4.1.0", install=INSTALL)
    recipe = recipe_lines(spec, DJANGO_30, "2020-01-01T00:00:00Z", "3.9")
    assert recipe.files["setup.sh"].decode().endswith(f"cd /workspace\n{INSTALL}\n")
    assert SETUP_PY_ONLY not in recipe.provenance
    with_toml = recipe_lines(_spec(), {**MPL_34, "pyproject.toml": ""}, None, "3.11")
    assert with_toml.files["setup.sh"].decode().endswith(f"{INSTALL}\n")
