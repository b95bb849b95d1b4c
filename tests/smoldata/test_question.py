"""Questions: written from the code and its context, with the answer format stated,
and never containing the answer or the reference code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.describe import Describer
from smoldataenvs.grader import render_scalar
from smoldataenvs.notebook import NotebookError, load_notebook
from smoldataenvs.question import leaks, question_sentence, stated_text_values
from tests.conftest import needs_samples
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
    stream,
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


@needs_samples
def test_no_instruction_contains_its_answer_or_reference_code() -> None:
    candidates = all_sample_candidates()
    assert len(candidates) >= 5
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
        if item.answer["kind"] == "table":  # the row labels are stated, the cells are not
            keys = item.answer["keys"]
            values = [v for row in item.answer["value"] for v in row[keys:] if v is not None]
            # but a text value the question quotes as its step's literal (`where `Team`
            # is one of 'England', ...`) is what the step kept, one cell of many
            stated = stated_text_values(item.instruction)
            values = [v for v in values if not (isinstance(v, str) and v in stated)]
        for value in values:
            value = value[1] if isinstance(value, list) else value
            rendered = render_scalar(value)
            if len(rendered) >= 4 and not isinstance(value, bool):  # true/false name the format
                assert not re.search(rf"(?<![\w.]){re.escape(rendered)}(?![\w])", text), rendered
        path = "answer.csv" if item.answer["kind"] == "table" else "answer.txt"
        assert f"/workspace/{path}" in item.instruction


@needs_samples
@pytest.mark.parametrize(
    ("record", "cell", "phrase"),
    [
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
            # `heights = np.array(data['height(cm)'])`: an array's std divides by n
            "- Standard deviation (the population standard deviation (n in the denominator) "
            "of the `height(cm)` column of the data in `data/president_heights.csv`)",
        ),
    ],
)
def test_questions_name_the_operation_and_the_columns(record: str, cell: int, phrase: str) -> None:
    assert phrase in candidate(record, cell).instruction


@needs_samples
def test_the_notebooks_own_question_is_quoted_and_the_format_is_stated() -> None:
    text = candidate(EURO, 17).instruction
    assert "> Step 9. Calculate the mean Yellow Cards given per Team" in text
    assert "as a single number" in text
    assert "`Euro_2012_stats_TEAM.csv` (16 rows; columns: `Team`, `Goals`," in text


@needs_samples
def test_series_labels_are_listed_only_when_they_are_not_the_answer() -> None:
    nulls = candidate(MERGE, 61, allow_boolean=True).instruction
    assert "Give one line for each of: `state/region`, `ages`, `year`, `population`" in nulls
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
    assert [(s.cell, s.reason) for s in found] == [
        (2, "question.undescribed"),
        (3, "question.no-data"),
    ]


def test_leak_check_ignores_short_numbers_but_catches_long_ones() -> None:
    answer = {"kind": "number", "value": 342}
    assert leaks("Step 7. How many people survived? 342 did.", answer, "") is not None
    assert leaks("Step 342a.", answer, "") is None
    assert leaks("Step 7.", {"kind": "number", "value": 7}, "") is None
    code = "merged = merged.drop('abbreviation', axis=1)"
    assert leaks(f"we ran {code} first", answer, code) is not None


def test_a_table_cell_the_question_quotes_as_its_steps_literal_is_no_leak() -> None:
    """`where `Team` is one of 'England', 'Italy'` keeps those teams in the table's cells,
    and `replacing ... with 'Sunny'` puts 'Sunny' there: one cell of many, stated by the
    step. Unquoted, or in a single value's answer, the same text gives the answer away."""
    table = {"kind": "table", "keys": 0, "columns": ["Team", "Accuracy"],
             "value": [["England", 12.5], ["Italy", 14.1]]}  # fmt: skip
    assert leaks("the rows where `Team` is one of 'England', 'Italy'", table, "") is None
    assert leaks("the rows of the team England", table, "") is not None
    assert leaks("the rows where accuracy is 12.5", table, "") is not None  # numbers count
    single = {"kind": "string", "value": "England"}
    assert leaks("the team with the most goals, not 'England'", single, "") is not None


