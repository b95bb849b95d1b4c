"""Short answers: read them from notebook output, write them canonically, grade them.

This file is copied verbatim into every task (as `tests/check.py` and beside the
reference in `solution/`), so it uses the standard library only: the verifier runs it
with `python3 -I` in whatever image the task built. One module both *parses* saved
output (the pipeline and the reference solution must agree on what the answer is) and
*grades* an agent's answer, so the two can never drift apart.

An answer is a JSON-able dict: `{"kind": number|string|bool|list|mapping, "value": ...}`
(list: scalars; mapping: [key, scalar] pairs), optional `"percent"` for numbers read
from `12.5%`, and the tolerances `"atol"`/`"rtol"` for the numeric rung. A table
(a DataFrame result, read from its saved HTML) is `{"kind": "table", "columns": [...],
"keys": k, "value": [[cell, ...], ...]}`: the first `k` columns are the index levels
(the row labels rows are matched by), a cell is a scalar or null (NaN); the agent
writes it as CSV to `TABLE_PATH` with those column names as the header.

Kept as one file on purpose (the verifier runs it with `python3 -I`, which puts no
sibling module on sys.path), hence a little past the usual module size.

The grading ladder, first match wins, and the matched rung is recorded:
exact (case/whitespace) -> numeric (tolerances; commas, %, units stripped; %/fraction
bridge) -> list (order-insensitive, element-wise tolerant; mappings are key/value
lists) -> boolean (yes/no/true/false). Empty or unrelated answers score 0.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import html.parser
import io
import json
import math
import re
import sys
from pathlib import Path

MAX_ITEMS = 20
MAX_TEXT = 200
DEFAULT_ATOL = 1e-3
DEFAULT_RTOL = 1e-3
ANSWER_PATH = "/workspace/answer.txt"
TABLE_PATH = "/workspace/answer.csv"
MAX_TABLE_ROWS = 20
MAX_TABLE_COLUMNS = 8
"""Tables up to this size are answers; a larger one is refused (`answer.table-too-large`):
a reader cannot check, nor an agent reasonably transcribe, hundreds of cells."""
MISSING_WORDS = {"", "nan", "-nan", "<na>", "nat", "none", "null"}
INDEX_ARTEFACTS = {"", "index", "unnamed: 0"}
TRUE_WORDS = {"true", "yes", "np.true_"}
FALSE_WORDS = {"false", "no", "np.false_"}

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?"
_WRAPPED = re.compile(
    r"^(?:np|numpy)\.(?:float|int|uint|bool|str)\w*\((.*)\)$|^(?:np\.)?(True|False)_$"
)
_TIMESTAMP = re.compile(r"^Timestamp\('([^']*)'(?:,.*)?\)$")
_ARRAY = re.compile(r"^(?:array|Index|Int64Index|Float64Index)\((.*?)(?:,\s*dtype=[^)]*)?\)$", re.S)
_FOOTER = re.compile(r"^(?:Name: .*, )?(?:Length: \d+, )?dtype: \S+$|^Name: .*$")
_LABELED = re.compile(r"^\s*([^:=]*?[A-Za-z][^:=]*?)\s*[:=]\s*(\S.*?)\s*$")
_NUMBER_ANSWER = re.compile(
    rf"^[$€£]?\s*({_NUM})\s*(%|percent\b)?\s*[A-Za-z°µ/.²³()\s-]*$", re.IGNORECASE
)


class AnswerError(ValueError):
    """Output that is not a short answer; `reason` is a stable skip code."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


# -- reading values --------------------------------------------------------------------


def parse_number(text: str) -> tuple[float, bool] | None:
    """(value, had a percent sign) for '1,234.5', '12 %', '$3', '180 cm'; else None."""
    match = _NUMBER_ANSWER.match(text.strip())
    if not match:
        return None
    value = float(match.group(1).replace(",", ""))
    return value, bool(match.group(2))


