"""Tables as answers (issue 32 point 1): a DataFrame result read from its saved HTML is
graded cell by cell (tolerance, NaN only where both, rows and columns in any order), a
notebook cell showing one becomes a table candidate, a head() of an unordered frame is
refused, and the reference writes the live frame in the answer format the grader reads."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from repo2rlenv.bundle import find_task_dirs
from repo2rlenv.emit import Draft, Skip, emit_all
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.grader import AnswerError, grade, render_answer
from smoldataenvs.saved_output import MAX_TABLE_ROWS, parse_table
from tests.conftest import needs_samples
from tests.smoldata.helpers import EURO, NOTEBOOKS, code_cell, markdown_cell, write_notebook

pytestmark = pytest.mark.timeout(120)

FRAME = pd.DataFrame(
    {
        "city": ["Oslo", "Oslo", "Rome", "Rome"],
        "year": [2020, 2021, 2020, 2021],
        "rain": [12.5, 13.25, None, 4.0],
        "note": ["wet  day", "dry", "sunny", "dry"],
    }
)


def grouped() -> dict:
    """A two-level (MultiIndex) grouped result, as Jupyter saved it."""
    table = FRAME.groupby(["city", "year"])[["rain", "note"]].first()
    return parse_table(table._repr_html_())


def csv_of(rows: list[list[str]]) -> str:
    return "\n".join(",".join(row) for row in rows) + "\n"


RIGHT = [
    ["year", "rain", "city", "note"],
    ["2021", "4.0", "Rome", "dry"],
    ["2020", "12.5001", "Oslo", "wet day"],
    ["2020", "", "Rome", "sunny"],
    ["2021", "13.25", "Oslo", "dry"],
]


def test_a_multiindex_table_is_read_with_its_row_labels() -> None:
    answer = grouped()
    assert answer["columns"] == ["city", "year", "rain", "note"]
    assert answer["keys"] == 2
    assert answer["value"][1] == ["Oslo", 2021, 13.25, "dry"]
    assert answer["value"][2][2] is None  # NaN kept as a missing cell


def test_reordered_rows_and_columns_within_tolerance_pass() -> None:
    assert grade(grouped(), csv_of(RIGHT)) == (True, "table")
    assert grade(grouped(), render_answer(grouped()))[0]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ((1, 1, "4.1"), "a wrong number"),
        ((3, 1, "0"), "a number where the notebook had NaN"),
        ((1, 1, ""), "NaN where the notebook had a number"),
        ((4, 3, "wet"), "a wrong string"),
        ((1, 2, "Oslo"), "a wrong row label"),
    ],
)
def test_a_wrong_cell_fails(change: tuple[int, int, str], why: str) -> None:
    rows = [list(r) for r in RIGHT]
    row, column, value = change
    rows[row][column] = value
    assert grade(grouped(), csv_of(rows)) == (False, "no-match"), why


def test_a_tab_separated_file_with_a_byte_order_mark_is_read() -> None:
    text = "\ufeff" + "\n".join("\t".join(row) for row in RIGHT) + "\n"
    assert grade(grouped(), text) == (True, "table")


def test_a_missing_or_extra_row_or_column_fails() -> None:
    assert not grade(grouped(), csv_of(RIGHT[:-1]))[0]
    assert not grade(grouped(), csv_of([*RIGHT, ["2022", "1", "Oslo", "dry"]]))[0]
    assert not grade(grouped(), csv_of([r[:-1] for r in RIGHT]))[0]
    assert not grade(grouped(), csv_of([[*r, "x"] for r in RIGHT]))[0]
    assert grade(grouped(), "") == (False, "empty")


def test_a_default_index_is_not_a_key_and_may_be_written_or_not() -> None:
    answer = parse_table(FRAME.head(2)._repr_html_())
    assert answer["keys"] == 0
    assert answer["columns"] == ["city", "year", "rain", "note"]
    assert grade(answer, FRAME.head(2).to_csv())[0]  # with pandas' unnamed index column
    assert grade(answer, FRAME.head(2).iloc[::-1].to_csv(index=False))[0]


def test_row_labels_older_pandas_wrote_as_plain_cells_are_keys() -> None:
    """Old pandas put the index in `<td>` cells under an empty header cell (salary
    notebook's `corr()`): the row labels are still keys, a RangeIndex still none."""
    corr = FRAME[["year", "rain"]].corr()
    old = re.sub(r"<th>(year|rain)</th>(?=\s*<td>)", r"<td>\1</td>", corr._repr_html_())
    assert old.count("<td>year</td>") == 1  # the body's label, not the header's
    answer = parse_table(old)
    assert (answer["keys"], answer["columns"]) == (1, ["index", "year", "rain"])
    assert [row[0] for row in answer["value"]] == ["year", "rain"]
    assert grade(answer, corr.rename_axis("index").to_csv())[0]  # the header it is told
    ranged = re.sub(r"<th>(\d+)</th>", r"<td>\1</td>", FRAME.head(2)._repr_html_())
    assert parse_table(ranged)["keys"] == 0
    # a named index: its name in a second header row, empty past it (the salary pivot)
    means = FRAME.groupby("city")[["rain"]].mean()
    named = re.sub(r"<th>(\w+)</th>(?=\s*<td>)", r"<td>\1</td>", means._repr_html_())
    assert "<td>" + means.index[0] + "</td>" in named
    answer = parse_table(named)
    assert (answer["keys"], answer["columns"]) == (1, ["city", "rain"])
    assert grade(answer, means.to_csv())[0]


def test_pivoted_and_oversized_tables() -> None:
    pivot = FRAME.pivot(index="city", columns="year", values="rain")
    answer = parse_table(pivot._repr_html_())
    assert answer["columns"] == ["city", "2020", "2021"]
    assert grade(answer, pivot.reset_index().to_csv(index=False))[0]
    big = pd.DataFrame({"x": range(MAX_TABLE_ROWS + 1)})
    with pytest.raises(AnswerError) as caught:
        parse_table(big._repr_html_())
    assert caught.value.reason == "answer.table-too-large"
    two_levels = FRAME.groupby("city")[["rain"]].agg(["mean", "max"])
    with pytest.raises(AnswerError) as caught:
        parse_table(two_levels._repr_html_())
    assert caught.value.reason == "answer.table-multicolumns"


def html_result(frame: pd.DataFrame) -> dict:
    return {
        "output_type": "execute_result",
        "execution_count": 1,
        "metadata": {},
        "data": {"text/plain": repr(frame), "text/html": frame._repr_html_()},
    }


def rain_notebook(folder: Path) -> Path:
    """A notebook whose data is a real CSV, with a grouped table, a sort+head (a defined
    slice) and a head() of the unordered frame."""
    (folder / "data").mkdir(parents=True)
    FRAME.to_csv(folder / "data" / "rain.csv", index=False)
    data = pd.read_csv(folder / "data" / "rain.csv")
    by_city = data.groupby("city")[["rain"]].mean()
    top = data.sort_values("rain", ascending=False).head(2)
    cells = [
        code_cell("import pandas as pd\ndata = pd.read_csv('data/rain.csv')"),
        markdown_cell("Average rainfall per city."),
        code_cell("data.groupby('city')[['rain']].mean()", [html_result(by_city)]),
        code_cell("data.sort_values('rain', ascending=False).head(2)", [html_result(top)]),
        code_cell("data.head(3)", [html_result(data.head(3))]),
    ]
    return write_notebook(folder / "rain.ipynb", cells)


def test_a_dataframe_output_becomes_a_table_task_and_an_unsorted_head_is_refused(
    tmp_path: Path,
) -> None:
    rain_notebook(tmp_path / "nb")
    out = tmp_path / "out"
    events: list = []
    options = NotebookOptions(dataset=str(tmp_path / "nb"), reproduce=False, base_image="b:1")
    emit_all(NotebookPipeline(options), out, on_event=events.append)
    drafts = [e.bundle for e in events if isinstance(e, Draft)]
    reasons = {e.record_id.rsplit("-", 1)[-1]: e.reason for e in events if isinstance(e, Skip)}
    assert reasons.get("4") == "answer.table-unsorted-head"
    cells = sorted(b.config.metadata.model_extra["smoldataenvs"]["cell"] for b in drafts)
    assert cells == [2, 3]
    for bundle in drafts:
        assert bundle.config.metadata.model_extra["smoldataenvs"]["answer_kind"] == "table"
        assert "/workspace/answer.csv" in bundle.instruction
    task = next(t for t in find_task_dirs([out]) if "-c2-" in t.name)
    expected = json.loads((task / "tests" / "expected.json").read_text())
    assert expected["columns"] == ["city", "rain"] and expected["keys"] == 1
    assert "`city,rain`" in (task / "instruction.md").read_text()
    solve_and_check(task, tmp_path)


def solve_and_check(
    task: Path, tmp_path: Path, header: str = "city,rain", wrong: tuple = ("12.875", "12.9")
) -> None:
    """The task's own reference writes answer.csv from the live frame and its grader
    accepts it; a wrong cell in that file fails."""
    workspace = tmp_path / "workspace"
    shutil.copytree(task / "environment" / "workspace", workspace)
    solution = tmp_path / "solution"
    shutil.copytree(task / "solution", solution)
    spec = json.loads((solution / "spec.json").read_text())
    assert spec["answer_path"] == "/workspace/answer.csv"
    (solution / "spec.json").write_text(json.dumps({**spec, "answer_path": "answer.csv"}))
    solved = subprocess.run(
        [sys.executable, str(solution / "solve.py")],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert solved.returncode == 0, solved.stderr
    answer = workspace / "answer.csv"
    assert answer.read_text().splitlines()[0] == header
    tests = tmp_path / "tests"
    shutil.copytree(task / "tests", tests)
    check = tests / "check.py"
    check.write_text(check.read_text().replace("/workspace/answer.csv", str(answer)))
    graded = subprocess.run([sys.executable, "-I", str(check)], capture_output=True, timeout=60)
    assert graded.returncode == 0, graded.stdout
    assert wrong[0] in answer.read_text()
    answer.write_text(answer.read_text().replace(*wrong))
    graded = subprocess.run([sys.executable, "-I", str(check)], capture_output=True, timeout=60)
    assert graded.returncode == 1


@needs_samples
def test_a_real_notebooks_column_selection_is_a_trivial_lookup(tmp_path: Path) -> None:
    """guipsamora's Euro 2012 notebook (real data) mined end to end: the DataFrame of
    cell 13 (three columns selected, nothing computed) was this notebook's table task;
    it is a look-up and refused (issue 32 point 2), while cell 17's mean stays."""
    euro = tmp_path / "euro"
    shutil.copytree((NOTEBOOKS / EURO).parent, euro)
    out = tmp_path / "out"
    events: list = []
    options = NotebookOptions(dataset=str(euro), reproduce=False, base_image="b:1")
    emit_all(NotebookPipeline(options), out, on_event=events.append)
    skips = {e.record_id.rsplit("-", 1)[-1]: e.reason for e in events if isinstance(e, Skip)}
    assert skips["13"] == skips["7"] == skips["9"] == "question.trivial-lookup"
    cells = [
        b.config.metadata.model_extra["smoldataenvs"]["cell"]
        for b in (e.bundle for e in events if isinstance(e, Draft))
    ]
    assert 17 in cells


def test_a_grouped_series_is_a_table_and_its_sparse_labels_are_filled() -> None:
    from smoldataenvs.runner import table_csv
    from smoldataenvs.saved_output import parse_output

    series = FRAME.groupby(["city", "year"])["rain"].mean()
    answer = parse_output(repr(series))
    assert answer["columns"] == ["city", "year", "rain"] and answer["keys"] == 2
    assert answer["value"][3] == ["Rome", 2021, 4.0]
    assert grade(answer, table_csv(series)) == (True, "table")
    assert not grade(answer, table_csv(series.head(3)))[0]
    unnamed = series.rename_axis([None, None])
    with pytest.raises(AnswerError) as caught:
        parse_output(repr(unnamed))
    assert caught.value.reason == "answer.multiindex"


@pytest.mark.timeout(10)
def test_a_level_name_wider_than_its_labels_still_names_the_level() -> None:
    """`df.groupby(['sex', 'survived']).size()`: `survived` over labels 0 and 1 reaches
    past them into the padding before the values (refused as `answer.multiindex`
    before: the names line was measured against the labels' own width)."""
    from smoldataenvs.runner import table_csv
    from smoldataenvs.saved_output import parse_output

    frame = pd.DataFrame({"sex": ["f", "m", "m", "f", "m"], "survived": [0, 1, 0, 0, 0]})
    series = frame.groupby(["sex", "survived"]).size()
    answer = parse_output(repr(series))
    assert answer["columns"] == ["sex", "survived", "0"] and answer["keys"] == 2
    assert answer["value"] == [["f", 0, 2], ["m", 0, 2], ["m", 1, 1]]
    assert grade(answer, table_csv(series)) == (True, "table")
    # a names line that runs into the values, or a name not where its level starts
    shifted = repr(series).replace("sex  survived", " sex survived")
    with pytest.raises(AnswerError):
        parse_output(shifted)


def test_a_grouped_series_cell_becomes_a_table_task(tmp_path: Path) -> None:
    folder = tmp_path / "nb"
    (folder / "data").mkdir(parents=True)
    # Two rows a group: a sum over one-row groups is the data read back (`one_row_groups`).
    pd.concat([FRAME, FRAME]).to_csv(folder / "data" / "rain.csv", index=False)
    series = pd.read_csv(folder / "data" / "rain.csv").groupby(["city", "year"])["rain"].sum()
    cells = [
        code_cell("import pandas as pd\ndata = pd.read_csv('data/rain.csv')"),
        code_cell(
            "data.groupby(['city', 'year'])['rain'].sum()",
            [
                {
                    "output_type": "execute_result",
                    "execution_count": 1,
                    "metadata": {},
                    "data": {"text/plain": repr(series)},
                }
            ],
        ),
    ]
    write_notebook(folder / "rain.ipynb", cells)
    out = tmp_path / "out"
    events: list = []
    options = NotebookOptions(dataset=str(folder), reproduce=False, base_image="b:1")
    emit_all(NotebookPipeline(options), out, on_event=events.append)
    assert [e.reason for e in events if isinstance(e, Skip)] == []
    task = next(iter(find_task_dirs([out])))
    assert json.loads((task / "solution" / "spec.json").read_text())["capture"] == "table"
    solve_and_check(task, tmp_path, header="city,year,rain", wrong=("26.5", "26.6"))


def test_a_warning_beside_a_table_leaves_the_table_the_answer(tmp_path: Path) -> None:
    """pandas' SettingWithCopyWarning on stderr beside a DataFrame (the pandas book's
    cleaning chapter) changes nothing the table shows; printed text beside it still
    makes the output mixed."""
    from smoldataenvs.candidates import answer_output
    from smoldataenvs.notebook import load_notebook

    frame = pd.DataFrame({"a": [1, 2], "b": [3.5, 4.5]})
    warning = {"output_type": "stream", "name": "stderr", "text": "SettingWithCopyWarning\n"}
    printed = {"output_type": "stream", "name": "stdout", "text": "done\n"}
    path = write_notebook(
        tmp_path / "w.ipynb",
        [
            code_cell("df", [warning, html_result(frame)]),
            code_cell("df", [printed, html_result(frame)]),
        ],
    )
    cells = load_notebook(path, "w.ipynb").code_cells
    capture, text = answer_output(cells[0])
    assert capture == "table" and parse_table(text)["value"] == [[1, 3.5], [2, 4.5]]
    with pytest.raises(AnswerError) as caught:
        answer_output(cells[1])
    assert caught.value.reason == "output.table"
