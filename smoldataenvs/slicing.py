"""Program slicing over notebook cells: the fewest earlier statements an answer needs.

Each top-level statement gets the names it *uses*, the names it *defines* and, of
those, the ones it *kills* (rebinds outright). Walking backwards from the answer cell,
a statement is kept when it defines a name still needed; its uses become needed and
its kills stop being needed. Mutations count as definitions that do not kill:
`df['x'] = ...`, `df.dropna(inplace=True)`, `lst.append(...)`, `model.fit(...)`, so
the slice keeps every statement that shaped an object, not only the one that bound it.
The analysis over-approximates where Python is dynamic (unknown method calls in the
middle of a cell count as mutations); the container re-run is the final judge.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from functools import lru_cache

from smoldataenvs.cellcode import ParsedCell, call_chain
from smoldataenvs.column_reads import ALL, NONE, Columns, column_written, columns_read, merge
from smoldataenvs.pure_functions import pure_functions
from smoldataenvs.skips import SkipError

BUILTIN_NAMES = set(dir(builtins)) | {"display", "__name__", "__file__"}
MUTATORS = {
    "append", "extend", "insert", "pop", "remove", "clear", "update", "sort", "reverse",
    "add", "discard", "setdefault", "popitem", "fit", "partial_fit", "fit_transform", "seed",
    "shuffle", "set_option", "set_printoptions", "reset_option", "manual_seed",
}  # fmt: skip
PURE_METHODS = {
    "head", "tail", "describe", "info", "plot", "hist", "boxplot", "bar", "barh", "scatter",
    "pie", "show", "copy", "sum", "mean", "median", "std", "var", "min", "max", "count",
    "nunique", "unique", "value_counts", "groupby", "agg", "aggregate", "apply", "map",
    "pivot_table", "merge", "join", "query", "sort_values", "sort_index", "reset_index",
    "set_index", "rename", "drop", "dropna", "fillna", "astype", "to_string", "round", "corr",
    "cov", "isnull", "isna", "notnull", "notna", "any", "all", "idxmax", "idxmin", "nlargest",
    "nsmallest", "items", "keys", "values", "get", "format", "title", "xlabel", "ylabel",
    "legend", "figure", "subplots", "tight_layout", "grid", "axis", "xticks", "yticks",
    "set_title", "set_xlabel", "set_ylabel", "set", "imshow", "cumsum", "diff", "resample",
    "rolling", "melt", "stack", "unstack", "transpose", "duplicated", "drop_duplicates",
    "select_dtypes", "filter", "where", "mask", "clip", "abs", "quantile", "rank", "to_numpy",
    "tolist", "to_list", "to_dict", "to_frame", "explode", "first", "last", "size", "mode",
    "prod", "reshape", "flatten", "ravel", "argmax", "argmin", "argsort", "memory_usage",
    "pct_change", "crosstab", "concat", "print", "display", "savefig", "despine",
}  # fmt: skip
PURE_FUNCTIONS = {"print", "display", "len", "type", "repr", "str", "sorted", "list", "help"}


class SliceError(SkipError):
    """A cell whose code cannot be cut into a replayable slice."""


@dataclass(frozen=True)
class Effects:
    uses: frozenset[str]
    defines: frozenset[str]
    kills: frozenset[str]
    star: bool = False


@dataclass
class Slice:
    """Kept statements per cell index, in notebook order; the answer cell is last."""

    statements: dict[int, list[ast.stmt]] = field(default_factory=dict)

    @property
    def cells(self) -> list[int]:
        return sorted(self.statements)

    def all_statements(self) -> list[ast.stmt]:
        return [s for index in self.cells for s in self.statements[index]]


# -- names in expressions, with Python's scoping for functions and comprehensions -------


def _target_names(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def free_names(node: ast.AST) -> set[str]:
    """Names read from the enclosing (module) scope when `node` is evaluated."""
    if isinstance(node, ast.Lambda):
        params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        return free_names(node.body) - params | _defaults(node.args)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        bound = set().union(*(_target_names(g.target) for g in node.generators))
        inner = set().union(*(free_names(c) for c in ast.iter_child_nodes(node)))
        return (inner - bound) | free_names(node.generators[0].iter)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return _scope_free(node)
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load | ast.Del) else set()
    names: set[str] = set()
    for child in ast.iter_child_nodes(node):
        names |= free_names(child)
    return names


def _defaults(args: ast.arguments) -> set[str]:
    values = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    return set().union(*(free_names(v) for v in values)) if values else set()


def _scope_free(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    outer = (
        set().union(*(free_names(d) for d in node.decorator_list)) if node.decorator_list else set()
    )
    if isinstance(node, ast.ClassDef):
        outer |= set().union(*(free_names(b) for b in node.bases)) if node.bases else set()
        local: set[str] = set()
    else:
        outer |= _defaults(node.args)
        local = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    body_reads: set[str] = set()
    for statement in node.body:
        body_reads |= free_names(statement)
        local |= _bound_here(statement)
    return outer | (body_reads - local)


def _bound_here(statement: ast.stmt) -> set[str]:
    """Names a statement binds in its own scope (not inside nested functions)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in statement.names if a.name != "*"}
    names: set[str] = set()
    for child in ast.iter_child_nodes(statement):
        if isinstance(child, ast.stmt):
            names |= _bound_here(child)
        elif not isinstance(
            child, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
        ):
            names |= {
                n.id
                for n in ast.walk(child)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
    return names


# -- statement effects ----------------------------------------------------------------


def _root(node: ast.AST) -> str | None:
    chain = call_chain(node)
    return chain[0] if chain else None


def _assigned(target: ast.AST, defines: set[str], kills: set[str]) -> None:
    if isinstance(target, ast.Name):
        defines.add(target.id)
        kills.add(target.id)
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            _assigned(element, defines, kills)
    elif isinstance(target, ast.Starred):
        _assigned(target.value, defines, kills)
    elif isinstance(target, ast.Attribute | ast.Subscript):
        root = _root(target)
        if root:
            defines.add(root)


def _call_mutates(call: ast.Call, displayed: bool) -> set[str]:
    func = call.func
    inplace = any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )
    if isinstance(func, ast.Attribute):
        root = _root(func.value)
        if root is None:
            return set()
        method = func.attr
        mutated = {root} if inplace or method in MUTATORS else set()
        if not mutated and method not in PURE_METHODS and not displayed:
            mutated = {root}
        if method in ("shuffle", "seed") or method.startswith("fit"):
            mutated |= {a.id for a in call.args if isinstance(a, ast.Name)}
        return mutated
    if isinstance(func, ast.Name) and func.id not in PURE_FUNCTIONS:
        return {a.id for a in call.args if isinstance(a, ast.Name)}
    return set()


