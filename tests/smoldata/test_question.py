"""Questions: written from the code and its context, with the answer format stated,
and never containing the answer or the reference code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.grader import render_scalar
from smoldataenvs.notebook import NotebookError, load_notebook
from smoldataenvs.question import leaks
from tests.smoldata.helpers import (
    AGGREGATES,
    EURO,
    MERGE,
    NOTEBOOKS,
    TITANIC,
    code_cell,
    markdown_cell,
    result,
    sample,
    write_notebook,
)


def extract(record: str, allow_boolean: bool = False) -> dict[int, Candidate | CellSkip]:
    found = CandidateExtractor(FileIndex([]), allow_boolean=allow_boolean).extract(sample(record))
    return {item.cell: item for item in found}


def candidate(record: str, cell: int, allow_boolean: bool = False) -> Candidate:
    item = extract(record, allow_boolean)[cell]
    assert isinstance(item, Candidate), item
    return item


def all_sample_candidates() -> list[Candidate]:
    found = []
    for path in sorted(NOTEBOOKS.rglob("*.ipynb")):
        try:
            notebook = load_notebook(path, path.relative_to(NOTEBOOKS).as_posix())
        except NotebookError:
            continue
        found += [c for c in CandidateExtractor(FileIndex([])).extract(notebook)]
    return [c for c in found if isinstance(c, Candidate)]


def test_no_instruction_contains_its_answer_or_reference_code() -> None:
    candidates = all_sample_candidates()
    assert len(candidates) >= 10
    for item in candidates:
        text = " ".join(item.instruction.split())
        for line in item.reference.splitlines():
            line = " ".join(line.split())
            if len(line) >= 24 and not line.startswith("#"):
                assert line not in text, (item.cell, line)
        values = (
            item.answer["value"]
            if item.answer["kind"] in ("list", "mapping")
            else [item.answer["value"]]
        )
        for value in values:
            value = value[1] if isinstance(value, list) else value
            rendered = render_scalar(value)
            if len(rendered) >= 4 and not isinstance(value, bool):  # true/false name the format
                assert not re.search(rf"(?<![\w.]){re.escape(rendered)}(?![\w])", text), rendered
        assert "/workspace/answer.txt" in item.instruction


@pytest.mark.parametrize(
    ("record", "cell", "phrase"),
    [
        (EURO, 9, "Compute the number of rows of the data in `Euro_2012_stats_TEAM.csv`."),
        (
            EURO,
            17,
            "Compute the mean of the `Yellow Cards` column of the data in "
            "`Euro_2012_stats_TEAM.csv`, rounded to a whole number.",
        ),
        (TITANIC, 13, "Compute the sum of the `Survived` column of the data in `train.csv`."),
        (
            AGGREGATES,
            34,
            "- Standard deviation (the standard deviation of the `height(cm)` "
            "column of the data in `data/president_heights.csv`)",
        ),
    ],
)
def test_questions_name_the_operation_and_the_columns(record: str, cell: int, phrase: str) -> None:
    assert phrase in candidate(record, cell).instruction


def test_the_notebooks_own_question_is_quoted_and_the_format_is_stated() -> None:
    text = candidate(EURO, 9).instruction
    assert "> Step 5. How many team participated in the Euro2012?" in text
    assert "as a single number" in text
    assert "`Euro_2012_stats_TEAM.csv` (16 rows; columns: `Team`, `Goals`," in text


def test_series_labels_are_listed_only_when_they_are_not_the_answer() -> None:
    nulls = candidate(MERGE, 61, allow_boolean=True).instruction
    assert "Give one line for each of: `state/region`, `ages`, `year`, `population`" in nulls
    ranking = candidate(MERGE, 80).instruction
    assert "District of Columbia" not in ranking
    assert "first 5 entries" in ranking and "5 entries" in ranking
    assert "one value per line (2 values" in candidate(MERGE, 65).instruction


def test_markdown_that_gives_the_answer_away_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "cities.csv").write_text("city,people\nOslo,700000\nBergen,285000\n")
    path = write_notebook(
        tmp_path / "leaky.ipynb",
        [
            markdown_cell("We load the cities; together they hold 985000 people."),
            code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
            markdown_cell("So the total is 985000."),
            code_cell("cities['people'].sum()", [result("985000")]),
        ],
    )
    [item] = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "leaky.ipynb")))
    assert isinstance(item, Candidate)
    assert "985000" not in item.instruction and "985,000" not in item.instruction
    assert "Compute the sum of the `people` column of the data in `cities.csv`." in item.instruction


def test_unclear_questions_and_questions_without_data_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "cities.csv").write_text("city,people\nOslo,700000\n")
    path = write_notebook(
        tmp_path / "odd.ipynb",
        [
            code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
            code_cell("def weird(t):\n    return len(t) * 7"),
            code_cell("weird(cities)", [result("7")]),
            code_cell("numbers = [1, 2, 3]\nsum(numbers)", [result("6")]),
        ],
    )
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "odd.ipynb")))
    assert [(s.cell, s.reason) for s in found] == [(2, "question.unclear"), (3, "question.no-data")]


def test_leak_check_ignores_short_numbers_but_catches_long_ones() -> None:
    answer = {"kind": "number", "value": 342}
    assert leaks("Step 7. How many people survived? 342 did.", answer, "") is not None
    assert leaks("Step 342a.", answer, "") is None
    assert leaks("Step 7.", {"kind": "number", "value": 7}, "") is None
    code = "merged = merged.drop('abbreviation', axis=1)"
    assert leaks(f"we ran {code} first", answer, code) is not None


def _cities(tmp_path: Path, cells: list[dict]) -> list[Candidate | CellSkip]:
    (tmp_path / "cities.csv").write_text("city,people\nOslo,700000\nBergen,285000\n")
    load = code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')")
    path = write_notebook(tmp_path / "cities.ipynb", [load, *cells])
    return list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "cities.ipynb")))


def test_yes_no_answers_are_skipped_unless_allowed(tmp_path: Path) -> None:
    """`(x > n).any()` is a coin flip for a guessing agent; so is a column of them."""
    cells = [
        code_cell("(cities['people'] > 500000).any()", [result("True")]),
        code_cell(
            "cities.isnull().any()", [result("city      False\npeople    False\ndtype: bool")]
        ),
        code_cell("cities['people'].sum()", [result("985000")]),
    ]
    found = _cities(tmp_path, cells)
    assert [(f.cell, f.reason) for f in found if isinstance(f, CellSkip)] == [
        (1, "answer.boolean"),
        (2, "answer.boolean"),
    ]
    allowed = CandidateExtractor(FileIndex([]), allow_boolean=True).extract(
        load_notebook(tmp_path / "cities.ipynb", "cities.ipynb")
    )
    assert [f.cell for f in allowed if isinstance(f, Candidate)][-2:] == [2, 3]
