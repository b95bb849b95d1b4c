"""A long `value_counts()` or grouped aggregate becomes questions about named keys.

`df['country'].value_counts()` over 80 countries, or `df.groupby('Director')['Revenue']
.mean()` over 300 directors, cannot be asked whole (nobody checks, nor transcribes,
hundreds of entries), and its first rows are a question only when they are a defined
slice (`top_rows`) without ties at the cut. But every shown entry is a quantity the
notebook computed for a key the question can name: "the number of times the value
'India' occurs in the `country` column of ...", "the mean of the `Revenue` column of
..., in the group of rows whose `Director` is 'X'". So the answer cell's last
expression is rewritten, once per chosen key, to `<series>[key]` (the cut and the
ordering around it dropped: a key's count or a group's value does not depend on them),
the describer states it (`describe_keys`), the reference computes exactly it, and the
answer is the value the display shows for that key.

Which keys (issue 32 point 1: "an aggregate the notebook itself computed"):

- the shown entries whose value no other shown entry has (a key chosen by its rank
  among tied values would be the sort's choice, not the question's), whose label reads
  back as one literal (no padding spaces, no `...`, not a missing or boolean label);
- for counts, a key seen at least twice (a key seen once is an identifier: a title, a
  name, a row number), and never the counts of an identifier column (`id`, `show_id`);
- ranked by value, the largest first, then the entries a third and two thirds down
  the ranking (the middle of the distribution, not its tail of ones and twos), at most
  `KEY_CAP` (the next keys in rank order stand in for refused ones, `KEY_TRIES` in
  all); keys the cell's own answer already holds (its top rows) are skipped;
- for a group's mean, sum, median, ...: a group that can hold two rows or more
  (`one_row_group`, checked by the caller once the data files are known: the mean of a
  one-row group is that row's value, a look-up; `question.one-row-group`). A whole
  grouped answer whose groups are mostly one row is refused the same way
  (`one_row_groups`).

Only a Series shown as text with one index level qualifies: a grouped `value_counts()`
(two levels), `round`/`astype` around the aggregate (the display is rounded) and
`sort=False`/`dropna=False` groupings are left as they were.
"""

from __future__ import annotations

import ast
import math
import re

from smoldataenvs.cellcode import ParsedCell, parse_cell
from smoldataenvs.datafiles import DataPlan
from smoldataenvs.group_sizes import column_counts, key_occurrences, key_of
from smoldataenvs.saved_output import MAX_ITEMS
from smoldataenvs.top_rows import grouped_aggregate

KEY_CAP = 3
"""Questions asked of one Series at most."""
KEY_TRIES = 2 * KEY_CAP
"""Keys offered in order: a later one stands in for a key a gate refuses (a one-row
group), so the refusals one Series adds stay bounded."""
PEEL = {"head", "tail", "sort_values", "sort_index", "nlargest", "nsmallest"}
"""Steps around the Series that order or cut it: a key's value is the same without them."""
GROUP_METHODS = {"sum", "mean", "median", "std", "var", "min", "max", "count", "nunique", "size"}
COUNTING = {"size", "count", "nunique"}
"""Group aggregates that count: a one-row group shows 1, which `choose` never asks."""
COUNT_OPTIONS = {"ascending", "sort", "normalize"}
IDENTIFIER = re.compile(
    r"(?i:(?:^|[_\s])id$|^unnamed: \d+$|^index$|(?:^|[_\s])code$|^zip_?code$"
    r"|^(?:user|customer|client|order|product|item|account|employee|emp|patient|member"
    r"|session|transaction|invoice|record|player|student)id$)|[a-z]Id$|ID$|[a-z]Code$"
)
"""`id`, `user_id`, `PassengerId`, `ID`, `Unnamed: 0`: a row number, not a measurement
(`Paid` and `Humid` are measurements); `userid` (a known entity run together with
`id`), `Country Code`, `CountryCode`: a code, whose mean or median means nothing (the
mean `userid` of a games A/B test, 4998412.0, came out of a real notebook)."""
_FOOTER = re.compile(r"^(?:Name: .*, )?(?:Length: \d+, )?dtype: \S+$|^Name: .*$")
_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d+$")
_NUMBER = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$", re.IGNORECASE)


