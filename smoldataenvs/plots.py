"""A plot cell as the aggregate it draws: `df['Sex'].value_counts().plot(kind='bar')`,
`sns.countplot(x='Sex', data=df)`, `plt.pie(df['Embarked'].value_counts())` each draw a
well-defined quantity (counts per value, group means, missing values per column) that a
question can ask for, though the notebook saved only a picture of it.

`plotted_aggregates` rewrites such a cell into one cell per aggregate plot: the cell's
statements before the plot (plotting statements dropped) and the aggregate as its final
expression. The answer is not in the notebook: it is computed by the reference in the
task's container (`compute`), so a plot's question is defined by the notebook's code
and data, as SmolDataEnvs' own questions are. Only what the plot draws exactly is
asked: a histogram's bins, a box plot's whiskers or a scatter have no one answer.
seaborn's `hue=` is a second grouping, named in the question like the first: a count,
bar, point or box plot with `hue` draws a value per pair of groups, asked as the
grouped Series (`df.groupby(['sex', 'class'])['fare'].mean()`), a table with one row
per pair; `catplot` is asked as the plot its `kind` names. A heat map of a `corr()`
table is asked as `derived` asks a printed one: its strongest pairs, chosen once the
container has computed the whole table (`table`).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from smoldataenvs.cellcode import ParsedCell, call_chain, parse_cell
from smoldataenvs.derived import corr_table
from smoldataenvs.describe_words import substituted

PLOT_MODULES = ("matplotlib", "seaborn", "plotly")
SERIES_KINDS = {None, "bar", "barh", "pie", "line", "area"}
"""`.plot(kind=...)` kinds that draw each value of the Series (not bins or quantiles)."""
AGGREGATES = {"value_counts", "mean", "sum", "count", "size", "median", "min", "max", "nunique"}
MISSING = {"isnull", "isna"}
TRAILING = {"sort_values", "sort_index", "head", "nlargest", "nsmallest", "round"}
"""Calls after the aggregate that keep it one well-defined Series. A cut (`head(n)`,
`nlargest(n)`, `[:n]`) is asked with its row past the cut computed too (`widened`), so
a tie at the cut is refused: which of the tied rows made it in is the sort's choice."""
CUT_METHODS = {"head": 5, "nlargest": 5, "nsmallest": 5}
"""The cutting calls and their default row counts."""
BAR_CALLS = {"bar", "barh", "barplot"}
CATPLOT_KINDS = {"count": "countplot", "bar": "barplot", "point": "pointplot", "box": "boxplot"}
"""`sns.catplot(kind=...)`: the axes-level plot each kind draws (the default, `strip`,
draws every point)."""
GROUPED_BY_HUE = ("countplot", "barplot", "pointplot", "lineplot", "boxplot")
"""The plots whose `hue=` is a second grouping of the value they draw per group."""
FACETS = ("col", "row")
"""`catplot` options that split the figure into panels: a grouping no question names."""


@dataclass(frozen=True)
class PlottedAggregate:
    cell: ParsedCell
    """The rewritten cell: its statements before the plot and the aggregate, last."""
    plot: str
    """The plot statement as the notebook wrote it (provenance)."""
    widened: str | None = None
    """The aggregate with its cut one row longer, when it has one (the tie check)."""
    table: str | None = None
    """A heat map's `corr()` table, which the container returns whole: the questions
    are its strongest pairs (`derived`), not the table."""


def plot_names(cells: list[ParsedCell]) -> set[str]:
    """The names a notebook binds to plotting modules (`plt`, `sns`, `px`)."""
    names: set[str] = set()
    for cell in cells:
        for node in ast.walk(cell.tree) if cell.tree is not None else []:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _plotting(alias.name):
                        names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and _plotting(node.module or ""):
                names.update(a.asname or a.name for a in node.names if a.name != "*")
    return names


def _plotting(module: str) -> bool:
    return module.split(".")[0] in PLOT_MODULES


