"""The verifier runs an instance's node ids in the order pytest collects them."""

from __future__ import annotations

import pytest

from repo2rlenv.kinds.node_order import in_definition_order

TEXT = '''import pytest

def test_b():
    pass

class TestC:
    def test_z(self):
        pass

    def test_a(self):
        pass

async def test_async():
    pass

def test_a():
    pass
'''


@pytest.mark.timeout(10)
def test_nodes_run_in_definition_order_file_by_file():
    """sphinx-10449: the row lists FAIL_TO_PASS first; run in that order, a Sphinx test
    app reused the environment the first test had built and a PASS_TO_PASS test failed
    on the reference. Definition order is what SWE-bench's whole-file run gives: the
    method is found inside its class (a module-level `test_a` elsewhere is not it), an
    async test is found, and an unknown node stays after its file's known ones."""
    files = {"t/test_x.py": TEXT, "t/test_y.py": "def test_y():\n    pass\n"}
    row = [
        "t/test_x.py::test_a",
        "t/test_y.py::test_y",
        "t/test_x.py::test_missing",
        "t/test_x.py::TestC::test_a",
        "t/test_x.py::test_async",
        "t/test_x.py::TestC::test_z",
        "t/test_x.py::test_b",
        "t/test_gone.py::test_q",
    ]
    assert in_definition_order(row, files) == [
        "t/test_x.py::test_b",
        "t/test_x.py::TestC::test_z",
        "t/test_x.py::TestC::test_a",
        "t/test_x.py::test_async",
        "t/test_x.py::test_a",
        "t/test_x.py::test_missing",
        "t/test_y.py::test_y",
        "t/test_gone.py::test_q",
    ]
    assert sorted(in_definition_order(row, files)) == sorted(row)  # nothing lost