def _nested_mutations(statement: ast.stmt) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            found |= _call_mutates(node.value, displayed=False)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for target in targets:
                _assigned(target, found, set())
    return found


@lru_cache(maxsize=16384)
def effects(statement: ast.stmt, displayed: bool = False) -> Effects:
    """What one top-level statement reads, defines and kills. `displayed`: it is the
    cell's last expression, which a notebook shows rather than runs for effect.
    Cached by node identity: every candidate of a notebook walks the same statements."""
    uses = free_names(statement)
    defines: set[str] = set()
    kills: set[str] = set()
    star = False
    if isinstance(statement, ast.Assign):
        for target in statement.targets:
            _assigned(target, defines, kills)
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        if isinstance(statement, ast.AnnAssign) and statement.value is None:
            return Effects(frozenset(), frozenset(), frozenset())
        _assigned(statement.target, defines, kills)
        if isinstance(statement, ast.AugAssign):
            kills.clear()
            uses |= defines
    elif isinstance(statement, ast.Import | ast.ImportFrom):
        star = any(a.name == "*" for a in statement.names)
        defines = kills = _bound_here(statement)
    elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        defines = kills = {statement.name}
    elif isinstance(statement, ast.Delete):
        for target in statement.targets:
            _assigned(target, defines, set())
    elif isinstance(statement, ast.Expr):
        if isinstance(statement.value, ast.Call):
            defines = _call_mutates(statement.value, displayed)
    else:
        defines = _bound_here(statement) | _nested_mutations(statement)
    for target in getattr(statement, "targets", []):
        if isinstance(target, ast.Attribute | ast.Subscript):
            uses |= {r for r in [_root(target)] if r}
    return Effects(frozenset(uses), frozenset(defines), frozenset(kills), star)


def _mentions(source: str, names: set[str]) -> set[str]:
    return {n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}\b", source)}


