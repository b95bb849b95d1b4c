"""Phrases for calls: readers, aggregates, joins, selections and conversions.

Most of what an answer cell shows is a method call (`df.groupby('k')['c'].mean()`,
`pd.merge(a, b, on='id')`, `s.head(3)`), and calls have the most cases, so they live
here, apart from the names, columns, subscripts and conditions of `describe.py`.
`CallPhrases` is a mixin of `Describer`: it phrases the call and asks the describer for
the phrase of each operand.
"""

from __future__ import annotations

import ast
from abc import ABC, abstractmethod

from smoldataenvs import cleaning, cleaning_columns
from smoldataenvs import describe_reshape as reshape
from smoldataenvs.describe_words import (
    AGGREGATES,
    CASTS,
    JOINS,
    NEUTRAL_READ_OPTIONS,
    NUMPY_NAMES,
    NUMPY_SPREAD,
    PASS_THROUGH,
    PER_COLUMN,
    READERS,
    STR_TESTS,
    column_formula,
    const_text,
    const_value,
    correlation,
    int_literal,
    lambda_parameter,
    numpy_made,
    plain_aggregate,
    statistics_phrase,
    substituted,
)
from smoldataenvs.given_functions import FUNCTIONS_FILE
from smoldataenvs.seaborn_data import load_reference, loaded_name


