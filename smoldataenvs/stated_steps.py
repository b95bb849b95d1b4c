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
import re

from smoldataenvs.cellcode import ParsedCell
from smoldataenvs.cleaning import as_assignment
from smoldataenvs.datafiles import DataPlan
from smoldataenvs.describe import Describer
from smoldataenvs.describe_words import substituted
from smoldataenvs.given_functions import (
    GivenFunction,
    import_lines,
    import_origins,
    needed_imports,
)
from smoldataenvs.question import QuestionError
from smoldataenvs.slicing import effects

SEPARATED = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
ROUNDING_OPTIONS = re.compile(r"precision|float_format", re.IGNORECASE)
DISPLAY_SETTINGS = {"set_option", "reset_option", "set_printoptions", "filterwarnings",
                    "simplefilter"}  # fmt: skip


def describer_for(
    statements: list[ast.stmt], data: DataPlan
) -> tuple[Describer, dict[str, list[ast.stmt]]]:
    """The describer over the slice's simple assignments, and for each assigned name the
    statements its (inlined) value stands for."""
    assignments: dict[str, ast.expr] = {}
    sources: dict[str, list[ast.stmt]] = {}
    functions: dict[str, GivenFunction] = {}
    imports = import_lines(statements)
    for statement in statements:
        effect = effects(statement)
        previous = {name: (assignments.get(name), sources.get(name, [])) for name in effect.defines}
        for name in effect.defines:
            assignments.pop(name, None)
            sources.pop(name, None)
            functions.pop(name, None)
        if isinstance(statement, ast.FunctionDef):
            # A self-contained function can be given to the agent (`given_functions`).
            needed = needed_imports(statement, imports)
            if needed is not None:
                functions[statement.name] = GivenFunction(statement, needed)
                sources[statement.name] = [statement]
            continue
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
            unpacked = _unpacked(target, rewritten.value)
            if unpacked and not set(unpacked) & effect.uses:
                for name, part in unpacked.items():
                    assignments[name], sources[name] = part, [statement]
                continue
            if not isinstance(target, ast.Name):
                continue
            value, earlier = previous.get(target.id, (None, []))
            if target.id not in effect.uses:
                assignments[target.id], sources[target.id] = rewritten.value, [statement]
            elif value is not None:
                inlined = substituted(rewritten.value, target.id, value)
                assignments[target.id], sources[target.id] = inlined, [*earlier, statement]
    paths = {f.reference: f.target for f in data.files.values()}
    return Describer(assignments, paths, functions, import_origins(imports)), sources


def _unpacked(target: ast.expr, value: ast.expr) -> dict[str, ast.expr]:
    """`low, high = t.c.quantile([0.01, 0.99])` or `a, b = x, y`: each name's own value
    (`t.c.quantile(0.01)`: the entry a list quantile unpacks to), or {} for any other
    assignment."""
    if not (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)):
        return {}
    names = [e.id for e in target.elts]  # type: ignore[attr-defined]
    if isinstance(value, ast.Tuple) and len(value.elts) == len(names):
        return dict(zip(names, value.elts, strict=True))
    listed = value.args[0] if isinstance(value, ast.Call) and len(value.args) == 1 else None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "quantile"
        and not value.keywords
        and isinstance(listed, ast.List)
        and len(listed.elts) == len(names)
        and all(isinstance(e, ast.Constant) and type(e.value) in (int, float) for e in listed.elts)
    ):
        return {
            name: ast.Call(func=value.func, args=[q], keywords=[])
            for name, q in zip(names, listed.elts, strict=True)
        }
    return {}


