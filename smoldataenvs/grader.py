"""Short answers: write them canonically and grade an agent's answer against them.

This file is copied verbatim into every task (as `tests/check.py`, and beside the
reference in `solution/`), so it uses the standard library only and is self-contained:
the verifier runs it with `python3 -I` in whatever image the task built, which puts no
sibling module on sys.path. It holds only what the verifier needs (reading an agent's
answer, the ladder, the table grading, `main`); reading an *expected* answer out of a
notebook's saved output is `saved_output.py`, which imports the value readers from here
(`parse_scalar`, `parse_number`, `literal`, `normalize`), so the pipeline, the
reference solution and the verifier read a value one way and can never drift apart.

An answer is a JSON-able dict: `{"kind": number|string|bool|list|mapping, "value": ...}`
(list: scalars; mapping: [key, scalar] pairs), optional `"percent"` for numbers read
from `12.5%`, and the tolerances `"atol"`/`"rtol"` for the numeric rung. A table
(a DataFrame result, read from its saved HTML) is `{"kind": "table", "columns": [...],
"keys": k, "value": [[cell, ...], ...]}`: the first `k` columns are the index levels
(the row labels rows are matched by), a cell is a scalar or null (NaN); the agent
writes it as CSV to `TABLE_PATH` with those column names as the header.

The grading ladder, first match wins, and the matched rung is recorded:
exact (case/whitespace) -> numeric (tolerances; commas, %, units stripped; %/fraction
bridge) -> list (order-insensitive, element-wise tolerant; mappings are key/value
lists) -> boolean (yes/no/true/false). Empty or unrelated answers score 0.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import io
import json
import re
import sys
from pathlib import Path

DEFAULT_ATOL = 1e-3
DEFAULT_RTOL = 1e-3
ANSWER_PATH = "/workspace/answer.txt"
TABLE_PATH = "/workspace/answer.csv"
MISSING_WORDS = {"", "nan", "-nan", "<na>", "nat", "none", "null"}
INDEX_ARTEFACTS = {"", "index", "unnamed: 0"}
TRUE_WORDS = {"true", "yes", "np.true_"}
FALSE_WORDS = {"false", "no", "np.false_"}

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?"
_WRAPPED = re.compile(
    r"^(?:np|numpy)\.(?:float|int|uint|bool|str)\w*\((.*)\)$|^(?:np\.)?(True|False)_$"
)
TIMESTAMP_REPR = re.compile(r"^Timestamp\('([^']*)'(?:,.*)?\)$")
ARRAY_REPR = re.compile(
    r"^(?:array|Index|Int64Index|Float64Index)\((.*?)(?:,\s*dtype=[^)]*)?\)$", re.S
)
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
    stamp = TIMESTAMP_REPR.match(text)
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


def literal(text: str) -> object:
    """A Python literal as printed (an `array(...)`/`Index(...)` repr unwrapped), else
    None; shared by the grader (an agent's list) and saved_output (a saved list)."""
    array = ARRAY_REPR.match(text)
    if array:
        text = array.group(1)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


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


def normalize(text: str) -> str:
    """Text as compared: case, whitespace, an `answer is` prefix and quotes dropped;
    saved_output uses it too, so a table's column names are unique as the grader sees them."""
    text = re.sub(r"\s+", " ", str(text)).strip().casefold()
    text = re.sub(r"^(?:the )?answer\s*(?:is|:|=)\s*", "", text).rstrip(".")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        text = text[1:-1].strip()
    return re.sub(r"^(\d{4}-\d\d-\d\d) 00:00:00$", r"\1", text)


def _close(x: float, e: float, atol: float, rtol: float) -> bool:
    return abs(x - e) <= atol or abs(x - e) <= rtol * abs(e)


def _numeric(expected: object, got: str, atol: float, rtol: float) -> bool:
    if type(expected) is int:
        atol = rtol = 0.0  # a whole number (a count, a sum of counts) is graded exactly
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
    word = normalize(text)
    return True if word in TRUE_WORDS else False if word in FALSE_WORDS else None


def _same(expected: object, got: str, atol: float, rtol: float) -> bool:
    if normalize(render_scalar(expected)) == normalize(got):
        return True
    if isinstance(expected, bool):
        return _bool_word(got) is expected
    return _numeric(expected, got, atol, rtol)


BULLET = re.compile(r"^[-*•]\s+")
"""A markdown list marker at the start of an answer line."""


def _split_items(text: str, kind: str) -> list:
    text = text.strip()
    for reader in (json.loads, literal):
        try:
            value = reader(text)
        except ValueError:
            continue
        if isinstance(value, dict) and kind == "mapping":
            return [(str(k), str(v)) for k, v in value.items()]
        if isinstance(value, list | tuple | set) and kind == "list":
            return [render_scalar(v) for v in value]
    # A list bullet ("- 12", "* a") is a marker followed by a space; "-9900.4" is a
    # negative number, whose sign stays.
    lines = [BULLET.sub("", line.strip()).strip() for line in text.splitlines() if line.strip()]
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
    header = [normalize(c) for c in rows[0]]
    where = []
    for column in expected["columns"]:
        if header.count(normalize(column)) != 1:
            return False, "no-match"
        where.append(header.index(normalize(column)))
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
    if normalize(render_answer(expected)) == normalize(text):
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
                lambda e, g: normalize(e[0]) == normalize(g[0]) and _same(e[1], g[1], atol, rtol),
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
