"""Cleaning a notebook ran in place before the question is stated, in order (issue 32:
EDA notebooks' `question.undescribed`), and whole-number answers are graded exactly.

Each stated case fails on the code before `smoldataenvs/cleaning.py`: the describer
refused any name changed in place. The reference is run on the data and must give
the value the question's words define (computed here with pandas by hand).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.describe import Describer
from smoldataenvs.grader import grade
from smoldataenvs.notebook import load_notebook
from smoldataenvs.question import answer_format
from tests.smoldata.helpers import code_cell, result, write_notebook

TITANIC = pd.DataFrame(
    {
        "Age": [22.0, None, 30.0, 41.0, None, 19.0, 55.0, 33.0, 22.0, None, 61.0, 8.0],
        "Sex": [
            "male",
            "female",
            "male",
            " female",
            "male",
            "male",
            "female",
            "male",
            "male",
            "female",
            "male",
            "female",
        ],
        "Fare": ["7,25", "71,3", "8,05", None, "13", "9", "10", "11", "7,25", "30", "26", "21"],
        "Embarked": ["S", "C", None, "S", "S", "Q", "S", "C", "S", None, "S", "Q"],
        "Cabin": [None, "C85", None, "C123", None, None, "E46", None, None, "B2", "D1", None],
    }
)


def extract(folder: Path, cells: list[dict]) -> dict[int, Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    TITANIC.to_csv(folder / "titanic.csv", index=False)
    load = code_cell("import pandas as pd\ndf = pd.read_csv('titanic.csv')")
    path = write_notebook(folder / "eda.ipynb", [load, *cells])
    found = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "eda.ipynb"))
    return {item.cell: item for item in found}


def run_reference(candidate: Candidate, folder: Path) -> str:
    last = candidate.reference.rstrip().splitlines()[-1]
    script = candidate.reference + f"\nprint({last})\n"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def task(found: dict, cell: int) -> Candidate:
    item = found[cell]
    assert isinstance(item, Candidate), (item.reason, item.detail)  # type: ignore[union-attr]
    return item


@pytest.mark.timeout(60)
def test_in_place_cleaning_is_stated_in_order(tmp_path: Path) -> None:
    clean = TITANIC.dropna(subset=["Embarked"]).drop(columns=["Cabin"])
    clean["Age"] = clean["Age"].fillna(clean["Age"].median())  # median after the drop
    clean = clean.drop_duplicates().rename(columns={"Sex": "sex"})
    found = extract(
        tmp_path,
        [
            code_cell("df.dropna(subset=['Embarked'], inplace=True)"),
            code_cell("df.drop(['Cabin'], axis=1, inplace=True)"),
            code_cell("df['Age'] = df['Age'].fillna(df['Age'].median())"),
            code_cell(
                "df.drop_duplicates(inplace=True)\ndf.rename(columns={'Sex': 'sex'}, inplace=True)"
            ),
            code_cell("df['Age'].mean()", [result(repr(clean["Age"].mean()))]),
            code_cell("len(df)", [result(str(len(clean)))]),
        ],
    )
    mean = task(found, 5)
    assert mean.question.text == (
        "Compute the mean of the `Age` column of the data in `titanic.csv` (after dropping "
        "the rows where `Embarked` is missing, then dropping the column(s) 'Cabin', then "
        "changing the `Age` column by filling its missing values with its median (of the "
        "non-missing values), then dropping the rows that repeat an earlier row exactly "
        "(keeping the first), then renaming the column `Sex` to `sex`)."
    )
    assert float(run_reference(mean, tmp_path)) == pytest.approx(clean["Age"].mean())
    count = task(found, 6)  # a count after a cleaning filter is computed, not a look-up
    assert "the number of rows (items) in the data in `titanic.csv` (after" in count.question.text
    assert run_reference(count, tmp_path) == str(len(clean))


@pytest.mark.timeout(60)
def test_column_changes_and_renamed_columns_are_stated(tmp_path: Path) -> None:
    clean = TITANIC.copy()
    clean["Fare"] = clean["Fare"].str.replace(",", ".").astype(float)
    clean["Sex"] = clean["Sex"].str.strip().map({"male": 0, "female": 1})
    clean["Embarked"] = clean["Embarked"].fillna(clean["Embarked"].mode()[0])
    clean.columns = ["age", "sex", "fare", "port", "cabin"]
    clean.columns = clean.columns.str.upper()
    means = clean.groupby("SEX")["FARE"].mean()
    found = extract(
        tmp_path,
        [
            code_cell("df['Fare'] = df['Fare'].str.replace(',', '.').astype(float)"),
            code_cell("df['Sex'] = df['Sex'].str.strip().map({'male': 0, 'female': 1})"),
            # pandas < 3 writes a column's in-place fill through to the table
            code_cell("df['Embarked'].fillna(df['Embarked'].mode()[0], inplace=True)"),
            code_cell("df.columns = ['age', 'sex', 'fare', 'port', 'cabin']"),
            code_cell("df.columns = df.columns.str.upper()"),
            code_cell("df.groupby('SEX')['FARE'].mean()", [result(repr(means))]),
        ],
    )
    text = task(found, 6).question.text
    for step in (
        "changing the `Fare` column by replacing the text ',' with '.' in its values, then "
        "converting it to numbers, then changing",
        "changing the `Sex` column by removing spaces around its values, then mapping its "
        "values 'male' to 0, 'female' to 1 (any other value becomes missing)",
        "changing the `Embarked` column by filling its missing values with its most common "
        "value (the smallest one if several tie)",
        "renaming its columns, in order, to 'age', 'sex', 'fare', 'port', 'cabin'",
        "upper-casing the column names",
    ):
        assert step in text
    assert text.index("`Fare` column by") < text.index("`Sex` column by") < text.index("upper")


@pytest.mark.timeout(60)
def test_a_column_written_as_an_attribute_is_stated_when_it_reads_itself(tmp_path: Path) -> None:
    """`df.Sex = df.Sex.str.strip()` writes the column `Sex` (it reads it, so it is one);
    `df.Port = df.Embarked` makes an attribute of the object, not a column, in pandas:
    no column step is read into it and the question stays refused."""
    counts = TITANIC["Sex"].str.strip().value_counts()
    found = extract(
        tmp_path / "column",
        [
            code_cell("df.Sex = df.Sex.apply(lambda x: x.strip())"),
            code_cell("df['Sex'].value_counts()", [result(repr(counts))]),
        ],
    )
    asked = task(found, 2)
    assert asked.question.text == (
        "Compute the count of each distinct value (most common first) of the `Sex` column "
        "of the data in `titanic.csv`, with its column `Sex` recomputed as `Sex` with each "
        "value x replaced by `x.strip()`."
    )
    script = asked.reference + "\nprint(df['Sex'].value_counts().to_dict())\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path / "column",
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == str(counts.to_dict())
    found = extract(
        tmp_path / "attribute",
        [
            code_cell("df.Port = df.Embarked"),
            code_cell("df.Port.value_counts()", [result(repr(TITANIC["Embarked"].value_counts()))]),
        ],
    )
    assert isinstance(found[2], CellSkip)


@pytest.mark.timeout(60)
def test_steps_that_cannot_be_stated_exactly_stay_refused(tmp_path: Path) -> None:
    answer = [result("30.0")]
    steps = [
        "df['Age'] = df['Age'].fillna(df['Fare'].str.len().mean())",  # another column's value
        "df.dropna(thresh=3, inplace=True)",  # a count of present values per row
        "df.drop_duplicates(keep=False, inplace=True)",  # every copy dropped
        "df['Fare'] = df['Fare'].str.replace('.', '')",  # a regular expression in pandas 1.x
        "def clean(s):\n    return s.strip()\ndf['Sex'] = df['Sex'].apply(lambda s: clean(s))",
        "df.fillna(method='ffill', downcast='infer', inplace=True)",  # types changed too
    ]
    asked = {3: "df['Fare'].nunique()", 4: "df['Sex'].nunique()"}  # the column changed
    for number, step in enumerate(steps):
        question = asked.get(number, "df['Age'].median()")
        found = extract(tmp_path / str(number), [code_cell(step), code_cell(question, answer)])
        assert isinstance(found[2], CellSkip), step
        assert found[2].reason == "question.undescribed", step


@pytest.mark.timeout(10)
def test_whole_numbers_are_graded_exactly_and_the_instruction_says_so() -> None:
    count = {"kind": "number", "value": 5848, "atol": 1e-6, "rtol": 1e-3}
    assert grade(count, "5848")[0] and grade(count, "5848.0")[0]
    assert not grade(count, "5843")[0]  # within 0.1 %, but a count is exact
    mean = {"kind": "number", "value": 5848.0, "atol": 1e-6, "rtol": 1e-3}
    assert grade(mean, "5843")[0]  # a float keeps the tolerance
    assert "graded exactly" in answer_format(count)
    assert "0.1%" in answer_format(mean) and "exactly" not in answer_format(mean)
    counts = {"kind": "mapping", "value": [["S", 644], ["C", 168]], "atol": 0, "rtol": 1e-3}
    assert grade(counts, "S: 644\nC: 168")[0] and not grade(counts, "S: 644\nC: 167")[0]
    assert "whole numbers, graded exactly" in answer_format(counts)
    table = {
        "kind": "table",
        "columns": ["city", "days", "rain"],
        "keys": 1,
        "value": [["a", 1200, 3.5], ["b", 900, 1.25]],
        "atol": 0,
        "rtol": 1e-3,
    }
    assert grade(table, "city,days,rain\na,1200,3.501\nb,900,1.25")[0]
    assert not grade(table, "city,days,rain\na,1201,3.5\nb,900,1.25")[0]
    assert "whole numbers are graded exactly, other numbers within 0.1%" in answer_format(table)


@pytest.mark.timeout(60)
def test_order_after_a_filter_and_more_in_place_forms(tmp_path: Path) -> None:
    """A cleaning step after a filter must not read as if it ran first; `.loc[:, c] =`,
    `columns = map(str.upper, ...)` and a per-column mean fill are stated; the column
    types after cleaning stay a look-up (a dropped row changes no type)."""
    clean = TITANIC.copy()
    clean.columns = map(str.upper, clean.columns)
    clean.loc[:, "SEX"] = clean["SEX"].fillna("x")
    clean = clean.fillna(clean.mean(numeric_only=True))
    clean = clean[clean["AGE"] > 20].dropna()
    found = extract(
        tmp_path,
        [
            code_cell("df.columns = map(str.upper, df.columns)"),
            code_cell("df.loc[:, 'SEX'] = df['SEX'].fillna('x')"),
            code_cell("df.fillna(df.mean(numeric_only=True), inplace=True)"),
            code_cell("df = df[df['AGE'] > 20]\ndf.dropna(inplace=True)"),
            code_cell("df['AGE'].sum()", [result(repr(float(clean["AGE"].sum())))]),
            code_cell("df.dtypes", [result(repr(clean.dtypes))]),
        ],
    )
    text = task(found, 5).question.text
    assert text == (
        "Compute the sum of the `AGE` column of the data in `titanic.csv` (after upper-casing "
        "the column names, then changing the `SEX` column by filling its missing values with "
        "'x', then filling the missing values of each numeric column with that column's mean "
        "(of its non-missing values)), keeping only the rows where `AGE` > 20 (then, on the "
        "result: dropping every row that has a missing value in any column)."
    )
    assert float(run_reference(task(found, 5), tmp_path)) == pytest.approx(clean["AGE"].sum())
    assert isinstance(found[6], CellSkip) and found[6].reason == "question.trivial-lookup"


@pytest.mark.timeout(60)
def test_a_per_column_count_of_a_cleaned_table_says_for_each_column(tmp_path: Path) -> None:
    clean = TITANIC.drop_duplicates()
    found = extract(
        tmp_path,
        [
            code_cell("df.drop_duplicates(inplace=True)"),
            code_cell("df.count()", [result(repr(clean.count()))]),
        ],
    )
    assert task(found, 2).question.text.startswith(
        "Compute the number of non-missing values of the data in `titanic.csv` (after dropping "
        "the rows that repeat an earlier row exactly (keeping the first)) for each column."
    )


@pytest.mark.timeout(60)
def test_a_text_column_formula_and_group_sizes_are_stated(tmp_path: Path) -> None:
    """huneshkumar/100-EDA-Projects air tickets: `df['Route'] = df['Origin'] + '-' +
    df['Destination']` refused every later cell; `groupby('k').size()` was unknown."""
    routes = (TITANIC["Embarked"] + "-" + TITANIC["Fare"]).value_counts()
    sizes = TITANIC.groupby("Embarked").size().sort_values(ascending=False)
    found = extract(
        tmp_path,
        [
            code_cell("df['Route'] = df['Embarked'] + '-' + df['Fare']"),
            code_cell("df['Route'].value_counts()", [result(repr(routes))]),
            code_cell(
                "df.groupby('Embarked').size().sort_values(ascending=False)", [result(repr(sizes))]
            ),
        ],
    )
    assert "with the added column `Route` = (`Embarked` + '-') + `Fare`" in (
        task(found, 2).question.text
    )
    # The group sizes never read `Route`: its step is not theirs (slicing.column_reads).
    assert task(found, 3).question.text.startswith(
        "Compute the number of rows of the data in `titanic.csv`, for each 'Embarked' (groups "
        "in ascending order of 'Embarked'), sorted from largest to smallest."
    )


@pytest.mark.timeout(60)
def test_kaggle_column_and_stacking_steps_are_stated(tmp_path: Path) -> None:
    """Real shapes of the EDA corpus that were `question.undescribed`: dropping the
    `Unnamed: 0` column a CSV was saved with, `pd.isnull(df).sum()`, the numeric
    columns, and tables stacked with `pd.concat`; each reference gives the value the
    words define."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    TITANIC.to_csv(tmp_path / "saved.csv")  # the index saved as a column `Unnamed: 0`
    (tmp_path / "more.csv").write_text("Age,Sex\n70.0,male\n,female\n")
    stacked = pd.concat([TITANIC, pd.read_csv(tmp_path / "more.csv")], ignore_index=True)
    numeric = TITANIC.select_dtypes(include="number")
    found = extract(
        tmp_path,
        [
            code_cell(
                "raw = pd.read_csv('saved.csv')\n"
                "raw = raw.loc[:, ~raw.columns.str.contains('Unnamed')]\nraw.count()",
                [result(repr(TITANIC.count()))],
            ),
            code_cell("pd.isnull(df).sum()", [result(repr(pd.isnull(TITANIC).sum()))]),
            code_cell(
                "df.select_dtypes(include='number').isnull().sum()",
                [result(repr(numeric.isnull().sum()))],
            ),
            code_cell(
                "both = pd.concat([df, pd.read_csv('more.csv')], ignore_index=True)\n"
                "both['Age'].isnull().sum()",
                [result(repr(stacked["Age"].isnull().sum()))],
            ),
        ],
    )
    counted = task(found, 1)
    assert counted.question.text.startswith(
        "Compute the number of non-missing values of the data in `saved.csv` (after dropping "
        "the columns whose names contain 'Unnamed') for each column."
    )
    script = counted.reference + "\nprint(list(raw.count().index))\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == str(list(TITANIC.columns))  # the reference drops it too
    missing = task(found, 2)
    assert missing.question.text.startswith(
        "Compute the number of missing values in each column of the data in `titanic.csv`."
    )
    kept = task(found, 3)
    assert "(after keeping only its numeric columns)" in kept.question.text
    assert [k for k, _ in kept.answer["value"]] == ["Age"]
    both = task(found, 4)
    assert (
        "of the table made by stacking the rows of 2 tables in this order (rows numbered "
        "again from 0): (1) the data in `titanic.csv`; (2) the data in `more.csv`"
        in both.question.text
    )
    assert run_reference(both, tmp_path) == str(stacked["Age"].isnull().sum()) == "4"