def _peel(node: ast.expr) -> ast.expr:
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in PEEL
    ):
        node = node.func.value
    return node


def _grouping(node: ast.expr) -> ast.Call | None:
    found = [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "groupby"
    ]
    return found[0] if len(found) == 1 else None


def one_column_groupby(node: ast.expr) -> bool:
    """`t.groupby('k')['c'].mean()`: a Series by group (a whole-table grouping is a
    DataFrame, whose subscript is a column, not a key)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    selected = node.func.value
    return (
        isinstance(selected, ast.Subscript)
        and isinstance(selected.slice, ast.Constant)
        and isinstance(selected.value, ast.Call)
        and isinstance(selected.value.func, ast.Attribute)
        and selected.value.func.attr == "groupby"
        and grouped_aggregate(node)
    )


def group_columns(grouping: ast.Call) -> list[str] | None:
    """`groupby('k')` -> ['k']; `groupby(['a', 'b'])` -> ['a', 'b'] (two levels at most)."""
    arg = grouping.args[0] if len(grouping.args) == 1 else None
    items = arg.elts if isinstance(arg, ast.List) and len(arg.elts) <= 2 else [arg]
    names = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    return names if len(names) == len(items) else None


def _name(node: ast.expr) -> str | None:
    """The column a Series is: `df['c']` / `df.c`."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return node.attr if isinstance(node, ast.Attribute) else None


def keyed_source(expression: ast.expr) -> tuple[ast.expr, str] | None:
    """(the Series in its canonical form, 'count' | 'share' | 'group'), or None.
    `t['c'].value_counts().head(10)` -> `t['c'].value_counts()`;
    `t['c'].value_counts(normalize=True)` keeps its option (shares, not counts)."""
    node = _peel(expression)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    target, method = node.func.value, node.func.attr
    if method == "value_counts":
        options = {k.arg: k.value for k in node.keywords}
        constant = all(isinstance(v, ast.Constant) for v in options.values())
        if node.args or not set(options) <= COUNT_OPTIONS or not constant:
            return None
        if _grouping(target) is not None or IDENTIFIER.search(_name(target) or ""):
            return None
        share = bool(getattr(options.get("normalize"), "value", False))
        keywords = [ast.keyword("normalize", ast.Constant(True))] if share else []
        func = ast.Attribute(value=target, attr="value_counts", ctx=ast.Load())
        return ast.Call(func=func, args=[], keywords=keywords), "share" if share else "count"
    grouping = _grouping(target)
    if (
        method in GROUP_METHODS
        and not node.args
        and not node.keywords
        and one_column_groupby(node)
        and grouping is not None
        and len(grouping.args) == 1
        and not grouping.keywords
        and group_columns(grouping) is not None
        and not any(IDENTIFIER.search(c) for c in group_columns(grouping) or [])
    ):
        return node, "count" if method in COUNTING else "group"
    return None


def shown_entries(text: str) -> tuple[list[tuple[str, float]], bool] | None:
    """((label, value) of every entry a Series' text repr shows, whether the display
    was cut), or None for any other display (a MultiIndex, padded labels, text values)."""
    lines = [line.rstrip() for line in text.rstrip().splitlines() if line.strip()]
    if len(lines) < 2 or not _FOOTER.match(lines[-1]):
        return None
    body = lines[:-1]
    if len(body) > 1 and len(body[0].split()) == 1 and len(body[1].split()) > 1:
        body = body[1:]  # pandas 2's index-name line
    elif len(names := _names(body[0])) == 2 and not _NUMBER.match(names[1].group()):
        return _two_levels(body)  # `year  continent`: an entry's last word is a number
    entries: list = []
    cut = False
    for line in body:
        if re.fullmatch(r"[.\s]+", line):
            cut = True
            continue
        if line.startswith(" "):
            return None
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) != 2:
            parts = line.strip().rsplit(None, 1)
        if len(parts) != 2 or not _NUMBER.match(parts[1]):
            return None
        value = float(parts[1])
        if not math.isfinite(value):
            return None
        entries.append((parts[0], int(value) if _INT.match(parts[1]) else value))
    return entries, cut


def _names(line: str) -> list[re.Match]:
    """The index names of a MultiIndex Series' first line (`year  continent`)."""
    return list(re.finditer(r"\S+(?: \S+)*", line))


