"""Program slicing: the minimal chain of earlier statements an answer depends on."""

from __future__ import annotations

import ast

import pytest

from smoldataenvs.cellcode import ParsedCell, hazards, parse_cell
from smoldataenvs.slicing import SliceError, backward_slice, statement_source
from tests.conftest import needs_samples
from tests.smoldata.helpers import AGGREGATES, MERGE, sample


def parsed_sample(record: str) -> dict[int, ParsedCell]:
    return {c.index: parse_cell(c.index, c.source) for c in sample(record).code_cells}


def kept(cells: dict[int, ParsedCell], answer: int) -> dict[int, list[str]]:
    earlier = [c for i, c in cells.items() if i < answer]
    sliced = backward_slice(earlier, cells[answer])
    return {
        index: [statement_source(cells[index], s) for s in sliced.statements[index]]
        for index in sliced.cells
    }


def cells_of(*sources: str) -> dict[int, ParsedCell]:
    return {i: parse_cell(i, source) for i, source in enumerate(sources)}


@needs_samples
def test_merge_notebook_slice_is_the_minimal_chain() -> None:
    cells = parsed_sample(MERGE)
    chain = kept(cells, 73)
    assert list(chain) == [2, 57, 59, 67, 69, 73]
    assert chain[2] == ["import pandas as pd"]  # not numpy, not the display class
    assert not any("display(" in s for statements in chain.values() for s in statements)
    # The .loc assignments mutate `merged`: they shape the answer, so they are kept.
    assert all(s.startswith("merged.loc[") for s in chain[67])
    # A cell that only needs two of the three files does not read the third.
    early = kept(cells, 65)
    assert "areas = pd.read_csv('data/state-areas.csv')" not in early[57]


@needs_samples
def test_inplace_mutations_in_earlier_cells_are_kept() -> None:
    chain = kept(parsed_sample(MERGE), 82)
    assert chain[75] == ["final.dropna(inplace=True)"]
    assert chain[80] == ["density.sort_values(ascending=False, inplace=True)"]
    assert "density.head()" not in chain[80]  # displayed, not run for effect


@needs_samples
def test_printed_answer_keeps_only_what_it_reads() -> None:
    chain = kept(parsed_sample(AGGREGATES), 34)
    assert list(chain) == [3, 32, 34]
    assert chain[3] == ["import numpy as np"]  # the unseeded generator is not needed
    assert "print(heights)" not in chain[32]


def test_functions_comprehensions_and_shadowing() -> None:
    cells = cells_of(
        "import math\nscale = 3\nunused = 99",
        "def grow(x):\n    local = x * scale\n    return math.floor(local)",
        "values = [grow(v) for v in range(4)]\nv = 'not the loop variable'",
        "total = sum(values)\nscale = 100",
        "total",
    )
    chain = kept(cells, 4)
    assert chain == {
        0: ["import math", "scale = 3"],
        1: ["def grow(x):\n    local = x * scale\n    return math.floor(local)"],
        2: ["values = [grow(v) for v in range(4)]"],
        3: ["total = sum(values)"],
        4: ["total"],
    }


def test_a_rebinding_kills_older_definitions() -> None:
    chain = kept(cells_of("x = load()", "x = 5", "x + 1"), 2)
    assert list(chain) == [1, 2]


def test_mutating_and_unknown_method_calls_count_as_definitions() -> None:
    cells = cells_of(
        "class Model:\n    def fit(self, rows):\n        rows.append(0)",
        "model = Model()\nitems = []\nitems.append(1)\nmodel.fit(items)\nitems.tidy()\n"
        "items.count(1)",
        "len(items)",
    )
    chain = kept(cells, 2)
    assert chain[1] == [
        "model = Model()",
        "items = []",
        "items.append(1)",
        "model.fit(items)",
        "items.tidy()",
    ]
    assert 0 in chain  # fit() on the model needs the class


def test_undefined_names_are_a_skip() -> None:
    with pytest.raises(SliceError) as caught:
        kept(cells_of("a = 1", "a + mystery"), 1)
    assert caught.value.reason == "slice.undefined-name"
    assert caught.value.detail == "mystery"


def test_an_unparsable_cell_blocks_only_answers_that_may_need_it() -> None:
    cells = cells_of("data = 1", 'print "py2 style"\nextra = 2', "data + 1", "extra + 1")
    assert cells[1].error == "code.python2"
    assert list(kept(cells, 2)) == [0, 2]
    with pytest.raises(SliceError) as caught:
        kept(cells, 3)
    assert caught.value.reason == "slice.opaque-dependency"


def test_magic_lines_are_set_aside_but_remembered() -> None:
    cell = parse_cell(0, "%matplotlib inline\nimport numpy as np\nfiles = !ls\nnp.pi")
    assert cell.tree is not None and cell.has_magic and cell.has_shell
    assert cell.magics == ["%matplotlib inline", "files = !ls"]
    assert parse_cell(1, "%%time\nx = 1").error == "cell.cell-magic"
    assert parse_cell(2, "a != b").magics == []


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (
            "import numpy as np\nrng = np.random.default_rng()\nrng.random(3)",
            "code.random-unseeded",
        ),
        ("import numpy as np\nnp.random.rand(3)", "code.random-unseeded"),
        ("df.sample(5)", "code.random-unseeded"),
        # seaborn's own `load_dataset` is the data plan's (a local copy or code.network)
        ("from datasets import load_dataset\nload_dataset('imdb')", "code.network"),
        ("import requests\nrequests.get(u)", "code.network"),
        ("import datetime\ndatetime.datetime.now()", "code.clock"),
    ],
)
def test_irreproducible_code_is_recognised(code: str, reason: str) -> None:
    found = hazards(ast.parse(code).body)
    assert found and found[0][0] == reason


@pytest.mark.parametrize(
    "code",
    [
        "import numpy as np\nrng = np.random.default_rng(42)\nrng.random(3)",
        "import numpy as np\nnp.random.seed(0)\nnp.random.rand(3)",
        "df.sample(5, random_state=1)",
        "import pandas as pd\npd.read_csv('data/x.csv').mean()",
    ],
)
def test_seeded_and_offline_code_is_fine(code: str) -> None:
    assert hazards(ast.parse(code).body) == []
