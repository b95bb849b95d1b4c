"""A row name that addresses no test (SWE-bench's pytest log parser took the progress
mark `[100%]` for one, in pytest-5262's and -7521's PASS_TO_PASS) is left out of the
verifier's pytest run and count: as an empty node id it made pytest collect the whole
checkout, and the reference of a resolved run scored 0 (issue #26)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from repo2rlenv.kinds.instance_repair import _verifier_files, addressless


@pytest.mark.timeout(30)
def test_a_progress_mark_is_no_test_name():
    names = ["t.py::test_a", "[100%]", "t.py::test_b[x-1]", " ", "inner.py::test_hello"]
    assert addressless(names, {"t.py": ""}) == ["[100%]", " ", "inner.py::test_hello"]


@pytest.mark.timeout(30)
def test_the_verifier_neither_runs_nor_counts_it():
    instance = SimpleNamespace(
        repo="o/r",
        version="1.0",
        FAIL_TO_PASS=("t.py::test_a",),
        PASS_TO_PASS=("[100%]", "t.py::test_b[x-1]", "test_inner.py::test_hello"),
        test_patch="",
    )
    files = _verifier_files(instance, {"t.py": "def test_a(): pass\n"}, {}, None)
    grading = json.loads(next(f.content for f in files if f.path.endswith("grading.json")))
    assert "" not in grading["targets"] and grading["targets"] == ["t.py"]
    assert grading["expected"] == 2 and "[100%]" not in grading["names"]
    assert "test_inner.py::test_hello" not in grading["names"]


@pytest.mark.timeout(30)
def test_the_verifier_reads_the_configuration_pytest_itself_would_find():
    """pytest's `testdir` tests need `-p pytester` from its tox.ini `[pytest]` section
    (pytest-5631 on 3.9: 12 of 16 errored `fixture 'testdir' not found` under `-c
    /dev/null`); any repository's file is chosen in pytest's own order."""
    from repo2rlenv.mining.instances import Instance
    from tests.mining.test_instances import TABLES

    full = json.loads((TABLES / "swe-rebench-rows.jsonl").read_text())
    row = {k: v for k, v in full.items() if k in Instance.model_fields}
    own = Instance.model_validate(row | {"repo": "pytest-dev/pytest"})
    other = Instance.model_validate(row)
    start = {"tox.ini": "[pytest]\naddopts = -p pytester\n", "t.py": "def test_a(): pass\n"}

    def config(instance):
        files = _verifier_files(instance, start, {}, None)
        return json.loads(next(f.content for f in files if f.path.endswith("grading.json")))[
            "config"
        ]

    assert config(own) == config(other) == "tox.ini"
    # pytest 6.0 moved its configuration to pyproject.toml (pytest-7521)
    start["pyproject.toml"] = '[tool.pytest.ini_options]\naddopts = "-p pytester"\n'
    assert config(own) == config(other) == "pyproject.toml"
