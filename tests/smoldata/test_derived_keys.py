"""A long `value_counts()` or grouped aggregate gives questions about named keys (issue
32 point 1): the count (or share) of a named key and one named group's value, each
stating the column, the file and the filter, the reference computing exactly it; keys
whose value ties with another shown one, keys seen once, one-row groups and identifier
columns are never asked, and keys the cell's own top-rows answer holds are not asked
again."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pandas as pd
import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import DataFile, DataPlan, FileIndex
from smoldataenvs.derived_keys import (
    KEY_CAP,
    KEY_TRIES,
    choose,
    key_literal,
    one_row_groups,
    shown_entries,
)
from smoldataenvs.describe import Describer
from smoldataenvs.group_sizes import column_counts, key_occurrences
from smoldataenvs.notebook import load_notebook
from tests.smoldata.helpers import code_cell, result, write_notebook
from tests.smoldata.test_yield_shapes import run_reference

COUNTS = [12, 9, 7, 7, 6, 5, 4, 3, 3, 2, 2] + [1] * 14  # 25 cities, 74 rows
CITY = [f"city{i:02d}" for i, n in enumerate(COUNTS) for _ in range(n)]
FRAME = pd.DataFrame(
    {
        "city": CITY,
        # city23, one row, is rainy: the largest mean outside the top 5 is a one-row group.
        "rain": [float((i * 7) % 23) + i / 100 + 30 * (c == "city23") for i, c in enumerate(CITY)],
        "year": [2000 + (i * 5) % 23 + (i % 4 == 0) * (i % 3) for i in range(len(CITY))],
        "user_id": [i // 3 for i in range(len(CITY))],
    }
)


def value(candidate: Candidate, folder: Path) -> float:
    shown = str(run_reference(candidate, folder))
    return float(re.sub(r"^np\.\w+\((.*)\)$", r"\1", shown))


def cells() -> list[dict]:
    data = FRAME
    wet = data[data["rain"] > 3]
    return [
        code_cell("import pandas as pd\ndata = pd.read_csv('rain.csv')"),
        code_cell("data['city'].value_counts()", [result(repr(data["city"].value_counts()))]),
        code_cell(
            "data['city'].value_counts().head(4)",
            [result(repr(data["city"].value_counts().head(4)))],
        ),
        code_cell(
            "data.groupby('city')['rain'].mean()",
            [result(repr(data.groupby("city")["rain"].mean()))],
        ),
        code_cell(
            "wet = data[data['rain'] > 3]\nwet['year'].value_counts(normalize=True)",
            [result(repr(wet["year"].value_counts(normalize=True)))],
        ),
        code_cell("data['user_id'].value_counts()", [result(repr(data["user_id"].value_counts()))]),
        # A call that changes `data`: every question of cell 8 is undescribed, and no
        # later key stands in for such a refusal (KEY_CAP refusals, not KEY_TRIES).
        code_cell("def show(t):\n    t.dropna(inplace=True)"),
        code_cell("show(data)"),
        code_cell("data['city'].value_counts()", [result(repr(data["city"].value_counts()))]),
    ]


def extract(folder: Path) -> list[Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    FRAME.to_csv(folder / "rain.csv", index=False)
    path = write_notebook(folder / "rain.ipynb", cells())
    return list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "rain.ipynb")))


def parts(found: list, cell: int) -> list[Candidate]:
    return [f for f in found if isinstance(f, Candidate) and f.cell == cell and f.part]


@pytest.mark.timeout(120)
def test_counts_of_named_keys_beyond_the_top_rows(tmp_path: Path) -> None:
    found = extract(tmp_path)
    # Cell 1: its top 5 are the cell's own task; two keys outside them are asked (5 and
    # 4 rows: unique counts; 3, 2 tie and 1 is a key seen once).
    (own,) = [f for f in found if isinstance(f, Candidate) and f.cell == 1 and not f.part]
    assert [k for k, _ in own.answer["value"]] == [f"city{i:02d}" for i in range(5)]
    asked = parts(found, 1)
    assert [p.answer["value"] for p in asked] == [5, 4]
    assert asked[0].question.text == (
        "Compute the number of times the value 'city05' occurs in the `city` column of the "
        "data in `rain.csv`."
    )
    assert [value(p, tmp_path) for p in asked] == [5, 4]
    # Cell 2: its top 4 tie at the cut (7, 7): refused as a whole, its untied keys asked.
    assert any(isinstance(f, CellSkip) and f.cell == 2 for f in found) is False
    assert [p.answer["value"] for p in parts(found, 2)] == [12, 9]
    # Distinct tasks: each names another key.
    derived = [f for f in found if isinstance(f, Candidate) and f.part]
    assert len({f.dedup_key for f in derived}) == len(derived)


@pytest.mark.timeout(120)
def test_a_named_groups_value_and_a_filtered_share(tmp_path: Path) -> None:
    found = extract(tmp_path)
    means = FRAME.groupby("city")["rain"].mean()
    groups = parts(found, 3)
    assert groups, found
    first = groups[0]
    key = ast.literal_eval(first.reference.rstrip().splitlines()[-1].rsplit("[", 1)[1][:-1])
    # The largest mean outside the first 5 groups (the cell's own answer) is city23's,
    # one row: its mean is a look-up of that row, refused; the groups asked have rows.
    outside = means.drop([f"city{i:02d}" for i in range(5)])
    assert outside.idxmax() == "city23"
    lone = [f for f in found if isinstance(f, CellSkip) and f.cell == 3]
    assert {f.reason for f in lone} == {"question.one-row-group"}
    assert "'city23' occurs 1 time" in lone[0].detail
    # Later keys stand in for refused ones, within KEY_TRIES offers.
    assert len(lone) + len(groups) == KEY_TRIES
    assert key == "city10" and FRAME["city"].value_counts()[key] == 2
    assert first.question.text == (
        "Compute the mean of the `rain` column of the data in `rain.csv`, in the group of "
        f"rows whose `city` is '{key}'."
    )
    assert first.answer["value"] == pytest.approx(means[key], rel=1e-5)
    assert value(first, tmp_path) == pytest.approx(means[key])
    # A share after a filter: the filter is stated, the year an int key.
    wet = FRAME[FRAME["rain"] > 3]["year"].value_counts(normalize=True)
    (share,) = parts(found, 4)  # its top 5 tie at the cut; only 2015's share is untied
    assert "keeping only the rows where `rain` > 3" in share.question.text
    assert "share (fraction from 0 to 1) of the non-missing values" in share.question.text
    year = int(re.search(r"that equal (\d+)", share.question.text).group(1))
    assert year == wet.idxmax() == 2015
    assert value(share, tmp_path) == pytest.approx(wet[year])
    # An identifier column's counts are never asked.
    assert parts(found, 5) == []
    opaque = [f for f in found if f.cell == 8]
    assert len(opaque) == KEY_CAP and {f.reason for f in opaque} == {"question.undescribed"}


@pytest.mark.timeout(30)
def test_key_choice_and_display_reading() -> None:
    entries = [("a", 10), ("b", 8), ("c", 8), ("d", 5), ("e", 3), ("f", 1), (" g", 4)]
    # Ties (b, c), a key seen once (f) and a padded label (" g") are never chosen.
    assert choose(entries, "count", set()) == [("a", 10), ("d", 5), ("e", 3)]
    assert choose(entries, "count", {"a"}) == [("d", 5), ("e", 3)]
    assert choose([("x", 0.5), ("y", 0.5)], "share", set()) == []
    assert key_literal("2018") == 2018 and key_literal("2.5") == 2.5
    assert key_literal("NaN") is None and key_literal("True") is None
    assert key_literal("x  1") is None  # two index levels of a frame's value_counts()
    cut = "city\nx    5\ny    4\n     ..\nz    1\nName: count, Length: 90, dtype: int64"
    assert shown_entries(cut) == ([("x", 5), ("y", 4), ("z", 1)], True)
    grouped = "a  b\nx  1    5\n   2    4\nName: c, dtype: int64"
    assert shown_entries(grouped) == ([(("x", "1"), 5), (("x", "2"), 4)], False)
    assert key_literal(("x", "1")) == ("x", 1)
    three = "a  b  c\nx  1  p    5\n      q    4\nName: c, dtype: int64"
    assert shown_entries(three) is None  # three levels: not read


@pytest.mark.timeout(30)
def test_keys_and_columns_stay_apart_in_the_describer() -> None:
    data = ast.parse("pd.read_csv('r.csv')", mode="eval").body
    describer = Describer({"d": data}, {})

    def phrase(code: str) -> str | None:
        return describer.phrase(ast.parse(code, mode="eval").body)

    # A whole-table grouping is a DataFrame: its subscript is still a column.
    assert phrase("d.groupby('k').sum()['c']") == (
        "the `c` column of the sum of the columns other than the key of the data in `r.csv`, "
        "for each 'k' (groups in ascending order of 'k')"
    )
    assert phrase("d['c'].value_counts()[:3]").startswith("the first 3 entries of")
    assert phrase("d.groupby('k')['c'].size()['x']") == (
        "the number of rows of the data in `r.csv` whose `k` is 'x'"
    )


@pytest.mark.timeout(120)
def test_a_two_level_grouped_mean_asks_named_pairs(tmp_path: Path) -> None:
    """Real case: pandas_for_everyone's `df.groupby(['year', 'continent'])['lifeExp']
    .mean()`, 60 groups shown cut (refused as `answer.multiindex` before)."""
    rows = [
        (region, 2000 + year, float((region_i * 7 + year * 3 + k) % 29) + k / 10)
        for region_i, region in enumerate(["north", "south", "west"])
        for year in range(8)
        for k in range(3)
    ]
    frame = pd.DataFrame(rows, columns=["region", "year", "rain"])
    folder = tmp_path / "nb"
    folder.mkdir()
    frame.to_csv(folder / "rain.csv", index=False)
    means = frame.groupby(["region", "year"])["rain"].mean()
    with pd.option_context("display.max_rows", 10, "display.min_rows", 10):
        shown = repr(means)
    assert "..." in shown
    cells = [
        code_cell("import pandas as pd\ndata = pd.read_csv('rain.csv')"),
        code_cell("data.groupby(['region', 'year'])['rain'].mean()", [result(shown)]),
    ]
    path = write_notebook(folder / "rain.ipynb", cells)
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "rain.ipynb")))
    asked = parts(found, 1)
    assert len(asked) == 3, found
    for candidate in asked:
        match = re.search(
            r"whose `region` is '(\w+)' and `year` is (\d+)\.$", candidate.question.text
        )
        assert match, candidate.question.text
        key = (match.group(1), int(match.group(2)))
        assert candidate.answer["value"] == pytest.approx(means[key], rel=1e-5)
        assert value(candidate, folder) == pytest.approx(means[key])
    entries, cut = shown_entries(shown)
    assert cut and entries[0] == (("north", "2000"), pytest.approx(means["north", 2000], rel=1e-5))


@pytest.mark.timeout(120)
def test_a_whole_grouped_mean_of_mostly_one_row_groups_is_refused(tmp_path: Path) -> None:
    """car_crashes' `groupby('total')['speeding'].mean()`: most groups are one state,
    each mean that row's value read back; grouped by a column with repeats it is asked."""
    crashes = pd.DataFrame(
        {
            "total": [10.5, 11.0, 11.0, 12.25, 13.5, 14.0, 15.5, 16.0, 17.75, 18.0],
            "region": ["north", "south"] * 5,
            "speeding": [3.1, 2.2, 4.0, 5.5, 1.25, 3.0, 2.75, 6.5, 4.5, 3.5],
        }
    )
    crashes.to_csv(tmp_path / "crashes.csv", index=False)
    by_total = crashes.groupby("total")["speeding"].mean()
    by_both = crashes.groupby(["region", "total"])["speeding"].mean()
    by_region = crashes.groupby("region")["speeding"].mean()
    path = write_notebook(
        tmp_path / "crashes.ipynb",
        [
            code_cell("import pandas as pd\nd = pd.read_csv('crashes.csv')"),
            code_cell("d.groupby('total')['speeding'].mean()", [result(repr(by_total))]),
            code_cell(
                "d.groupby(['region', 'total'])['speeding'].mean().round(2)",
                [result(repr(by_both.round(2)))],
            ),
            code_cell("d.groupby('region')['speeding'].mean()", [result(repr(by_region))]),
            # a ranking: which totals rank highest is found by sorting, not read off
            code_cell(
                "d.groupby('total')['speeding'].sum().sort_values(ascending=False).head(3)",
                [result(repr(crashes.groupby("total")["speeding"].sum().nlargest(3)))],
            ),
        ],
    )
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "crashes.ipynb")))
    refused = {f.cell: f for f in found if isinstance(f, CellSkip)}
    assert refused[1].reason == "question.one-row-group"
    assert refused[1].detail == "8 of 9 groups of ['total'] are one row of the data"
    assert refused[2].reason == "question.one-row-group"
    assert refused[2].detail.startswith("10 of 10 groups")
    kept, ranked = [f for f in found if isinstance(f, Candidate)]
    assert kept.cell == 3 and [k for k, _ in kept.answer["value"]] == ["north", "south"]
    top = crashes.groupby("total")["speeding"].sum().nlargest(3)
    assert ranked.cell == 4 and [float(k) for k, _ in ranked.answer["value"]] == list(top.index)


def test_key_occurrences_read_numbers_as_pandas_parses_them(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("k,v\n2.50,1\n2.5,2\nx,3\n 7,4\n")
    assert key_occurrences(tmp_path / "t.csv", ["k"], (2.5,)) == 2
    assert key_occurrences(tmp_path / "t.csv", ["k"], ("7",)) == 1
    assert key_occurrences(tmp_path / "t.csv", ["k"], ("y",)) == 0
    assert key_occurrences(tmp_path / "t.csv", ["absent"], ("x",)) is None
    assert column_counts(tmp_path / "t.json", ["k"]) is None


@pytest.mark.timeout(120)
def test_top_rows_of_one_row_groups_leave_their_groups_with_rows_asked(tmp_path: Path) -> None:
    """Books EDA: the first 5 authors (by name) of a mean per author wrote one book each,
    a look-up refused; authors with several books further down are still asked."""
    authors = [f"a{i:02d}" for i in range(5)] + [f"b{i}" for i in range(8) for _ in range(i + 2)]
    rating = [round(1 + (i * 37 % 41) / 10, 1) for i in range(len(authors))]
    books = pd.DataFrame({"Author": authors, "rating": rating})
    books.to_csv(tmp_path / "books.csv", index=False)
    means = books.groupby("Author")["rating"].mean()
    with pd.option_context("display.max_rows", 10, "display.min_rows", 10):
        shown = repr(means)
    assert "..." in shown
    path = write_notebook(
        tmp_path / "books.ipynb",
        [
            code_cell("import pandas as pd\nbooks = pd.read_csv('books.csv')"),
            code_cell("books.groupby('Author')['rating'].mean()", [result(shown)]),
        ],
    )
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "books.ipynb")))
    asked = [f for f in found if isinstance(f, Candidate)]
    assert asked and all(f.part for f in asked)  # the top rows themselves are not asked
    named = [f.reference.rstrip().splitlines()[-1].rsplit("[", 1)[1][1:-2] for f in asked]
    assert set(named) <= {f"b{i}" for i in range(8)}
    assert all(books["Author"].value_counts()[n] >= 2 for n in named)


def test_keys_a_loader_rewrote_are_of_unknown_size_not_one_row(tmp_path: Path) -> None:
    """seaborn's `load_dataset('flights')` shortens the file's 'January' to 'Jan': a key
    the file never holds is no one-row group (the flights' 12 months of 12 rows each
    were refused as '11 of 12 groups are one row')."""
    months = ["January", "February", "May"]
    rows = [f"{1949 + y},{m},{100 + y}" for y in range(3) for m in months]
    (tmp_path / "flights.csv").write_text("year,month,passengers\n" + "\n".join(rows) + "\n")
    data = DataFile("flights.csv", tmp_path / "flights.csv", "0", 1, "flights.csv")
    plan = DataPlan(files={"flights.csv": data})
    statement = ast.parse("df.groupby('month')['passengers'].median()").body[0]
    shown = {"kind": "mapping", "value": [["Jan", 101.0], ["Feb", 101.0], ["May", 101.0]]}
    assert one_row_groups(statement, shown, plan) is None
    (tmp_path / "flights.csv").write_text("year,month,passengers\n1949,Jan,1\n1950,Feb,2\n")
    assert one_row_groups(statement, shown, plan) == (
        "2 of 3 groups of ['month'] are one row of the data"
    )