def parse_scalar(text: str) -> bool | int | float | str:
    """One printed value as Python shows it: bool, int, float or (unquoted) string."""
    text = text.strip()
    wrapped = _WRAPPED.match(text)
    if wrapped:
        text = wrapped.group(1) or wrapped.group(2)
    stamp = _TIMESTAMP.match(text)
    if stamp:
        text = stamp.group(1)
    if text in ("True", "False"):
        return text == "True"
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if text.lower() in ("nan", "-nan", "<na>", "nat", "none", "inf", "-inf"):
        raise AnswerError("answer.nan", text)
    if re.fullmatch(_NUM, text) and "," not in text:
        return float(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        return value if isinstance(value, str) else text
    return text


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
            if isinstance(scalar, list | tuple | dict | set):
                raise AnswerError("answer.nested", "items are collections")
            _scalar_answer(scalar)
    return {"kind": kind, "value": [list(i) if kind == "mapping" else i for i in values]}


def _literal(text: str) -> object:
    array = _ARRAY.match(text)
    if array:
        text = array.group(1)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _series(lines: list[str]) -> dict | None:
    """A pandas Series repr: `label  value` lines, an optional index-name line, a footer."""
    if not lines or not _FOOTER.match(lines[-1]):
        return None
    body = lines[:-1]
    if len(body) > 1 and len(body[0].split()) == 1 and len(body[1].split()) > 1:
        body = body[1:]
    if any(line.strip() == "..." for line in body):
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
    if [k for k, _ in pairs] == [str(i) for i in range(len(pairs))]:
        return _items([v for _, v in pairs], "list")
    return _items(pairs, "mapping")


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


def parse_table(markup: str) -> dict:
    """A DataFrame's HTML repr as a table answer, or AnswerError (a skip code)."""
    parser = _TableHTML()
    parser.feed(markup)
    if parser.tables == 0 or not parser.head or not parser.body:
        raise AnswerError("output.table", "an HTML output that is not a DataFrame")
    if any(colspan > 1 for row in parser.head for *_, colspan in row):
        raise AnswerError("answer.table-multicolumns", "columns with several header levels")
    if "rows ×" in markup or "rows x" in markup:
        raise AnswerError("answer.table-truncated", "the display left rows or columns out")
    body = _unspan(parser.body)
    if any(text == "..." for row in body for _, text in row):
        raise AnswerError("answer.table-truncated", "the display left rows or columns out")
    keys = max(sum(1 for tag, _ in row if tag == "th") for row in body)
    width = len(body[0])
    if any(len(row) != width or any(t != "th" for t, _ in row[:keys]) for row in body):
        raise AnswerError("output.table", "ragged table rows")
    header = [text for _, text, *_ in parser.head[0]]
    if len(header) != width or len(parser.head) > 2:
        raise AnswerError("answer.table-multicolumns", "columns with several header levels")
    names = [text for _, text, *_ in parser.head[-1]][:keys] if len(parser.head) == 2 else []
    names = (names + [""] * keys)[:keys]
    if len(body) > MAX_TABLE_ROWS or width - keys > MAX_TABLE_COLUMNS:
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
    if len({_norm(c) for c in columns}) != len(columns):
        raise AnswerError("answer.table-duplicate-columns", ", ".join(columns)[:80])
    if all(cell is None for row in rows for cell in row[keys:]):
        raise AnswerError("answer.nan", "every value is missing")
    return {"kind": "table", "columns": columns, "keys": keys, "value": rows}


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
    every level named (the names line checks how the labels split into levels)."""
    footer, body = lines[-1], lines[:-1]
    rows = []
    for line in body[1:]:
        value = re.split(r"\s{2,}", line.strip())[-1]
        rows.append((line[: len(line) - len(value)].rstrip(), value))
    if len(body) < 2 or any(not label.strip() for label, _ in rows):
        raise AnswerError("answer.multiindex", "a sparse index without labels")
    value_start = min(len(label) for label, _ in rows)
    names_line = body[0]
    if len(names_line.rstrip()) > value_start or names_line.startswith(" "):
        raise AnswerError("answer.multiindex", "index levels without names")
    spans = _fields([label for label, _ in rows])
    names = [names_line[a:b].strip() for a, b in spans]
    if len(spans) < 2 or not all(names) or names_line[spans[-1][1] :].strip():
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
    if len({_norm(c) for c in columns}) != len(columns):
        raise AnswerError("answer.table-duplicate-columns", ", ".join(columns)[:80])
    if all(row[-1] is None for row in table):
        raise AnswerError("answer.nan", "every value is missing")
    return {"kind": "table", "columns": columns, "keys": len(names), "value": table}


def parse_output(text: str, source: str = "result") -> dict:
    """The answer a cell's saved output shows. `source` is 'result' (the repr of the last
    expression), 'stream' (printed text) or 'table' (a DataFrame's HTML). Raises
    AnswerError with a skip code."""
    if source == "table":
        return parse_table(text)
    text = text.rstrip()
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise AnswerError("answer.empty", "no text")
    if len(lines) == 1:
        line = lines[0].strip()
        if source == "result" and re.match(r"^<.*>$", line):
            raise AnswerError("output.object-repr", line[:60])
        value = _literal(line) if line[:1] in "[({'\"" or _ARRAY.match(line) else None
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
        bare = isinstance(scalar, str) and line[:1] not in "'\"" and not _TIMESTAMP.match(line)
        if source == "result" and bare:
            raise AnswerError("answer.unparsed", line[:60])
        return _scalar_answer(scalar)
    series = _series(lines)
    if series is not None:
        return series
    joined = " ".join(line.strip() for line in lines)
    value = _literal(joined)
    if isinstance(value, list | tuple):
        return _items(list(value), "list")
    if isinstance(value, dict):
        return _items(list(value.items()), "mapping")
    if joined.startswith("[[") or joined.startswith("array([["):
        raise AnswerError("answer.nested", "a two-dimensional array")
    if joined.startswith("[") and joined.endswith("]"):
        return _items([parse_scalar(w) for w in joined[1:-1].split()], "list")
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


# -- writing and grading ---------------------------------------------------------------


def render_scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def render_answer(answer: dict) -> str:
    """The canonical answer.txt: one value, or one item (or `key: value`) per line; a
    table is CSV with a header row (answer.csv)."""
    if answer["kind"] == "table":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(answer["columns"])
        for row in answer["value"]:
            writer.writerow(["" if v is None else render_scalar(v) for v in row])
        return buffer.getvalue()
    if answer["kind"] == "list":
        return "\n".join(render_scalar(v) for v in answer["value"]) + "\n"
    if answer["kind"] == "mapping":
        return "\n".join(f"{k}: {render_scalar(v)}" for k, v in answer["value"]) + "\n"
    return render_scalar(answer["value"]) + "\n"


def _norm(text: str) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip().casefold()
    text = re.sub(r"^(?:the )?answer\s*(?:is|:|=)\s*", "", text).rstrip(".")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        text = text[1:-1].strip()
    return re.sub(r"^(\d{4}-\d\d-\d\d) 00:00:00$", r"\1", text)


def _close(x: float, e: float, atol: float, rtol: float) -> bool:
    return abs(x - e) <= atol or abs(x - e) <= rtol * abs(e)


def _numeric(expected: object, got: str, atol: float, rtol: float) -> bool:
    exp = parse_number(str(expected)) if isinstance(expected, str) else None
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        exp = (float(expected), False)
    got_text = re.sub(r"^[^\d$€£+\-.:=]*[:=]\s*", "", got.strip())
    parsed = parse_number(got_text)
    if exp is None or parsed is None:
        return False
    (e, e_pct), (x, x_pct) = exp, parsed
    return (
        _close(x, e, atol, rtol)
        or (x_pct and not e_pct and _close(x / 100, e, atol, rtol))
        or (e_pct and not x_pct and _close(x * 100, e, atol, rtol))
    )


def _bool_word(text: str) -> bool | None:
    word = _norm(text)
    return True if word in TRUE_WORDS else False if word in FALSE_WORDS else None


def _same(expected: object, got: str, atol: float, rtol: float) -> bool:
    if _norm(render_scalar(expected)) == _norm(got):
        return True
    if isinstance(expected, bool):
        return _bool_word(got) is expected
    return _numeric(expected, got, atol, rtol)


def _split_items(text: str, kind: str) -> list:
    text = text.strip()
    for reader in (json.loads, _literal):
        try:
            value = reader(text)
        except ValueError:
            continue
        if isinstance(value, dict) and kind == "mapping":
            return [(str(k), str(v)) for k, v in value.items()]
        if isinstance(value, list | tuple | set) and kind == "list":
            return [render_scalar(v) for v in value]
    lines = [line.strip().lstrip("-*• ").strip() for line in text.splitlines() if line.strip()]
    if kind == "mapping":
        pairs = []
        for line in lines:
            parts = re.split(r"\s*[:=\t]\s*|\s*,\s+|\s{2,}", line, maxsplit=1)
            if len(parts) == 2:
                pairs.append((parts[0], parts[1]))
        return pairs
    if len(lines) == 1:
        separator = ";" if ";" in lines[0] else "," if "," in lines[0] else r"\s+"
        lines = [p.strip() for p in re.split(separator, lines[0]) if p.strip()]
    return lines


def _match_all(expected: list, got: list, same) -> bool:
    """Order-insensitive one-to-one matching (augmenting paths; lists are short)."""
    if len(expected) != len(got):
        return False
    owner: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:
        for j, item in enumerate(got):
            if j not in seen and same(expected[i], item):
                seen.add(j)
                if j not in owner or assign(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(assign(i, set()) for i in range(len(expected)))


def _read_csv(text: str) -> list[list[str]]:
    """Rows of an agent's CSV (or tab-separated) file; a byte-order mark (Excel's
    UTF-8) is not part of the first column's name."""
    text = text.lstrip("\ufeff")
    sample = text[:4096]
    delimiter = "," if sample.count(",") >= sample.count("\t") else "\t"
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if any(row)]
    return [[cell.strip() for cell in row] for row in rows]