class CallPhrases(ABC):
    """The call half of `Describer`; the describer supplies what is declared here."""

    assignments: dict[str, ast.expr]
    paths: dict[str, str]
    used: set[str]
    cleaning: dict[str, tuple[str, tuple[str, ...]]]

    @abstractmethod
    def phrase(self, node: ast.AST) -> str | None:
        """The describer's phrase for any expression (calls recurse into it)."""

    @abstractmethod
    def subject(self, node: ast.AST) -> str | None:
        """The describer's name for what a method is called on."""

    def _call(self, node: ast.Call) -> str | None:
        func = node.func
        dataset = loaded_name(node)
        path = self.paths.get(load_reference(dataset)) if dataset is not None else None
        if path is not None:
            data = (
                f"the data in `{path}` (seaborn's `{dataset}` example dataset, as "
                f"`seaborn.load_dataset({dataset!r})` loads it)"
            )
            # reader options seaborn passes on to read_csv, as a read_csv call's
            options = [k for k in node.keywords if k.arg != "cache"]
            return self._read_options(data, ast.Call(func=func, args=node.args, keywords=options))
        if isinstance(func, ast.Name):
            return self._function(func.id, node)
        if not isinstance(func, ast.Attribute):
            return None
        method, target = func.attr, func.value
        if method in READERS and node.args:
            return self._reader(node)
        if isinstance(target, ast.Attribute) and target.attr == "str" and method in STR_TESTS:
            values, arg = self.phrase(target.value), const_text(node.args[0]) if node.args else None
            if values and arg and len(node.args) == 1 and not node.keywords:
                return f"whether each value of {values} {STR_TESTS[method]} {arg}"
            return None
        if method == "merge" and len(node.args) == 2 and isinstance(target, ast.Name):
            return self._merge(node.args[0], node.args[1], node)
        if method == "concat" and isinstance(target, ast.Name) and target.id == "pd":
            return self._concat(node)
        if method == "select_dtypes" and not node.args and (kinds := _dtypes(node.keywords)):
            base = self.subject(target)
            return cleaning.cleaned(self, base, f"keeping only its {kinds}") if base else None
        if isinstance(target, ast.Name) and target.id == "pd" and method == "crosstab":
            return reshape.crosstab(self, node)
        if method == "pivot_table":
            pandas = isinstance(target, ast.Name) and target.id == "pd"
            table = node.args[0] if pandas and node.args else target
            return reshape.pivot_table(self, table, node, 1 if pandas else 0)
        if method in PASS_THROUGH and node.args and isinstance(target, ast.Name):
            return self.phrase(node.args[0])
        if method == "copy":
            return self.subject(target)
        if method == "reset_index":
            return reshape.reset(self, target, node)
        if method == "unstack":
            return reshape.unstacked(self, target, node)
        if method == "rename" and len(node.args) == 1 and not node.keywords:
            # A Series given a name (`.size().rename('count')`): the same values, and
            # the answer's header line states the name.
            named = isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            return self.subject(target) if named else None
        if method in ("sum", "any") and (tested := _missing_test(target)) is not None:
            base = self.subject(tested)
            noun = (
                "the number of missing values"
                if method == "sum"
                else "whether there are missing values"
            )
            return f"{noun} in each column of {base}" if base else None
        if isinstance(target, ast.Name) and target.id in NUMPY_NAMES:
            return self._numpy(method, node)
        if method == "value_counts" and node.keywords:
            return reshape.shares(self, target, node)
        multiple = ast.List | ast.Tuple | ast.Dict
        if method in ("agg", "aggregate") and node.args and isinstance(node.args[0], multiple):
            return reshape.several(self, target, node)
        if method in AGGREGATES and not plain_aggregate(node):
            return None  # `mean(1)`, `value_counts(normalize=True)`: another quantity
        if method == "assign" and not node.args and node.keywords:
            return self._assign(target, node)
        if method == "merge" and len(node.args) == 1:
            return self._merge(target, node.args[0], node)
        if method == "drop":
            return self._drop(target, node)
        if method in cleaning.TABLE_STEPS and not _accessor(target):
            return cleaning.table_step(self, method, target, node)
        if method in ("agg", "aggregate") and len(node.args) == 1 and not node.keywords:
            # `.agg('mean')` / `.agg(np.mean)` is `.mean()`
            name = reshape.function_name(node.args[0])
            if name is None:
                return None
            method, node = name, ast.Call(func=func, args=[], keywords=[])
        return self._method(method, target, node)

    def _reader(self, node: ast.Call) -> str | None:
        """`pd.read_csv('x.csv', ...)`, also through a variable holding the path."""
        source = node.args[0]
        if isinstance(source, ast.Name) and source.id in self.assignments:
            self.used.add(source.id)
            source = self.assignments[source.id]
        if isinstance(source, ast.Constant) and isinstance(source.value, str):
            data = f"the data in `{self.paths.get(source.value, source.value)}`"
            return self._read_options(data, node)
        return None

    def _method(self, method: str, target: ast.AST, node: ast.Call) -> str | None:
        """A method of a described table or column: an aggregate (per group, per column
        or of the values), or a selection or conversion of the values."""
        grouped = self._grouped(target)
        if grouped and method == "size" and not node.args and not node.keywords:
            _, key, table = grouped  # `groupby('k').size()`: rows per group, missing or not
            order = f"(groups in ascending order of {key})"
            return f"the number of rows of {table}, for each {key} {order}"
        if grouped and method in AGGREGATES:
            column, key, table = grouped
            # groupby sorts its groups by key: 'the first 5' of a grouped result is
            # only clear with that order stated.
            return (
                f"{AGGREGATES[method]} of the {column} of {table}, for each {key} "
                f"(groups in ascending order of {key})"
            )
        base = self.subject(target)
        if base is None:
            return None
        if method in AGGREGATES:
            each = " for each column" if method in PER_COLUMN and self._is_table(target) else ""
            words = AGGREGATES[method]
            if method in NUMPY_SPREAD and numpy_made(target, self.assignments):
                words = NUMPY_SPREAD[method]
            return f"{words} of {base}{each}"
        if method in ("describe", "quantile"):
            return None if self._is_table(target) else statistics_phrase(method, base, node)
        if method == "duplicated":
            # EDA's `df.duplicated().sum()`: pandas' default keeps the first of equal rows.
            if node.args or node.keywords:
                return None  # `subset=`, `keep=`: another test
            unit = "row" if self._is_table(target) else "value"
            return f"whether each {unit} of {base} repeats an earlier {unit} exactly"
        return self._transform(method, base, node)

    def _transform(self, method: str, base: str, node: ast.Call) -> str | None:
        """Selections and conversions: the first rows, missing-value tests, casts, sorts,
        rounding, correlation."""
        if method in ("nlargest", "nsmallest") and (len(node.args) > 1 or node.keywords):
            # `t.nlargest(100, 'score')`: which rows is decided by that column.
            by = node.args[1] if len(node.args) > 1 else None
            if by is None or node.keywords or not isinstance(getattr(by, "value", None), str):
                return None
            count = const_text(node.args[0])
            word = "largest" if method == "nlargest" else "smallest"
            return f"the {count} rows with the {word} `{by.value}` of {base}" if count else None  # type: ignore[attr-defined]
        if method in ("head", "tail", "nlargest", "nsmallest"):
            count = const_text(node.args[0]) if node.args else "5"
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
        if method == "sort_values" and len(node.args) <= 1:
            keywords = {k.arg: k.value for k in node.keywords}
            down = keywords.pop("ascending", ast.Constant(True))
            # A table sorted by one named column (`sort_values('c')`, `by='c'`): the
            # rows a later head() keeps are then defined.
            key = node.args[0] if node.args else keywords.pop("by", None)
            if keywords or not isinstance(down, ast.Constant) or not isinstance(down.value, bool):
                return None
            if key is not None and not isinstance(getattr(key, "value", None), str):
                return None
            order = "from smallest to largest" if down.value else "from largest to smallest"
            by = f" by `{key.value}`" if key is not None else ""  # type: ignore[attr-defined]
            return f"{base}, sorted{by} {order}"
        if method == "set_index" and len(node.args) == 1 and not node.keywords:
            # As `index_col='X'` reads: the row labels, and one column fewer.
            key = node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return f"{base} (with its `{key.value}` column as the row labels)"
            return None
        if method == "query" and len(node.args) == 1 and not node.keywords:
            condition = node.args[0]
            # `@name` reads a Python variable the question would not state.
            text = getattr(condition, "value", None)
            if isinstance(text, str) and "@" not in text:
                return f"{base}, keeping only the rows where `{text}`"
            return None
        if method == "round":
            digits = int_literal(node.args[0]) if node.args else 0
            if digits is None or node.keywords:
                return None
            if digits < 0:  # `.round(-2)`: to the nearest hundred
                return f"{base}, rounded to the nearest {10**-digits}"
            return f"{base}, rounded to {digits} decimal places"
        if method == "corr" and node.args:
            other = self.phrase(node.args[0])
            return correlation(base, other) if other else None
        return None

    def _read_options(self, data: str, node: ast.Call) -> str | None:
        """Reader options that change the table must be stated: the row labels
        (`index_col`, which becomes the answer's labels and leaves one column fewer);
        options that only say how to parse the file pass (dates read by a converter too,
        as `parse_dates` reads them); `usecols` with column names
        is stated (the values are the file's, fewer columns); any other (`nrows`,
        `skiprows`, `names`...) refuses the description."""
        if len(node.args) > 1:
            return None
        labels = columns = ""
        for keyword in node.keywords:
            if keyword.arg in NEUTRAL_READ_OPTIONS or _date_converters(keyword):
                continue
            if keyword.arg == "usecols":
                names = const_text(keyword.value) if isinstance(keyword.value, ast.List) else None
                if not names or not all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str)
                    for e in keyword.value.elts  # type: ignore[attr-defined]
                ):
                    return None  # positions or a callable: not stated
                columns = f" (reading only its columns {names})"
                continue
            if keyword.arg != "index_col":
                return None
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                labels = f" (with its `{value.value}` column as the row labels)"
            elif int_literal(value) is not None and int_literal(value) >= 0:  # type: ignore[operator]
                labels = (
                    f" (with its column {int_literal(value)} (counting from 0) as the row labels)"
                )
            elif not (isinstance(value, ast.Constant) and value.value in (None, False)):
                return None
        return data + columns + labels

    def _concat(self, node: ast.Call) -> str | None:
        """`pd.concat([a, b, c], ignore_index=True)`: the rows of each table, one after
        another (columns matched by name; a column one table lacks is missing there)."""
        tables = node.args[0] if len(node.args) == 1 else None
        keywords = {k.arg: k.value for k in node.keywords}
        renumbered = keywords.pop("ignore_index", ast.Constant(False))
        axis = keywords.pop("axis", ast.Constant(0))
        if not isinstance(tables, ast.List | ast.Tuple) or len(tables.elts) < 2 or keywords:
            return None
        if not (isinstance(axis, ast.Constant) and axis.value in (0, "index")):
            return None
        if not (isinstance(renumbered, ast.Constant) and isinstance(renumbered.value, bool)):
            return None
        parts = [self.subject(t) for t in tables.elts]
        if not all(parts) or not all(self._is_table(t) for t in tables.elts):
            return None
        listed = "; ".join(f"({i}) {p}" for i, p in enumerate(parts, 1))
        labels = " (rows numbered again from 0)" if renumbered.value else ""
        stacked = f"stacking the rows of {len(parts)} tables in this order{labels}"
        return f"the table made by {stacked}: {listed}"

    def _assign(self, target: ast.AST, node: ast.Call) -> str | None:
        """`t.assign(revenue=t['quantity'] * t['unit_price'])`: the table with a computed
        column, stated as its formula over the table's columns."""
        node = _lambdas_applied(target, node, NUMPY_NAMES | {"pd", "pandas", *self.imports})
        if node is None:
            return None
        base = self.subject(_overwritten(target, node))
        formulas, changes, recomputed = [], [], []
        for keyword in node.keywords:
            formula = self._column_values(keyword.value) if keyword.arg else None
            # `df['Age'] = df['Age'].fillna(...)`: a cleaning step of that column.
            change = (
                cleaning_columns.column_change(target, keyword.arg, keyword.value)
                if keyword.arg and formula is None
                else None
            )
            if change:
                changes.append(change)
            elif formula is None:
                return None
            elif _reads_column(keyword.value, keyword.arg):  # `t['ok'] = t['ok'].map({...})`
                recomputed.append(f"`{keyword.arg}` recomputed as {formula}")
            else:
                formulas.append(f"`{keyword.arg}` = {formula}")
        if base is None or (changes and (formulas or recomputed)):
            return None
        for change in changes:
            base = cleaning.cleaned(self, base, change)
        if recomputed:
            base = f"{base}, with its column {', '.join(recomputed)}"
        return f"{base}, with the added column {', '.join(formulas)}" if formulas else base

    def _column_values(self, node: ast.AST) -> str | None:
        """A computed column's formula (`column_formula`), or a given function of the
        notebook applied to a column or row by row (`_applied_function`)."""
        return column_formula(node) or self._applied_function(node) or self._zscore(node)

    def _zscore(self, node: ast.AST) -> str | None:
        """`zscore(t['Page Views'])` with scipy's `zscore` (A/B-testing notebooks' outlier
        step) -> "the z-score of `Page Views` ...", stated as scipy computes it: the
        population standard deviation (ddof 0), and every value missing when one is
        (scipy's default `nan_policy`, unlike pandas' own mean and std)."""
        if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
            return None
        func = node.func
        if isinstance(func, ast.Name):
            origin = self.imports.get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = self.imports.get(func.value.id)
            origin = f"{module}.{func.attr}" if module else None
        else:
            origin = None
        column = column_formula(node.args[0]) if isinstance(node.args[0], ast.Subscript) else None
        if origin != "scipy.stats.zscore" or column is None or not column.startswith("`"):
            return None
        return (
            f"the z-score of {column} (`scipy.stats.zscore`: the distance from the column's "
            "mean in standard deviations with ddof=0; all missing if any value is)"
        )

    def _applied_function(self, node: ast.AST) -> str | None:
        """`t['Job Title'].apply(title_simplifier)` -> "what `title_simplifier` returns
        for each value of `Job Title` (the function in notebook_functions.py)"; row by
        row, `t[['Age', 'Pclass']].apply(impute_age, axis=1)` -> "... for each row of the
        `Age` and `Pclass` columns (a row of them, in this order)". The function must be
        one the notebook defines and `given_functions` lets the agent have."""
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("apply", "map")
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in self.functions
            and isinstance(node.func.value, ast.Subscript | ast.Attribute)
        ):
            return None
        name, selected = node.args[0].id, node.func.value
        options = {k.arg: const_value(k.value) for k in node.keywords}
        if not options:
            column = column_formula(selected)
            if column is None or not column.startswith("`"):
                return None
            applied = f"for each value of {column}"
        elif node.func.attr == "apply" and options in ({"axis": 1}, {"axis": "columns"}):
            listed = isinstance(selected, ast.Subscript) and isinstance(selected.slice, ast.List)
            columns = _selected_columns(selected) if listed else None
            if columns is None:
                return None
            applied = f"for each row of the {columns} (a row of them, in this order)"
        else:
            return None
        self.used.add(name)
        return f"what `{name}` returns {applied} (the function in {FUNCTIONS_FILE})"

    def _numpy(self, name: str, node: ast.Call) -> str | None:
        """`np.mean(x)`, `np.percentile(x, 75)` (numpy's own functions)."""
        inner = self.phrase(node.args[0]) if node.args else None
        if inner is None or node.keywords:
            return None
        if name == "percentile" and len(node.args) == 2 and const_text(node.args[1]):
            return f"the {const_text(node.args[1])}th percentile of {inner}"
        if name in AGGREGATES and len(node.args) == 1:
            return f"{NUMPY_SPREAD.get(name, AGGREGATES[name])} of {inner}"
        if name in PASS_THROUGH and len(node.args) == 1:
            return inner
        return None

    def _merge(self, left: ast.AST, right: ast.AST, node: ast.Call) -> str | None:
        """`pd.merge(a, b, how='outer', left_on='x', right_on='y')` and `a.merge(b, ...)`."""
        first, second = self.subject(left), self.subject(right)
        keywords = {k.arg: const_text(k.value) for k in node.keywords}
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
        names = const_text(columns) if columns is not None else None
        if base is None or keywords or not names:
            return None
        if base in self.cleaning:  # one more step of a cleaning sequence, in order
            return cleaning.cleaned(self, base, f"dropping the column(s) {names}")
        # after a clause of its own (", with the added column ..."), a comma: the drop
        # is of the whole table, not of that clause's last words
        joint = ", " if ", with " in base else " "
        return f"{base}{joint}without the column(s) {names}"

    def _function(self, name: str, node: ast.Call) -> str | None:
        if not node.args:
            return None
        if name == "len":
            return self._length(node.args[0])
        inner = self.phrase(node.args[0])
        if inner is None:
            return None
        if name == "round":
            digits = const_text(node.args[1]) if len(node.args) > 1 else None
            return (
                f"{inner}, rounded to {digits} decimal places"
                if digits
                else f"{inner}, rounded to a whole number"
            )
        if name in ("float", "int", "list", "str", "sorted", "set"):
            return inner
        if name in ("sum", "max", "min"):
            return f"{AGGREGATES[name]} of {inner}"
        return None

    def _length(self, counted: ast.AST) -> str | None:
        """`len(t)`; steps that keep every row are not stated (`reset_index()` of a
        grouped count, `copy()`, a sort): `len(t.groupby('k').size().reset_index())`."""
        while isinstance(counted, ast.Call) and isinstance(counted.func, ast.Attribute):
            method, plain = counted.func.attr, not counted.args and not counted.keywords
            if not (method in ("sort_values", "sort_index") or (plain and method in KEEP_ROWS)):
                break
            counted = counted.func.value
        groups = self._group_count(counted)
        if groups is not None:
            return groups
        reshaped = (
            isinstance(counted, ast.Call)
            and isinstance(counted.func, ast.Attribute)
            and counted.func.attr in ("crosstab", "unstack", "pivot_table")
        )
        if reshaped:
            return None  # its rows are its keys' distinct values: a look-up, badly put
        inner = self.phrase(counted)
        return f"the number of rows (items) in {inner}" if inner else None

    def _group_count(self, aggregate: ast.AST) -> str | None:
        """`len(t.groupby(['a', 'b']).size())`: one row per group, so the number of
        distinct ('a', 'b') combinations in the table (a group with only missing keys
        is dropped, as groupby does)."""
        if not (
            isinstance(aggregate, ast.Call)
            and isinstance(aggregate.func, ast.Attribute)
            and aggregate.func.attr in ("size", "count", "sum", "mean")
            and not aggregate.args
            and not aggregate.keywords
        ):
            return None
        grouped = self._grouped(aggregate.func.value)
        if grouped is None:
            return None
        _, keys, table = grouped
        several = "," in keys
        noun = f"distinct combinations of {keys}" if several else f"distinct {keys} values"
        return f"the number of {noun} (missing keys not counted) in {table}"

    def _grouped(self, node: ast.AST) -> tuple[str, str, str] | None:
        """`df.groupby('k')['c']` -> ('`c`', "'k'", <df described>); None when the
        table cannot be described (the rows grouped must be stated too)."""
        whole = self._grouping_of(node)
        if whole is not node or _is_groupby(node):
            # `t.groupby('k').sum()`: every column but the key, per group.
            assert isinstance(whole, ast.Call) and isinstance(whole.func, ast.Attribute)
            key = const_text(whole.args[0]) if whole.args and not whole.keywords else None
            table = self.subject(whole.func.value) if key else None
            return ("columns other than the key", key, table) if key and table else None
        names = _selected_columns(node)
        if names:
            inner = self._grouping_of(node.value)
            grouping = (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr == "groupby"
                and inner.args
                and const_text(inner.args[0])
                # `sort=False` (first-seen order), `dropna=False`: not what is stated.
                and all(k.arg == "as_index" for k in inner.keywords)
            )
            if grouping:
                assert isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                table = self.subject(inner.func.value)
                if table is None:
                    return None
                return names, f"{const_text(inner.args[0])}", table
        return None

    def _grouping_of(self, node: ast.AST) -> ast.AST:
        """`by_year` bound to `spain.groupby('Year')` in an earlier cell: the grouping
        itself, so a groupby kept in a variable (one cell groups, the next aggregates)
        is stated like the one-line form. Anything else is returned unchanged."""
        if isinstance(node, ast.Name):
            source = self.assignments.get(node.id)
            if source is not None and _is_groupby(source):
                self.used.add(node.id)
                return source
        return node

    def _is_table(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            source = self.assignments.get(node.id)
            return source is not None and self._is_table(source)
        if isinstance(node, ast.Call) and loaded_name(node) is not None:
            return True  # seaborn's `load_dataset('tips')` returns a DataFrame
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in cleaning.TABLE_STEPS | {"assign", "drop", "select_dtypes"}:
                return self._is_table(node.func.value)  # a cleaned table is a table
            return node.func.attr in READERS or node.func.attr in ("merge", "concat", "resample")
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            # `t.loc[:, <columns>]`: a table whatever columns it keeps
            full = isinstance(node.slice, ast.Tuple) and isinstance(node.slice.elts[0], ast.Slice)
            return node.value.attr == "loc" and full and self._is_table(node.value.value)
        return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.List)


