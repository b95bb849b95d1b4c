"""`semantic.constant-answer`: a qa answer a guess made without the data passes is refused,
for both qa sources (notebook tasks' `{"kind", "value"}` and session qa's `{"answer"}`),
by `validate` on a task folder and by `mine` before a draft is emitted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir
from repo2rlenv.emit import Draft, Skip
from repo2rlenv.examples.renderers.codex import codex
from repo2rlenv.examples.session_stories import ORDERS, STORIES
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
from repo2rlenv.validate import run_static
from repo2rlenv.validate.constant_answer import constant_guess, read_answer
from tests.test_semantic_rules import put, story_task

RULE = "semantic.constant-answer"
SNOW_LABELS = [f"2012-01-01 {hour:02d}:00:00" for hour in range(10)]


def notebook_answer(kind: str, value: object, atol: float = 1e-3, rtol: float = 1e-3) -> str:
    return json.dumps({"kind": kind, "value": value, "atol": atol, "rtol": rtol})


def why(expected: str, instruction: str = "") -> str | None:
    answer = read_answer(expected)
    assert answer is not None
    return constant_guess(answer, instruction)


@pytest.mark.parametrize(
    ("expected", "instruction", "said"),
    [
        # The real degenerate task (jvns/pandas-cookbook ch. 6): the first 10 entries
        # of a snow indicator, every one 0.0.
        (notebook_answer("mapping", [[k, 0.0] for k in SNOW_LABELS]), "", "every value"),
        (notebook_answer("list", ["Snow"] * 4), "", "all 4 values of the answer are 'Snow'"),
        (notebook_answer("list", [7, 7, 7]), "", "all 3 values of the answer are 7"),
        # Within the grader's rtol of one constant (100.05), though not equal.
        (notebook_answer("list", [100.0, 100.1]), "", "all 2 values"),
        (notebook_answer("number", 0), "", "the answer is 0"),
        (notebook_answer("number", 0.0004), "", "the answer is 0"),  # within atol of 0
        (notebook_answer("list", []), "", "empty"),
        (notebook_answer("string", " "), "", "empty"),
        (notebook_answer("number", 8784), "`weather.csv` (8,784 rows; columns: …)", "8,784 rows"),
        (json.dumps({"answer": "0"}), "", "the answer is 0"),
        (json.dumps({"answer": "120"}), "The log has 120 lines. How many?", "120 lines"),
    ],
)
def test_answers_a_guess_without_the_data_passes_are_refused(
    expected: str, instruction: str, said: str
) -> None:
    reason = why(expected, instruction)
    assert reason is not None and said in reason


@pytest.mark.parametrize(
    ("expected", "instruction"),
    [
        # Real tasks mined from ../shared/samples/real and the bundled bakery example.
        (notebook_answer("list", [4, 4, 4, 5, 3, 10, 5, 6, 2, 2, 6, 1, 5, 12, 5, 2]), ""),
        (notebook_answer("mapping", [["Mean height", 180.05], ["Minimum height", 163]]), ""),
        (notebook_answer("list", ["PR", "USA"]), ""),
        (notebook_answer("string", "sourdough"), ""),
        (notebook_answer("number", 16), "`Euro_2012_stats_TEAM.csv` (columns: `Team`)"),
        (notebook_answer("number", 70.63), "Python 3 with pandas is installed."),
        (json.dumps({"answer": "3"}), ""),
        # Close to 0 but outside the tolerance; one zero among other values.
        (notebook_answer("number", 0.01), ""),
        (notebook_answer("list", [0, 1]), ""),
        # A stated count that is not the answer; "10 entries" describes the format.
        (notebook_answer("number", 41), "`t.csv` (8,784 rows) … (10 entries; …)"),
        (notebook_answer("number", 10), "with one value per line (10 entries)"),
        # Session qa compares with rel 1e-6: 0.001 is not 0 there.
        (json.dumps({"answer": "0.001"}), ""),
    ],
)
def test_answers_that_need_the_data_pass(expected: str, instruction: str) -> None:
    assert why(expected, instruction) is None


def test_expected_files_of_other_shapes_are_not_judged() -> None:
    assert read_answer(None) is None
    assert read_answer("not json") is None
    assert read_answer(json.dumps({"targets": ["tests/test_x.py::test_a"], "expected": 1})) is None
    assert read_answer(json.dumps([0, 0])) is None


def test_validate_reports_it_on_a_task_folder(tmp_path: Path) -> None:
    """The session qa task of the bundled orders story, its answer changed to 0."""
    path = story_task(tmp_path, "orders", "qa")
    assert [f.rule_id for f in run_static(read_task_dir(path)) if f.rule_id == RULE] == []
    put(path, "tests/expected.json", json.dumps({"answer": "0"}) + "\n")
    found = [f for f in run_static(read_task_dir(path)) if f.rule_id == RULE]
    assert [(f.severity, f.path) for f in found] == [("error", "tests/expected.json")]


def test_mine_refuses_a_session_qa_task_whose_answer_is_zero(tmp_path: Path) -> None:
    """The session miner's gate: the same question with a count of 0 is refused as
    `clean.semantic.constant-answer`; the bundled story (answer 3) is emitted."""
    zero = [
        ("user", "How many orders in orders.csv were shipped to Mexico?"),
        ("run", "cat orders.csv", ORDERS, 0),
        ("run", "grep -c ',Mexico,shipped' orders.csv", "0\n", 0),
        ("say", "0 orders were shipped to Mexico."),
    ]
    (tmp_path / "zero.jsonl").write_text(codex("zero", zero))
    (tmp_path / "orders.jsonl").write_text(codex("orders", STORIES["orders"]))
    options = MineOptions(
        dataset=str(tmp_path), validate_tasks=False, base_image="img:1", kinds=["qa"]
    )
    events = list(SessionPipeline(options, runtime=None).events())
    skips = {e.record_id: e.reason for e in events if isinstance(e, Skip)}
    drafts = [
        e.bundle.config.metadata.repo2rlenv.source.record_id for e in events if isinstance(e, Draft)
    ]
    assert skips == {"zero.jsonl": "clean." + RULE}
    assert drafts == ["orders.jsonl"]


def table_answer(rows: list[list[object]], keys: int = 1) -> str:
    columns = ["label", *(f"c{i}" for i in range(len(rows[0]) - keys))] if rows else []
    return json.dumps({"kind": "table", "columns": columns, "keys": keys, "value": rows})


def test_table_answers_are_judged_by_their_cells_not_their_labels() -> None:
    """Table answers (DataFrame outputs) were not judged at all: a table of zeros passed.
    Only the cells outside the `keys` label columns count: the labels come from the data's
    index and are copied, the cells are what the question computes."""
    zeros = table_answer([[label, 0.0, 0] for label in SNOW_LABELS])
    reason = why(zeros)
    assert reason is not None and "every value" in reason
    # Labels that are numbers (a year index) do not make a real table constant, nor do
    # they make a constant one look informative.
    assert why(table_answer([[2010 + i, 3.5 * i + 1] for i in range(4)])) is None
    assert why(table_answer([[2010 + i, 7] for i in range(4)])) is not None
    # Two label columns (a grouped MultiIndex), real computed cells.
    grouped = table_answer([["a", "x", 1.5], ["a", "y", 2.25], ["b", "x", 4.0]], keys=2)
    assert why(grouped) is None
