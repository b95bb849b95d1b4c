"""More questions from the same notebooks (issue 32, yield): a table too large to show
becomes the count of its rows when a filter computed it, the first rows of a grouped
aggregate are a defined slice (groups in key order), and the summary statistics or a
quantile of one column are stated. The gates keep holding: an unfiltered count, a count
a filter did not change, `sort=False`, per-row group results and a text column's
`describe()` stay refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.notebook import load_notebook
from tests.smoldata.helpers import code_cell, result, write_notebook
from tests.smoldata.test_tables import html_result

FRAME = pd.DataFrame(
    {
        "city": [f"c{i % 12:02d}" for i in range(40)],
        "rain": [3.0 + ((i * 7) % 30) * 1.5 for i in range(40)],
        "kind": ["wet" if i % 3 else "dry" for i in range(40)],
    }
)


def extract(folder: Path, cells: list[dict]) -> dict[int, Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    FRAME.to_csv(folder / "rain.csv", index=False)
    path = write_notebook(folder / "rain.ipynb", cells)
    found = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "rain.ipynb"))
    return {item.cell: item for item in found}


def load() -> dict:
    return code_cell("import pandas as pd\ndata = pd.read_csv('rain.csv')")


def run_reference(candidate: Candidate, folder: Path) -> object:
    """The reference's statements, then the answer expression's value, as the task's
    solve step evaluates it."""
    script = (
        candidate.reference
        + "\nprint(repr("
        + candidate.reference.rstrip().splitlines()[-1]
        + "))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.timeout(60)
def test_a_filtered_table_too_large_to_show_asks_for_its_row_count(tmp_path: Path) -> None:
    wet = FRAME[FRAME["kind"] == "wet"]  # 26 rows: over the 20-row cap, shown whole
    wide = pd.DataFrame({f"n{i}": range(26) for i in range(9)})  # over the 8-column cap
    with pd.option_context("display.max_rows", 10, "display.min_rows", 10):
        cut = html_result(FRAME[FRAME["rain"] > 10])  # cut: "N rows × 3 columns"
    found = extract(
        tmp_path,
        [
            load(),
            code_cell("data[data['kind'] == 'wet']", [html_result(wet)]),
            code_cell("data[data['rain'] > 10]", [cut]),
            code_cell("data", [html_result(FRAME)]),
            code_cell("data[data['rain'] > 0]", [html_result(FRAME)]),
            code_cell("data[data['kind'] == 'wet'].head(25)", [html_result(wet.head(25))]),
            code_cell("data.assign(double=data['rain'] * 2)", [html_result(FRAME)]),
            code_cell("data[data['kind'] == 'wet']['rain']", [result(repr(wet["rain"]))]),
            # huneshkumar/100-EDA-Projects Books c7: `len` of a filtered describe() is 8
            code_cell("data[data['kind'] == 'wet'].describe()", [html_result(wide.describe())]),
            code_cell("data[data['kind'] == 'wet'].T", [html_result(wide.T)]),
        ],
    )
    first, second = found[1], found[2]
    assert isinstance(first, Candidate), first
    assert first.answer == {"kind": "number", "value": len(wet)}
    assert "the number of rows (items) in" in first.question.text
    assert "`kind` equals 'wet'" in first.question.text
    assert first.reference.rstrip().endswith("len(data[data['kind'] == 'wet'])")
    assert run_reference(first, tmp_path) == str(len(wet))
    assert isinstance(second, Candidate), second
    assert second.answer == {"kind": "number", "value": int((FRAME["rain"] > 10).sum())}
    assert run_reference(second, tmp_path) == str(second.answer["value"])
    # The file as loaded: nothing computed. A filter that kept every row: the file's length.
    assert isinstance(found[3], CellSkip) and found[3].reason == "question.trivial-lookup"
    assert isinstance(found[4], CellSkip) and found[4].reason == "question.count-of-whole-file"
    # A row cut's count is its literal, so the frame it cut is counted instead (computed
    # in the container: here the same question as the first, which the miner keeps);
    # a derived column selects no rows; a long Series (mostly one entry per column:
    # `movie.count()`) is not counted.
    cut = found[5]
    assert isinstance(cut, Candidate) and cut.counted_frame is not None, cut
    assert cut.computed_as == "count" and cut.finish is not None
    assert cut.question.text == first.question.text and cut.dedup_key[1] == first.dedup_key[1]
    assert isinstance(found[6], CellSkip) and found[6].reason == "question.count-without-filter"
    assert isinstance(found[7], CellSkip) and found[7].reason == "answer.too-many-items"
    # A describe() or a transpose has as many rows as statistics or columns: no data count.
    # (Its columns are row numberings 0..25, which `derived` does not ask about either.)
    assert isinstance(found[8], CellSkip) and found[8].reason == "answer.table-too-large"
    assert isinstance(found[9], CellSkip) and found[9].reason == "answer.table-too-large"


@pytest.mark.timeout(60)
def test_the_first_rows_of_a_grouped_aggregate_are_a_defined_slice(tmp_path: Path) -> None:
    means = FRAME.groupby("city")["rain"].mean()
    frame_means = FRAME.groupby("city")[["rain"]].mean()
    found = extract(
        tmp_path,
        [
            load(),
            code_cell(
                "data.groupby('city')[['rain']].mean().round(1).head()",
                [html_result(frame_means.round(1).head())],
            ),
            code_cell(
                "data.groupby('city', sort=False)[['rain']].mean().head()",
                [html_result(frame_means.head())],
            ),
            code_cell(
                "data.groupby('city').head(2)", [html_result(FRAME.groupby("city").head(2).head(8))]
            ),
            code_cell("data.groupby('city')['rain'].mean()", [result(repr(means))]),
            code_cell("data.groupby('city', sort=False)['rain'].mean()", [result(repr(means))]),
        ],
    )
    head = found[1]
    assert isinstance(head, Candidate), head
    assert head.answer["kind"] == "table" and len(head.answer["value"]) == 5
    assert "groups in ascending order of 'city'" in head.question.text
    assert "the first 5 entries of" in head.question.text
    assert isinstance(found[2], CellSkip) and found[2].reason == "answer.table-unsorted-head"
    assert isinstance(found[3], CellSkip) and found[3].reason == "answer.table-unsorted-head"
    assert isinstance(found[4], Candidate), found[4]  # 12 groups: the whole result
    # Groups in first-seen order: "ascending order of 'city'" would be false.
    assert isinstance(found[5], CellSkip) and found[5].reason == "question.undescribed"


@pytest.mark.timeout(60)
def test_a_grouped_aggregate_too_long_to_show_keeps_its_first_groups(tmp_path: Path) -> None:
    frame = pd.DataFrame({"city": [f"c{i:02d}" for i in range(30)] * 2, "rain": range(60)})
    means = frame.groupby("city")[["rain"]].mean()
    tmp_path.mkdir(parents=True, exist_ok=True)
    frame.to_csv(tmp_path / "rain.csv", index=False)
    cells = [load(), code_cell("data.groupby('city')[['rain']].mean()", [html_result(means)])]
    path = write_notebook(tmp_path / "rain.ipynb", cells)
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "rain.ipynb")))
    assert isinstance(found[0], Candidate), found[0]
    assert [row[0] for row in found[0].answer["value"]] == ["c00", "c01", "c02", "c03", "c04"]
    assert found[0].reference.rstrip().endswith(".head(5)")


@pytest.mark.timeout(60)
def test_summary_statistics_and_a_quantile_of_one_column_are_stated(tmp_path: Path) -> None:
    found = extract(
        tmp_path,
        [
            load(),
            code_cell("data['rain'].describe()", [result(repr(FRAME["rain"].describe()))]),
            code_cell("data['rain'].quantile(0.2)", [result(repr(FRAME["rain"].quantile(0.2)))]),
            code_cell("data['kind'].describe()", [result(repr(FRAME["kind"].describe()))]),
            code_cell("data.describe()", [html_result(FRAME.describe())]),
            code_cell("# only a comment: a saved output without code", [result("3")]),
        ],
    )
    stats, quantile = found[1], found[2]
    assert isinstance(stats, Candidate), stats
    assert [k for k, _ in stats.answer["value"]][:3] == ["count", "mean", "std"]
    assert "summary statistics of pandas' `describe()`" in stats.question.text
    assert "`rain` column" in stats.question.text
    assert isinstance(quantile, Candidate), quantile
    assert "the 0.2 quantile" in quantile.question.text
    assert isinstance(found[3], CellSkip) and found[3].reason == "question.undescribed"
    # A table's describe() is asked about named cells instead (tests/smoldata/test_derived.py).
    assert isinstance(found[4], Candidate) and found[4].part == 1
    assert "the mean of the `rain` column" in found[4].question.text
    assert isinstance(found[5], CellSkip) and found[5].reason == "cell.no-expression"


@pytest.mark.timeout(10)
def test_a_condition_on_a_date_part_of_the_row_labels_names_no_column() -> None:
    """`data[data.index.month == 1]` keeps January's rows; it was read as a column
    `month` ("where `month` equals 1"), which the data does not have."""
    import ast

    from smoldataenvs.describe import Describer

    load = ast.parse("pd.read_csv('flow.csv', index_col=0, parse_dates=True)").body[0].value  # type: ignore[attr-defined]
    describer = Describer({"data": load}, {})
    text = describer.phrase(ast.parse("len(data[data.index.month == 1])").body[0].value)  # type: ignore[attr-defined]
    assert text is not None and "the month number (1 = January) of the row labels equals 1" in text
    assert "`month`" not in text
    nested = ast.parse("data[data.a.b == 1]").body[0].value  # type: ignore[attr-defined]
    assert describer.phrase(nested) is None


@pytest.mark.timeout(60)
def test_a_sorted_cut_whose_sort_values_tie_at_the_cut_is_refused(tmp_path: Path) -> None:
    """Real case: Packt's `movie2.sort_values('title_year', ascending=False).head()`
    shows five 2016 films out of about a hundred; which five is the sort's choice."""
    frame = pd.DataFrame(
        {"city": [f"c{i:02d}" for i in range(12)], "year": [5, 5, 5, 5, 5, 5, 4, 3, 2, 1, 1, 0]}
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    frame.to_csv(tmp_path / "rain.csv", index=False)
    latest = frame.sort_values("year", ascending=False)
    counts = frame["year"].value_counts()
    cells = [
        load(),
        code_cell("data.sort_values('year', ascending=False).head()", [html_result(latest.head())]),
        code_cell(
            "data.sort_values('year', ascending=False).head(8)", [html_result(latest.head(8))]
        ),
        code_cell("data['year'].value_counts().head(4)", [result(repr(counts.head(4)))]),
        code_cell("data['year'].value_counts().head(2)", [result(repr(counts.head(2)))]),
        code_cell(
            "data.sort_values('year').head(10).tail(3)",
            [html_result(frame.sort_values("year").head(10).tail(3))],
        ),
        code_cell("top = data.nlargest(5, 'year')"),
        code_cell("top", [html_result(frame.nlargest(5, "year"))]),
    ]
    path = write_notebook(tmp_path / "rain.ipynb", cells)
    items = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "rain.ipynb")))
    found = {item.cell: item for item in items if not getattr(item, "part", 0)}
    assert isinstance(found[1], CellSkip) and found[1].reason == "answer.tied-cut"
    assert isinstance(found[2], Candidate), found[2]  # cut between 3 and 2: defined
    # Counts 6, 2, 1, 1: the top 4 tie at the cut, so only the untied keys are asked,
    # by name (derived_keys), never the cut itself.
    assert 3 not in found
    keyed = [i for i in items if i.cell == 3]
    assert [(i.part, i.answer["value"]) for i in keyed] == [(1, 6), (2, 2)]
    assert isinstance(found[4], Candidate), found[4]  # counts 6 and 2
    assert isinstance(found[5], CellSkip) and found[5].reason == "answer.tied-cut"
    assert isinstance(found[7], CellSkip) and found[7].reason == "answer.tied-cut"  # via `top`