CITIES = "city,people\nOslo,700000\nBergen,285000\n"
TWICE = CITIES + "Oslo,700000\nBergen,285000\n"
"""Each city twice: the same means, groups of two rows (a one-row group is a look-up)."""


def _cities(tmp_path: Path, cells: list[dict], rows: str = CITIES) -> list[Candidate | CellSkip]:
    (tmp_path / "cities.csv").write_text(rows)
    load = code_cell("import numpy as np\nimport pandas as pd\ncities = pd.read_csv('cities.csv')")
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


COUNTS = "Snow    2\nName: Weather, dtype: int64"
WEATHER = "Date/Time,Weather\n2012-01-01 00:00,Fog\n2012-01-01 01:00,Snow\n2012-01-01 02:00,Snow\n"


def _weather(tmp_path: Path, cells: list[dict]) -> dict[int, Candidate | CellSkip]:
    """The shape of jvns/pandas-cookbook chapter 6: a boolean column, rebound in place,
    shown through a row slice."""
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "weather.csv").write_text(WEATHER)
    setup = [
        code_cell("import pandas as pd"),
        code_cell("weather = pd.read_csv('data/weather.csv', index_col='Date/Time')"),
        markdown_cell("So we can think of snowiness as a bunch of 1s and 0s:"),
        code_cell("is_snowing = weather['Weather'].str.contains('Snow')"),
    ]
    path = write_notebook(tmp_path / "weather.ipynb", [*setup, *cells])
    found = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "weather.ipynb"))
    return {item.cell: item for item in found}


def test_questions_state_the_row_slice_the_answer_depends_on(tmp_path: Path) -> None:
    """The answer is the first 2 rows only: a question that does not say so (the old
    'Compute the value this step asks for') cannot be answered."""
    found = _weather(
        tmp_path,
        [
            code_cell("is_snowing = is_snowing.astype(float)"),
            code_cell("is_snowing[:2].sum()", [result("1.0")]),
            code_cell("weather['Weather'].iloc[1:3].value_counts()", [result(COUNTS)]),
        ],
    )
    first, counts = found[5], found[6]
    assert isinstance(first, Candidate) and isinstance(counts, Candidate)
    assert first.question.text == (
        "Compute the sum of the first 2 entries of whether each value of the `Weather` column "
        "of the data in `data/weather.csv` (with its `Date/Time` column as the row labels) "
        "contains 'Snow', converted to numbers (true = 1, false = 0)."
    )
    assert "Compute the value this step asks for" not in first.instruction
    assert "entries 1 to 2 (counting from 0) of the `Weather` column" in counts.question.text


def test_steps_the_question_cannot_state_are_refused(tmp_path: Path) -> None:
    ratios = "Snow    0.667\nFog     0.333\nName: Weather, dtype: float64"
    cells = [
        code_cell(
            "pd.options.mode.use_inf_as_na = True\nweather['Weather'].nunique()", [result("2")]
        ),
        code_cell("weather['Weather'].value_counts(normalize=True)", [result(ratios)]),
        code_cell("print('Snowy:', is_snowing.sum() ** 2)", [stream("Snowy: 4\n")]),
        # `.str.upper()` is a stated cleaning step now (test_cleaning.py); `.apply` is not
        code_cell("weather['Weather'] = weather['Weather'].apply(str.upper)"),
        code_cell("weather['Weather'].value_counts()", [result(COUNTS.replace("Snow", "SNOW"))]),
    ]
    found = _weather(tmp_path, cells)
    reasons = {cell: getattr(item, "reason", "task") for cell, item in found.items()}
    assert reasons == {
        4: "question.unstated-step",  # a setting that changes values, not stated
        5: "task",  # normalize=True: shares, stated as such (issue #32)
        6: "question.undescribed",  # a print label without a described value
        8: "question.undescribed",  # changed in place by a function: not stated
    }
    shares = found[5]
    assert isinstance(shares, Candidate) and "the share (fraction from 0 to 1)" in (
        shares.question.text
    )