def test_column_and_stacking_steps_not_stated_exactly_stay_refused() -> None:
    """A regular expression, side-by-side concatenation, another table's column names
    and other dtypes are other steps: no phrase."""
    tables = {n: ast.parse(f"pd.read_csv('{n}.csv')", mode="eval").body for n in ("a", "b")}
    for code in (
        "a.loc[:, ~a.columns.str.contains('^Un.*')]",
        "a.loc[:, ~b.columns.str.contains('Unnamed')]",
        "a.loc[:, ~a.columns.str.contains('x', case=False)]",
        "pd.concat([a, b], axis=1)",
        "pd.concat([a, b], keys=['x', 'y'])",
        "pd.concat([a])",
        "a.select_dtypes(include='float')",  # numpy's float: several types
        "a.select_dtypes(exclude='number')",
        "pd.isnull(a, b).sum()",
    ):
        assert Describer(tables, {}).phrase(ast.parse(code, mode="eval").body) is None, code
    kept = "a.loc[:, a.columns.str.contains('rate')]"
    assert Describer(tables, {}).phrase(ast.parse(kept, mode="eval").body) == (
        "the data in `a.csv` (after keeping only the columns whose names contain 'rate')"
    )


@pytest.mark.timeout(60)
def test_a_binned_column_is_stated_with_its_edges_and_labels(tmp_path: Path) -> None:
    """EDA's `df['AgeGroup'] = pd.cut(df['Age'], bins=[...], labels=[...])`, then counts
    or means per group: the bins are stated as pandas makes them (right edges in)."""
    groups = pd.cut(TITANIC["Age"], bins=[0, 18, 40, 100], labels=["child", "adult", "senior"])
    counts = TITANIC.assign(AgeGroup=groups)["AgeGroup"].value_counts()
    found = extract(
        tmp_path,
        [
            code_cell(
                "df['AgeGroup'] = pd.cut(df['Age'], bins=[0, 18, 40, 100], "
                "labels=['child', 'adult', 'senior'])"
            ),
            code_cell("df['AgeGroup'].value_counts()", [result(repr(counts))]),
        ],
    )
    asked = task(found, 2)
    assert (
        "with the added column `AgeGroup` = `Age` put into the bins (0, 18], (18, 40], "
        "(40, 100] labelled 'child', 'adult', 'senior' (a value in no bin: missing)"
    ) in asked.question.text
    assert dict(asked.answer["value"]) == {"adult": 5, "senior": 3, "child": 1}
    script = asked.reference + "\nprint(df['AgeGroup'].value_counts().to_dict())\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == str(counts.to_dict())