def _grade_table(expected: dict, text: str, atol: float, rtol: float) -> tuple[bool, str]:
    """Cell by cell: columns matched by header name (any order; index artefacts such as
    an unnamed `index` column ignored when the table has no row labels), rows matched
    one to one in any order (by their labels and values), no row missing or extra."""
    try:
        rows = _read_csv(text)
    except csv.Error:
        return False, "no-match"
    if not rows:
        return False, "empty"
    header = [_norm(c) for c in rows[0]]
    where = []
    for column in expected["columns"]:
        if header.count(_norm(column)) != 1:
            return False, "no-match"
        where.append(header.index(_norm(column)))
    extra = set(range(len(header))) - set(where)
    if any(header[i] not in INDEX_ARTEFACTS for i in extra):
        return False, "no-match"
    got = [[row[i] if i < len(row) else "" for i in where] for row in rows[1:]]

    def same_cell(want: object, cell: str) -> bool:
        if want is None:
            return cell.casefold() in MISSING_WORDS
        return cell.casefold() not in MISSING_WORDS and _same(want, cell, atol, rtol)

    def same_row(want: list, row: list) -> bool:
        return all(same_cell(w, c) for w, c in zip(want, row, strict=True))

    return (True, "table") if _match_all(expected["value"], got, same_row) else (False, "no-match")