def test_a_value_thrown_away_before_the_answer_is_no_unstated_step(tmp_path: Path) -> None:
    """EDA cells open with a look that changes nothing (`weather.dropna()`, its value
    dropped: only the last line is shown); it was refused as `question.unstated-step`.
    With `inplace=True` it changes the frame, and the question states it; an unknown
    call on the frame may change it, and is still refused."""
    answer = "weather['Weather'].nunique()"
    cells = [
        code_cell(f"weather.dropna()\nweather.isnull().sum()\n{answer}", [result("2")]),
        code_cell(f"weather.dropna(inplace=True)\n{answer}", [result("2")]),
        code_cell(f"weather.scramble()\n{answer}", [result("2")]),
    ]
    found = _weather(tmp_path, cells)
    reasons = {cell: getattr(item, "reason", "task") for cell, item in found.items()}
    assert reasons[4] == reasons[5] == "task"
    assert reasons[6] in {"question.unstated-step", "question.undescribed"}
    looked, cleaned = found[4], found[5]
    assert isinstance(looked, Candidate) and isinstance(cleaned, Candidate)
    assert "`Weather` column" in looked.question.text
    assert "missing" not in looked.question.text and "missing" in cleaned.question.text


def test_the_data_note_does_not_give_a_row_count_away(tmp_path: Path) -> None:
    """Reviewer reject (chendaniely/pandas_for_everyone, `df.shape`): the data section
    said '1,704 rows' for a question whose answer is (1704, 6)."""
    rows = "".join(f"c{i},{i}\n" for i in range(1204))
    (tmp_path / "towns.csv").write_text("town,people\n" + rows)
    load = code_cell("import pandas as pd\ntowns = pd.read_csv('towns.csv')")
    cells = [
        code_cell("towns[towns['people'] >= 0].shape", [result("(1204, 2)")]),
        code_cell("len(towns[towns['people'] >= 0])", [result("1204")]),
        code_cell("towns['people'].max()", [result("1203")]),
    ]
    path = write_notebook(tmp_path / "towns.ipynb", [load, *cells])
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "towns.ipynb")))
    shape, count, largest = found
    assert isinstance(shape, Candidate) and isinstance(count, Candidate)
    for item in (shape, count):
        assert "1,204" not in item.instruction and "1204" not in item.instruction
        assert "`towns.csv` (columns: `town`, `people`)" in item.instruction
    assert isinstance(largest, Candidate) and "(1,204 rows;" in largest.instruction
    assert leaks("the table has 1,204 rows", {"kind": "number", "value": 1204}, "")


def test_a_repeated_conversion_is_stated_once(tmp_path: Path) -> None:
    """Reviewer remark (jvns/pandas-cookbook ch. 6): 'converted to numbers ...,
    converted to numbers ...' for `x = x.astype(float)` then `x.astype(float)[:2]`."""
    found = _weather(
        tmp_path,
        [
            code_cell("is_snowing = is_snowing.astype(float)"),
            code_cell("is_snowing.astype(float)[:1].sum()", [result("0.0")]),
        ],
    )
    text = found[5].question.text  # type: ignore[union-attr]
    assert text.count("converted to numbers") == 1, text


def test_grouped_and_single_row_questions_name_their_table(tmp_path: Path) -> None:
    """Real shapes from chendaniely/pandas_for_everyone: `df.groupby('year')['lifeExp']
    .mean()` must say which table was grouped, `df.iloc[-1]` which row."""
    grouped = "city\nBergen    285000\nOslo      700000\nName: people, dtype: int64"
    row = "city      Bergen\npeople    285000\nName: 1, dtype: object"
    # Two rows a city: the sum of a one-row group would be a look-up (`one_row_groups`).
    districts = "city,people\nOslo,400000\nBergen,285000\nOslo,300000\nBergen,0\n"
    found = _cities(
        tmp_path,
        [
            code_cell("cities.groupby('city')['people'].sum()", [result(grouped)]),
            code_cell("cities.sort_values('people').iloc[-1]", [result(row)]),
            code_cell(
                "cities[cities['people'] > 0].loc[1]", [result(row.replace("Bergen", "Bergen "))]
            ),
        ],
        districts,
    )
    texts = [f.question.text for f in found if isinstance(f, Candidate)]
    assert texts[0].startswith(
        "Compute the sum of the `people` column of the data in `cities.csv`, for each 'city' "
        "(groups in ascending order of 'city')."
    )  # reviewer reject (Packt ch. 7, `.agg('mean').head()`): which groups come first
    assert texts[1].startswith("Compute row 1 counting back from the end (1 = the last row) of")
    assert texts[2].startswith("Compute the row labelled 1 of the data in `cities.csv`,")