def test_bins_pandas_would_make_otherwise_are_not_stated() -> None:
    """A bin count (pandas widens the range by 0.1%), labels of another length, edges out
    of order, or other options: no phrase; `right=False` is stated as left-closed bins."""
    table = {"a": ast.parse("pd.read_csv('a.csv')", mode="eval").body}
    for cut in (
        "pd.cut(a['x'], 4)",
        "pd.cut(a['x'], [0, 5, 10], labels=['low'])",
        "pd.cut(a['x'], [5, 0, 10])",
        "pd.cut(a['x'], [0, 5, 10], labels=False)",
        "pd.cut(a['x'], [0, 5, 10], precision=1)",
        "pd.cut(a.x, [0, 5, 10], labels=[0, 'high'])",  # mixed labels
        "pd.cut(a.x, [0, 5, 10], labels=[0.5, 1.5])",
    ):
        code = f"a.assign(g={cut})"
        assert Describer(table, {}).phrase(ast.parse(code, mode="eval").body) is None, cut
    code = "a.assign(g=pd.cut(a['x'], [0, 5, 10], right=False))"
    assert "[0, 5), [5, 10)" in Describer(table, {}).phrase(ast.parse(code, mode="eval").body)
    # a wine notebook's 0/1 class of an attribute column: whole-number labels are stated
    code = "a.assign(g=pd.cut(a.quality, bins=[0, 6, 10], labels=[0, 1]))"
    assert "`quality` put into the bins (0, 6], (6, 10] labelled 0, 1" in Describer(
        table, {}
    ).phrase(ast.parse(code, mode="eval").body)


