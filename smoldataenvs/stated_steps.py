"""What a question states of the slice: a step it leaves out refuses the cell.

The question is composed from the slice's simple assignments (traced, with inlined
values, into a `Describer`); every other statement the answer depends on must be one
that changes nothing the question would have to say (an import, a print, a display
setting). A display setting that rounds the shown numbers is not neutral: the saved
answer is then not the value asked for. Apart from `candidates`, which runs the checks
in order, because this is one job (which statements are stated) with its own vocabulary.
"""

from __future__ import annotations

import ast
import copy
import re

from smoldataenvs.cellcode import ParsedCell
from smoldataenvs.cleaning import as_assignment
from smoldataenvs.datafiles import DataPlan
from smoldataenvs.describe import Describer
from smoldataenvs.slicing import effects

ROUNDING_OPTIONS = re.compile(r"precision|float_format", re.IGNORECASE)
DISPLAY_SETTINGS = {"set_option", "reset_option", "set_printoptions", "filterwarnings",
                    "simplefilter"}  # fmt: skip


class _Inline(ast.NodeTransformer):
    """`x = x.astype(float)` after `x = a['b']`: read `x` as `a['b'].astype(float)`."""

    def __init__(self, name: str, value: ast.expr) -> None:
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.value)
        return node


def describer_for(
    statements: list[ast.stmt], data: DataPlan
) -> tuple[Describer, dict[str, list[ast.stmt]]]:
    """The describer over the slice's simple assignments, and for each assigned name the
    statements its (inlined) value stands for."""
    assignments: dict[str, ast.expr] = {}
    sources: dict[str, list[ast.stmt]] = {}
    for statement in statements:
        effect = effects(statement)
        previous = {name: (assignments.get(name), sources.get(name, [])) for name in effect.defines}
        for name in effect.defines:
            assignments.pop(name, None)
            sources.pop(name, None)
        # `df.dropna(inplace=True)` reads as `df = df.dropna()` (cleaning.as_assignment);
        # the original statement is what the question is then said to state.
        rewritten = as_assignment(statement) or statement
        added = _added_column(rewritten, previous)
        if added is not None:
            name, table = added
            assignments[name], sources[name] = table, [*previous[name][1], statement]
            continue
        if isinstance(rewritten, ast.Assign) and len(rewritten.targets) == 1:
            target = rewritten.targets[0]
            if not isinstance(target, ast.Name):
                continue
            value, earlier = previous.get(target.id, (None, []))
            if target.id not in effect.uses:
                assignments[target.id], sources[target.id] = rewritten.value, [statement]
            elif value is not None:
                inlined = _Inline(target.id, value).visit(copy.deepcopy(rewritten.value))
                assignments[target.id], sources[target.id] = inlined, [*earlier, statement]
    paths = {f.reference: f.target for f in data.files.values()}
    return Describer(assignments, paths), sources


def _added_column(
    statement: ast.stmt, previous: dict[str, tuple[ast.expr | None, list[ast.stmt]]]
) -> tuple[str, ast.expr] | None:
    """`df['c'] = <expression of df's columns>` on a traced table: read `df` from then
    on as `<table>.assign(c=<expression>)`, which the describer states as a formula."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target = statement.targets[0]
    if not (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
    ):
        return None
    name = target.value.id
    table = previous.get(name, (None, []))[0]
    if table is None:
        return None
    value = _Inline(name, table).visit(copy.deepcopy(statement.value))
    call = ast.Call(
        func=ast.Attribute(value=table, attr="assign", ctx=ast.Load()),
        args=[],
        keywords=[ast.keyword(arg=target.slice.value, value=value)],
    )
    return name, call


def _is_print(statement: ast.stmt) -> bool:
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print"
    )


def _is_display_setting(statement: ast.stmt) -> bool:
    """`pd.set_option('display.max_columns', 50)`, `pd.options.display.max_rows = 9`,
    `warnings.filterwarnings(...)`: they change how much is shown or warned about, not
    which rows a value is computed from. Settings that round the shown numbers
    (`display.precision`, `display.float_format`) change the saved answer itself, so
    they are not neutral."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        dotted = ast.unparse(target) if isinstance(target, ast.Attribute) else ""
        option = dotted.partition(".options.")[2]
        return option.startswith("display.") and not ROUNDING_OPTIONS.search(option)
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in DISPLAY_SETTINGS
    ):
        return False
    names = [a.value for a in call.args if isinstance(a, ast.Constant)]
    return not any(isinstance(n, str) and ROUNDING_OPTIONS.search(n) for n in names)


def rounding_setting(cells: list[ParsedCell]) -> ast.stmt | None:
    """A display setting run before the answer that rounds the numbers shown
    (`pd.set_option('display.precision', 2)`, `np.set_printoptions(precision=3)`): the
    saved answer is then not the value the question asks for, and no question states
    it. The slice would miss it (it changes no name the answer uses)."""
    for cell in cells:
        for statement in cell.tree.body if cell.tree is not None else []:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = ast.unparse(statement.targets[0])
                if ".options.display." in target and ROUNDING_OPTIONS.search(target):
                    return statement
            call = statement.value if isinstance(statement, ast.Expr) else None
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            if call.func.attr not in ("set_option", "set_printoptions"):
                continue
            words = [a.value for a in call.args if isinstance(a, ast.Constant)]
            words += [k.arg for k in call.keywords]
            if any(isinstance(w, str) and ROUNDING_OPTIONS.search(w) for w in words):
                return statement
    return None


def unstated_step(
    statements: list[ast.stmt], describer: Describer, sources: dict[str, list[ast.stmt]]
) -> ast.stmt | None:
    """The first statement of the slice the question does not state, or None. Every
    statement the answer depends on must be either an import, a display setting, a value
    thrown away that changes nothing, or an assignment the question's phrase traced (a
    mutation such as `df['x'] = ...` or `df.dropna(inplace=True)`, a loop or a function
    is not stated, so it is refused)."""
    stated = {id(s) for name in describer.used for s in sources.get(name, [])}
    for statement in statements:
        if isinstance(statement, ast.Import | ast.ImportFrom) or id(statement) in stated:
            continue
        if _is_print(statement) or _is_display_setting(statement) or _thrown_away(statement):
            continue
        return statement
    return None


def _thrown_away(statement: ast.stmt) -> bool:
    """An expression statement before the answer whose value is dropped and which changes
    nothing (`wine.dropna()` without `inplace`, `df.isnull().sum()` above the answer
    line): only its last line's value is shown, so it has no part in the answer. Which
    calls change nothing is the slicer's own judgement (`slicing.effects`: pure pandas
    methods; `inplace=True`, a mutator or an unknown method or function changes its
    receiver or arguments, and stays an unstated step)."""
    return isinstance(statement, ast.Expr) and not effects(statement).defines