def _added_column(
    statement: ast.stmt, previous: dict[str, tuple[ast.expr | None, list[ast.stmt]]]
) -> tuple[str, ast.expr] | None:
    """`df['c'] = <expression of df's columns>` on a traced table: read `df` from then
    on as `<table>.assign(c=<expression>)`, which the describer states as a formula.
    `df.c = <expression>` is the same only when `c` is a column already (else pandas sets
    an attribute of the object): taken when the expression reads `df.c` or `df['c']`
    (`df.location = df.location.apply(lambda x: x.strip())`), which a column must be."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    column = _column_target(statement.targets[0], statement.value)
    if column is None:
        return None
    name, column_name = column
    table = previous.get(name, (None, []))[0]
    if table is None:
        return None
    value = substituted(statement.value, name, table)
    call = ast.Call(
        func=ast.Attribute(value=table, attr="assign", ctx=ast.Load()),
        args=[],
        keywords=[ast.keyword(arg=column_name, value=value)],
    )
    return name, call


def _column_target(target: ast.expr, value: ast.expr) -> tuple[str, str] | None:
    """(table, column) a statement writes whole: `t['c'] = ...`, or `t.c = ...` reading
    `t.c` (or `t['c']`) itself."""
    if not isinstance(target, ast.Subscript | ast.Attribute) or not isinstance(
        target.value, ast.Name
    ):
        return None
    name = target.value.id
    if isinstance(target, ast.Subscript):
        key = target.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return name, key.value
        return None
    column = target.attr
    reads_itself = any(
        isinstance(node, ast.Attribute | ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == name
        and (
            (isinstance(node, ast.Attribute) and node.attr == column)
            or (isinstance(node, ast.Subscript) and getattr(node.slice, "value", None) == column)
        )
        for node in ast.walk(value)
    )
    return (name, column) if reads_itself else None


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


def shown_decimals(setting: ast.stmt) -> int | None:
    """The decimals a pandas rounding setting shows every float with:
    `pd.set_option('display.precision', 2)`, `pd.options.display.precision = 2`,
    `pd.set_option('display.float_format', '{:.2f}'.format)` (also `'{:,.2f}'`,
    `lambda x: '%.2f' % x`); None for any other setting (numpy's print options, a
    format that is not a fixed number of decimals)."""
    if isinstance(setting, ast.Assign):
        option, value = ast.unparse(setting.targets[0]).partition(".options.")[2], setting.value
    elif isinstance(setting, ast.Expr) and isinstance(setting.value, ast.Call):
        call = setting.value
        if call.func.attr != "set_option" or len(call.args) != 2:  # type: ignore[attr-defined]
            return None
        option, value = str(getattr(call.args[0], "value", "")), call.args[1]
    else:
        return None
    if option == "display.precision":
        number = value.value if isinstance(value, ast.Constant) else None
        return number if type(number) is int and 0 <= number <= 10 else None
    if option != "display.float_format":
        return None
    if isinstance(value, ast.Lambda):  # `lambda x: '%.2f' % x`, `'{:.2f}'.format(x)`
        value = value.body
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod):
            value = value.left
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func.value
    elif isinstance(value, ast.Attribute) and value.attr == "format":
        value = value.value
    text = value.value if isinstance(value, ast.Constant) else None
    found = re.fullmatch(r"\{:,?\.(\d)f\}|%,?\.(\d)f", text) if isinstance(text, str) else None
    return int(found.group(1) or found.group(2)) if found else None


def rounding_settings(cells: list[ParsedCell]) -> list[ast.stmt]:
    """The display settings run before the answer that round the numbers shown
    (`pd.set_option('display.precision', 2)`, `np.set_printoptions(precision=3)`): the
    saved answer is then not the value the question asks for. The slice would miss
    them (they change no name the answer uses)."""
    found = []
    for cell in cells:
        for statement in cell.tree.body if cell.tree is not None else []:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = ast.unparse(statement.targets[0])
                if ".options.display." in target and ROUNDING_OPTIONS.search(target):
                    found.append(statement)
                continue
            call = statement.value if isinstance(statement, ast.Expr) else None
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            if call.func.attr not in ("set_option", "set_printoptions"):
                continue
            words = [a.value for a in call.args if isinstance(a, ast.Constant)]
            words += [k.arg for k in call.keywords]
            if any(isinstance(w, str) and ROUNDING_OPTIONS.search(w) for w in words):
                found.append(statement)
    return found


def rounded_answer(answer: dict, settings: list[ast.stmt]) -> dict:
    """The saved answer graded as the rounded display it is: its absolute tolerance half
    a shown unit (`atol` 0.005 for two decimals; the question says so), when every
    setting shows a fixed number of decimals (the fewest count) and every float of the
    answer kept two significant digits (0.03 of a shown 0.0349 is not asked). Anything
    else is `question.rounded-display`."""
    decimals = [shown_decimals(setting) for setting in settings]
    if any(d is None for d in decimals):
        shown = next(s for s, d in zip(settings, decimals, strict=True) if d is None)
        raise QuestionError("question.rounded-display", ast.unparse(shown)[:100])
    unit = 10.0 ** -min(d for d in decimals if d is not None)
    answer = _separated_numbers(answer)
    cells = answer["value"] if isinstance(answer["value"], list) else [answer["value"]]
    if answer["kind"] == "mapping":
        cells = [value for _, value in cells]
    elif answer["kind"] == "table":
        cells = [cell for row in cells for cell in row[answer["keys"] :]]
    for value in cells:
        if type(value) is float and abs(value) < 10 * unit:
            raise QuestionError("question.rounded-display", f"{value} shown: too few digits")
    return {**answer, "atol": unit / 2}


def _separated_numbers(answer: dict) -> dict:
    """A Series' values shown with a thousands separator (`'{:,.2f}'`: `285,000.00`)
    read as the numbers they are (a value never has one otherwise)."""
    if answer["kind"] != "mapping":
        return answer
    value = [[label, _number(v)] for label, v in answer["value"]]
    return {**answer, "value": value}


def _number(value: object) -> object:
    if isinstance(value, str) and SEPARATED.fullmatch(value):
        return float(value.replace(",", ""))
    return value


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