@pytest.mark.timeout(60)
def test_a_date_part_column_is_stated(tmp_path: Path) -> None:
    """Netflix EDA's `df['year_added'] = df['date_added'].apply(lambda x: x.year)` after
    `pd.to_datetime`, and `.dt.month`: the part of each date, as a formula."""
    (tmp_path / "shows.csv").write_text(
        "title,date_added\na,2019-01-05\nb,2019-03-02\nc,2020-03-09\nd,2021-07-01\ne,2019-11-30\n"
    )
    shows = pd.read_csv(tmp_path / "shows.csv", parse_dates=["date_added"])
    years = shows["date_added"].dt.year.value_counts()
    months = shows["date_added"].dt.month.value_counts()
    cells = [
        code_cell("import pandas as pd\ndf = pd.read_csv('shows.csv')"),
        code_cell("df['date_added'] = pd.to_datetime(df['date_added'])"),
        code_cell("df['year_added'] = df['date_added'].apply(lambda x: x.year)"),
        code_cell("df['year_added'].value_counts()", [result(repr(years))]),
        code_cell("df['date_added'].dt.month.value_counts()", [result(repr(months))]),
    ]
    path = write_notebook(tmp_path / "shows.ipynb", cells)
    found = {
        f.cell: f
        for f in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "shows.ipynb"))
    }
    asked = task(found, 3)
    assert "with the added column `year_added` = the year of `date_added`" in (asked.question.text)
    assert dict(asked.answer["value"]) == {"2019": 3, "2020": 1, "2021": 1}
    script = asked.reference + "\nprint(df['year_added'].value_counts().to_dict())\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == str(years.to_dict())
    month = task(found, 4)
    assert month.question.text.startswith(
        "Compute the count of each distinct value (most common first) of the month number "
        "(1 = January) of each date in the `date_added` column of the data in `shows.csv` "
        "(after changing the `date_added` column by"
    )


