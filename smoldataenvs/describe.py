"""Plain-English noun phrases for the pandas/numpy expressions an answer cell shows.

`Describer(slice).phrase(expr)` turns `round(discipline['Yellow Cards'].mean())` into
"the mean of the `Yellow Cards` column of the data in `Euro_2012_stats_TEAM.csv`,
rounded to a whole number". Anything it does not recognise gives None, and the
cell is skipped: a question must state every row slice, filter, column and grouping
the answer depends on, so a variable it cannot trace back to the data is refused,
never described as "as computed above". `used` records which of the slice's
assignments a phrase stated, so the caller can refuse steps no phrase covers.
"""

from __future__ import annotations

import ast

AGGREGATES = {
    "sum": "the sum",
    "mean": "the mean",
    "median": "the median",
    "std": "the standard deviation",
    "var": "the variance",
    "min": "the smallest value",
    "max": "the largest value",
    "count": "the number of non-missing values",
    "nunique": "the number of distinct values",
    "prod": "the product",
    "idxmax": "the label (index) of the largest value",
    "idxmin": "the label (index) of the smallest value",
    "unique": "the distinct values",
    "value_counts": "the count of each distinct value (most common first)",
    "any": "whether any value is true",
    "all": "whether every value is true",
    "mode": "the most common value",
    "cumsum": "the running total",
}
PER_COLUMN = {"sum", "mean", "median", "std", "var", "min", "max", "count", "nunique", "idxmax",
              "idxmin", "any", "all"}  # fmt: skip
SELECTIONS = {"head", "tail", "nlargest", "nsmallest", "sort_values", "value_counts", "unique"}
FRAME_ATTRS = {"shape", "columns", "index", "dtypes", "values", "T", "size", "str", "dt", "loc",
               "iloc", "at", "iat", "plot", "ndim", "empty", "name"}  # fmt: skip
READERS = {"read_csv", "read_table", "read_excel", "read_json", "read_parquet", "loadtxt",
           "genfromtxt", "read_feather", "read_pickle", "load"}  # fmt: skip
COMPARE = {ast.Gt: ">", ast.GtE: "≥", ast.Lt: "<", ast.LtE: "≤", ast.Eq: "equals", ast.NotEq: "≠"}
NUMPY_NAMES = {"np", "numpy"}
NEUTRAL_READ_OPTIONS = {"sep", "delimiter", "encoding", "parse_dates", "infer_datetime_format",
                        "low_memory", "engine", "dayfirst", "quotechar", "sheet_name"}  # fmt: skip
JOINS = {
    "inner": "an inner join: only rows with a match in both",
    "outer": "an outer join: every row of both, missing values where there is no match",
    "left": "a left join: every row of the first, missing values where there is no match",
    "right": "a right join: every row of the second, missing values where there is no match",
}
STR_TESTS = {"startswith": "starts with", "endswith": "ends with", "contains": "contains"}
CASTS = {"float": "numbers (true = 1, false = 0)", "int": "whole numbers", "str": "text"}
PASS_THROUGH = {"array", "asarray", "list", "float", "int", "Series", "DataFrame", "copy", "abs"}


def _const(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float):
        return repr(node.value) if isinstance(node.value, str) else str(node.value)
    if isinstance(node, ast.List | ast.Tuple):
        items = [_const(e) for e in node.elts]
        return ", ".join(items) if all(items) else None  # type: ignore[arg-type]
    return None


