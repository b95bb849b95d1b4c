"""Expected answers: read them out of a notebook's saved output (and, in a task's
solution, out of the reference's live output).

The verifier never needs this: it only reads an agent's answer and grades it, so it
lives apart from `grader.py` to keep that file (copied verbatim into every task as
`tests/check.py`) to the verifier's job. It runs at mine time and in each task's
`solution/`, copied verbatim beside `grader.py` and `runner.py`. The scalar and literal
readers it shares with the grader (`parse_scalar`, `parse_number`, `literal`,
`normalize`, `AnswerError`) are imported from `grader`, never copied, so the pipeline
and the verifier still read a value the same way: they can never drift apart.

Standard library only (a task image may have nothing else). In the package it imports
`smoldataenvs.grader`; copied into `solution/`, it runs as a top-level module beside
`grader.py` and imports that.
"""

from __future__ import annotations

import html.parser
import math
import re

if __package__:  # imported as part of the project (the miner, its tests)
    from smoldataenvs.grader import (
        ARRAY_REPR,
        MISSING_WORDS,
        TIMESTAMP_REPR,
        AnswerError,
        literal,
        normalize,
        parse_number,
        parse_scalar,
    )
else:  # solution/: a top-level module beside grader.py (see the docstring)
    from grader import (  # type: ignore[no-redef]
        ARRAY_REPR,
        MISSING_WORDS,
        TIMESTAMP_REPR,
        AnswerError,
        literal,
        normalize,
        parse_number,
        parse_scalar,
    )

MAX_ITEMS = 20
MAX_TEXT = 200
MAX_TABLE_ROWS = 20
MAX_TABLE_COLUMNS = 8
"""Tables up to this size are answers; a larger one is refused (`answer.table-too-large`):
a reader cannot check, nor an agent reasonably transcribe, hundreds of cells."""
_FOOTER = re.compile(r"^(?:Name: .*, )?(?:Length: \d+, )?dtype: \S+$|^Name: .*$")
_CATEGORIES = re.compile(r"^Categories \(\d+, [^)]*\): ")
"""The last line of a Categorical's repr (or a categorical Series'): its categories, not
values (`tips['day'].unique()` shows the values, then `Categories (4, object): [...]`)."""
_LABELED = re.compile(r"^\s*([^:=]*?[A-Za-z][^:=]*?)\s*[:=]\s*(\S.*?)\s*$")


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, int | float) else "string"


def _scalar_answer(value: object) -> dict:
    if isinstance(value, str):
        if not value.strip():
            raise AnswerError("answer.empty", "blank text")
        if len(value) > MAX_TEXT or "\n" in value:
            raise AnswerError("answer.long-text", f"{len(value)} characters")
        percent = value.strip().endswith("%") and parse_number(value) is not None
        return {"kind": "string", "value": value.strip(), **({"percent": True} if percent else {})}
    if isinstance(value, float) and not math.isfinite(value):
        raise AnswerError("answer.nan", repr(value))
    return {"kind": _kind(value), "value": value}


def _items(values: list, kind: str) -> dict:
    if not values:
        raise AnswerError("answer.empty", "no items")
    if len(values) > MAX_ITEMS:
        raise AnswerError("answer.too-many-items", f"{len(values)} items (max {MAX_ITEMS})")
    for item in values:
        for scalar in item if kind == "mapping" else [item]:
            if scalar is Ellipsis:  # numpy's `array([29.85, ..., 6844.5])`: a cut display
                raise AnswerError("answer.table-truncated", "the display left values out")
            if isinstance(scalar, list | tuple | dict | set):
                raise AnswerError("answer.nested", "items are collections")
            _scalar_answer(scalar)
    return {"kind": kind, "value": [list(i) if kind == "mapping" else i for i in values]}


_GAP = re.compile(r"\S\s{2,}\S")


def _series(lines: list[str], labelled: bool = False) -> dict | None:
    """A pandas Series repr: `label  value` lines, an optional index-name line, a footer.
    Labels 0, 1, 2... in order are a default index (a list) unless `labelled` says the
    Series is known to be labelled (a plot's count of a 0/1 column)."""
    if not lines or not _FOOTER.match(lines[-1]):
        return None
    body = lines[:-1]
    if len(body) > 1 and _index_name_line(body):
        body = body[1:]
    # pandas marks a cut with a line of dots: `...` under the labels, `..` under values.
    if any(re.fullmatch(r"[.\s]+", line) for line in body):
        raise AnswerError("answer.table-truncated", "the display left rows out")
    if any(line.startswith(" ") for line in body):
        return _grouped_series(lines)
    pairs = []
    for line in body:
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) < 2:
            parts = line.strip().rsplit(None, 1)
        if len(parts) != 2:
            raise AnswerError("output.table", "more than one value column")
        pairs.append((parts[0], parse_scalar(parts[1])))
    if not labelled and [k for k, _ in pairs] == [str(i) for i in range(len(pairs))]:
        return _items([v for _, v in pairs], "list")
    return _items(pairs, "mapping")