@pytest.mark.timeout(60)
def test_dtype_selections_yes_no_columns_and_categories_are_stated(tmp_path: Path) -> None:
    """seaborn tutorials' `df.select_dtypes(include=['float64', 'int64'])`, `mpg['newer']
    = mpg.model_year < 76` and `.astype('category')`: each stated, each reference the
    value the words define."""
    found = extract(
        tmp_path,
        [
            code_cell(
                "df.select_dtypes(include=['float64']).mean()",
                [result(repr(TITANIC.select_dtypes(include=["float64"]).mean()))],
            ),
            code_cell("df['young'] = df.Age < 30\ndf['young'].sum()", [result("4")]),
            code_cell(
                "df['Embarked'] = df['Embarked'].astype('category')\n"
                "df.groupby('Embarked')['Age'].mean()",
                [result(repr(TITANIC.groupby("Embarked")["Age"].mean()))],
            ),
        ],
    )
    typed = task(found, 1)
    assert "(after keeping only its columns of type `float64`)" in typed.question.text
    young = task(found, 2)
    assert "with the added column `young` = whether `Age` < 30" in young.question.text
    assert run_reference(young, tmp_path) == str((TITANIC["Age"] < 30).sum()) == "4"
    ports = task(found, 3)
    assert "converting it to a categorical type" in ports.question.text


