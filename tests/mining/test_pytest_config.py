"""The verifier keeps the repository's own pytest configuration (its `addopts`, plugins,
markers), chosen when the task is made, and restored from its hidden copy before the
run: pytest-dev/pytest-10081 ran 64 tests with none passing while the verifier gave
pytest `-c /dev/null` (its tests need `addopts = -p pytester` from `pyproject.toml`).
An agent's added or edited configuration is still never read.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import types
from pathlib import Path

import pytest

from repo2rlenv.kinds.grading import GRADE_PY, grading_files
from repo2rlenv.kinds.pytest_config import holds_pytest_config, pytest_config

pytestmark = pytest.mark.timeout(120)

PYPROJECT = '[project]\nname = "calc"\n\n[tool.pytest.ini_options]\naddopts = "-p calc_plugin"\n'
PLUGIN = "import pytest\n\n\n@pytest.fixture\ndef needed():\n    return 5\n"
TESTS = "def test_needs_the_plugin(needed):\n    assert needed == 5\n"
FORGED_PLUGIN = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    if 'canary' not in item.nodeid:\n"
    "        outcome.get_result().outcome = 'passed'\n"
)


def test_the_file_is_the_one_pytest_would_choose():
    assert holds_pytest_config("pytest.ini", "")  # always, even empty
    assert holds_pytest_config("tox.ini", "[tox]\n[pytest]\naddopts = -x\n")
    assert not holds_pytest_config("tox.ini", "[tox]\nenvlist = py\n")
    assert holds_pytest_config("setup.cfg", "[tool:pytest]\nmarkers = slow\n")
    assert not holds_pytest_config("setup.cfg", "[pytest]\n")  # pytest refuses that one
    assert holds_pytest_config("pyproject.toml", PYPROJECT)
    assert not holds_pytest_config("pyproject.toml", "[tool.black]\nline-length = 88\n")
    assert not holds_pytest_config("pyproject.toml", "not = [toml")
    assert not holds_pytest_config("tox.ini", "no section header\n")
    files = {
        "setup.cfg": "[tool:pytest]\n",
        "tox.ini": "[pytest]\n",
        "pyproject.toml": PYPROJECT,
        "sub/setup.cfg": "[metadata]\n",
    }
    assert pytest_config(files) == "pyproject.toml"  # pytest's order within a folder
    assert pytest_config({**files, "pytest.ini": ""}) == "pytest.ini"
    assert pytest_config(files, "sub") == "pyproject.toml"  # the folders above
    assert pytest_config({**files, "sub/tox.ini": "[pytest]\n"}, "sub") == "sub/tox.ini"
    assert pytest_config({"tox.ini": "[tox]\n", "setup.cfg": "[metadata]\n"}) is None


def _run_verifier(tmp_path: Path, workspace: dict[str, str], **grading) -> tuple[str, str]:
    """`tests/grade.py` run on this machine against `tmp_path/workspace`, its
    /tests and /logs folders moved under `tmp_path`: (reward, what it printed)."""
    tests, logs = tmp_path / "tests", tmp_path / "logs"
    for bundle_file in grading_files(mode="all", cwd="", expected=1, timeout=100, **grading):
        target = tmp_path / bundle_file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bundle_file.content)
    for rel, text in workspace.items():
        (tmp_path / "workspace" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "workspace" / rel).write_text(text)
    source = (
        GRADE_PY.replace('"/tests', f'"{tests}')
        .replace('"/logs', f'"{logs}')
        .replace('Path("/workspace")', f'Path("{tmp_path / "workspace"}")')
    )
    space: dict[str, object] = {"__name__": "rlenv_grade"}
    exec(compile(source, "grade.py", "exec"), space)
    grade = types.SimpleNamespace(**space)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        grade.main()
    return (logs / "verifier" / "reward.txt").read_text().strip(), printed.getvalue()


def _checkout() -> dict[str, str]:
    return {"pyproject.toml": PYPROJECT, "calc_plugin.py": PLUGIN}


@pytest.mark.skipif(sys.platform == "win32", reason="paths of the verifier's container")
def test_the_repositorys_addopts_reach_pytest(tmp_path):
    checkout = _checkout()
    grading = {
        "targets": ["test_calc.py"],
        "names": ["test_calc.py::test_needs_the_plugin"],
        "protected": {"pyproject.toml": PYPROJECT},
        "hidden": {"test_calc.py": TESTS},
    }
    reward, printed = _run_verifier(
        tmp_path / "kept", checkout, config=pytest_config(checkout), **grading
    )
    assert reward == "1.0", printed
    # what the verifier did before: `-c /dev/null`, the plugin never loaded
    reward, printed = _run_verifier(tmp_path / "lost", checkout, config=None, **grading)
    assert reward == "0.0", printed
    assert "not passed" in printed


def test_an_agents_configuration_is_not_read(tmp_path):
    """The agent adds a `pytest.ini` (which pytest would prefer), rewrites the
    checkout's `pyproject.toml` and a kept `tox.ini` to load a forging plugin: the
    verifier restores or ignores them all, and the test, which fails, fails."""
    forged = {
        "forge.py": FORGED_PLUGIN,
        "calc_plugin.py": PLUGIN.replace("return 5", "return 4"),  # the code under test
        "pytest.ini": "[pytest]\naddopts = -p forge\n",
        "pyproject.toml": PYPROJECT.replace("calc_plugin", "forge"),
        "tox.ini": "[pytest]\naddopts = -p forge\n",
    }
    common = {
        "targets": ["test_calc.py"],
        "names": ["test_calc.py::test_needs_the_plugin"],
        "hidden": {"test_calc.py": TESTS},
    }
    reward, printed = _run_verifier(
        tmp_path / "restored",
        forged,
        config="pyproject.toml",
        protected={"pyproject.toml": PYPROJECT},
        **common,
    )
    assert reward == "0.0", printed
    assert "not passed (failed)" in printed
    # a tox.ini the image's recipe rewrites is kept, not restored: pytest reads the
    # verifier's copy of the checkout's file, not the workspace's
    kept = "[tox]\n\n[pytest]\naddopts = -p calc_plugin\n"
    reward, printed = _run_verifier(
        tmp_path / "kept",
        {**forged, "pyproject.toml": "[project]\nname = 'calc'\n"},
        config="tox.ini",
        config_copy=kept,
        kept=["tox.ini"],
        protected={},
        **common,
    )
    assert reward == "0.0", printed
    assert "not passed (failed)" in printed
    settings = json.loads((tmp_path / "kept" / "tests" / "grading.json").read_text())
    assert settings["config_copy"] is True
    assert (tmp_path / "kept" / "tests" / "config" / "tox.ini").read_text() == kept
    # the same kept copy with the right code: the checkout's option is what loads it
    reward, printed = _run_verifier(
        tmp_path / "kept-pass",
        {**forged, "calc_plugin.py": PLUGIN, "pyproject.toml": "[project]\n"},
        config="tox.ini",
        config_copy=kept,
        kept=["tox.ini"],
        protected={},
        **common,
    )
    assert reward == "1.0", printed


def test_an_instance_task_names_the_checkouts_configuration():
    """`_verifier_files` chooses the file from the checkout (and the test patch), and
    ships the checkout's copy of it where a `pre_install` rewrites it."""
    from repo2rlenv.kinds.instance_repair import _verifier_files
    from repo2rlenv.kinds.swe_specs import SweSpec

    class Row:
        FAIL_TO_PASS = ("test_calc.py::test_add",)
        PASS_TO_PASS = ()
        test_patch = ""

    start = {"pyproject.toml": PYPROJECT, "tox.ini": "[pytest]\naddopts = -x\n"}
    files = {f.path: f.content for f in _verifier_files(Row, start, {}, None, None)}
    settings = json.loads(files["tests/grading.json"])
    assert settings["config"] == "pyproject.toml"
    assert "config_copy" not in settings and "tests/config/pyproject.toml" not in files
    spec = SweSpec(
        repo="example/calc",
        version="1.0",
        source="test",
        pre_install=("sed -i 's/pytest/pytest -rA/' tox.ini",),
    )
    start = {"tox.ini": "[tox]\n\n[pytest]\naddopts = -p calc_plugin\n"}
    files = {f.path: f.content for f in _verifier_files(Row, start, {}, None, spec)}
    settings = json.loads(files["tests/grading.json"])
    assert (settings["config"], settings["config_copy"], settings["kept"]) == (
        "tox.ini",
        True,
        ["tox.ini"],
    )
    assert files["tests/config/tox.ini"].decode() == start["tox.ini"]
    # a test patch that changes the configuration: its copy decides
    hidden = {"setup.cfg": "[tool:pytest]\naddopts = -p calc_plugin\n"}
    files = {f.path: f.content for f in _verifier_files(Row, {}, hidden, None, None)}
    assert json.loads(files["tests/grading.json"])["config"] == "setup.cfg"