@pytest.mark.timeout(60)
def test_the_number_of_duplicate_rows_is_stated(tmp_path: Path) -> None:
    """Kaggle EDA's `df.duplicated().sum()` (huneshkumar/100-EDA-Projects: 6 notebooks)
    was `question.undescribed`; pandas' default (`keep='first'`) is what the words say.
    `subset=` and `keep=` change the test and stay refused."""
    twice = pd.concat([FRAME, FRAME.head(7)], ignore_index=True)
    folder = tmp_path / "dup"
    folder.mkdir()
    twice.to_csv(folder / "rain.csv", index=False)
    path = write_notebook(
        folder / "rain.ipynb",
        [
            load(),
            code_cell("data.duplicated().sum()", [result(str(int(twice.duplicated().sum())))]),
            code_cell(
                "data['city'].duplicated().sum()",
                [result(str(int(twice["city"].duplicated().sum())))],
            ),
            code_cell("data.duplicated(subset=['city']).sum()", [result("35")]),
        ],
    )
    found = {
        item.cell: item
        for item in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "rain.ipynb"))
    }
    rows, values = found[1], found[2]
    assert isinstance(rows, Candidate), rows
    assert rows.answer == {"kind": "number", "value": 7}
    assert "whether each row of the data in `rain.csv` repeats an earlier row" in (
        rows.question.text
    )
    assert run_reference(rows, folder) in ("7", "np.int64(7)")  # numpy 2 repr
    assert isinstance(values, Candidate), values
    assert "whether each value of" in values.question.text
    assert isinstance(found[3], CellSkip) and found[3].reason == "question.undescribed"
