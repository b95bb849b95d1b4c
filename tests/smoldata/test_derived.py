"""A whole table's `describe()` or `corr()` gives a few questions about named cells
(issue 32 point 1: "an aggregate the notebook itself computed"): each question names
one statistic of one column, or the correlation of two named columns, its reference
computes exactly that value, an identifier column and a coefficient of 1 are never
asked, at most three questions come from one table, and each derived task has its own
id."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from repo2rlenv.emit import Draft, Skip, emit_all
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.derived import DERIVED_CAP
from smoldataenvs.notebook import load_notebook
from smoldataenvs.task import task_id
from tests.smoldata.helpers import code_cell, result, write_notebook
from tests.smoldata.test_tables import html_result
from tests.smoldata.test_yield_shapes import run_reference


def value_of(candidate: Candidate, folder: Path) -> float:
    """The reference's value (its repr `np.float64(x)` on numpy 2)."""
    shown = str(run_reference(candidate, folder))
    return float(shown.removeprefix("np.float64(").rstrip(")"))


N = 40
FRAME = pd.DataFrame(
    {
        "PassengerId": list(range(1, N + 1)),
        "year": [2015 + i % 3 for i in range(N)],  # a mean any nearby year passes: not asked
        "age": [20.0 + (i * 7) % 31 for i in range(N)],
        "klass": [1 + (i % 5 > 0) + (i % 5 > 1) for i in range(N)],  # median 3 = 75%: not asked
        "fare": [5.0 + ((i * 11) % 17) * 2.5 for i in range(N)],
        "rooms": [1 + (i * 5) % 4 for i in range(N)],
        "weight": [50.0 + (i * 3) % 23 for i in range(N)],
    }
)
FRAME["fare_twice"] = FRAME["fare"] * 2  # correlation 1 with `fare`: never asked
FRAME["rank"] = list(range(N, 0, -1))  # a row numbering: never asked


def cells() -> list[dict]:
    data = FRAME
    adults = data[data["age"] > 25]
    return [
        code_cell("import pandas as pd\ndata = pd.read_csv('people.csv')"),
        code_cell("data.describe()", [html_result(data.describe())]),
        code_cell("data.corr()", [html_result(data.corr())]),
        code_cell(
            "adults = data[data['age'] > 25]\nadults.describe()", [html_result(adults.describe())]
        ),
        code_cell("data['age'].head(2).describe()", [result(repr(data["age"].head(2).describe()))]),
        code_cell("data[['age', 'fare']].corr()", [html_result(data[["age", "fare"]].corr())]),
    ]


def extract(folder: Path) -> list[Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    FRAME.to_csv(folder / "people.csv", index=False)
    path = write_notebook(folder / "people.ipynb", cells())
    return list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "people.ipynb")))


@pytest.mark.timeout(120)
def test_describe_and_corr_tables_give_questions_about_named_cells(tmp_path: Path) -> None:
    found = extract(tmp_path)
    derived = [f for f in found if isinstance(f, Candidate) and f.part]
    by_cell = {c: [f for f in derived if f.cell == c] for c in (1, 2, 3)}
    assert all(len(parts) == DERIVED_CAP for parts in by_cell.values()), found
    # describe(): the columns in order, the id left out, mean / median / std in turn.
    texts = [f.question.text for f in by_cell[1]]
    assert "the mean of the `age` column" in texts[0]
    assert "the median of the `fare` column" in texts[1]
    assert "`rooms` column" in texts[2] and "standard deviation" in texts[2]
    assert not any("PassengerId" in t or "`year`" in t or "klass" in t for t in texts)
    values = [f.answer["value"] for f in by_cell[1]]
    expected = [FRAME["age"].mean(), FRAME["fare"].median(), FRAME["rooms"].std()]
    assert values == pytest.approx(expected, rel=1e-5)
    for candidate, value in zip(by_cell[1], expected, strict=True):
        assert value_of(candidate, tmp_path) == pytest.approx(value, rel=1e-9)
    # corr(): the strongest pairs first, never a coefficient of 1 (fare_twice ~ fare).
    corr = FRAME.drop(columns=["PassengerId", "fare_twice", "rank"]).corr()
    pairs = [
        (abs(corr.loc[a, b]), a, b)
        for i, a in enumerate(corr.columns)
        for b in corr.columns[i + 1 :]
    ]
    strongest = sorted(pairs, key=lambda p: -p[0])[:DERIVED_CAP]
    for candidate, (_, a, b) in zip(by_cell[2], strongest, strict=True):
        assert f"the correlation between the `{a}` and `{b}` columns" in candidate.question.text
        assert candidate.answer["value"] == pytest.approx(corr.loc[a, b], rel=1e-5)
        assert value_of(candidate, tmp_path) == pytest.approx(corr.loc[a, b])
    # describe() of a filtered table: the filter is stated and computed.
    adults = FRAME[FRAME["age"] > 25]
    first = by_cell[3][0]
    assert "`age` > 25" in first.question.text
    assert value_of(first, tmp_path) == pytest.approx(adults["age"].mean())
    # Distinct questions: nothing collapses as a duplicate.
    assert len({f.dedup_key for f in derived}) == len(derived)
    assert not any("rank" in f.question.text for f in derived)
    # A column selection is not restated: each column is named once.
    (selected,) = [f for f in derived if f.cell == 5]
    assert selected.question.text == (
        "Compute the correlation between the `age` and `fare` columns of the data in `people.csv`."
    )
    assert value_of(selected, tmp_path) == pytest.approx(FRAME["age"].corr(FRAME["fare"]))
    # A one-column describe() of a row cut is not a whole table: no derived question.
    assert not any(f.cell == 4 and isinstance(f, Candidate) and f.part for f in found)


