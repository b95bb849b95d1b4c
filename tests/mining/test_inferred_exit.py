"""Exit status read from a test runner's summary where the format records none."""

from __future__ import annotations

import pytest

from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.replay import replay
from repo2rlenv.runners.summary import inferred_exit
from tests.mining.factory import ROOT, SessionBuilder

CTX = SessionContext(dataset="exports", revision=None, record_id="r", base_image="img:1")


@pytest.mark.parametrize(
    ("output", "status"),
    [
        ("F" + "." * 229 + "\n1 failed, 229 passed in 3.10s\n", 1),
        ("." * 230 + "\n230 passed in 2.95s\n", 0),
        ("==== 3 passed, 1 warning in 0.12s ====", 0),
        ("== 1 failed, 2 passed, 1 error in 0.1s ==", 1),
        ("==== 2 errors in 0.31s ====", 1),
        ("collected 0 items\n\n==== no tests ran in 0.01s ====", 5),
        ("...\n" + "-" * 70 + "\nRan 3 tests in 0.001s\n\nOK\n", 0),
        ("Ran 3 tests in 0.001s\n\nOK (skipped=1)", 0),
        ("Ran 3 tests in 0.001s\n\nFAILED (failures=1, errors=1)", 1),
        ("2 passed in 0.5s\n... later ...\n1 failed in 0.2s", 1),
        ("the docs say 3 passed but nothing ran", None),
        ("", None),
    ],
)
def test_runner_summaries(output: str, status: int | None) -> None:
    assert inferred_exit(output) == status


def test_a_long_blank_output_is_read_in_linear_time() -> None:
    assert inferred_exit(" " * 60_000 + "\n" * 4000) is None


def _session(first_exit: int | None, second_exit: int | None):
    return (
        SessionBuilder()
        .user("The add test fails, fix calc.py")
        .write(f"{ROOT}/calc.py", "def add(a, b):\n    return a - b\n")
        .write(
            f"{ROOT}/test_calc.py",
            "from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n\n"
            "def test_zero():\n    assert add(0, 0) == 0\n",
        )
        .run("python -m pytest -q", "F.\n1 failed, 1 passed in 0.01s\n", first_exit)
        .edit(f"{ROOT}/calc.py", "return a - b", "return a + b")
        .run("python -m pytest -q", "..\n2 passed in 0.01s\n", second_exit)
        .build()
    )


def test_a_fail_then_pass_without_exit_codes_is_seen_and_marked_inferred() -> None:
    replayed = replay(_session(None, None))
    first, second = replayed.commands
    assert (first.exit_code, first.exit_inferred) == (1, True)
    assert (second.exit_code, second.exit_inferred) == (0, True)
    outcomes = list(KINDS["repair"](replayed, CTX))
    assert [type(o).__name__ for o in outcomes] == ["TaskBundle"], [
        getattr(o, "reason", None) for o in outcomes
    ]


def test_a_recorded_exit_code_is_never_replaced() -> None:
    replayed = replay(_session(0, 0))
    first, _ = replayed.commands
    assert (first.exit_code, first.exit_inferred) == (0, False)
    assert all(isinstance(o, Reject) for o in KINDS["repair"](replayed, CTX))