def _is_groupby(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "groupby"
    )


def _lambdas_applied(target: ast.AST, node: ast.Call, modules: set[str]) -> ast.Call | None:
    """`t.assign(f=lambda x: x.c * 9 / 5 + 32)` read as `t.assign(f=t.c * 9 / 5 + 32)`:
    pandas calls each function with the table as the earlier keywords left it, so a
    column a later function reads by name (`temp_F` after `temp_F=`) is the one the
    phrase states just before it. Only for phrasing: the reference runs the code as
    written. None when a function reads another table (`lambda x: x.c / b.d`: `d` is
    no column of this one) or a name other than its parameter and a module."""
    keywords = []
    for keyword in node.keywords:
        value, parameter = keyword.value, lambda_parameter(keyword.value)
        if parameter is not None:
            read = {n.id for n in ast.walk(value.body) if isinstance(n, ast.Name)}  # type: ignore[attr-defined]
            if not read <= {parameter} | modules:
                return None
            value = substituted(value.body, parameter, target)  # type: ignore[attr-defined,assignment]
        keywords.append(ast.keyword(arg=keyword.arg, value=value))
    return ast.Call(func=node.func, args=node.args, keywords=keywords)


def _overwritten(target: ast.AST, node: ast.Call) -> ast.AST:
    """The table under assigns that `node` overwrites before anything reads them: in
    `t.assign(z=zscore(t.a)).assign(z=zscore(t.b))` (an A/B-testing notebook computes its
    outlier column three times) only the last `z` is left, so only it is stated."""
    names = {k.arg for k in node.keywords}
    if any(_reads_column(k.value, n) for k in node.keywords for n in names):
        return target
    while (
        isinstance(target, ast.Call)
        and isinstance(target.func, ast.Attribute)
        and target.func.attr == "assign"
        and not target.args
        and target.keywords
        and {k.arg for k in target.keywords} <= names
    ):
        target = target.func.value
    return target


