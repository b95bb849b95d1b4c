"""The optional conda entries' import check (`conda_imports`) and the verifier line that
prints what the image build left out, only for tasks whose image has optional entries.

The stand-in packages are written here; `broken_pkg.client`'s failure is pydap 3.2.2's
(`from collections import Mapping` in `pydap.model`, reached from `pydap.client`, while
`import pydap` succeeds), measured on pydata__xarray-6721.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repo2rlenv.kinds.grading import TEST_SH, grading_files
from repo2rlenv.kinds.swe_conda import (
    IMPORT_CHECK,
    IMPORTS,
    NOT_INSTALLED,
    OPTIONAL,
    verifier_prints_list,
)

pytestmark = pytest.mark.timeout(60)


def _dist(site: Path, name: str, top: str, files: dict[str, str]) -> None:
    """A stand-in installed distribution `name` with top-level module `top`."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{top}\n")
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _check(tmp_path: Path, site: Path, requirement: str) -> subprocess.CompletedProcess[str]:
    check = tmp_path / IMPORTS
    check.write_text(IMPORT_CHECK)
    return subprocess.run(
        [sys.executable, str(check), requirement],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(site)},
        cwd=tmp_path,
    )


def test_a_submodule_that_does_not_import_fails_the_check(tmp_path):
    """`import broken_pkg` succeeds; `broken_pkg.client` raises ImportError (not a
    missing module): the check exits 1 with that line last. A top-level-only check
    (the code before) passed this package."""
    site = tmp_path / "site"
    _dist(
        site,
        "broken-pkg",
        "broken_pkg",
        {
            "broken_pkg/__init__.py": "",
            "broken_pkg/apis.py": "",
            "broken_pkg/client.py": "from .model import Thing\n",
            "broken_pkg/model.py": "from collections import OrderedDict, Mapping\nThing = 1\n",
        },
    )
    done = _check(tmp_path, site, "broken-pkg>=1")
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("import broken_pkg.client: ImportError: cannot import name 'Mapping'")


def test_a_broken_subpackage_fails_and_a_top_level_module_too(tmp_path):
    site = tmp_path / "site"
    _dist(
        site,
        "sub-pkg",
        "sub_pkg",
        {"sub_pkg/__init__.py": "", "sub_pkg/io/__init__.py": "from collections import Mapping"},
    )
    done = _check(tmp_path, site, "sub-pkg")
    assert done.returncode == 1
    assert "import sub_pkg.io: ImportError: cannot import name 'Mapping'" in done.stdout
    _dist(site, "flat-pkg", "flat_mod", {"flat_mod.py": "from collections import Mapping\n"})
    done = _check(tmp_path, site, "flat-pkg")
    assert done.returncode == 1
    assert done.stdout.startswith("import flat_mod: ImportError: cannot import name 'Mapping'")


def test_a_missing_module_keeps_the_package_and_programs_and_tests_are_not_imported(tmp_path):
    """A module that needs one installed later (cfgrib's `cf2cdm` imports xarray), or
    an ImportError raised while handling one (lxml's `cssselect`, dask's "install
    dask[array]"), keeps the package; `__main__`, `tests`, private modules are not
    imported (each would fail here)."""
    site = tmp_path / "site"
    _dist(
        site,
        "later-pkg",
        "later_pkg",
        {
            "later_pkg/__init__.py": "",
            "later_pkg/backend.py": "import not_installed_yet_xarray\n",
            "later_pkg/css.py": (
                "try:\n    import not_installed_cssselect\n"
                "except ImportError:\n    raise ImportError('cssselect is not installed')\n"
            ),
            "later_pkg/__main__.py": "raise SystemExit(3)\n",
            "later_pkg/tests/__init__.py": "1/0\n",
            "later_pkg/_win32.py": "import winreg_only_here_not\n1/0\n",
            "later_pkg/ok.py": "VALUE = 1\n",
        },
    )
    done = _check(tmp_path, site, "later-pkg")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "import later_pkg.backend: needs not_installed_yet_xarray, not installed" in done.stdout
    assert "import later_pkg.css: needs not_installed_cssselect, not installed" in done.stdout
    assert "__main__" not in done.stdout and "tests" not in done.stdout


