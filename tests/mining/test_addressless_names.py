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
    names = ["t.py::test_a", "[100%]", "t.py::test_b[x-1]", " "]
    assert addressless(names) == ["[100%]", " "]


@pytest.mark.timeout(30)
def test_the_verifier_neither_runs_nor_counts_it():
    instance = SimpleNamespace(
        FAIL_TO_PASS=("t.py::test_a",), PASS_TO_PASS=("[100%]", "t.py::test_b[x-1]")
    )
    files = _verifier_files(instance, {"t.py": "def test_a(): pass\n"}, {}, None)
    grading = json.loads(next(f.content for f in files if f.path.endswith("grading.json")))
    assert "" not in grading["targets"] and grading["targets"] == ["t.py::test_a", "t.py::test_b"]
    assert grading["expected"] == 2 and "[100%]" not in grading["names"]