def _two_levels(body: list[str]) -> tuple[list, bool] | None:
    """(((level 1, level 2), value) of every shown entry, cut) of a two-level Series:
    the second level starts where its name does; pandas prints a first-level label once
    per group (blank below it), so a blank one repeats the label above; after a cut
    (`...`) the group of a blank label is not shown, and such entries are left out."""
    at = _names(body[0])[1].start()
    entries, cut, first = [], False, None
    for line in body[1:]:
        if re.fullmatch(r"[.\s]+", line):
            cut, first = True, None
            continue
        if len(line) <= at or line[at - 1] != " " or line[at] == " ":
            return None
        first = line[:at].strip() or first
        parts = line[at:].rsplit(None, 1)
        if len(parts) != 2 or not _NUMBER.match(parts[1]) or not math.isfinite(float(parts[1])):
            return None
        if first is not None:
            value = int(parts[1]) if _INT.match(parts[1]) else float(parts[1])
            entries.append(((first, parts[0].strip()), value))
    return entries, cut


def key_literal(label: str | tuple) -> str | int | float | tuple | None:
    """`key_literal` of each level of a two-level label; None when any is None."""
    if isinstance(label, tuple):
        levels = tuple(_literal(part) for part in label)
        return None if None in levels else levels
    return _literal(label)


def _literal(label: str) -> str | int | float | None:
    """The label as the literal that indexes the Series: `2018` an int, `2.5` a float,
    text a string; None for a label that does not read back as one value."""
    if label != label.strip() or "..." in label or "  " in label:
        return None  # padded, cut, or two index levels (`df.value_counts()` of a frame)
    if label in ("NaN", "nan", "None", "NaT", "<NA>"):
        return None
    if label in ("True", "False"):
        return None
    if _INT.match(label):
        return int(label)
    if _FLOAT.match(label):
        return float(label)
    return label