def test_display_settings_and_agg_by_name(tmp_path: Path) -> None:
    """Real shapes from PacktPublishing/Pandas-Cookbook: `pd.options.display.max_columns
    = 50` above the answer shows more, it changes no value; `.agg('mean')` is a mean.
    A rounding setting changes the saved answer: graded within half a shown unit."""
    grouped = "city\nBergen    285000.0\nOslo      700000.0\nName: people, dtype: float64"
    found = _cities(
        tmp_path,
        [
            code_cell("pd.options.display.max_columns = 50"),
            code_cell("cities.groupby('city')['people'].agg('mean')", [result(grouped)]),
            code_cell("cities.groupby('city')['people'].agg(np.mean)", [result(grouped)]),
            code_cell("pd.set_option('display.precision', 1)"),
            code_cell("cities['people'].mean()", [result("492500.0")]),
        ],
        TWICE,
    )
    reasons = [getattr(f, "reason", "task") for f in found]
    assert reasons == ["task", "task", "task"], found
    assert isinstance(found[0], Candidate)
    assert found[0].question.text.startswith("Compute the mean of the `people` column of")
    assert "atol" not in found[0].answer
    assert isinstance(found[2], Candidate) and found[2].answer["atol"] == pytest.approx(0.05)
    assert "0.05 (the notebook showed them rounded)" in found[2].instruction


@pytest.mark.parametrize(
    ("setting", "shown", "outcome"),
    [
        ("pd.set_option('display.float_format', '{:.2f}'.format)", "492500.00", 0.005),
        ("pd.set_option('display.float_format', lambda x: '%.1f' % x)", "492500.0", 0.05),
        # numpy's print options, or a format that is not a fixed number of decimals
        ("np.set_printoptions(precision=3)", "492500.0", "question.rounded-display"),
        ("pd.set_option('display.float_format', '{:.2e}'.format)", "4.92e+05",
         "question.rounded-display"),
    ],
)  # fmt: skip
def test_a_rounded_display_is_graded_as_shown(
    tmp_path: Path, setting: str, shown: str, outcome: object
) -> None:
    """krohartem1's notebooks set `pd.set_option('display.float_format', '{:.2f}'.format)`
    first (49 saved answers refused before): every float shown has two decimals, so the
    saved answer is within half a unit (0.005) of the value, and graded so."""
    found = _cities(
        tmp_path, [code_cell(setting), code_cell("cities['people'].mean()", [result(shown)])]
    )
    [asked] = [f for f in found if f.cell == 2]
    if isinstance(outcome, str):
        assert isinstance(asked, CellSkip) and asked.reason == outcome
    else:
        assert isinstance(asked, Candidate) and asked.answer["atol"] == pytest.approx(outcome)
        assert asked.answer["value"] == 492500.0


def test_a_rounded_series_with_thousands_separators_is_read(tmp_path: Path) -> None:
    shown = "city\nBergen    285,000.00\nOslo      700,000.00\nName: people, dtype: float64"
    setting = "pd.options.display.float_format = '{:,.2f}'.format"
    grouped = "cities.groupby('city')['people'].mean()"
    found = _cities(tmp_path, [code_cell(setting), code_cell(grouped, [result(shown)])], TWICE)
    [asked] = [f for f in found if f.cell == 2]
    assert isinstance(asked, Candidate), asked
    assert asked.answer["value"] == [["Bergen", 285000.0], ["Oslo", 700000.0]]
    assert asked.answer["atol"] == pytest.approx(0.005)


