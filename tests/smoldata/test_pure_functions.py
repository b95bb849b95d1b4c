"""A call of a notebook function that changes nothing is left out of the slice
(smoldataenvs/pure_functions.py); one that may change its argument, or anything outside
it, stays. Before, every such call stayed, and each later question about the table it
was given was `question.undescribed` (eight cells of a real book chapter)."""

from __future__ import annotations

import pytest

from smoldataenvs.cellcode import parse_cell
from smoldataenvs.pure_functions import pure_functions
from smoldataenvs.slicing import _nested_mutations
from tests.smoldata.test_slicing import cells_of, kept

LOAD = "import pandas as pd\ndf = pd.read_csv('weather.csv')"
ANSWER = "df[df.duplicated()].shape[0]"


def test_a_function_that_only_reads_is_left_out() -> None:
    cells = cells_of(
        LOAD,
        "def inf_count(t):\n    return {c: t[t[c] > 1].shape[0] for c in t.columns}",
        "inf_count(df)",
        ANSWER,
    )
    assert kept(cells, 3) == {0: ["import pandas as pd", "df = pd.read_csv('weather.csv')"],
                              3: [ANSWER]}  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [
        "    t.dropna(inplace=True)",  # its parameter, in place
        "    t['c'] = 0",  # an item of its parameter
        "    t.tidy()",  # an unknown method, called for its effect
        "    u = t\n    u['c'] = 0",  # its parameter under another name
        "    df['c'] = 0",  # a table outside it
        "    global df\n    df = None",
        "    helper(t)",  # an unknown function given its parameter
        "    def inner():\n        pass\n    return inner",  # a nested definition
    ],
)
def test_a_function_that_may_change_something_stays(body: str) -> None:
    cells = cells_of(LOAD + "\nhelper = print", f"def show(t):\n{body}", "show(df)", ANSWER)
    assert 2 in kept(cells, 3), body


def test_a_name_defined_twice_or_a_decorated_function_is_not_trusted() -> None:
    reads = "def show(t):\n    return len(t)"
    twice = [parse_cell(0, reads), parse_cell(1, "show = print")]
    assert pure_functions(twice, _nested_mutations) == frozenset()
    decorated = [parse_cell(0, "@cache\n" + reads)]
    assert pure_functions(decorated, _nested_mutations) == frozenset()
    assert pure_functions([parse_cell(0, reads)], _nested_mutations) == {"show"}


def test_its_own_locals_may_change() -> None:
    """A copy it makes and changes is its own: the caller's table is untouched."""
    cells = cells_of(
        LOAD,
        "def cleaned_rows(t):\n    u = t.copy()\n    u.dropna(inplace=True)\n    return len(u)",
        "cleaned_rows(df)",
        ANSWER,
    )
    assert 2 not in kept(cells, 3)