def _reads_column(node: ast.AST, name: str | None) -> bool:
    """Whether `node` reads the column `name` (`t['name']`, `t[['name', ...]]`,
    `t.name`, not `t.index.name`): a column computed from itself is recomputed, not
    added."""
    for inner in ast.walk(node):
        if (
            isinstance(inner, ast.Attribute)
            and inner.attr == name
            and not isinstance(inner.value, ast.Attribute)
        ):
            return True
        if isinstance(inner, ast.Subscript):
            keys = inner.slice.elts if isinstance(inner.slice, ast.List) else [inner.slice]
            if any(isinstance(k, ast.Constant) and k.value == name for k in keys):
                return True
    return False


def _selected_columns(node: ast.AST) -> str | None:
    """`x['c']` -> "`c` column"; `x[['a', 'b']]` (a table per group) -> "`a` and `b`
    columns"; None for anything else."""
    if not isinstance(node, ast.Subscript):
        return None
    if isinstance(node.slice, ast.Constant):
        return f"`{node.slice.value}` column"
    items = node.slice.elts if isinstance(node.slice, ast.List) else []
    if not items or not all(isinstance(getattr(i, "value", None), str) for i in items):
        return None
    names = [f"`{i.value}`" for i in items]  # type: ignore[attr-defined]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
    return f"{joined} column" + ("s" if len(names) > 1 else "")


