"""Column-level slicing: a step that writes a column no later statement reads is not
part of the answer's slice (`smoldataenvs.column_reads`)."""

from __future__ import annotations

import ast

import pytest

from smoldataenvs.cellcode import parse_cell
from smoldataenvs.column_reads import ALL, column_written, columns_read
from smoldataenvs.slicing import backward_slice, statement_source


def _expression(code: str) -> ast.AST:
    return ast.parse(code).body[0]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("code", "read"),
    [
        ("df['a']", {"a"}),
        ("df.a.mean()", {"a"}),
        ("df[['a', 'b']].corr()", {"a", "b"}),
        ("df[df.b > 1]['a'].sum()", {"a", "b"}),
        ("df[(df.b > 1) & df.c.isin([1])].a", {"a", "b", "c"}),
        ("df.sort_values('s').head(3)['a']", {"a", "s"}),
        ("len(df)", set()),
        ("len(df[df.b == 2])", {"b"}),
        ("df.shape[0]", set()),
        ("pd.pivot_table(df, index='k', values='v')", {"k", "v"}),
        ("df.pivot_table(index=['k', 'j'], columns='c', values='v')", {"k", "j", "c", "v"}),
        ("df.groupby('k')['v'].mean()", {"k", "v"}),
        ("df.groupby(['k', 'j'])[['v', 'w']].sum()", {"k", "j", "v", "w"}),
        ("df.groupby('k').size()", {"k"}),
        ("df.groupby(['k', 'j']).agg({'v': 'count', 'w': 'mean'})", {"k", "j", "v", "w"}),
        ("df.groupby('k').agg({'v': 'count'}).unstack()", {"k", "v"}),
        # every column, or names this module cannot follow
        ("df", ALL),
        ("df.shape", ALL),
        ("df.head()", ALL),
        ("df.describe()", ALL),
        ("df.dropna()['a']", ALL),
        ("df.groupby('k').mean()", ALL),
        ("df.groupby('k').agg('mean')", ALL),
        ("df.groupby('k').agg({**named})", ALL),
        ("df.pivot_table(index='k')", ALL),
        ("df[column]", ALL),
        ("df[0]", ALL),
        ("df.count", ALL),
        ("df.apply(lambda r: r.a, axis=1)", ALL),
        ("print(df)", ALL),
        ("sns.barplot(data=df, x='a', y='b')", ALL),
    ],
)
def test_columns_read_follows_each_use_of_the_table(code: str, read) -> None:
    found = columns_read(_expression(code), "df")
    assert found == (read if read is ALL else frozenset(read)), code


@pytest.mark.timeout(10)
def test_an_assigned_table_passes_on_what_its_name_needs() -> None:
    statement = _expression("top = df[df.a > 0]")
    assert columns_read(statement, "df", frozenset({"c"})) == {"a", "c"}
    assert columns_read(statement, "df", ALL) is ALL
    assert columns_read(_expression("other = df.copy()"), "df", frozenset({"c"})) == {"c"}
    chosen = _expression("few = df[['a', 'b', 'c']]")
    assert columns_read(chosen, "df", frozenset({"c", "d"})) == {"c"}
    assert columns_read(chosen, "df", ALL) == {"a", "b", "c"}


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("code", "written"),
    [
        ("df['c'] = df.a * 2", ("df", "c", True)),
        ("df['c'] += 1", ("df", "c", False)),
        ("df.loc[df.a > 1, 'c'] = 0", ("df", "c", False)),
        ("df[110:113]['c'] = df[110:113]['c'].str.lower()", ("df", "c", False)),
        ("df[df.a > 1]['c'] = 0", ("df", "c", False)),
        ("df[other]['c'] = 0", None),
        ("df['c'].fillna(0, inplace=True)", ("df", "c", False)),
        ("df.c.replace('x', 'y', inplace=True)", ("df", "c", False)),
        ("df[['a', 'b']] = 0", None),
        ("df.loc[df.a > 1] = 0", None),
        ("df['c'].fillna(0)", None),
        ("df.dropna(inplace=True)", None),
        ("df.head().c = 1", None),
        ("x = df['c']", None),
    ],
)
def test_a_statement_writing_one_column_is_recognised(code: str, written) -> None:
    assert column_written(_expression(code)) == written


def _kept(*sources: str) -> list[str]:
    cells = [parse_cell(i, source) for i, source in enumerate(sources)]
    sliced = backward_slice(cells[:-1], cells[-1])
    return [statement_source(cells[i], s) for i in sliced.cells for s in sliced.statements[i]]


@pytest.mark.timeout(10)
def test_the_slice_keeps_only_the_columns_the_answer_reads() -> None:
    load = "import pandas as pd\ndf = pd.read_csv('d.csv')"
    x = "df['x'] = df.a * 2"
    y = "df['y'] = df.apply(lambda r: r.a if r.b else 0, axis=1)"
    clipped = "df.loc[df.b > 1, 'x'] = 0"
    assert _kept(load, x, y, clipped, "df.x.mean()") == [
        "import pandas as pd", "df = pd.read_csv('d.csv')", x, clipped, "df.x.mean()",
    ]  # fmt: skip
    # the whole table, or every column through a step that reads them all
    assert y in _kept(load, x, y, "df.head()")
    assert y in _kept(load, x, y, "df.dropna(inplace=True)", "df.x.mean()")
    # a column overwritten whole: the earlier value is never read
    assert _kept(load, "df['x'] = 1", x, "df['x'].sum()")[-2:] == [x, "df['x'].sum()"]
    # ... unless the new value reads it
    assert "df['x'] = 1" in _kept(load, "df['x'] = 1", "df['x'] = df.x + df.a", "df.x.sum()")
    # through a filtered copy: what its name needs is what the table needs
    z = "df['z'] = df.b + 1"
    kept = _kept(load, x, z, "top = df[df.a > 0]", "top.z.sum()")
    assert z in kept and x not in kept
    # a row-wise function reads every column, the ones added before it too
    assert x in _kept(load, x, y, "df.y.sum()")
    # a row count reads no column at all
    assert _kept(load, x, y, "len(df)") == ["import pandas as pd", "df = pd.read_csv('d.csv')",
                                            "len(df)"]  # fmt: skip
