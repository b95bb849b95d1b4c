"""What a corpus nobody had tuned on found (docs/notebooks.md, "A corpus nobody had
seen"): a date key on a table with dated row labels is a row selection, not a column;
the mean of an identifier or a code is not asked; the largest or smallest of text is
not a question; `usecols` and `value_counts(ascending=...)` are stated."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from smoldataenvs.answer_values import text_extreme
from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.derived import describe_questions
from smoldataenvs.derived_keys import IDENTIFIER
from smoldataenvs.describe import Describer
from smoldataenvs.notebook import load_notebook
from tests.smoldata.helpers import code_cell, result, write_notebook
from tests.smoldata.test_yield_shapes import run_reference

PRICES = pd.DataFrame(
    {
        "Date": pd.date_range("2017-05-20", periods=30, freq="D").strftime("%Y-%m-%d"),
        "Close": [150.0 + (i * 7) % 11 for i in range(30)],
        "event": ["Rain" if i % 4 else "Sunny" for i in range(30)],
        "userid": [1000 + 37 * i for i in range(30)],
    }
)


def phrase(expression: str, **tables: str) -> str | None:
    describer = Describer({k: ast.parse(v, mode="eval").body for k, v in tables.items()}, {})
    return describer.phrase(ast.parse(expression, mode="eval").body)


@pytest.mark.timeout(10)
def test_a_date_key_on_dated_row_labels_selects_rows_not_a_column() -> None:
    """codebasics' `df['2017-06'].Close.mean()` was asked as "the `Close` column of the
    `2017-06` column": pandas (1.x) selects the rows of June 2017."""
    dated = "pd.read_csv('aapl.csv', parse_dates=['Date'], index_col='Date')"
    text = phrase("df['2017-06'].Close.mean()", df=dated)
    assert text is not None
    assert "the rows dated within 2017-06 of the data in `aapl.csv`" in text
    assert "`2017-06` column" not in text
    # The reader's own row labels: a date-like key is a column (a table of years).
    years = phrase("wb['2017'].mean()", wb="pd.read_csv('wb.csv')")
    assert years == "the mean of the `2017` column of the data in `wb.csv`"
    # Labels without parsed dates are text: `t['2017']` is a column there too.
    text_labels = "pd.read_csv('wb.csv', index_col='Country')"
    assert phrase("wb['2017'].mean()", wb=text_labels) is not None
    assert "`2017` column" in (phrase("wb['2017'].mean()", wb=text_labels) or "")
    # Labels a later step set: which one it is is not known here, so it is not asked.
    later = "pd.read_csv('aapl.csv', parse_dates=['Date']).set_index('Date')"
    assert phrase("df['2017-06'].Close.mean()", df=later) is None
    assert phrase("df['Close'].mean()", df=later) is not None


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("name", "identifier"),
    [
        ("userid", True),
        ("customer_id", True),
        ("Country Code", True),
        ("CountryCode", True),
        ("zipcode", True),
        ("PassengerId", True),
        ("Paid", False),
        ("Humid", False),
        ("Episode", False),
        ("sum_gamerounds", False),
    ],
)
def test_identifiers_and_codes_are_named_as_such(name: str, identifier: bool) -> None:
    assert bool(IDENTIFIER.search(name)) is identifier


@pytest.mark.timeout(10)
def test_describe_asks_no_statistic_of_a_user_id_or_a_month_number() -> None:
    """A games A/B test's describe(): its first question was the mean `userid`; a
    weather file's: the mean `month`."""
    frame = PRICES.assign(month=[1 + i % 12 for i in range(30)])
    table = frame[["userid", "month", "Close"]].describe()
    cells = {(row, column): table.loc[row, column] for row in table.index for column in table}
    chosen = describe_questions(cells, ast.parse("df", mode="eval").body)
    asked = [ast.unparse(expression) for expression, _ in chosen]
    assert asked == ["df['Close'].mean()"], asked
    # A category kept as a number: the WHO table's `Continent` 1..7, Titanic's `Pclass`.
    coded = PRICES.assign(
        Continent=[1 + i % 7 for i in range(30)], Pclass=[1 + i % 3 for i in range(30)]
    )
    table = coded[["Continent", "Pclass", "Close"]].describe()
    cells = {(row, column): table.loc[row, column] for row in table.index for column in table}
    chosen = describe_questions(cells, ast.parse("df", mode="eval").body)
    assert [ast.unparse(expression) for expression, _ in chosen] == ["df['Close'].mean()"]


@pytest.mark.timeout(10)
def test_the_largest_or_smallest_of_text_is_not_a_question() -> None:
    last = ast.parse("df['event'].max()").body[0]
    assert text_extreme(last, {"kind": "string", "value": "Sunny"}) is not None
    grouped = {"kind": "table", "keys": 1, "value": [["mumbai", "1/4/2017", 92]]}
    assert text_extreme(ast.parse("df.groupby('city').max()").body[0], grouped) is not None
    # numbers, timestamps (ISO text sorts as time does) and other methods pass
    assert text_extreme(last, {"kind": "number", "value": 35}) is None
    stamp = {"kind": "string", "value": "2018-10-13 23:59:00"}
    assert text_extreme(ast.parse("df['time'].max()").body[0], stamp) is None
    rain = {"kind": "string", "value": "Rain"}
    assert text_extreme(ast.parse("df['event'].mode()").body[0], rain) is None