def _index_name_line(body: list[str]) -> bool:
    """Whether the first line is the index's name (pandas 2 shows it above a
    `value_counts()`: `Job Title`), not a `label  value` row: one word above rows, or
    words with no column gap above rows that all have one (labels and values are set
    apart by at least two spaces)."""
    first, rest = body[0].strip(), body[1:]
    if len(first.split()) == 1:
        return len(rest[0].split()) > 1
    return not _GAP.search(first) and all(_GAP.search(line.strip()) for line in rest)


def _captioned_series(lines: list[str], labelled: bool) -> dict | None:
    """`print("Average mass by species:\n", s)`: a caption line, then the Series' repr,
    whose first line print's separator indented by one space (which otherwise reads as
    the sparse outer level of a MultiIndex). The caption is the notebook's prose, not
    part of the answer; None when the text is not that shape."""
    if len(lines) < 3 or not lines[0].endswith(":") or lines[0].startswith(" "):
        return None
    if not (lines[1].startswith(" ") and not lines[1].startswith("  ")):
        return None
    if not _FOOTER.match(lines[-1]) or any(line.startswith(" ") for line in lines[2:]):
        return None
    return _series([lines[1][1:], *lines[2:]], labelled)


class _TableHTML(html.parser.HTMLParser):
    """The cells of the first `<table>` of a DataFrame's HTML repr, by section: rows of
    (tag, text, rowspan, colspan)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.head: list[list[tuple[str, str, int, int]]] = []
        self.body: list[list[tuple[str, str, int, int]]] = []
        self.section = ""
        self.cell: list | None = None
        self.tables = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        values = {k: v for k, v in attrs}
        if tag == "table":
            self.tables += 1
        elif self.tables != 1:
            return
        elif tag in ("thead", "tbody"):
            self.section = tag
        elif tag == "tr" and self.section:
            (self.head if self.section == "thead" else self.body).append([])
        elif tag in ("th", "td") and self.section:
            span = (_span(values.get("rowspan")), _span(values.get("colspan")))
            self.cell = [tag, "", *span]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self.cell is not None and self.tables == 1:
            rows = self.head if self.section == "thead" else self.body
            if rows:
                self.cell[1] = " ".join(self.cell[1].split())
                rows[-1].append(tuple(self.cell))
            self.cell = None
        elif tag in ("thead", "tbody"):
            self.section = ""

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell[1] += data


def _span(value: object) -> int:
    try:
        return max(1, int(str(value)))
    except ValueError:
        return 1


def _cell(text: str) -> object:
    """One table cell as the grader compares it: a scalar, or None for a missing value."""
    if text.strip().casefold() in MISSING_WORDS:
        return None
    try:
        return parse_scalar(text)
    except AnswerError:
        return None


def _unspan(rows: list[list[tuple[str, str, int, int]]]) -> list[list[tuple[str, str]]]:
    """Body rows with the row labels a MultiIndex prints once (rowspan) repeated."""
    pending: dict[int, tuple[int, tuple[str, str]]] = {}
    out = []
    for row in rows:
        cells: list[tuple[str, str]] = []
        queue = list(row)
        column = 0
        while queue or column in pending:
            if column in pending:
                left, cell = pending[column]
                cells.append(cell)
                if left > 1:
                    pending[column] = (left - 1, cell)
                else:
                    del pending[column]
            else:
                tag, text, rowspan, _ = queue.pop(0)
                cells.append((tag, text))
                if rowspan > 1:
                    pending[column] = (rowspan - 1, (tag, text))
            column += 1
        out.append(cells)
    return out


def parse_table(markup: str, first: int | None = None, *, capped: bool = True) -> dict:
    """A DataFrame's HTML repr as a table answer, or AnswerError (a skip code).
    `first`: only the first rows, which a display cut in the middle (`...`) or a table
    too long still shows whole; the caller asks for exactly those rows. `capped=False`
    reads a table of any size (`derived` asks about single cells of it)."""
    parser = _TableHTML()
    parser.feed(markup)
    if parser.tables == 0 or not parser.head or not parser.body:
        raise AnswerError("output.table", "an HTML output that is not a DataFrame")
    if any(colspan > 1 for row in parser.head for *_, colspan in row):
        raise AnswerError("answer.table-multicolumns", "columns with several header levels")
    if first is None and ("rows ×" in markup or "rows x" in markup):
        raise AnswerError("answer.table-truncated", "the display left rows or columns out")
    body = _unspan(parser.body)
    if first is not None:
        shown = next((i for i, row in enumerate(body) if _elided(row)), len(body))
        if shown < first:
            raise AnswerError("answer.table-truncated", f"only {shown} leading rows shown")
        body = body[:first]
    if any(text == "..." for row in body for _, text in row):
        raise AnswerError("answer.table-truncated", "the display left rows or columns out")
    keys = max(sum(1 for tag, _ in row if tag == "th") for row in body)
    width = len(body[0])
    if any(len(row) != width or any(t != "th" for t, _ in row[:keys]) for row in body):
        raise AnswerError("output.table", "ragged table rows")
    header = [text for _, text, *_ in parser.head[0]]
    if len(header) != width or len(parser.head) > 2:
        raise AnswerError("answer.table-multicolumns", "columns with several header levels")
    if keys == 0:
        keys = _plain_cell_keys(header, parser.head)
    names = [text for _, text, *_ in parser.head[-1]][:keys] if len(parser.head) == 2 else []
    names = (names + [""] * keys)[:keys]
    if capped and (len(body) > MAX_TABLE_ROWS or width - keys > MAX_TABLE_COLUMNS):
        raise AnswerError(
            "answer.table-too-large",
            f"{len(body)} x {width - keys} (max {MAX_TABLE_ROWS} x {MAX_TABLE_COLUMNS})",
        )
    values = header[keys:]
    rows = [[_cell(text) for _, text in row] for row in body]
    labels = [row[0] for row in rows] if keys == 1 else None
    if labels == list(range(len(rows))) and not names[0]:
        # A default RangeIndex says nothing about the rows: match them by content.
        rows, names, keys = [row[1:] for row in rows], [], 0
    else:
        names = [n or ("index" if keys == 1 else f"level_{i}") for i, n in enumerate(names)]
    columns = names + values
    if len({normalize(c) for c in columns}) != len(columns):
        raise AnswerError("answer.table-duplicate-columns", ", ".join(columns)[:80])
    if all(cell is None for row in rows for cell in row[keys:]):
        raise AnswerError("answer.nan", "every value is missing")
    return {"kind": "table", "columns": columns, "keys": keys, "value": rows}


def _elided(row: list[tuple[str, str]]) -> bool:
    """pandas' row of `...` where a long display leaves rows out."""
    return all(text == "..." for _, text in row)