@pytest.mark.timeout(60)
def test_scipy_zscore_is_stated_once_when_overwritten_before_any_read(tmp_path: Path) -> None:
    """An A/B-testing notebook computes its outlier column three times
    (`df['z_score'] = zscore(df['Page Views'])`, then of `Time Spent`, twice): only the
    last one is left when the answer is computed, so only it is stated; `zscore` is
    scipy's only when the notebook imported it from there."""
    (tmp_path / "ab.csv").write_text(
        "Group,Views,Spent\nA,3,10.5\nB,5,12.0\nA,4,9.0\nB,8,15.5\nA,2,11.0\nB,6,14.0\n"
    )
    frame = pd.read_csv(tmp_path / "ab.csv")
    spent = frame["Spent"]
    frame["z_score"] = (spent - spent.mean()) / spent.std(ddof=0)
    means = frame.groupby("Group")["z_score"].mean()
    cells = [
        code_cell(
            "import pandas as pd\nfrom scipy.stats import zscore\ndf = pd.read_csv('ab.csv')"
        ),
        code_cell("df['z_score'] = zscore(df['Views'])\nout = df[df['z_score'].abs() > 3]"),
        code_cell("df['z_score'] = zscore(df['Spent'])\nout = df[df['z_score'].abs() > 3]"),
        code_cell("df.groupby('Group')['z_score'].mean()", [result(repr(means))]),
    ]
    path = write_notebook(tmp_path / "ab.ipynb", cells)
    found = {
        f.cell: f
        for f in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "ab.ipynb"))
    }
    text = task(found, 3).question.text
    assert text.count("z-score") == 1, text
    assert "with the added column `z_score` = the z-score of `Spent` (`scipy.stats.zscore`" in text

    # a `zscore` of the notebook's own (or of another library) is not scipy's
    for load in ("def zscore(s):\n    return s - s.mean()", "from mylib import zscore"):
        cells[0] = code_cell(f"import pandas as pd\n{load}\ndf = pd.read_csv('ab.csv')")
        path = write_notebook(tmp_path / "own.ipynb", cells)
        own = {
            f.cell: f
            for f in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "own.ipynb"))
        }
        assert isinstance(own[3], CellSkip), load