def plotted_aggregates(own: ParsedCell, modules: set[str]) -> list[PlottedAggregate]:
    """One rewritten cell per top-level plot statement of `own` that draws an aggregate
    Series; [] when none does (the cell stays `output.plot`)."""
    if own.tree is None or own.error:
        return []
    drawing = set(modules)
    bound: dict[str, ast.expr] = {}
    kept: list[ast.stmt] = []
    found: list[PlottedAggregate] = []
    for statement in own.tree.body:
        value = statement.value if isinstance(statement, ast.Expr | ast.Assign) else None
        if _draws(value, drawing):
            if isinstance(statement, ast.Assign):  # `fig, ax = plt.subplots()`
                drawing |= {n.id for t in statement.targets for n in ast.walk(t)
                            if isinstance(n, ast.Name)}  # fmt: skip
            aggregate = _drawn(value, modules, bound)  # type: ignore[arg-type]
            table = aggregate is not None and corr_table(aggregate)
            wider = widened(aggregate) if aggregate is not None and not table else None
            if aggregate is not None and wider != "":
                text = _text(own, aggregate)
                dead = [k for k in kept if _inlined_binding(k, aggregate, kept)]
                lines = [_source(own, k) for k in kept if k not in dead]
                cell = parse_cell(own.index, "\n".join([*lines, text]))
                if cell.tree is not None:
                    plot = ast.get_source_segment(own.sanitized, statement) or ""
                    plot = " ".join(plot.split())[:200]
                    found.append(PlottedAggregate(cell, plot, wider, text if table else None))
            continue
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                bound[target.id] = statement.value
        kept.append(statement)
    return found


def _source(own: ParsedCell, statement: ast.stmt) -> str:
    return ast.get_source_segment(own.sanitized, statement) or ast.unparse(statement)


def _inlined_binding(statement: ast.stmt, aggregate: ast.expr, kept: list[ast.stmt]) -> bool:
    """`counts = df['c'].value_counts()` once the aggregate holds its expression instead
    of the name (`describe_words.substituted`) and no other kept statement reads the
    name: kept, it would be a step of the cell no question states."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    if not isinstance(target, ast.Name):
        return False
    readers = [aggregate, *(k for k in kept if k is not statement)]
    if any(isinstance(n, ast.Name) and n.id == target.id for r in readers for n in ast.walk(r)):
        return False
    value = ast.dump(statement.value)
    return any(ast.dump(n) == value for n in ast.walk(aggregate))


def _draws(value: ast.expr | None, drawing: set[str]) -> bool:
    """A call on a plotting module or a figure/axes it made, or any `.plot(...)`."""
    if not isinstance(value, ast.Call):
        return False
    chain = call_chain(value.func)
    return bool(chain) and (chain[0] in drawing or "plot" in chain[1:])


def _drawn(call: ast.Call, modules: set[str], bound: dict[str, ast.expr]) -> ast.expr | None:
    """The aggregate Series a plot call draws, or None."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "plot":
        # `kind` is also the first positional argument of pandas' `Series.plot`.
        kind = _keyword(call, "kind") or (call.args[0] if call.args else None)
        name = kind.value if isinstance(kind, ast.Constant) else None if kind is None else "?"
        return _series(func.value, bound) if name in SERIES_KINDS else None
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "plot"
    ):  # `s.plot.bar()`
        return _series(func.value.value, bound) if func.attr in SERIES_KINDS else None
    chain = call_chain(func)
    if len(chain) != 2 or chain[0] not in modules:
        return None
    name, hue = chain[1], _keyword(call, "hue")
    if name == "catplot":
        kind = _keyword(call, "kind")
        given = kind.value if isinstance(kind, ast.Constant) else None
        if call.args or any(_keyword(call, f) is not None for f in FACETS):
            return None
        name = CATPLOT_KINDS.get(given, "") if isinstance(given, str) else ""
    if hue is not None and any(_same(hue, _keyword(call, axis)) for axis in ("x", "y")):
        hue = None  # colours the groups already drawn (seaborn 0.13's `hue=x`)
    if hue is not None:
        if not _column(hue) or name not in GROUPED_BY_HUE:
            return None
        if name == "countplot":
            return _counted_pairs(call, hue)
    if name == "countplot":
        return _counted(call)
    if name == "heatmap":  # of a correlation table: its strongest pairs are asked
        table = call.args[0] if call.args else _keyword(call, "data")
        if isinstance(table, ast.Name) and table.id in bound:
            table = bound[table.id]
        return table if table is not None and corr_table(table) else None
    if name == "pie":
        values = call.args[0] if call.args else _keyword(call, "x")
        return _series(values, bound) if values is not None else None
    if name in BAR_CALLS:
        return _bars(call, bound)
    if name in ("pointplot", "lineplot") and not call.args:  # seaborn's default estimator
        return _grouped(call, "mean")  # (a line through each x's mean, as a bar's)
    if name == "boxplot" and not call.args:  # the line across each box: its median
        return _grouped(call, "median")
    return None