def backward_slice(cells: list[ParsedCell], answer: ParsedCell) -> Slice:
    """The statements of `cells` (earlier cells, notebook order) that `answer` needs,
    plus the whole answer cell. Raises SliceError when a dependency cannot be met."""
    assert answer.tree is not None
    result = Slice()
    needed: set[str] = set()
    body = answer.tree.body
    columns: dict[str, Columns] = {}
    for position in range(len(body) - 1, -1, -1):
        effect = effects(body[position], displayed=position == len(body) - 1)
        _track_columns(body[position], effect, columns)
        needed = (needed - effect.kills) | effect.uses
    result.statements[answer.index] = list(body)
    star = False
    pure = pure_functions(cells, _nested_mutations)
    for cell in reversed(cells):
        if cell.tree is None:
            blocking = _mentions(cell.source, needed)
            if blocking:
                raise SliceError(
                    "slice.opaque-dependency",
                    f"cell {cell.index} ({cell.error}) may define {', '.join(sorted(blocking))}",
                )
            continue
        kept: list[ast.stmt] = []
        statements = cell.tree.body
        for position in range(len(statements) - 1, -1, -1):
            statement = statements[position]
            effect = effects(statement, displayed=position == len(statements) - 1)
            if _calls_one_of(statement, pure):  # `get_inf_count(df)` shown, df unchanged
                continue
            if _unread_column(statement, effect, needed, columns):
                continue
            if effect.star or effect.defines & needed:
                kept.append(statement)
                _track_columns(statement, effect, columns)
                needed = (needed - effect.kills) | effect.uses
                star = star or effect.star
        if kept:
            result.statements[cell.index] = list(reversed(kept))
    missing = needed - BUILTIN_NAMES
    if missing and not star:
        raise SliceError("slice.undefined-name", ", ".join(sorted(missing))[:120])
    return result


def _calls_one_of(statement: ast.stmt, functions: frozenset[str]) -> bool:
    """`f(...)` as a statement, `f` a function of the notebook that changes nothing."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in functions
    )


def _unread_column(
    statement: ast.stmt, effect: Effects, needed: set[str], columns: dict[str, Columns]
) -> bool:
    """A statement that writes one column of a needed table that nothing after it reads
    (`column_reads`): the answer is the same without it."""
    written = column_written(statement)
    if written is None or effect.star or effect.defines != {written[0]}:
        return False
    wanted = columns.get(written[0], ALL)
    return written[0] in needed and wanted is not None and written[1] not in wanted


def _track_columns(statement: ast.stmt, effect: Effects, columns: dict[str, Columns]) -> None:
    """The columns needed of each name before `statement` (walking backwards), from
    those needed after it: a name it rebinds starts over from what it reads, a column it
    writes whole is no longer needed before it, and each name it uses is read as
    `column_reads` follows it (a table assigned to a name passes on that name's needs)."""
    assigned = ALL
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Name):
            assigned = columns.get(target.id, ALL)
    for name in effect.kills:
        columns.pop(name, None)
    written = column_written(statement)
    read_from: list[ast.AST] = [statement]
    if written is not None:
        table, column, whole = written
        before = columns.get(table, ALL)
        if before is not None:
            columns[table] = before - {column} if whole else before | {column}
        read_from = _column_write_reads(statement)
    for name in effect.uses:
        found = columns.get(name, NONE)
        for node in read_from:
            found = merge(found, columns_read(node, name, assigned))
        columns[name] = found


def _column_write_reads(statement: ast.stmt) -> list[ast.AST]:
    """The parts of a one-column write that read: its value, and its row key."""
    if isinstance(statement, ast.Assign | ast.AugAssign):
        target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
        rows: list[ast.AST] = []
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Tuple):
            rows = [target.slice.elts[0]]  # `t.loc[rows, 'c']`
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript):
            rows = [target.value.slice]  # `t[rows]['c']`
        return [statement.value, *rows]
    assert isinstance(statement, ast.Expr)
    return [statement.value]


def statement_source(cell: ParsedCell, statement: ast.stmt) -> str:
    """The statement's text as the notebook wrote it (magic lines already set aside)."""
    segment = ast.get_source_segment(cell.sanitized, statement, padded=False)
    return segment if segment is not None else ast.unparse(statement)