def test_a_submodules_own_error_keeps_the_package_and_a_python_mismatch_does_not(tmp_path):
    """Modules made never to be imported alone, each measured uninstalling its package in
    the first xarray-6721 build with submodules (distributed's `distributed.bokeh` stub
    raising its own ImportError, lxml's `usedoctest` a LookupError, a flox helper
    pytest's `Skipped`, a BaseException): kept. A submodule whose code does not fit this
    Python (`collections.Mapping`: AttributeError; a syntax error) fails the check."""
    site = tmp_path / "site"
    _dist(
        site,
        "stubs-pkg",
        "stubs_pkg",
        {
            "stubs_pkg/__init__.py": "",
            "stubs_pkg/bokeh.py": "raise ImportError('stubs_pkg.bokeh has moved')\n",
            "stubs_pkg/usedoctest.py": "raise LookupError('only inside a doctest')\n",
            "stubs_pkg/helper.py": (
                "class Skipped(BaseException):\n    pass\nraise Skipped('could not import x')\n"
            ),
        },
    )
    done = _check(tmp_path, site, "stubs-pkg")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "import stubs_pkg.bokeh: ImportError: stubs_pkg.bokeh has moved (its own" in done.stdout
    assert "import stubs_pkg.helper: Skipped: could not import x (its own" in done.stdout
    for rel, text, error in (
        ("old_pkg/compat.py", "import collections\nM = collections.Mapping\n", "AttributeError"),
        ("syn_pkg/model.py", "def f(:\n", "SyntaxError"),
    ):
        top = rel.split("/")[0]
        _dist(site, top.replace("_", "-"), top, {f"{top}/__init__.py": "", rel: text})
        done = _check(tmp_path, site, top.replace("_", "-"))
        assert done.returncode == 1, done.stdout
        assert done.stdout.strip().splitlines()[-1].startswith(f"import {top}.")
        assert error in done.stdout
    # at the top level, any error is one (cfgrib: RuntimeError without ecCodes)
    _dist(site, "rt-pkg", "rt_mod", {"rt_mod.py": "raise RuntimeError('no ecCodes')\n"})
    assert _check(tmp_path, site, "rt-pkg").returncode == 1


def test_the_hosts_own_package_passes():
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK, "packaging>=20"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _tests() -> list:
    return grading_files(
        mode="all", cwd="", targets=["t.py"], expected=1, protected={}, hidden={}, config=None
    )


def test_the_list_is_printed_only_by_tasks_with_optional_entries():
    """A task without optional conda entries keeps `test.sh` as every other task's
    (`TEST_SH`, as on main: its bytes are in the task's hash); one with them prints the
    list after the reward line and before the tests."""
    assert NOT_INSTALLED not in TEST_SH
    plain = _tests()
    for files in ({}, {OPTIONAL: b""}, {OPTIONAL: b"\n"}, {"setup.sh": b"x"}):
        assert verifier_prints_list(plain, files) == plain
    listed = verifier_prints_list(plain, {OPTIONAL: b"pydap\n"})
    assert [f.path for f in listed] == [f.path for f in plain]
    script = next(f for f in listed if f.path == "tests/test.sh")
    assert script.executable
    lines = script.content.decode().splitlines()
    reward = lines.index("echo 0 > /logs/verifier/reward.txt")
    assert lines[reward + 1] == f"if [ -s {NOT_INSTALLED} ]; then"
    assert lines.index(f"  cat {NOT_INSTALLED}") < lines.index("python3 -I /tests/grade.py")
    others = [f for f in listed if f.path != "tests/test.sh"]
    assert others == [f for f in plain if f.path != "tests/test.sh"]


def test_the_printed_list_runs_in_bash(tmp_path):
    """The inserted lines, run by bash with the list's path moved under tmp: the list is
    printed when it has lines, nothing when it is empty or absent."""
    listed = verifier_prints_list(_tests(), {OPTIONAL: b"pydap\n"})
    text = next(f for f in listed if f.path == "tests/test.sh").content.decode()
    block = text[text.index("if [ -s") : text.index("fi\n") + 3]
    block = block.replace(NOT_INSTALLED, str(tmp_path / "list.txt"))
    absent = subprocess.run(["bash", "-c", block], capture_output=True, text=True, timeout=30)
    assert absent.returncode == 0 and absent.stdout == ""
    (tmp_path / "list.txt").write_text("pydap: installed, but does not import here\n")
    shown = subprocess.run(["bash", "-c", block], capture_output=True, text=True, timeout=30)
    assert shown.stdout.endswith("pydap: installed, but does not import here\n")