def choose(entries: list[tuple[str, float]], kind: str, exclude: set[str]) -> list[tuple]:
    """(key literal, value) of the entries to offer, in order: unique values only, the
    largest first, then a third and two thirds down the ranking, then the rest by rank."""
    values = [v for _, v in entries]
    eligible = [
        (key_literal(label), value)
        for label, value in entries
        if values.count(value) == 1
        and label not in exclude
        and key_literal(label) is not None
        and (kind != "count" or value >= 2)
    ]
    ranked = sorted(eligible, key=lambda e: -e[1])
    picks = dict.fromkeys([0, len(ranked) // 3, 2 * len(ranked) // 3, *range(len(ranked))])
    return [ranked[i] for i in picks if i < len(ranked)][:KEY_TRIES]


def long_display(text: str) -> bool:
    """A Series shown with a cut, or with more entries than an answer may have."""
    shown = shown_entries(text)
    return shown is not None and (shown[1] or len(shown[0]) > MAX_ITEMS)


def keyed(
    own: ParsedCell, text: str, capture: str, exclude: set[str] | None = None
) -> list[tuple[ParsedCell, dict]]:
    """The answer cell rewritten once per chosen key of its Series, with that key's
    shown value as a number answer; [] for any other cell."""
    if own.tree is None or not own.tree.body or capture != "result":
        return []
    last = own.tree.body[-1]
    found = keyed_source(last.value) if isinstance(last, ast.Expr) else None
    shown = shown_entries(text) if found else None
    if found is None or shown is None:
        return []
    series, kind = found
    lines = own.sanitized.splitlines()[: last.lineno - 1]
    out = []
    for key, value in choose(shown[0], kind, exclude or set()):
        index = (
            ast.Tuple([ast.Constant(k) for k in key], ast.Load())
            if isinstance(key, tuple)
            else ast.Constant(key)
        )
        expression = ast.Subscript(value=series, slice=index, ctx=ast.Load())
        reduced = parse_cell(own.index, "\n".join([*lines, ast.unparse(expression)]))
        if reduced.tree is not None:
            out.append((reduced, {"kind": "number", "value": value}))
    return out


def beyond_top_rows(
    own: ParsedCell, capture: str, text: str, answer: dict
) -> list[tuple[ParsedCell, dict]]:
    """Keys of a long Series (cut, or over the item cap) that the cell's own answer, its
    top rows, does not hold; [] for any other cell."""
    if answer["kind"] != "mapping" or not long_display(text):
        return []
    return keyed(own, text, capture, {str(k) for k, _ in answer["value"]})


def one_row_group(statement: ast.stmt, data: DataPlan) -> str | None:
    """Why a named group's mean (sum, median, ...) would be a look-up of one row, or None.
    A group of one row has that row's value as its aggregate, so "the mean of `rating`
    in the group whose `Author` is 'X'" is a look-up when X wrote one book. The group's
    size after the notebook's steps is unknown without running them, but it is at most
    the key's occurrences in the data file's own column: a key found once (or a key
    column the files do not have, such as an added `Route`: sizes unknown) is refused."""
    expression = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(expression, ast.Subscript):
        return None
    files = [item.local for item in data.files.values()]
    series = expression.value
    if not one_column_groupby(series) or series.func.attr in COUNTING:  # type: ignore[union-attr]
        return None
    grouping = _grouping(series)
    columns = group_columns(grouping) if grouping is not None else None
    try:
        key = ast.literal_eval(expression.slice)
    except ValueError:
        return None
    keys = key if isinstance(key, tuple) else (key,)
    if columns is None or len(keys) != len(columns):
        return None
    found = [key_occurrences(path, columns, keys) for path in files]
    counts = [n for n in found if n is not None]
    if not counts:
        return f"the group keys {columns} are no columns of one data file: group sizes unknown"
    if max(counts) <= 1:
        return f"{key!r} occurs {max(counts)} time(s) in the {columns} column(s) of the data"
    return None


MOSTLY = 0.5
"""A whole grouped answer is refused when more than this share of its groups are one row."""


def one_row_groups(statement: ast.stmt, answer: dict, data: DataPlan) -> str | None:
    """Why a whole grouped mean (sum, median, ...) would be mostly look-ups, or None.
    `df.groupby('total')['speeding'].mean()` over a measurement column has one row in
    most groups, each group's value that row's (a point plot of car_crashes drew 51
    states as 48 groups): the answer is the data file read back, not computed. A shown
    group is one row when its key is found exactly once in the data file's own column
    (a filter only removes rows); a key found nowhere, or group columns the files do
    not have, leave its size unknown, and unknown sizes refuse nothing."""
    expression = statement.value if isinstance(statement, ast.Expr) else None
    if expression is not None and _ranked(expression):
        return None  # the top rows by value: which groups is the answer, not a look-up
    node = _peel(expression) if expression is not None else None
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr not in ("round", "astype"):
            break
        node = _peel(node.func.value)
    if node is None or not one_column_groupby(node) or node.func.attr in COUNTING:  # type: ignore[union-attr]
        return None
    grouping = _grouping(node)
    columns = group_columns(grouping) if grouping is not None else None
    keys = _answer_keys(answer, len(columns or []))
    if not columns or not keys:
        return None
    for item in data.files.values():
        counts = column_counts(item.local, columns)
        if counts is None:
            continue
        # A key the file never holds was made by a step (seaborn's `load_dataset`
        # shortens `flights.month` to 'Jan'): its size is unknown, not one row.
        lone = sum(counts[tuple(key_of(k) for k in key)] == 1 for key in keys)
        if lone > MOSTLY * len(keys):
            return f"{lone} of {len(keys)} groups of {columns} are one row of the data"
        return None
    return None


def _ranked(expression: ast.expr) -> bool:
    """Whether the Series is ordered by its values around the aggregate (`.sort_values()`,
    `.nlargest(10)`): a ranking of the groups (the ten highest-grossing films, one row
    each, are found by sorting, not read off)."""
    node = expression
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in ("sort_values", "nlargest", "nsmallest"):
            return True
        if node.func.attr not in PEEL | {"round", "astype"}:
            return False
        node = node.func.value
    return False


def _answer_keys(answer: dict, levels: int) -> list[tuple]:
    """The group keys an answer shows: a mapping's labels, a table's key columns."""
    if answer["kind"] == "mapping" and levels == 1:
        return [(label,) for label, _ in answer["value"]]
    if answer["kind"] == "table" and answer.get("keys") == levels:
        return [tuple(row[:levels]) for row in answer["value"]]
    return []
