"""Questions worth asking (issue 32 point 2): the chain of cells an answer depends on is
recorded as its difficulty, a look-up with nothing computed is refused, and a filter
and grouping spread over several cells is stated in the question."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.dataflow import operations
from smoldataenvs.notebook import load_notebook
from smoldataenvs.options import NotebookOptions
from smoldataenvs.task import build_bundle
from tests.smoldata.helpers import code_cell, result, write_notebook

pytestmark = pytest.mark.timeout(60)

GOALS = "Team,Year,Goals\nSpain,2010,3\nSpain,2012,5\nItaly,2012,2\nSpain,2012,1\n"
PER_YEAR = "Year\n2010    3.0\n2012    3.0\nName: Goals, dtype: float64"


def _extract(tmp_path: Path, cells: list[dict]) -> dict[int, Candidate | CellSkip]:
    (tmp_path / "goals.csv").write_text(GOALS)
    load = code_cell("import pandas as pd\ngoals = pd.read_csv('goals.csv')")
    path = write_notebook(tmp_path / "goals.ipynb", [load, *cells])
    found = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "goals.ipynb"))
    return {item.cell: item for item in found}


def test_trivial_lookups_are_refused_and_computations_kept(tmp_path: Path) -> None:
    found = _extract(
        tmp_path,
        [
            code_cell("goals['Goals'].head(3)", [result("0    3\n1    5\n2    2\nName: Goals")]),
            code_cell("goals.shape", [result("(4, 3)")]),
            code_cell("len(goals)", [result("4")]),
            code_cell("goals.iloc[1]['Goals']", [result("5")]),
            code_cell("goals['Goals'].max()", [result("5")]),
            code_cell("goals[goals['Team'] == 'Spain'].shape[0]", [result("3")]),
        ],
    )
    reasons = {cell: getattr(item, "reason", "task") for cell, item in found.items()}
    assert reasons == {
        1: "question.trivial-lookup",  # "the first 3 entries" of an unsorted column
        2: "question.trivial-lookup",
        3: "question.trivial-lookup",
        4: "question.trivial-lookup",
        5: "task",
        6: "task",  # a count after a filter is computed
    }, found
    assert found[1].detail == "goals['Goals'].head(3)"  # type: ignore[union-attr]


def test_a_filter_and_grouping_over_three_cells_is_stated_and_recorded(tmp_path: Path) -> None:
    """pandas-cookbook style: one cell filters, one groups, the next aggregates."""
    found = _extract(
        tmp_path,
        [
            code_cell("spain = goals[goals['Team'] == 'Spain']"),
            code_cell("by_year = spain.groupby('Year')"),
            code_cell("by_year['Goals'].mean()", [result(PER_YEAR)]),
        ],
    )
    item = found[3]
    assert isinstance(item, Candidate), item
    text = item.question.text
    assert "where `Team` equals 'Spain'" in text, text
    assert "for each 'Year'" in text and "the mean of the `Goals` column" in text, text
    assert item.difficulty.chain == [0, 1, 2, 3]
    assert item.difficulty.operations["filter"] == 1
    assert item.difficulty.operations["grouping"] == 1
    assert item.difficulty.operations["aggregation"] == 1
    assert "by_year = spain.groupby('Year')" in item.reference

    bundle = build_bundle(
        item,
        NotebookOptions(dataset=str(tmp_path)),
        dataset="local",
        revision=None,
        license=None,
        base_image="python:3.12-slim",
    )
    recorded = bundle.config.metadata.smoldataenvs["difficulty"]  # type: ignore[index]
    assert recorded["chain_length"] == 4
    assert recorded["chain_cells"] == [0, 1, 2, 3]
    assert recorded["computing_operations"] == 3


def test_a_query_names_its_condition(tmp_path: Path) -> None:
    found = _extract(
        tmp_path,
        [
            code_cell("goals.query(\"Team == 'Spain'\")['Goals'].sum()", [result("9")]),
            code_cell("k = 2012\ngoals.query('Year == @k')['Goals'].sum()", [result("8")]),
        ],
    )
    assert isinstance(found[1], Candidate), found[1]
    assert "keeping only the rows where `Team == 'Spain'`" in found[1].question.text
    assert getattr(found[2], "reason", "") == "question.undescribed"  # `@k` is not stated


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("df.head()", {}),
        ("df['x']", {}),
        ("df.describe()", {"aggregation": 1}),  # statistics; a table's is undescribed
        ("m = df['x'] > 3", {"filter": 1}),
        ("df.loc[df.x.isnull(), 'y']", {"filter": 1}),
        ("pd.merge(a, b, on='k')", {"join": 1}),
        ("df.groupby('k')['v'].sum()", {"grouping": 1, "aggregation": 1}),
        ("df['r'] = df['a'] / df['b']", {"derive": 1}),
        ("df.sort_values('x').head(3)", {"sort": 1}),
        ("df = pd.read_csv('a.csv')", {"load": 1}),
    ],
)
def test_operations_are_counted_by_kind(code: str, expected: dict[str, int]) -> None:
    assert dict(operations(ast.parse(code).body)) == expected


def test_set_index_and_a_whole_table_grouping_are_stated(tmp_path: Path) -> None:
    """jvns/pandas-cookbook ch. 4: a weekday column from the date labels in one cell,
    `groupby('weekday').sum()` in the next; jorisvandenbossche's tutorial:
    `df = df.set_index('Name')` above every later answer."""
    (tmp_path / "bikes.csv").write_text("Date,Berri\n2012-01-02,10\n2012-01-03,20\n2012-01-09,30\n")
    frame = pd.DataFrame({"Berri": [40, 20]}, index=pd.Index([0, 1], name="weekday"))
    shown = {
        "output_type": "execute_result",
        "execution_count": 1,
        "metadata": {},
        "data": {"text/plain": repr(frame), "text/html": frame.to_html()},
    }
    cells = [
        code_cell(
            "import pandas as pd\n"
            "bikes = pd.read_csv('bikes.csv', index_col='Date', parse_dates=True)"
        ),
        code_cell("berri = bikes[['Berri']].copy()\nberri['weekday'] = berri.index.weekday"),
        code_cell("counts = berri.groupby('weekday').sum()\ncounts", [shown]),
        code_cell("plain = pd.read_csv('bikes.csv')\nplain = plain.set_index('Date')"),
        code_cell("plain['Berri'].max()", [result("30")]),
    ]
    path = write_notebook(tmp_path / "bikes.ipynb", cells)
    extracted = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "bikes.ipynb"))
    found = {f.cell: f for f in extracted}
    grouped, labelled = found[2], found[4]
    assert isinstance(grouped, Candidate), grouped
    text = grouped.question.text
    assert "the added column `weekday` = the day of the week (0 = Monday) of the row labels" in (
        text
    )
    assert "for each 'weekday'" in text and text.startswith("Compute the sum of the columns")
    assert grouped.difficulty.chain == [0, 1, 2]
    assert grouped.answer["kind"] == "table"
    assert isinstance(labelled, Candidate), labelled
    assert labelled.question.text == (
        "Compute the largest value of the `Berri` column of the data in `bikes.csv` "
        "(with its `Date` column as the row labels)."
    )


@pytest.mark.parametrize(
    ("code", "phrase"),
    [
        # Reviewer reads of PacktPublishing/Pandas-Cookbook tasks (docs/notebooks.md):
        # which column picks the rows, and `.round(-2)` read as "rounded to None".
        (
            "movies.nlargest(100, 'score')",
            "the 100 rows with the largest `score` of the data in `movie.csv`",
        ),
        ("movies['pay'].mean().round(-2)", "rounded to the nearest 100"),
        ("movies['pay'].mean().round(1)", "rounded to 1 decimal places"),
    ],
)
def test_rows_picked_by_a_column_and_rounding_to_tens_are_stated(code: str, phrase: str) -> None:
    from smoldataenvs.describe import Describer

    load = ast.parse("pd.read_csv('movie.csv')").body[0].value  # type: ignore[attr-defined]
    describer = Describer({"movies": load}, {})
    text = describer.phrase(ast.parse(code).body[0].value)  # type: ignore[attr-defined]
    assert text is not None and phrase in text, text
    assert describer.phrase(ast.parse("movies['pay'].round(n)").body[0].value) is None  # type: ignore[attr-defined]