@pytest.mark.timeout(60)
def test_usecols_and_value_counts_order_are_stated_and_text_extremes_skipped(
    tmp_path: Path,
) -> None:
    PRICES.to_csv(tmp_path / "prices.csv", index=False)
    load = "import pandas as pd\ndf = pd.read_csv('prices.csv', usecols=['Close', 'event'])"
    rare = PRICES["event"].value_counts(ascending=True)
    path = write_notebook(
        tmp_path / "prices.ipynb",
        [
            code_cell(load),
            code_cell("df['Close'].median()", [result(repr(PRICES["Close"].median()))]),
            code_cell("df['event'].value_counts(ascending=True)", [result(repr(rare))]),
            code_cell("df['event'].max()", [result(repr(PRICES["event"].max()))]),
        ],
    )
    found = {
        item.cell: item
        for item in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "p.ipynb"))
    }
    median, counts, extreme = found[1], found[2], found[3]
    assert isinstance(median, Candidate), median
    assert "(reading only its columns 'Close', 'event')" in median.question.text
    assert median.answer["value"] == PRICES["Close"].median()
    assert str(PRICES["Close"].median()) in run_reference(median, tmp_path)
    assert isinstance(counts, Candidate), counts
    assert "(least common first)" in counts.question.text
    assert isinstance(extreme, CellSkip) and extreme.reason == "answer.text-extreme", extreme


POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:f05722f57ac86bd75fdd608352f45bbc2408c1b8e8a319ab21ef76288646b4ab\n"
    "size 69208\n"
)


@pytest.mark.timeout(60)
def test_a_git_lfs_pointer_is_not_the_data(tmp_path: Path) -> None:
    """WillKoehrsen/Data-Analysis's `student-mat.csv` is an LFS pointer in the
    repository: its notebook's saved statistics became 10 tasks over a one-column
    "table" of the pointer's text under --no-validate (reproduction caught them)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "student-mat.csv").write_text(POINTER)
    PRICES.to_csv(tmp_path / "data" / "prices.csv", index=False)
    path = write_notebook(
        tmp_path / "grades.ipynb",
        [
            code_cell("import pandas as pd\ndf = pd.read_csv('data/student-mat.csv')"),
            code_cell("df['G3'].mean()", [result("10.41")]),
            code_cell("p = pd.read_csv('data/prices.csv')"),
            code_cell("p['Close'].median()", [result(repr(PRICES["Close"].median()))]),
        ],
    )
    found = {
        item.cell: item
        for item in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "g.ipynb"))
    }
    pointer, real = found[1], found[3]
    assert isinstance(pointer, CellSkip) and pointer.reason == "data.lfs-pointer", pointer
    assert "data/student-mat.csv" in pointer.detail
    assert isinstance(real, Candidate), real


@pytest.mark.timeout(60)
def test_an_empty_data_file_is_not_the_data(tmp_path: Path) -> None:
    """A mirror that leaves its largest files out writes them empty (the pandas
    workshop's `Meteorite_Landings.csv`): the saved outputs were computed from data
    that is not here, so its cells are refused at planning, before any question."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "meteorites.csv").write_bytes(b"")
    PRICES.to_csv(tmp_path / "data" / "prices.csv", index=False)
    path = write_notebook(
        tmp_path / "m.ipynb",
        [
            code_cell("import pandas as pd\ndf = pd.read_csv('data/meteorites.csv')"),
            code_cell("df['mass'].mean()", [result("13278.08")]),
            code_cell("p = pd.read_csv('data/prices.csv')"),
            code_cell("p['Close'].median()", [result(repr(PRICES["Close"].median()))]),
        ],
    )
    found = {
        item.cell: item
        for item in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "m.ipynb"))
    }
    empty, real = found[1], found[3]
    assert isinstance(empty, CellSkip) and empty.reason == "data.empty", empty
    assert "data/meteorites.csv" in empty.detail
    assert isinstance(real, Candidate), real


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "expression",
    [
        "df.reset_index()['2017']",  # labels 0, 1, ...: not followed
        "df.T['2017']",  # the dates became column names
        "df.resample('M').mean()['2017']",
    ],
)
def test_a_date_key_after_a_step_that_changes_the_labels_is_not_asked(expression: str) -> None:
    dated = "pd.read_csv('aapl.csv', parse_dates=['Date'], index_col='Date')"
    assert phrase(expression, df=dated) is None
    kept = "df.dropna().sort_values('Close')['2017'].Close.max()"
    assert "the rows dated within 2017 of" in (phrase(kept, df=dated) or "")