def _counted(call: ast.Call) -> ast.expr | None:
    """`sns.countplot(x='c', data=df)`, `(df, x='c')`, `('c', data=df)` (seaborn 0.11),
    `(df['c'])`, `(x=df['c'])` -> `df['c'].value_counts()` (both drop missing values)."""
    column = _keyword(call, "x") or _keyword(call, "y")
    data = _keyword(call, "data")
    positional = list(call.args)
    if column is None and positional:
        column = positional.pop(0)
    elif data is None and positional:
        data = positional.pop(0)
    if positional or column is None:
        return None
    if isinstance(column, ast.Constant) and isinstance(column.value, str):
        if data is None:
            return None
        column = ast.Subscript(value=data, slice=column, ctx=ast.Load())
    # else a vector (`x=df['c']`): seaborn counts it whatever `data` is
    return ast.Call(
        func=ast.Attribute(value=column, attr="value_counts", ctx=ast.Load()), args=[], keywords=[]
    )


def _counted_pairs(call: ast.Call, hue: ast.expr) -> ast.expr | None:
    """`sns.countplot(x='c', hue='h', data=df)` -> `df.groupby(['c', 'h']).size()`, named
    `count` (the header an answer's count column gets): a bar per pair of values present
    (seaborn and groupby both leave out missing values)."""
    x, y, data = _keyword(call, "x"), _keyword(call, "y"), _keyword(call, "data")
    positional = list(call.args)
    if data is None and positional:
        data = positional.pop(0)
    column = x or y
    if positional or data is None or (x is not None and y is not None) or not _column(column):
        return None
    keys = ast.List(elts=[column, hue], ctx=ast.Load())  # type: ignore[list-item]
    grouped = ast.Call(
        func=ast.Attribute(value=data, attr="groupby", ctx=ast.Load()), args=[keys], keywords=[]
    )
    sizes = ast.Call(
        func=ast.Attribute(value=grouped, attr="size", ctx=ast.Load()), args=[], keywords=[]
    )
    return ast.Call(
        func=ast.Attribute(value=sizes, attr="rename", ctx=ast.Load()),
        args=[ast.Constant("count")],
        keywords=[],
    )


def _same(a: ast.expr | None, b: ast.expr | None) -> bool:
    return a is not None and b is not None and ast.dump(a) == ast.dump(b)


def _bars(call: ast.Call, bound: dict[str, ast.expr]) -> ast.expr | None:
    """`plt.bar(s.index, s.values)`, `sns.barplot(x=s.index, y=s.values)` of one Series;
    `sns.barplot(x='a', y='b', data=df)`: seaborn's default estimator, the group mean."""
    if _keyword(call, "data") is not None and not call.args:
        return _grouped(call, "mean")
    x = call.args[0] if call.args else _keyword(call, "x")
    y = call.args[1] if len(call.args) > 1 else _keyword(call, "y") or _keyword(call, "height")
    if not (isinstance(x, ast.Attribute) and isinstance(y, ast.Attribute)):
        return None
    if x.attr != "index" or y.attr != "values" or ast.dump(x.value) != ast.dump(y.value):
        return None
    return _series(x.value, bound)