@pytest.mark.timeout(120)
def test_derived_questions_are_separate_tasks(tmp_path: Path) -> None:
    folder = tmp_path / "nb"
    extract(folder)
    events: list = []
    options = NotebookOptions(
        dataset=str(folder), reproduce=False, base_image="b:1", max_per_dataset=100
    )
    emit_all(NotebookPipeline(options), tmp_path / "out", on_event=events.append)
    drafts = [e.bundle for e in events if isinstance(e, Draft)]
    ids = sorted(b.task_id for b in drafts if "-c4-" not in b.task_id)  # c4: its own task
    assert len(ids) == len(set(ids)) == 3 * DERIVED_CAP + 1, [
        (e.record_id, e.reason) for e in events if isinstance(e, Skip)
    ]
    assert sum("-c1d" in i for i in ids) == DERIVED_CAP
    parts = sorted(
        b.config.metadata.model_extra["smoldataenvs"].get("derived_part", 0) for b in drafts
    )
    assert parts == [0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    # A cell's own task keeps the id it had before derived questions existed.
    assert task_id("d", "n.ipynb", 4) == task_id("d", "n.ipynb", 4, 0)
    assert task_id("d", "n.ipynb", 4, 1) != task_id("d", "n.ipynb", 4)


def stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


@pytest.mark.timeout(60)
def test_a_printed_label_around_one_value_reads_as_the_value(tmp_path: Path) -> None:
    """`print('Average age: $', avg)` and `print('min age', x, 'years')`: the value
    between the printed constants is the answer, the bare expression the question; two
    values in one print, or a line that does not match the constants, stay refused."""
    from tests.smoldata.test_yield_shapes import FRAME as RAIN
    from tests.smoldata.test_yield_shapes import extract as extract_rain
    from tests.smoldata.test_yield_shapes import load

    top, low = RAIN["rain"].max(), RAIN["rain"].min()
    found = extract_rain(
        tmp_path,
        [
            load(),
            code_cell(
                "h = data['rain'].max()\nprint('Highest rain: $', h)",
                [stream(f"Highest rain: $ {top}\n")],
            ),
            code_cell(
                "print('min rain', data['rain'].min(), 'mm')", [stream(f"min rain {low} mm\n")]
            ),
            code_cell(
                "print('range', data['rain'].min(), data['rain'].max())",
                [stream(f"range {low} {top}\n")],
            ),
            code_cell("print('min rain', data['rain'].min())", [stream(f"lowest {low}\n")]),
        ],
    )
    highest, lowest = found[1], found[2]
    assert isinstance(highest, Candidate), highest
    assert highest.answer == {"kind": "number", "value": top}
    assert (
        highest.question.text
        == "Compute the largest value of the `rain` column of the data in `rain.csv`."
    )
    assert highest.reference.rstrip().endswith("h = data['rain'].max()\nh")
    assert run_reference(highest, tmp_path).endswith(f"{top})") or run_reference(
        highest, tmp_path
    ) == str(top)
    assert isinstance(lowest, Candidate), lowest
    assert lowest.answer == {"kind": "number", "value": low}
    assert isinstance(found[3], CellSkip) and found[3].reason == "question.undescribed"
    assert isinstance(found[4], CellSkip), found[4]


@pytest.mark.timeout(120)
def test_derived_questions_take_only_what_the_cap_leaves(tmp_path: Path) -> None:
    """The describe() cell comes first, but with a cap of 2 per data set the later
    cell's own question is kept and one derived question fills the rest."""
    folder = tmp_path / "nb"
    folder.mkdir()
    FRAME.to_csv(folder / "people.csv", index=False)
    adults = FRAME[FRAME["age"] > 25]
    own = code_cell("len(data[data['age'] > 25])", [result(str(len(adults)))])
    write_notebook(folder / "people.ipynb", [*cells()[:2], own])
    events: list = []
    options = NotebookOptions(
        dataset=str(folder), reproduce=False, base_image="b:1", max_per_dataset=2
    )
    emit_all(NotebookPipeline(options), tmp_path / "out", on_event=events.append)
    ids = sorted(e.bundle.task_id for e in events if isinstance(e, Draft))
    assert len(ids) == 2 and any("-c2-" in i for i in ids) and any("-c1d1-" in i for i in ids)


@pytest.mark.timeout(120)
def test_corr_with_numeric_only_is_the_same_table(tmp_path: Path) -> None:
    """pandas 2 asks for `corr(numeric_only=True)` where 1.x dropped text columns by
    itself: the pairs asked are the same; another method (`spearman`) is not asked."""
    FRAME.to_csv(tmp_path / "people.csv", index=False)
    table = html_result(FRAME.corr(numeric_only=True))
    notebook = [
        code_cell("import pandas as pd\ndata = pd.read_csv('people.csv')"),
        code_cell("data.corr()", [table]),
        code_cell("data.corr(numeric_only=True)", [table]),
        code_cell("data.corr(method='spearman')", [table]),
    ]
    path = write_notebook(tmp_path / "people.ipynb", notebook)
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "people.ipynb")))
    asked = {c: [f.question.text for f in found if f.cell == c and isinstance(f, Candidate)]
             for c in (1, 2, 3)}  # fmt: skip
    assert len(asked[1]) == DERIVED_CAP and asked[2] == asked[1]
    assert asked[3] == []