def _fields(parts: list[str]) -> list[tuple[int, int]]:
    """Column spans of left-aligned label text: runs of positions that hold a character
    in at least one row (a printed MultiIndex pads every level to one width)."""
    width = max(len(p) for p in parts)
    used = [any(i < len(p) and p[i] != " " for p in parts) for i in range(width)]
    spans, start = [], None
    for i, filled in enumerate([*used, False]):
        if filled and start is None:
            start = i
        elif not filled and start is not None:
            spans.append((start, i))
            start = None
    return spans


def _grouped_series(lines: list[str]) -> dict:
    """A Series with a MultiIndex (a grouped result) as a table: the names line, then
    rows whose repeated leading labels pandas leaves blank, then the footer. Only with
    every level named (the names line checks how the labels split into levels: each
    name starts where its level's labels start; a name may be wider than its labels,
    `survived` over 0 and 1, as long as it ends before the values)."""
    footer, body = lines[-1], lines[:-1]
    rows = []
    for line in body[1:]:
        value = re.split(r"\s{2,}", line.strip())[-1]
        rows.append((line[: len(line) - len(value)], value))  # the padding kept
    if len(body) < 2 or any(not label.strip() for label, _ in rows):
        raise AnswerError("answer.multiindex", "a sparse index without labels")
    value_start = min(len(label) for label, _ in rows)
    names_line = body[0]
    if len(names_line.rstrip()) >= value_start or names_line.startswith(" "):
        raise AnswerError("answer.multiindex", "index levels without names")
    rows = [(label.rstrip(), value) for label, value in rows]
    spans = _fields([label for label, _ in rows])
    starts = [a for a, _ in spans]
    names = [names_line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
    aligned = all(names_line[a : a + 1].strip() and names_line[a - 1 : a] in ("", " ")
                  for a in starts)  # fmt: skip
    if len(spans) < 2 or not all(names) or not aligned or names_line[: starts[0]].strip():
        raise AnswerError("answer.multiindex", "labels that do not split into named levels")
    table, previous = [], [""] * len(spans)
    for label, value in rows:
        labels = [label[a:b].strip() for a, b in spans]
        labels = [text or previous[i] for i, text in enumerate(labels)]
        previous = labels
        table.append([*(_cell(text) for text in labels), _cell(value)])
    name = re.match(r"^Name: (.*?)(?:, dtype: \S+)?$", footer)
    columns = [*names, name.group(1) if name else "0"]
    if len(table) > MAX_TABLE_ROWS:
        raise AnswerError("answer.table-too-large", f"{len(table)} rows (max {MAX_TABLE_ROWS})")
    if len({normalize(c) for c in columns}) != len(columns):
        raise AnswerError("answer.table-duplicate-columns", ", ".join(columns)[:80])
    if all(row[-1] is None for row in table):
        raise AnswerError("answer.nan", "every value is missing")
    return {"kind": "table", "columns": columns, "keys": len(names), "value": table}


def _plain_cell_keys(header: list[str], head: list) -> int:
    """How many leading columns are row labels that older pandas wrote as `<td>`: the
    columns under empty header cells, with the index names (if any) in a second header
    row that is empty past them; 0 when the header does not say so."""
    blanks = next((i for i, text in enumerate(header) if text != ""), len(header))
    if blanks == 0 or blanks == len(header):
        return 0
    if len(head) == 1:
        return 1 if blanks == 1 else 0
    names = [text for _, text, *_ in head[-1]]
    return blanks if all(names[:blanks]) and not any(names[blanks:]) else 0


def parse_output(text: str, source: str = "result", labelled: bool = False) -> dict:
    """The answer a cell's saved output shows. `source` is 'result' (the repr of the last
    expression), 'stream' (printed text) or 'table' (a DataFrame's HTML); `labelled`:
    a Series' labels are kept even when they are 0, 1, 2... Raises AnswerError with a
    skip code."""
    if source == "table":
        return parse_table(text)
    text = text.rstrip()
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise AnswerError("answer.empty", "no text")
    if source == "result" and text.lstrip().startswith("<") and text.endswith(">"):
        # `s.value_counts().count` without its call: `<bound method Series.count of ...>`
        # spans the lines of the Series it wraps, and is no value
        raise AnswerError("output.object-repr", lines[0].strip()[:60])
    if len(lines) == 1:
        line = lines[0].strip()
        if source == "result" and re.match(r"^<.*>$", line):
            raise AnswerError("output.object-repr", line[:60])
        value = literal(line) if line[:1] in "[({'\"" or ARRAY_REPR.match(line) else None
        if isinstance(value, list | tuple | set):
            return _items(
                sorted(value, key=repr) if isinstance(value, set) else list(value), "list"
            )
        if isinstance(value, dict):
            return _items(list(value.items()), "mapping")
        labeled = _LABELED.match(line) if source == "stream" else None
        if labeled and not isinstance(parse_scalar(labeled.group(2)), str):
            answer = _scalar_answer(parse_scalar(labeled.group(2)))
            return {**answer, "label": labeled.group(1).strip()}
        scalar = parse_scalar(line)
        bare = isinstance(scalar, str) and line[:1] not in "'\"" and not TIMESTAMP_REPR.match(line)
        if source == "result" and bare:
            raise AnswerError("answer.unparsed", line[:60])
        return _scalar_answer(scalar)
    if _CATEGORIES.match(lines[-1].strip()):
        lines = [line for line in lines[:-1] if not re.fullmatch(r"\s*Length: \d+\s*", line)]
        if not lines:
            raise AnswerError("answer.unparsed", "only the categories of a Categorical")
    captioned = _captioned_series(lines, labelled) if source == "stream" else None
    if captioned is not None:
        return captioned
    series = _series(lines, labelled)
    if series is not None:
        return series
    joined = " ".join(line.strip() for line in lines)
    value = literal(joined)
    if isinstance(value, list | tuple):
        return _items(list(value), "list")
    if isinstance(value, dict):
        return _items(list(value.items()), "mapping")
    if joined.startswith("[[") or joined.startswith("array([["):
        raise AnswerError("answer.nested", "a two-dimensional array")
    if joined.startswith("[") and joined.endswith("]"):
        words = joined[1:-1].split()
        if any(re.search(r"[,'\"\[\]]", w) for w in words):
            # not numpy's `[1 2 3]`: a list literal that did not parse (`[nan, 'C']`)
            missing = any(w.strip(",") in ("nan", "NaN") for w in words)
            raise AnswerError("answer.nan" if missing else "answer.unparsed", joined[:60])
        return _items([parse_scalar(w) for w in words], "list")
    if source == "stream":
        labeled = [_LABELED.match(line) for line in lines]
        if all(labeled):
            return _items(
                [(m.group(1).strip(), parse_scalar(m.group(2))) for m in labeled], "mapping"
            )
        scalars = [parse_scalar(line) for line in lines]
        if all(not isinstance(s, str) for s in scalars):
            return _items(scalars, "list")
    raise AnswerError(
        "output.table" if len(lines[0].split()) > 1 else "answer.unparsed", lines[0][:60]
    )