def grade(expected: dict, text: str) -> tuple[bool, str]:
    """(passed, rung that decided). The rung is 'empty' or 'no-match' on failure."""
    atol = float(expected.get("atol", DEFAULT_ATOL))
    rtol = float(expected.get("rtol", DEFAULT_RTOL))
    if not text.strip():
        return False, "empty"
    if expected["kind"] == "table":
        return _grade_table(expected, text, atol, rtol)
    if _norm(render_answer(expected)) == _norm(text):
        return True, "exact"
    kind, value = expected["kind"], expected["value"]
    if kind in ("number", "string") and _numeric(value, text, atol, rtol):
        return True, "numeric"
    if kind in ("list", "mapping"):
        if kind == "list":
            ok = _match_all(value, _split_items(text, kind), lambda e, g: _same(e, g, atol, rtol))
        else:
            ok = _match_all(
                value,
                _split_items(text, kind),
                lambda e, g: _norm(e[0]) == _norm(g[0]) and _same(e[1], g[1], atol, rtol),
            )
        if ok:
            return True, "list"
    if kind == "bool" and _bool_word(text) is value:
        return True, "boolean"
    return False, "no-match"


def main() -> int:
    expected = json.loads(Path(__file__).with_name("expected.json").read_text())
    path = TABLE_PATH if expected["kind"] == "table" else ANSWER_PATH
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1_000_000)
    except OSError as exc:
        print(f"no answer: {exc}")
        return 1
    passed, rung = grade(expected, text)
    verdict = {"passed": passed, "rule": rung, "expected": render_answer(expected)[:500]}
    verdict["got"] = text[:500]
    print(json.dumps(verdict))
    with contextlib.suppress(OSError):
        Path("/logs/verifier/grading.json").write_text(json.dumps(verdict) + "\n")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