@pytest.mark.timeout(60)
def test_a_mapping_of_a_column_read_as_an_attribute_is_stated(tmp_path: Path) -> None:
    """The salary notebook's `df['job_state'] = df.job_state.apply(lambda x: ...)`: the
    column as `df.job_state` was refused where `df['job_state']` was stated."""
    (tmp_path / "s.csv").write_text("job_state,x\n CA,1\n NY,2\n Los Angeles,3\n CA,4\n IL,5\n")
    cleaned = pd.read_csv(tmp_path / "s.csv")["job_state"].str.strip().replace("Los Angeles", "CA")
    counts = cleaned.value_counts().rename("job_state")
    step = (
        "df['job_state'] = df.job_state.apply("
        "lambda x: x.strip() if x.strip().lower() != 'los angeles' else 'CA')"
    )
    cells = [
        code_cell("import pandas as pd\ndf = pd.read_csv('s.csv')"),
        code_cell(f"{step}\ndf.job_state.value_counts()", [result(repr(counts))]),
    ]
    path = write_notebook(tmp_path / "s.ipynb", cells)
    found = {
        f.cell: f for f in CandidateExtractor(FileIndex([])).extract(load_notebook(path, "s.ipynb"))
    }
    asked = task(found, 1)
    assert (
        "with its column `job_state` recomputed as `job_state` with each value x replaced by "
        "`x.strip() if x.strip().lower() != 'los angeles' else 'CA'`" in asked.question.text
    )
    assert dict(asked.answer["value"]) == {"CA": 3, "NY": 1, "IL": 1}