def test_a_rounded_value_with_too_few_digits_is_not_asked(tmp_path: Path) -> None:
    """0.03 of a shown two decimals is 0.025 to 0.035: a guess near zero passes."""
    (tmp_path / "cities.csv").write_text("city,people\nOslo,0.031\nBergen,0.029\n")
    load = code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')")
    cells = [load, code_cell("pd.set_option('display.precision', 2)"),
             code_cell("cities['people'].mean()", [result("0.03")])]  # fmt: skip
    path = write_notebook(tmp_path / "small.ipynb", cells)
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "small.ipynb")))
    [asked] = [f for f in found if f.cell == 2]
    assert isinstance(asked, CellSkip) and asked.reason == "question.rounded-display"
    assert "too few digits" in asked.detail


def test_reader_options_that_change_the_table_are_stated_or_refused(tmp_path: Path) -> None:
    """Reviewer reject (PacktPublishing/Pandas-Cookbook ch. 4 and 7, jvns ch. 6): the
    answer's labels and `shape` came from `index_col=...`, which the question did not
    state; `nrows` would cut the rows silently."""
    (tmp_path / "college.csv").write_text("INSTNM,CITY,UGDS\nA,Normal,4\nB,Huntsville,7\n")
    cells = [
        code_cell("import pandas as pd\ncollege = pd.read_csv('college.csv', index_col='INSTNM')"),
        code_cell("college[college['UGDS'] > 0].shape", [result("(2, 2)")]),
        code_cell("part = pd.read_csv('college.csv', nrows=1)\npart['UGDS'].sum()", [result("4")]),
    ]
    path = write_notebook(tmp_path / "college.ipynb", cells)
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "college.ipynb")))
    shape, cut = found
    assert isinstance(shape, Candidate)
    assert shape.question.text.startswith(
        "Compute the shape (rows, columns) of the data in `college.csv` "
        "(with its `INSTNM` column as the row labels)"
    ), shape.question.text
    assert isinstance(cut, CellSkip) and cut.reason == "question.undescribed"


def test_the_first_entries_of_counts_say_which_come_first(tmp_path: Path) -> None:
    """Reviewer reject (PacktPublishing/Pandas-Cookbook ch. 5: `value_counts().head()`):
    'the first 5 entries of how often each value occurs' does not say that the counts
    are ordered, so which five is unclear."""
    # Distinct counts: two tied ones at the end are `answer.tied-cut` now.
    counts = "Oslo      2\nBergen    1\nName: city, dtype: int64"
    [item] = _cities(
        tmp_path, [code_cell("cities['city'].value_counts().head(2)", [result(counts)])]
    )
    assert isinstance(item, Candidate)
    assert "the first 2 entries of the count of each distinct value (most common first)" in (
        item.question.text
    )


def test_a_computed_column_is_stated_as_its_formula(tmp_path: Path) -> None:
    """`df['c'] = df['a'] * df['b']` (the bundled bakery notebook's shape) is a step the
    answer depends on: the question states the formula instead of refusing."""
    found = _cities(
        tmp_path,
        [
            code_cell(
                "cities['share'] = cities['people'] / 1000\ncities['share'].max()",
                [result("700.0")],
            ),
            code_cell("cities['x'] = cities['people'].rank()\ncities['x'].max()", [result("2.0")]),
        ],
    )
    formula, unknown = found
    assert isinstance(formula, Candidate)
    assert formula.question.text == (
        "Compute the largest value of the `share` column of the data in `cities.csv`, "
        "with the added column `share` = `people` / 1000."
    )
    assert isinstance(unknown, CellSkip) and unknown.reason == "question.undescribed"


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("t = pd.read_csv('x.csv')\nt['a'].std()", "the sample standard deviation (n - 1"),
        ("t = pd.read_csv('x.csv')\nt['a'].var()", "the sample variance (n - 1"),
        ("t = pd.read_csv('x.csv')\nv = t['a'].values\nv.std()", "the population standard"),
        ("t = pd.read_csv('x.csv')\nnp.asarray(t['a']).var()", "the population variance"),
        ("t = pd.read_csv('x.csv')\nnp.std(t['a'])", "the population standard deviation"),
    ],
)
def test_a_spread_says_which_denominator_the_notebook_used(code: str, words: str) -> None:
    """pandas' `.std()`/`.var()` divide by n - 1, numpy's (an array's method or
    `np.std`) by n: below a few hundred rows they differ beyond the tolerance."""
    import ast

    from smoldataenvs.describe import Describer

    *steps, last = ast.parse(code).body
    assignments = {s.targets[0].id: s.value for s in steps if isinstance(s, ast.Assign)}
    phrase = Describer(assignments, {}).phrase(last.value)
    assert phrase is not None and phrase.startswith(words), phrase