def _grouped(call: ast.Call, method: str) -> ast.expr | None:
    """`sns.barplot(x='a', y='b', data=df)` -> `df.groupby('a')['b'].mean()`, a box plot's
    medians likewise: seaborn puts the groups on x when y holds the numbers (a numeric x
    with a text y would be drawn sideways, and its grouped `mean()` fails in the
    container, so it is refused there). An option that changes what a bar or a box line
    shows is not asked."""
    x, y, data = _keyword(call, "x"), _keyword(call, "y"), _keyword(call, "data")
    if data is None or not (_column(x) and _column(y)) or _changes_bars(call):
        return None
    hue = _keyword(call, "hue")
    hue = None if _same(hue, x) else hue
    if hue is not None and (not _column(hue) or _same(hue, y)):
        return None
    keys = x if hue is None else ast.List(elts=[x, hue], ctx=ast.Load())  # type: ignore[list-item]
    grouped = ast.Call(
        func=ast.Attribute(value=data, attr="groupby", ctx=ast.Load()), args=[keys], keywords=[]
    )
    column = ast.Subscript(value=grouped, slice=y, ctx=ast.Load())  # type: ignore[arg-type]
    return ast.Call(
        func=ast.Attribute(value=column, attr=method, ctx=ast.Load()), args=[], keywords=[]
    )


def widened(expression: ast.expr) -> str | None:
    """The expression with its outermost cut one row longer (`head(10)` -> `head(11)`,
    `[:10]` -> `[:11]`); None when it has no cut, '' when its cut's length is not a
    literal (such a plot is not asked)."""
    node, steps = expression, 0
    while _method(node) in TRAILING or _cut(node):
        method = _method(node)
        if _cut(node) or method in CUT_METHODS:
            break
        node, steps = node.func.value, steps + 1  # type: ignore[attr-defined]
    else:
        return None
    wider = copy.deepcopy(expression)
    target = wider
    for _ in range(steps):
        target = target.func.value  # type: ignore[attr-defined]
    if isinstance(target, ast.Subscript):
        bounds = target.slice
        if bounds.lower is not None or bounds.step is not None or not _count(bounds.upper):  # type: ignore[attr-defined]
            return ""
        bounds.upper = ast.Constant(bounds.upper.value + 1)  # type: ignore[attr-defined]
        return ast.unparse(wider)
    assert isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute)
    given = target.args[0] if target.args else _keyword(target, "n")
    if given is not None and not _count(given):
        return ""
    rows = given.value if isinstance(given, ast.Constant) else CUT_METHODS[target.func.attr]
    target.args = [ast.Constant(rows + 1), *target.args[1:]]
    target.keywords = [k for k in target.keywords if k.arg != "n"]
    return ast.unparse(wider)


def _count(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0


def _column(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _changes_bars(call: ast.Call) -> bool:
    """An option that makes a bar, a box line or a line's point something other than its
    group's value (a line plot's `style`/`size`: more groupings, as `hue` is)."""
    changing = ("estimator", "orient", "weights", "units", "style", "size")
    return any(k.arg in changing for k in call.keywords)


def _series(node: ast.expr, bound: dict[str, ast.expr]) -> ast.expr | None:
    """`node` when it is an aggregate Series (a name bound to one earlier in the cell
    stands for its expression), else None."""
    core = node
    while _method(core) in TRAILING or _cut(core):
        core = core.value if _cut(core) else core.func.value  # type: ignore[attr-defined]
    if isinstance(core, ast.Name) and core.id in bound:
        # the cell's name for an aggregate read as its expression, so the question states
        # what was computed (`counts[:5]` -> `df['c'].value_counts()[:5]`)
        node = substituted(node, core.id, bound[core.id])  # type: ignore[assignment]
        core = bound[core.id]
        while _method(core) in TRAILING or _cut(core):
            core = core.value if _cut(core) else core.func.value  # type: ignore[attr-defined]
    method = _method(core)
    methods = set(call_chain(core))
    if method == "value_counts":
        return node
    missing = method in ("sum", "mean") and bool(methods & MISSING)  # `df.isnull().sum()`
    if method in AGGREGATES and ("groupby" in methods or missing):
        return node
    return None


def _cut(node: ast.expr) -> bool:
    """`s[:10]`: the first rows of an aggregate, as `head(10)`."""
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)


def _method(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _text(own: ParsedCell, node: ast.expr) -> str:
    """The notebook's own text of an expression where it has one (else unparsed: a
    rewritten or inlined expression keeps its outer node's position, not its text)."""
    segment = ast.get_source_segment(own.sanitized, node)
    try:
        same = segment is not None and ast.dump(ast.parse(segment, mode="eval").body) == ast.dump(
            node
        )
    except SyntaxError:
        same = False
    return segment if same and segment is not None else ast.unparse(node)
