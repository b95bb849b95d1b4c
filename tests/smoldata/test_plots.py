"""A plot cell asked as the aggregate it draws (`plots`), its answer computed in the
task's container (`compute_live`, read back by `computed`), through every gate."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from repo2rlenv.emit import Draft, Skip, emit_all
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.cellcode import parse_cell
from smoldataenvs.compute_live import MARKER, correlations
from smoldataenvs.computed import COMPUTE, Computed, read_computed
from smoldataenvs.derived import correlation_parts
from smoldataenvs.grader import grade
from smoldataenvs.plots import plot_names, plotted_aggregates, widened
from smoldataenvs.reproduce import judge
from smoldataenvs.task import module_text
from tests.smoldata.helpers import code_cell, image, write_notebook
from tests.smoldata.test_reproduce import trial

IMPORTS = "import pandas as pd\nimport matplotlib.pyplot as plt\nimport seaborn as sns"
MODULES = plot_names([parse_cell(0, IMPORTS)])
PETS = "pet,age\ncat,3\ncat,5\ndog,4\ncat,9\ndog,2\nfish,1\n"


def asked(source: str) -> list[str]:
    """The final expression of each rewritten cell."""
    found = plotted_aggregates(parse_cell(1, source), MODULES)
    return [p.cell.sanitized.splitlines()[-1] for p in found]


def test_plot_module_names_come_from_the_notebook_imports() -> None:
    assert {"plt", "sns"} == MODULES
    other = plot_names([parse_cell(0, "from matplotlib import pyplot as p\nimport numpy as np")])
    assert other == {"p"}


@pytest.mark.parametrize(
    ("source", "expression"),
    [
        ("df['pet'].value_counts().plot(kind='bar')", "df['pet'].value_counts()"),
        ("df['pet'].value_counts().plot.barh()", "df['pet'].value_counts()"),
        ("df['pet'].value_counts().plot('pie')", "df['pet'].value_counts()"),
        ("df.groupby('pet')['age'].mean().plot()", "df.groupby('pet')['age'].mean()"),
        (
            "df.groupby('pet')['age'].sum().sort_values().head(2).plot(kind='pie')",
            "df.groupby('pet')['age'].sum().sort_values().head(2)",
        ),
        ("df.isnull().sum().plot(kind='bar')", "df.isnull().sum()"),
        ("sns.countplot(x='pet', data=df)", "df['pet'].value_counts()"),
        ("sns.countplot(data=df, y='pet', order=['cat'])", "df['pet'].value_counts()"),
        ("sns.countplot('pet', data=df)", "df['pet'].value_counts()"),  # seaborn 0.11
        ("sns.countplot(df['pet'])", "df['pet'].value_counts()"),
        ("sns.countplot(df, x=df['pet'])", "df['pet'].value_counts()"),
        ("sns.barplot(x='pet', y='age', data=df)", "df.groupby('pet')['age'].mean()"),
        ("sns.boxplot(x='pet', y='age', data=df)", "df.groupby('pet')['age'].median()"),
        # hue: a second grouping, one value per pair of groups
        (
            "sns.countplot(x='pet', hue='old', data=df)",
            "df.groupby(['pet', 'old']).size().rename('count')",
        ),
        (
            "sns.countplot(df, y='pet', hue='old')",
            "df.groupby(['pet', 'old']).size().rename('count')",
        ),
        (
            "sns.barplot(x='pet', y='age', hue='old', data=df)",
            "df.groupby(['pet', 'old'])['age'].mean()",
        ),
        (
            "sns.boxplot(x='pet', y='age', hue='old', data=df)",
            "df.groupby(['pet', 'old'])['age'].median()",
        ),
        ("sns.barplot(x='pet', y='age', hue='pet', data=df)", "df.groupby('pet')['age'].mean()"),
        ("sns.pointplot(x='pet', y='age', data=df)", "df.groupby('pet')['age'].mean()"),
        ("sns.lineplot(x='pet', y='age', data=df)", "df.groupby('pet')['age'].mean()"),
        ("sns.catplot(x='pet', kind='count', data=df)", "df['pet'].value_counts()"),
        (
            "sns.catplot(x='pet', y='age', hue='old', kind='box', data=df)",
            "df.groupby(['pet', 'old'])['age'].median()",
        ),
        # a heat map of correlations: the table, whose pairs are chosen once computed
        ("sns.heatmap(df.corr(), annot=True)", "df.corr()"),
        ("c = df.corr(numeric_only=True)\nsns.heatmap(c)", "df.corr(numeric_only=True)"),
        (
            "counts = df['pet'].value_counts()\nplt.pie(counts, labels=counts.index)",
            "df['pet'].value_counts()",
        ),
        (
            "s = df['pet'].value_counts()\nsns.barplot(x=s.index, y=s.values)",
            "df['pet'].value_counts()",
        ),
        (
            "top = df['pet'].value_counts()\nplt.bar(top[:2].index, top[:2].values)",
            "df['pet'].value_counts()[:2]",
        ),
    ],
)
def test_a_plotted_aggregate_becomes_the_cells_expression(source: str, expression: str) -> None:
    [last] = asked(f"plt.figure(figsize=(8, 4))\n{source}\nplt.title('Pets')\nplt.show()")
    assert last == expression  # a name the cell bound to the aggregate: its expression


def test_statements_before_the_plot_stay_and_plotting_ones_go() -> None:
    [plotted] = plotted_aggregates(
        parse_cell(
            1,
            "fig, ax = plt.subplots()\ndf['old'] = df['age'] > 3\n"
            "sns.countplot(x='old', data=df, ax=ax)\nax.set_title('Old pets')",
        ),
        MODULES,
    )
    assert plotted.cell.sanitized == "df['old'] = df['age'] > 3\ndf['old'].value_counts()"
    assert plotted.plot == "sns.countplot(x='old', data=df, ax=ax)"


def test_a_binding_the_aggregate_replaced_is_left_out_of_the_cell() -> None:
    """`c = df.corr()` before `sns.heatmap(c)`: the rewritten cell computes `df.corr()`
    itself, and a kept `c = ...` would be a step no question states (a real heat map
    was refused as `question.unstated-step` for it). Other statements stay."""
    source = "c = df.corr(numeric_only=True)\nn = len(df)\nsns.heatmap(c, annot=True)"
    [plotted] = plotted_aggregates(parse_cell(1, source), MODULES)
    assert plotted.cell.sanitized == "n = len(df)\ndf.corr(numeric_only=True)"
    kept = "s = df['pet'].value_counts()\nplt.pie(s)\nprint(s)\nplt.pie(s[:2])"
    # read by another statement of the cell: the binding stays
    assert [p.cell.sanitized for p in plotted_aggregates(parse_cell(1, kept), MODULES)] == [
        "df['pet'].value_counts()",  # the first plot comes before `print(s)`
        "s = df['pet'].value_counts()\nprint(s)\ndf['pet'].value_counts()[:2]",
    ]


def test_two_plots_in_one_cell_give_two_questions() -> None:
    source = (
        "fig, axes = plt.subplots(1, 2)\nsns.countplot(x='pet', data=df, ax=axes[0])\n"
        "df.groupby('pet')['age'].max().plot(kind='bar', ax=axes[1])"
    )
    assert asked(source) == ["df['pet'].value_counts()", "df.groupby('pet')['age'].max()"]


@pytest.mark.parametrize(
    "source",
    [
        "sns.countplot(x='pet', hue=df['old'], data=df)",  # a hue that is not a column name
        "sns.violinplot(x='pet', y='age', hue='old', data=df)",  # a density
        "sns.catplot(x='pet', y='age', data=df)",  # strip: every point
        "sns.catplot(x='pet', y='age', kind='bar', col='old', data=df)",  # panels
        "sns.heatmap(df.isnull())",  # every cell, no aggregate
        "sns.lineplot(x='pet', y='age', style='old', data=df)",  # a line per style
        "sns.lineplot(x='pet', y='age', estimator=None, data=df)",  # every point
        "sns.heatmap(df.corr(method='spearman'))",
        "sns.histplot(df['age'], bins=5)",  # bins are the library's
        "df['age'].plot(kind='hist')",
        "df['pet'].value_counts().plot(kind='hist')",
        "df['pet'].value_counts().plot('hist')",  # pandas' first positional: the kind
        "df['pet'].value_counts().plot(ax)",
        "sns.boxplot(df['age'])",  # one box: its quartiles are the question's at most
        "sns.boxplot(x='pet', y='age', data=df, orient='h')",
        "plt.scatter(df['age'], df['age'])",
        "sns.barplot(x='pet', y='age', data=df, estimator=sum)",
        "df['age'].plot()",  # raw values, no aggregate
        "df.plot(kind='bar')",
    ],
)
def test_plots_without_one_well_defined_aggregate_are_not_asked(source: str) -> None:
    assert asked(source) == []


# -- reading the container's answer back -------------------------------------------------
def _line(reply: object) -> str:
    return MARKER + json.dumps(reply)


def test_the_last_marker_line_is_the_answer() -> None:
    output = "\n".join(
        [
            "noise printed by the notebook",
            _line({"answer": {"kind": "mapping", "value": [["x", 1]]}}),
            _line({"answer": {"kind": "mapping", "value": [["cat", 3], ["dog", 2.5]]}}),
        ]
    )
    computed = read_computed(output)
    assert computed == Computed({"kind": "mapping", "value": [["cat", 3], ["dog", 2.5]]})


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("Traceback: KeyError 'pet'", "plot.compute-failed"),
        (MARKER + "{not json", "plot.compute-failed"),
        (_line(["a", "list"]), "plot.compute-failed"),
        (
            _line({"refused": "answer.too-many-items", "detail": "31 items"}),
            "answer.too-many-items",
        ),
        (_line({"refused": "reproduce.passed; rm -rf /", "detail": ""}), "plot.compute-failed"),
        (_line({"answer": {"kind": "number", "value": 3}}), "plot.answer-kind"),
        (_line({"answer": {"kind": "mapping", "value": []}}), "plot.answer-kind"),
        (_line({"answer": {"kind": "mapping", "value": [["a", [1, 2]]]}}), "plot.answer-kind"),
        (_line({"answer": {"kind": "mapping", "value": [["a", True]]}}), "plot.answer-kind"),
        (_line({"answer": {"kind": "mapping", "value": [["a", "NaN"]]}}), "plot.answer-kind"),
        (_line({"answer": {"kind": "mapping", "value": [["x" * 300, 1]]}}), "plot.answer-kind"),
        (_line({"answer": {"kind": "mapping", "value": [[{"k": 1}, 1]]}}), "plot.answer-kind"),
        (
            _line({"answer": {"kind": "mapping", "value": [[str(i), i] for i in range(21)]}}),
            "plot.answer-kind",
        ),
    ],
)
def test_anything_but_a_short_series_is_refused(output: str, reason: str) -> None:
    computed = read_computed(output)
    assert computed.answer is None and computed.reason == reason


def _table(**changes: object) -> str:
    answer = {"kind": "table", "columns": ["pet", "old", "age"], "keys": 2,
              "value": [["cat", True, 5.5], ["dog", False, None]]}  # fmt: skip
    return _line({"answer": {**answer, **changes}})


def test_a_grouped_plot_reads_back_as_a_small_table() -> None:
    """`hue=`: a Series grouped by two keys is a table of labels and numbers (a label
    may be a boolean group, a value may be missing); anything else is refused."""
    computed = read_computed(_table())
    assert computed.answer is not None and computed.answer["keys"] == 2
    assert computed.answer["value"][1] == ["dog", False, None]
    for hostile in [
        _table(columns=["pet", "old"]),  # rows wider than the columns
        _table(columns=["pet", "pet", "age"]),
        _table(keys=0),
        _table(keys=3),
        _table(keys="2"),
        _table(value=[]),
        _table(value=[["cat", True, 1]] * 21),
        _table(value=[["cat", True, "5"]]),
        _table(value=[["cat", True, float("inf")]]),
        _table(value=[["cat", [1], 5]]),
        _table(value=[["cat", True, None]]),  # every value missing
        _table(
            columns=["pet", "old", *[f"v{i}" for i in range(9)]], value=[["cat", True, *range(9)]]
        ),
    ]:
        computed = read_computed(hostile)
        assert computed.answer is None and computed.reason == "plot.answer-kind", hostile
    assert read_computed(_table(), cut=True).reason == "plot.answer-kind"


def _corr(columns: object, upper: object) -> str:
    return _line({"corr": {"columns": columns, "upper": upper}})


def test_a_heat_maps_correlations_read_back_as_every_pair() -> None:
    computed = read_computed(_corr(["a", "b", "c"], [[0.5, None], [-1], []]))
    assert computed.answer is None and computed.reason == ""
    assert computed.correlations == {
        ("a", "a"): 1.0, ("b", "b"): 1.0, ("c", "c"): 1.0, ("a", "b"): 0.5, ("b", "a"): 0.5,
        ("a", "c"): None, ("c", "a"): None, ("b", "c"): -1, ("c", "b"): -1,
    }  # fmt: skip
    for hostile in [
        _corr(["a"], [[]]),
        _corr(["a", "a"], [[0.5], []]),
        _corr(["a", "b"], [[0.5]]),  # a row short
        _corr(["a", "b"], [[0.5, 0.1], []]),
        _corr(["a", "b"], [[1.5], []]),
        _corr(["a", "b"], [["0.5"], []]),
        _corr(["a", "b"], [[True], []]),
        _corr(["a", 2], [[0.5], []]),
        _corr(["x" * 201, "b"], [[0.5], []]),
        _corr([f"c{i}" for i in range(25)], [[0.0] * (24 - i) for i in range(25)]),
        _line({"corr": "<table>"}),
    ]:
        computed = read_computed(hostile)
        assert computed.correlations is None and computed.reason == "plot.answer-kind", hostile


@pytest.mark.parametrize(
    ("widened", "reason"),
    [
        ([3, 2, 1], ""),  # the row left out (1) ties with no row kept
        ([2, 3, 2], "answer.tied-cut"),  # order free: the left-out 2 ties with `dog`
        ([3, 2.0000001, 2], "answer.tied-cut"),  # as the display rounds
        (None, "plot.cut-unchecked"),
        ([3, 2], "plot.cut-unchecked"),
        ([3, 2, 1, 0], "plot.cut-unchecked"),
        ([7, 2, 1], "plot.cut-unchecked"),  # not the kept rows and one more
        ([3, 2, "x"], "plot.cut-unchecked"),
    ],
)
def test_a_cut_is_asked_only_when_the_row_past_it_does_not_tie(
    widened: list | None, reason: str
) -> None:
    reply = {"answer": {"kind": "mapping", "value": [["cat", 3], ["dog", 2]]}}
    if widened is not None:
        reply["widened"] = widened
    computed = read_computed(_line(reply), cut=True)
    assert computed.reason == reason
    assert (computed.answer is None) == bool(reason)


def _run_compute(
    tmp_path: Path,
    data: str,
    expression: str,
    wider: str | None,
    spec: str = '"capture": "result"',
    table: str | None = None,
) -> Computed:
    """compute_live beside the task's own solution files, as the compute trial plants
    them, run by this interpreter (pandas here, no container)."""
    (tmp_path / "pets.csv").write_text(data)
    solution = tmp_path / "solution"
    solution.mkdir(exist_ok=True)
    for name, module in [("solve", "runner"), ("grader", "grader"), ("compute", "compute_live")]:
        (solution / f"{name}.py").write_text(module_text(module))
    (solution / "saved_output.py").write_text(module_text("saved_output"))
    (solution / "reference.py").write_text(
        "# %% [cell 0]\nimport pandas as pd\ndf = pd.read_csv('pets.csv')\n"
        f"# %% [cell 1]\n{expression}\n"
    )
    (solution / "spec.json").write_text("{" + spec + "}")
    for planted, text in (("widened.py", wider), ("table.py", table)):
        (solution / planted).unlink(missing_ok=True)
        if text is not None:
            (solution / planted).write_text(text)
    command = COMPUTE.replace("/workspace", str(tmp_path)).replace("/solution", str(solution))
    command = command.replace("python3", sys.executable)
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return read_computed(done.stdout, cut=wider is not None)


@pytest.mark.timeout(60)
def test_the_in_container_script_computes_what_pandas_does(tmp_path: Path) -> None:
    computed = _run_compute(tmp_path, PETS, "df['pet'].value_counts()", None)
    counts = pd.read_csv(tmp_path / "pets.csv")["pet"].value_counts()
    assert computed.answer == {"kind": "mapping", "value": [[k, int(v)] for k, v in counts.items()]}
    # The top 2 of cat 3, dog 2, bird 2, fish 1: dog or bird is the sort's choice.
    tied = PETS + "bird,1\nbird,2\n"
    [plotted] = plotted_aggregates(
        parse_cell(1, "df['pet'].value_counts().head(2).plot(kind='bar')"), MODULES
    )
    assert plotted.widened == "df['pet'].value_counts().head(3)"
    computed = _run_compute(tmp_path, tied, "df['pet'].value_counts().head(2)", plotted.widened)
    assert computed.reason == "answer.tied-cut"
    computed = _run_compute(
        tmp_path, tied, "df['pet'].value_counts().head(1)", "df['pet'].value_counts().head(2)"
    )
    assert computed.answer == {"kind": "mapping", "value": [["cat", 3]]}


@pytest.mark.timeout(60)
def test_counts_of_a_0_1_column_keep_their_labels(tmp_path: Path) -> None:
    """`sns.countplot(x='survived', data=titanic)`: the counts are labelled 0 and 1, which
    a Series repr shows as a default index; the plot's spec says the Series is labelled,
    so it is the mapping a plot draws (the reference's own answer file too), not a list
    the computed-answer check refuses (five real plots were refused so)."""
    data = "survived\n0\n1\n0\n0\n"
    unlabelled = _run_compute(tmp_path, data, "df['survived'].value_counts()", None)
    assert unlabelled.reason == "plot.answer-kind"
    spec = '"capture": "result", "labelled": true, "answer_path": "answer.txt"'
    computed = _run_compute(tmp_path, data, "df['survived'].value_counts()", None, spec)
    assert computed.answer == {"kind": "mapping", "value": [["0", 3], ["1", 1]]}
    solved = subprocess.run(
        [sys.executable, str(tmp_path / "solution" / "solve.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert solved.returncode == 0, solved.stderr
    written = (tmp_path / "answer.txt").read_text()
    assert grade({**computed.answer, "atol": 0, "rtol": 0}, written)[0]
    assert not grade({"kind": "mapping", "value": [[0, 1], [1, 3]], "atol": 0, "rtol": 0}, written)[
        0
    ]


@pytest.mark.timeout(60)
def test_a_hue_plot_computes_a_table_the_reference_answers(tmp_path: Path) -> None:
    """`sns.barplot(x='pet', y='age', hue='old')` and its count plot: the grouped
    Series' repr reads as a table (the level `old` wider than its labels True/False),
    and the reference's CSV of the live Series grades against it."""
    rows = ["pet,age,old"] + [f"{line},{int(line.split(',')[1]) > 3}" for line in PETS.split()[1:]]
    data = "\n".join(rows) + "\n"
    frame = pd.read_csv(io.StringIO(data))
    for source in (
        "sns.barplot(x='pet', y='age', hue='old', data=df)",
        "sns.countplot(x='pet', hue='old', data=df)",
    ):
        [plotted] = plotted_aggregates(parse_cell(1, source), MODULES)
        expression = plotted.cell.sanitized.splitlines()[-1]
        spec = '"capture": "table", "answer_path": "answer.csv"'
        computed = _run_compute(tmp_path, data, expression, None)
        assert computed.answer is not None and computed.answer["kind"] == "table"
        live = eval(expression, {"df": frame})
        assert len(computed.answer["value"]) == len(live)
        assert computed.answer["columns"] == ["pet", "old", live.name]
        (tmp_path / "solution" / "spec.json").write_text("{" + spec + "}")
        solved = subprocess.run(
            [sys.executable, str(tmp_path / "solution" / "solve.py")],
            cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert solved.returncode == 0, solved.stderr
        written = (tmp_path / "answer.csv").read_text()
        assert grade({**computed.answer, "atol": 0, "rtol": 0}, written)[0]
        wrong = [[*row[:-1], row[-1] + 1] for row in computed.answer["value"]]
        assert not grade({**computed.answer, "value": wrong, "atol": 0, "rtol": 0}, written)[0]


@pytest.mark.timeout(60)
def test_a_heat_map_of_correlations_asks_its_strongest_pairs(tmp_path: Path) -> None:
    """The container returns the whole `corr()` table (its upper triangle, six
    significant digits, as a notebook shows it); the pairs `derived` asks of a printed
    one come from it, each with the table's value. A table wider than a trial's output
    tail keeps is refused in the container."""
    data = "a,b,c,name\n1,2,9,x\n2,4,1,y\n3,7,5,z\n4,8,2,w\n"
    [plotted] = plotted_aggregates(
        parse_cell(1, "sns.heatmap(df.corr(numeric_only=True))"), MODULES
    )
    assert plotted.table == "df.corr(numeric_only=True)" and plotted.widened is None
    computed = _run_compute(tmp_path, data, plotted.table, None, table=plotted.table)
    assert computed.answer is None and computed.correlations
    parts = correlation_parts(plotted.cell, computed.correlations)
    frame = pd.read_csv(io.StringIO(data))
    asked = [(p.sanitized.splitlines()[-1], a["value"]) for p, a in parts]
    assert asked[0][0] == "df['a'].corr(df['b'])"  # the strongest pair first
    for expression, value in asked:
        assert value == pytest.approx(eval(expression, {"df": frame}), rel=1e-5)
    assert len(asked) == 3
    wide = ",".join(f"c{i}" for i in range(25))
    rows = "\n".join(",".join(str((i * j) % 7) for j in range(25)) for i in range(1, 6))
    computed = _run_compute(tmp_path, f"{wide}\n{rows}\n", "df.corr()", None, table="df.corr()")
    assert computed.reason == "answer.table-too-large"


# -- through the miner -----------------------------------------------------------------
class _ComputingReproducer:
    """Computes what the trial would print for a given answer, and reproduces."""

    def __init__(self, reply: dict) -> None:
        self.reply = reply
        self.computed: list[str] = []
        self.ran: list[str] = []

    def compute(
        self, bundle, widened: str | None = None, table: str | None = None, kind: str = "plot"
    ) -> Computed:
        self.computed.append(bundle.task_id)
        return read_computed(_line(self.reply), widened is not None, kind)

    def run(self, bundle) -> object:
        self.ran.append(bundle.task_id)
        return judge(trial(reward=1.0, solution_exit_code=0))


def _pets_notebook(root: Path) -> Path:
    (root / "pets.csv").parent.mkdir(parents=True, exist_ok=True)
    (root / "pets.csv").write_text(PETS)
    return write_notebook(
        root / "pets.ipynb",
        [
            code_cell(f"{IMPORTS}\ndf = pd.read_csv('pets.csv')"),
            code_cell("sns.countplot(x='pet', data=df)\nplt.show()", [image()]),
            code_cell("other = [1, 2]\nplt.pie(pd.Series(other).value_counts())", [image()]),
            code_cell("sns.histplot(df['age'])", [image()]),
        ],
    )


def _events(root: Path, reproducer: object | None) -> list:
    options = NotebookOptions(
        dataset=str(root), base_image="example/base:1", reproduce=reproducer is not None
    )
    pipeline = NotebookPipeline(options, reproducer=reproducer)  # type: ignore[arg-type]
    return list(pipeline.events())


def _skips(events: list) -> dict[str, str]:
    return {e.record_id.rsplit("-", 1)[-1]: e.reason for e in events if isinstance(e, Skip)}


def test_a_plot_becomes_a_task_with_its_computed_answer(tmp_path: Path) -> None:
    _pets_notebook(tmp_path)
    answer = {"kind": "mapping", "value": [["cat", 3], ["dog", 2], ["fish", 1]]}
    reproducer = _ComputingReproducer({"answer": answer})
    events = _events(tmp_path, reproducer)
    # Cell 2 plots counts of no data file: refused before any trial; cell 3 is a histogram.
    assert _skips(events) == {"2": "question.no-data", "3": "output.plot"}
    [draft] = [e for e in events if isinstance(e, Draft)]
    assert reproducer.computed == reproducer.ran == [draft.bundle.task_id]
    files = {f.path: f.content for f in draft.bundle.files}
    expected = json.loads(files["tests/expected.json"])
    assert (expected["kind"], expected["value"]) == ("mapping", answer["value"])
    assert "df['pet'].value_counts()" in files["solution/reference.py"].decode()
    assert "countplot" not in files["solution/reference.py"].decode()
    block = draft.bundle.config.metadata.model_extra["smoldataenvs"]
    assert block["plotted"] == "sns.countplot(x='pet', data=df)"
    assert block["answer_source"] == "computed"
    assert "`pet`" in draft.bundle.instruction and "3 entries" in draft.bundle.instruction


def test_a_computed_answer_goes_through_the_answer_gates(tmp_path: Path) -> None:
    _pets_notebook(tmp_path)
    constant = {"kind": "mapping", "value": [["cat", 0], ["dog", 0], ["fish", 0]]}
    events = _events(tmp_path, _ComputingReproducer({"answer": constant}))
    assert _skips(events)["1"] == "clean.semantic.constant-answer"
    refused = {"refused": "answer.too-many-items", "detail": "25 items (max 20)"}
    reproducer = _ComputingReproducer(refused)
    assert _skips(_events(tmp_path, reproducer))["1"] == "answer.too-many-items"
    assert reproducer.ran == []  # no reproduction of a refused answer


def test_a_hue_count_plot_becomes_a_table_task(tmp_path: Path) -> None:
    """The question names both groupings and the answer's header its count column."""
    (tmp_path / "pets.csv").write_text("pet,old\ncat,True\ncat,True\ncat,False\ndog,True\n")
    write_notebook(
        tmp_path / "pets.ipynb",
        [
            code_cell(f"{IMPORTS}\ndf = pd.read_csv('pets.csv')"),
            code_cell("sns.countplot(x='pet', hue='old', data=df)", [image()]),
        ],
    )
    rows = [["cat", False, 1], ["cat", True, 2], ["dog", True, 1]]
    table = {"kind": "table", "columns": ["pet", "old", "count"], "keys": 2, "value": rows}
    [draft] = [e for e in _events(tmp_path, _ComputingReproducer({"answer": table})) if
               isinstance(e, Draft)]  # fmt: skip
    text = draft.bundle.instruction
    assert "the number of rows of the data in `pets.csv`, for each 'pet', 'old'" in text
    assert "header line `pet,old,count`" in text and "answer.csv" in text
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert json.loads(files["solution/spec.json"])["capture"] == "table"


def test_a_heat_maps_pairs_become_tasks_through_the_miner(tmp_path: Path) -> None:
    """One compute trial returns the table; each chosen pair is its own task (parts 1,
    2, 3 of the cell), reproduced, with the table's value as its answer."""
    data = "a,b,c\n1,2,9\n2,4,1\n3,7,5\n4,8,2\n"
    (tmp_path / "nums.csv").write_text(data)
    write_notebook(
        tmp_path / "nums.ipynb",
        [
            code_cell(f"{IMPORTS}\ndf = pd.read_csv('nums.csv')"),
            code_cell("sns.heatmap(df.corr(), annot=True)\nplt.show()", [image()]),
        ],
    )
    table = pd.read_csv(io.StringIO(data)).corr()
    reproducer = _ComputingReproducer(correlations(table))  # as the container prints it
    events = _events(tmp_path, reproducer)
    drafts = [e.bundle for e in events if isinstance(e, Draft)]
    assert len(reproducer.computed) == 1 and len(reproducer.ran) == 3
    ids = sorted(b.config.metadata.repo2rlenv.source.record_id for b in drafts)
    assert ids == [f"nums.ipynb#cell-1/derived-{n}" for n in (1, 2, 3)]
    for bundle in drafts:
        files = {f.path: f.content.decode() for f in bundle.files}
        last = files["solution/reference.py"].rstrip().splitlines()[-1]
        a, b = (part.split("'")[1] for part in last.split(".corr("))
        expected = json.loads(files["tests/expected.json"])["value"]
        assert expected == pytest.approx(table.loc[a, b], rel=1e-5)
        assert f"`{a}` and `{b}`" in bundle.instruction
        assert "heat map" not in bundle.instruction  # the stand-in wording never ships
    copies = {"corr": {"columns": ["a", "b"], "upper": [[1.0], []]}}  # only a copy
    no_pairs = _ComputingReproducer(copies)
    assert _skips(_events(tmp_path, no_pairs))["1"] == "plot.no-pairs"


def test_without_containers_a_plot_is_counted_not_computed(tmp_path: Path) -> None:
    _pets_notebook(tmp_path)
    out = tmp_path / "out"
    options = NotebookOptions(dataset=str(tmp_path), base_image="example/base:1", reproduce=False)
    report = emit_all(NotebookPipeline(options), out)
    assert report.emitted == 0
    assert report.to_dict()["counts"]["candidates_skipped_by_reason"]["plot.not-computed"] == 1


@pytest.mark.parametrize(
    ("expression", "wider"),
    [
        ("s.value_counts()", None),
        ("s.value_counts().head()", "s.value_counts().head(6)"),
        ("s.value_counts().head(n=3)", "s.value_counts().head(4)"),
        ("s.value_counts()[:10]", "s.value_counts()[:11]"),
        ("s.value_counts().head(2).sort_values()", "s.value_counts().head(3).sort_values()"),
        ("g.sum().nlargest(4, keep='all')", "g.sum().nlargest(5, keep='all')"),
        ("s.value_counts().head(k)", ""),
        ("s.value_counts()[1:4]", ""),
    ],
)
def test_a_cut_is_widened_by_one_row(expression: str, wider: str | None) -> None:
    assert widened(ast.parse(expression, mode="eval").body) == wider


def test_a_plot_whose_cut_length_is_not_a_literal_is_not_asked() -> None:
    assert asked("k = 3\ndf['pet'].value_counts().head(k).plot(kind='bar')") == []


def test_a_plot_is_gated_on_its_computed_groups_not_the_stand_in(tmp_path: Path) -> None:
    """The stand-in answer's keys are no groups: the one-row gate waits for the computed
    answer, then refuses a mean per value of a near-unique column (car_crashes' point
    plot by `total`) and keeps one per value of a repeated column."""
    (tmp_path / "crashes.csv").write_text(
        "total,region,speeding\n10.5,n,3.1\n11.0,s,2.2\n12.5,n,4.0\n13.0,s,5.5\n"
    )
    write_notebook(
        tmp_path / "crashes.ipynb",
        [
            code_cell(f"{IMPORTS}\ndf = pd.read_csv('crashes.csv')"),
            code_cell("sns.pointplot(x='total', y='speeding', data=df)", [image()]),
            code_cell("sns.barplot(x='region', y='speeding', data=df)", [image()]),
        ],
    )
    by_total = [["10.5", 3.1], ["11.0", 2.2], ["12.5", 4.0], ["13.0", 5.5]]
    events = _events(tmp_path, _ComputingReproducer({"answer": {"kind": "mapping",
                                                                "value": by_total}}))  # fmt: skip
    skips = {e.record_id.rsplit("-", 1)[-1]: e for e in events if isinstance(e, Skip)}
    assert skips["1"].reason == "question.one-row-group"
    assert "4 of 4 groups of ['total']" in skips["1"].detail
    by_region = {"kind": "mapping", "value": [["n", 3.55], ["s", 3.85]]}
    events = _events(tmp_path, _ComputingReproducer({"answer": by_region}))
    kept = [e.bundle.config.metadata.repo2rlenv.source.record_id for e in events
            if isinstance(e, Draft)]  # fmt: skip
    assert "crashes.ipynb#cell-2" in kept  # (one reply for both plots: cell 1's keys unknown)