@pytest.mark.timeout(10)
def test_a_captioned_series_is_asked_as_the_series_not_as_one_label() -> None:
    """`print("Average Body Mass by Species:\\n", s)` printed three species' means: it was
    asked as "Report these values, labelled as below: - Average Body Mass by Species
    (...)", one label for three entries. The caption is prose; the Series is asked."""
    describer = Describer({"df": ast.parse("pd.read_csv('p.csv')").body[0].value}, {})  # type: ignore[attr-defined]
    means = {"kind": "mapping", "value": [["Adelie", 3700.7], ["Gentoo", 5076.0]]}
    code = "print('Average Body Mass by Species:\\n', df.groupby('species')['mass'].mean())"
    asked = question_sentence(means, ast.parse(code).body, "stream", describer)
    assert asked is not None and asked.rule == "print-caption-keys"
    assert "for each 'species'" in asked.text and "`Adelie`, `Gentoo`" in asked.text
    assert "Average Body Mass" not in asked.text
    # one label per entry is still asked by its labels
    code = "print('Mean:', df['mass'].mean())\nprint('Max:', df['mass'].max())"
    labelled = {"kind": "mapping", "value": [["Mean", 1.0], ["Max", 2.0]]}
    asked = question_sentence(labelled, ast.parse(code).body, "stream", describer)
    assert asked is not None and asked.rule == "print-labels" and "- Max (" in asked.text


def test_a_displayed_tuple_of_values_is_each_value_stated_in_order() -> None:
    """`(t.c.min(), t.c.max())` shows two numbers: each is stated, numbered as shown; a
    tuple holding anything the describer cannot state, or of one or many values, is not."""
    table = {"planets": ast.parse("pd.read_csv('planets.csv')", mode="eval").body}

    def phrase(code: str) -> str | None:
        return Describer(table, {}).phrase(ast.parse(code, mode="eval").body)

    assert phrase("(planets.eccentricity.min(), planets.eccentricity.max())") == (
        "these 2 values: (1) the smallest value of the `eccentricity` column of the data in "
        "`planets.csv`; (2) the largest value of the `eccentricity` column of the data in "
        "`planets.csv`"
    )
    assert phrase("(planets.mass.mean(), undefined_name)") is None
    assert phrase("(planets.mass.mean(),)") is None
    assert phrase("(" + ", ".join(["planets.mass.mean()"] * 5) + ")") is None


def test_prose_that_states_what_the_answer_is_computed_from_is_not_quoted() -> None:
    """codebasics' z-score notebook introduces `mean + 3 * std` (77.91) with "Here the
    mean is 66.37 and standard deviation is 3.84": 66.37 + 3 * 3.84 is within the
    grader's tolerance, so the prose goes (the question stays). Prose without those
    numbers, a count, and a rounded statement of the answer itself are judged as
    before or caught the same way."""
    from smoldataenvs.question import derivable_from_stated, prose_leaks

    code = "upper_limit = df.height.mean() + 3*df.height.std()\nupper_limit"
    limit = {"kind": "number", "value": 77.91014411725232}
    prose = "Here the mean is 66.37 and standard deviation is 3.84."
    assert prose_leaks(prose, limit, code) == "states the numbers the answer is computed from"
    beyond = "Remove what is beyond 3 standard deviations."
    assert derivable_from_stated(beyond, limit, code) is None
    assert derivable_from_stated("The limit comes out near 77.9.", limit, code) is not None
    # Whole numbers (counts) are not judged by combinations of small numbers.
    assert derivable_from_stated("3 of 2 rows", {"kind": "number", "value": 6}, "") is None
    pair = {"kind": "list", "value": [77.91014411725232, 54.824975392478876]}
    assert derivable_from_stated(prose, pair, code.replace("+", "-")) is not None
    assert derivable_from_stated("the mean is 66.37", pair, code) is None