def _missing_test(node: ast.AST) -> ast.AST | None:
    """The table of `t.isnull()` / `t.isna()` / `pd.isnull(t)`: what `.sum()` counts and
    `.any()` asks of, per column; None for any other node."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("isnull", "isna")
    ):
        return None
    owner = node.func.value
    if isinstance(owner, ast.Name) and owner.id == "pd":
        return node.args[0] if len(node.args) == 1 and not node.keywords else None
    return None if node.args or node.keywords else owner


DTYPES = {"float64", "int64", "object", "bool", "category", "datetime64"}
"""Column types `select_dtypes(include=...)` is asked with by name (the exact type)."""


def _dtypes(keywords: list[ast.keyword]) -> str | None:
    """`select_dtypes(include='number')` (also `np.number`, `['number']`) -> 'numeric
    columns'; `include=['float64', 'int64']` -> 'columns of type `float64` or `int64`';
    None for `exclude=` or any other type."""
    if len(keywords) != 1 or keywords[0].arg != "include":
        return None
    kind = keywords[0].value
    kinds = kind.elts if isinstance(kind, ast.List | ast.Tuple) else [kind]
    names = []
    for item in kinds:
        owner = getattr(item, "value", None)
        numpy = isinstance(item, ast.Attribute) and getattr(owner, "id", None) in NUMPY_NAMES
        name = item.attr if numpy else getattr(item, "value", None)  # type: ignore[union-attr]
        if not isinstance(name, str):
            return None
        names.append(name)
    if names == ["number"]:
        return "numeric columns"
    if not names or not set(names) <= DTYPES:
        return None
    return "columns of type " + " or ".join(f"`{n}`" for n in names)


KEEP_ROWS = ("reset_index", "copy")
"""Calls that, without arguments, keep every row of what they are called on."""

DATE_CONVERTERS = {"np.datetime64", "numpy.datetime64", "pd.to_datetime", "pandas.to_datetime"}
"""Converters that read a column as dates, as `parse_dates` does."""


def _date_converters(keyword: ast.keyword) -> bool:
    """`converters={'start': np.datetime64, 'end': pd.to_datetime}`: only dates parsed."""
    value = keyword.value
    return (
        keyword.arg == "converters"
        and isinstance(value, ast.Dict)
        and bool(value.values)
        and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys)
        and all(ast.unparse(v) in DATE_CONVERTERS for v in value.values)
    )


def _accessor(node: ast.AST) -> bool:
    """`t.c.str` / `t.c.dt`: `t.c.str.replace(...)` is a text step, never a table's."""
    return isinstance(node, ast.Attribute) and node.attr in ("str", "dt")