@pytest.mark.timeout(60)
def test_column_names_renamed_by_a_function_are_stated() -> None:
    """`rename(columns=lambda x: x.lower().split()[0])` (the pandas workshop's TSA
    table), `rename(lambda x: x.lower(), axis=1)`, `rename(str.upper, axis='columns')`:
    each name through the function, stated in order; any other function, or one applied
    to the row labels (no axis), stays refused."""
    tables = {"a": ast.parse("pd.read_csv('a.csv')", mode="eval").body}

    def phrase(code: str) -> str | None:
        return Describer(tables, {}).phrase(ast.parse(code, mode="eval").body)

    assert phrase("a.rename(columns=lambda x: x.lower().split()[0])") == (
        "the data in `a.csv` (after renaming each column to its name lower-cased, then cut "
        "to its first word (split at whitespace))"
    )
    assert phrase("a.rename(lambda x: x.replace(' ', '_').strip(), axis=1)") == (
        "the data in `a.csv` (after renaming each column to its name with the text ' ' "
        "replaced by '_', then without spaces around it)"
    )
    assert phrase("a.rename(str.upper, axis='columns')") == phrase("a.rename(columns=str.upper)")
    for code in (
        "a.rename(lambda x: x.lower())",  # the row labels
        "a.rename(columns=lambda x: x[:3])",
        "a.rename(columns=lambda x: x.split(',')[0])",
        "a.rename(columns=lambda x, y=1: x.lower())",
        "a.rename(columns=len)",
    ):
        assert phrase(code) is None, code


@pytest.mark.timeout(60)
def test_an_assign_of_functions_reads_as_the_same_formulas_of_the_table() -> None:
    """`t.assign(temp_F=lambda x: x.temp_C * 9 / 5 + 32)` is the book's way to write
    `t.assign(temp_F=t.temp_C * 9 / 5 + 32)`: the same phrase. A name the function does
    not take stays what it is (another table's column is not this one's)."""
    tables = {n: ast.parse(f"pd.read_csv('{n}.csv')", mode="eval").body for n in ("a", "b")}

    def phrase(code: str) -> str | None:
        return Describer(tables, {}).phrase(ast.parse(code, mode="eval").body)

    direct = phrase("a.assign(temp_F=a.temp_C * 9 / 5 + 32)")
    assert direct is not None and "`temp_F` = ((`temp_C` * 9) / 5) + 32" in direct
    assert phrase("a.assign(temp_F=lambda x: x.temp_C * 9 / 5 + 32)") == direct
    assert phrase("a.assign(r=lambda x: x.c / b.d)") is None
    assert phrase("a.assign(r=lambda x, y=2: x.c * y)") is None


@pytest.mark.timeout(60)
def test_a_column_change_read_through_attributes_is_the_same_change() -> None:
    """`df1.TotalCharges = pd.to_numeric(df1.TotalCharges)` on a filtered table (the
    churn tutorial) is the change `df1['TotalCharges'] = pd.to_numeric(...)` states;
    another table's column is not."""
    tables = {n: ast.parse(f"pd.read_csv('{n}.csv')", mode="eval").body for n in ("a", "b")}

    def phrase(code: str) -> str | None:
        return Describer(tables, {}).phrase(ast.parse(code, mode="eval").body)

    kept = "a[a.c != ' ']"
    by_item = phrase(f"{kept}.assign(c=pd.to_numeric({kept}['c']))")
    assert by_item is not None and "converting it to numbers" in by_item
    assert phrase(f"{kept}.assign(c=pd.to_numeric({kept}.c))") == by_item
    assert phrase(f"{kept}.assign(c=pd.to_numeric(b.c))") is None


@pytest.mark.timeout(60)
def test_the_unnamed_count_column_of_a_reset_index_can_be_renamed() -> None:
    """Zomato's `groupby([...]).size().reset_index().rename(columns={0: 'Rating
    Count'})`: pandas names the unnamed Series' column `0`; renaming it is stated."""
    tables = {"t": ast.parse("pd.read_csv('z.csv')", mode="eval").body}
    code = "t.groupby(['a', 'b']).size().reset_index().rename(columns={0: 'n'})"
    text = Describer(tables, {}).phrase(ast.parse(code, mode="eval").body)
    assert text is not None and text.endswith(
        "as a table with the group keys as columns (then, on the result: renaming the "
        "column `0` to `n`)"
    )
    odd = "t.groupby(['a', 'b']).size().reset_index().rename(columns={0.5: 'n'})"
    assert Describer(tables, {}).phrase(ast.parse(odd, mode="eval").body) is None