def _integer(node: ast.AST) -> int | None:
    """A literal int such as `3` or `-1` (a unary minus is not a Constant)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None
    return value if type(value) is int else None


class Describer:
    """Knows the slice's simple assignments, so a variable reads as where it came from."""

    def __init__(self, assignments: dict[str, ast.expr], paths: dict[str, str]) -> None:
        self.assignments = assignments
        self.paths = paths
        self.used: set[str] = set()
        self._depth = 0

    def phrase(self, node: ast.AST) -> str | None:
        self._depth += 1
        try:
            return None if self._depth > 12 else self._phrase(node)
        finally:
            self._depth -= 1

    def subject(self, node: ast.AST) -> str | None:
        """A table or column: 'the data in `x.csv`', 'the `Goals` column of ...'."""
        if isinstance(node, ast.Name):
            source = self.assignments.get(node.id)
            if source is None:
                return None
            self.used.add(node.id)
            return self.phrase(source)
        return self.phrase(node)

    def column(self, node: ast.AST) -> str | None:
        """Just the column name for conditions: `Goals`."""
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            return f"`{node.slice.value}`"
        if isinstance(node, ast.Attribute) and node.attr not in FRAME_ATTRS:
            return f"`{node.attr}`"
        return None

    def condition(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            column, value = self.column(node.left), _const(node.comparators[0])
            op = COMPARE.get(type(node.ops[0]))
            return f"{column} {op} {value}" if column and value and op else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
            left, right = self.condition(node.left), self.condition(node.right)
            joiner = " and " if isinstance(node.op, ast.BitAnd) else " or "
            return f"{left}{joiner}{right}" if left and right else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            inner = self.condition(node.operand)
            return f"not ({inner})" if inner else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, target = node.func.attr, node.func.value
            if isinstance(target, ast.Attribute) and target.attr == "str":
                column, arg = self.column(target.value), _const(node.args[0]) if node.args else None
                verb = {
                    "startswith": "starts with",
                    "endswith": "ends with",
                    "contains": "contains",
                }
                return (
                    f"{column} {verb[method]} {arg}" if column and arg and method in verb else None
                )
            column = self.column(target)
            if column and method in ("isnull", "isna"):
                return f"{column} is missing"
            if column and method in ("notnull", "notna"):
                return f"{column} is not missing"
            if column and method == "isin" and node.args and _const(node.args[0]):
                return f"{column} is one of {_const(node.args[0])}"
        return None

    def _phrase(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.subject(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.phrase(node.left), self.phrase(node.right)
            return f"{left} divided by {right}" if left and right else None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            values, limit = self.phrase(node.left), _const(node.comparators[0])
            op = COMPARE.get(type(node.ops[0]))
            if values and limit and op:
                verb = "equals" if op == "equals" else f"is {op}"
                return f"whether each value of {values} {verb} {limit}"
        return None

    def _rows(self, base: str, key: ast.AST) -> str | None:
        """A positional row slice with literal bounds: `[:10]`, `[-5:]`, `[3:8]`."""
        if not isinstance(key, ast.Slice) or key.step is not None:
            return None
        bounds: list[int | None] = []
        for bound in (key.lower, key.upper):
            if bound is None:
                bounds.append(None)
                continue
            try:
                value = ast.literal_eval(bound)
            except ValueError:
                return None
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            bounds.append(value)
        lower, upper = bounds
        if lower is None and upper is None:
            return base
        if lower is None:
            assert upper is not None
            if upper >= 0:
                return f"the first {upper} entries of {base}"
            return f"{base} without its last {-upper} entries"
        if upper is None:
            if lower >= 0:
                return f"{base} without its first {lower} entries"
            return f"the last {-lower} entries of {base}"
        if 0 <= lower < upper:
            return f"entries {lower} to {upper - 1} (counting from 0) of {base}"
        return None

    def _attribute(self, node: ast.Attribute) -> str | None:
        base = self.subject(node.value)
        if base is None:
            return None
        if node.attr == "shape":
            return f"the shape (rows, columns) of {base}"
        if node.attr == "columns":
            return f"the column names of {base}"
        if node.attr == "dtypes":
            return f"the data type of each column of {base}"
        if node.attr == "size":
            return f"the number of values in {base}"
        if node.attr in ("values", "T"):
            return base
        if node.attr in FRAME_ATTRS:
            return None
        return f"the `{node.attr}` column of {base}"

    def _subscript(self, node: ast.Subscript) -> str | None:
        value, key = node.value, node.slice
        if (
            isinstance(value, ast.Attribute)
            and value.attr == "shape"
            and isinstance(key, ast.Constant)
        ):
            base = self.subject(value.value)
            noun = {0: "the number of rows", 1: "the number of columns"}.get(key.value)
            return f"{noun} of {base}" if noun and base else None
        if isinstance(value, ast.Attribute) and value.attr == "loc" and isinstance(key, ast.Tuple):
            base, rows = self.subject(value.value), self.condition(key.elts[0])
            columns = _const(key.elts[1]) if len(key.elts) == 2 else None
            if base and rows and columns:
                return f"the {columns} values of the rows of {base} where {rows}"
            return None
        single = _integer(key)
        if (
            isinstance(value, ast.Attribute)
            and value.attr in ("iloc", "loc")
            and single is not None
        ):
            base = self.subject(value.value)
            if base is None:
                return None
            if value.attr == "loc":
                return f"the row labelled {single} of {base}"
            if single >= 0:
                return f"row {single} (counting from 0) of {base}"
            return f"row {-single} counting back from the end (1 = the last row) of {base}"
        if isinstance(value, ast.Attribute) and value.attr == "iloc":
            base = self.subject(value.value)
            return self._rows(base, key) if base else None
        if isinstance(key, ast.Slice):
            base = self.subject(value)
            return self._rows(base, key) if base else None
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            table = self.assignments.get(value.id) if isinstance(value, ast.Name) else None
            if isinstance(table, ast.Subscript) and isinstance(table.slice, ast.List):
                assert isinstance(value, ast.Name)
                self.used.add(value.id)
                value = table.value  # a column of a column selection is a column of the table
            base = self.subject(value)
            return f"the `{key.value}` column of {base}" if base else None
        base = self.subject(value)
        if base is None:
            return None
        if isinstance(key, ast.List) and _const(key):
            return f"the columns {_const(key)} of {base}"
        rows = self.condition(key)
        return f"{base}, keeping only the rows where {rows}" if rows else None

    def _call(self, node: ast.Call) -> str | None:
        func = node.func
        if isinstance(func, ast.Name):
            return self._function(func.id, node)
        if not isinstance(func, ast.Attribute):
            return None
        method, target = func.attr, func.value
        if method in READERS and node.args:
            source = node.args[0]
            if isinstance(source, ast.Name) and source.id in self.assignments:
                self.used.add(source.id)
                source = self.assignments[source.id]
            if isinstance(source, ast.Constant) and isinstance(source.value, str):
                data = f"the data in `{self.paths.get(source.value, source.value)}`"
                return self._read_options(data, node)
            return None
        if isinstance(target, ast.Attribute) and target.attr == "str" and method in STR_TESTS:
            values, arg = self.phrase(target.value), _const(node.args[0]) if node.args else None
            if values and arg and len(node.args) == 1 and not node.keywords:
                return f"whether each value of {values} {STR_TESTS[method]} {arg}"
            return None
        if method == "merge" and len(node.args) == 2 and isinstance(target, ast.Name):
            return self._merge(node.args[0], node.args[1], node)
        if method in PASS_THROUGH and node.args and isinstance(target, ast.Name):
            return self.phrase(node.args[0])
        if method == "copy":
            return self.subject(target)
        if (
            method in ("sum", "any")
            and isinstance(target, ast.Call)
            and isinstance(target.func, ast.Attribute)
            and target.func.attr in ("isnull", "isna")
        ):
            base = self.subject(target.func.value)
            noun = (
                "the number of missing values"
                if method == "sum"
                else "whether there are missing values"
            )
            return f"{noun} in each column of {base}" if base else None
        if isinstance(target, ast.Name) and target.id in NUMPY_NAMES:
            return self._numpy(method, node)
        if method in AGGREGATES and not _plain_aggregate(node):
            return None  # `mean(1)`, `value_counts(normalize=True)`: another quantity
        if method == "assign" and not node.args and node.keywords:
            return self._assign(target, node)
        if method == "merge" and len(node.args) == 1:
            return self._merge(target, node.args[0], node)
        if method == "drop":
            return self._drop(target, node)
        if method in ("agg", "aggregate") and len(node.args) == 1 and not node.keywords:
            # `.agg('mean')` / `.agg(np.mean)` is `.mean()`
            function = node.args[0]
            name = function.value if isinstance(function, ast.Constant) else None
            if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
                name = function.attr if function.value.id in NUMPY_NAMES else None
            if not isinstance(name, str) or name not in AGGREGATES:
                return None
            method, node = name, ast.Call(func=func, args=[], keywords=[])
        grouped = self._grouped(target)
        if grouped and method in AGGREGATES:
            column, key, table = grouped
            # groupby sorts its groups by key: 'the first 5' of a grouped result is
            # only clear with that order stated.
            return (
                f"{AGGREGATES[method]} of the {column} column of {table}, for each {key} "
                f"(groups in ascending order of {key})"
            )
        base = self.subject(target)
        if base is None:
            return None
        if method in AGGREGATES:
            each = " for each column" if method in PER_COLUMN and self._is_table(target) else ""
            return f"{AGGREGATES[method]} of {base}{each}"
        if method in ("head", "tail", "nlargest", "nsmallest"):
            count = _const(node.args[0]) if node.args else "5"
            word = {"head": "first", "tail": "last", "nlargest": "largest", "nsmallest": "smallest"}
            entries = "entries" if method in ("head", "tail") else "values"
            return f"the {word[method]} {count} {entries} of {base}"
        if method in ("isnull", "isna", "notnull", "notna") and not node.args:
            missing = "is missing" if method in ("isnull", "isna") else "is present"
            return f"whether each value of {base} {missing}"
        if method == "astype" and len(node.args) == 1 and not node.keywords:
            kind = node.args[0]
            name = kind.id if isinstance(kind, ast.Name) else str(getattr(kind, "value", ""))
            if name not in CASTS:
                return None
            converted = f", converted to {CASTS[name]}"
            return base if base.endswith(converted) else base + converted
        if method == "sort_values" and not node.args:
            keywords = {k.arg: k.value for k in node.keywords}
            down = keywords.pop("ascending", ast.Constant(True))
            if keywords or not isinstance(down, ast.Constant) or not isinstance(down.value, bool):
                return None
            order = "from smallest to largest" if down.value else "from largest to smallest"
            return f"{base}, sorted {order}"
        if method == "round":
            digits = _const(node.args[0]) if node.args else "0"
            return f"{base}, rounded to {digits} decimal places"
        if method == "corr" and node.args:
            other = self.phrase(node.args[0])
            return f"the correlation between {base} and {other}" if other else None
        return None

    def _read_options(self, data: str, node: ast.Call) -> str | None:
        """Reader options that change the table must be stated: the row labels
        (`index_col`, which becomes the answer's labels and leaves one column fewer);
        options that only say how to parse the file pass; any other (`nrows`, `usecols`,
        `skiprows`, `names`...) refuses the description."""
        if len(node.args) > 1:
            return None
        labels = ""
        for keyword in node.keywords:
            if keyword.arg in NEUTRAL_READ_OPTIONS:
                continue
            if keyword.arg != "index_col":
                return None
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                labels = f" (with its `{value.value}` column as the row labels)"
            elif _integer(value) is not None and _integer(value) >= 0:  # type: ignore[operator]
                labels = f" (with its column {_integer(value)} (counting from 0) as the row labels)"
            elif not (isinstance(value, ast.Constant) and value.value in (None, False)):
                return None
        return data + labels

    def _assign(self, target: ast.AST, node: ast.Call) -> str | None:
        """`t.assign(revenue=t['quantity'] * t['unit_price'])`: the table with a computed
        column, stated as its formula over the table's columns."""
        base = self.subject(target)
        formulas = []
        for keyword in node.keywords:
            formula = _formula(keyword.value) if keyword.arg else None
            if formula is None:
                return None
            formulas.append(f"`{keyword.arg}` = {formula}")
        return f"{base}, with the added column {', '.join(formulas)}" if base else None

    def _numpy(self, name: str, node: ast.Call) -> str | None:
        """`np.mean(x)`, `np.percentile(x, 75)` (numpy's own functions)."""
        inner = self.phrase(node.args[0]) if node.args else None
        if inner is None or node.keywords:
            return None
        if name == "percentile" and len(node.args) == 2 and _const(node.args[1]):
            return f"the {_const(node.args[1])}th percentile of {inner}"
        if name in AGGREGATES and len(node.args) == 1:
            return f"{AGGREGATES[name]} of {inner}"
        if name in PASS_THROUGH and len(node.args) == 1:
            return inner
        return None

    def _merge(self, left: ast.AST, right: ast.AST, node: ast.Call) -> str | None:
        """`pd.merge(a, b, how='outer', left_on='x', right_on='y')` and `a.merge(b, ...)`."""
        first, second = self.subject(left), self.subject(right)
        keywords = {k.arg: _const(k.value) for k in node.keywords}
        how = (keywords.pop("how", None) or "'inner'").strip("'")
        if not first or not second or how not in JOINS or None in keywords.values():
            return None
        if set(keywords) == {"on"}:
            keys = f"equal {keywords['on']} values"
        elif set(keywords) == {"left_on", "right_on"}:
            keys = (
                f"{keywords['left_on']} of the first equal to {keywords['right_on']} of the second"
            )
        else:
            return None
        return f"{first} joined with {second} on {keys} ({JOINS[how]})"

    def _drop(self, target: ast.AST, node: ast.Call) -> str | None:
        base = self.subject(target)
        keywords = {k.arg: k.value for k in node.keywords}
        columns = keywords.pop("columns", None)
        if columns is None and len(node.args) == 1:
            axis = keywords.pop("axis", None)
            if not (isinstance(axis, ast.Constant) and axis.value in (1, "columns")):
                return None
            columns = node.args[0]
        names = _const(columns) if columns is not None else None
        if base is None or keywords or not names:
            return None
        return f"{base} without the column(s) {names}"

    def _function(self, name: str, node: ast.Call) -> str | None:
        if not node.args:
            return None
        inner = self.phrase(node.args[0])
        if inner is None:
            return None
        if name == "round":
            digits = _const(node.args[1]) if len(node.args) > 1 else None
            return (
                f"{inner}, rounded to {digits} decimal places"
                if digits
                else f"{inner}, rounded to a whole number"
            )
        if name == "len":
            return f"the number of rows (items) in {inner}"
        if name in ("float", "int", "list", "str", "sorted", "set"):
            return inner
        if name in ("sum", "max", "min"):
            return f"{AGGREGATES[name]} of {inner}"
        return None

    def _grouped(self, node: ast.AST) -> tuple[str, str, str] | None:
        """`df.groupby('k')['c']` -> ('`c`', "'k'", <df described>); None when the
        table cannot be described (the rows grouped must be stated too)."""
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            inner = node.value
            grouping = (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr == "groupby"
                and inner.args
                and _const(inner.args[0])
            )
            if grouping:
                assert isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                table = self.subject(inner.func.value)
                if table is None:
                    return None
                return f"`{node.slice.value}`", f"{_const(inner.args[0])}", table
        return None

    def _is_table(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            source = self.assignments.get(node.id)
            return source is not None and self._is_table(source)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return node.func.attr in READERS or node.func.attr in ("merge", "concat", "resample")
        return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.List)


ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _formula(node: ast.AST) -> str | None:
    """`t['quantity'] * t['unit_price']` -> '`quantity` * `unit_price`' (columns, number
    literals and + - * / only; anything else is not a formula we state)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return f"`{node.slice.value}`" if isinstance(node.slice.value, str) else None
    if isinstance(node, ast.Attribute) and node.attr not in FRAME_ATTRS:
        return f"`{node.attr}`"
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return repr(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        left, right = _formula(node.left), _formula(node.right)
        if left is None or right is None:
            return None
        wrap = [
            f"({s})" if isinstance(n, ast.BinOp) else s
            for n, s in ((node.left, left), (node.right, right))
        ]
        return f"{wrap[0]} {ARITHMETIC[type(node.op)]} {wrap[1]}"
    return None


def _plain_aggregate(node: ast.Call) -> bool:
    """No argument that changes what is computed: none, or `axis=0` / `0`, `skipna`."""
    args = [*node.args, *(k.value for k in node.keywords if k.arg == "axis")]
    others = [k for k in node.keywords if k.arg not in ("axis", "skipna")]
    return not others and all(isinstance(a, ast.Constant) and a.value in (0, "index") for a in args)


def keys_are_answer(node: ast.AST) -> bool:
    """True when a Series' labels are part of the answer (a ranking, a filter, counts),
    so the question must not list them."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in SELECTIONS
    return isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant)
