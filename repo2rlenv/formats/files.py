"""From a local file (or a dataset row) to records, refusing bad input with a reason.

A session file (pi, Claude Code, Codex, Hermes transcript) is one record: the list of
its parsed lines. A file of dataset rows is one record per row. Which one a JSONL file
is follows from its first parseable line: a line that is a whole record by itself
(ATIF document, dataset row, wrapper row) means rows; anything else means a session.
Lines are read with a size cap, so a corrupt or hostile file costs bounded memory.
"""

from __future__ import annotations

import codecs
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from repo2rlenv.formats.base import FormatError, Record
from repo2rlenv.formats.collector import collector_paused
from repo2rlenv.formats.detect import detect_format
from repo2rlenv.formats.jsondecode import NOT_JSON, decode, decode_fast
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.records import BadLine
from repo2rlenv.formats.text import cap

MAX_LINE_BYTES = 32 * 1024 * 1024
"""A JSONL line (or a string cell holding a session) larger than this is refused."""
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""A .json document, or the sum of a session file's lines, larger than this is refused."""
_SESSION_FORMATS = frozenset(
    {"pi", "claude-code", "codex", "hermes", "openai-messages", "mini-swe-agent", "openhands"}
)
_JSON_SUFFIXES = (".json", ".traj")
"""`.traj` is SWE-agent's name for a JSON document."""
_WRAP_KEYS = (
    "content",
    "text",
    "session",
    "jsonl",
    "json",
    "data",
    "record",
    "trajectory",
    "messages",
    "conversation",
    "events",
    "lines",
)
_NOT_JSON = NOT_JSON
_SNIFF_BYTES = 8192

Item = tuple[str, Record | FormatError]


class _Refused(Exception):
    def __init__(self, error: FormatError) -> None:
        self.error = error


def iter_file_records(path: Path) -> Iterator[Item]:
    """(record_id, record or FormatError) for every record in a local file. Never raises
    for bad content; record ids are the file name, plus `#<row>` for multi-row files."""
    path = Path(path)
    name, suffix = path.name, path.suffix.lower()
    if suffix not in (".jsonl", ".parquet", *_JSON_SUFFIXES):
        yield name, fail("format.unsupported-file", f"{name}: not .jsonl, .json, .traj or .parquet")
        return
    try:
        if suffix == ".parquet":
            yield from _parquet(path, name)
            return
        with path.open("rb") as handle:
            if b"\x00" in handle.read(_SNIFF_BYTES):
                raise _Refused(fail("format.binary", f"{name}: NUL byte in the first 8 KiB"))
            handle.seek(0)
            if suffix in _JSON_SUFFIXES:
                yield from _json_document(handle, name)
            else:
                yield from _jsonl(handle, name)
    except _Refused as refused:
        yield name, refused.error
    except OSError as exc:
        yield name, fail("format.unreadable", f"{name}: {exc}")


def unwrap_row(row: dict[str, Any]) -> Record:
    """The record a dataset row is or wraps: the row itself when it is a record (ATIF
    document, chat-message row); else the first column holding a session, as JSON/JSONL
    text (e.g. {"path": "x.jsonl", "content": "..."}) or as a parsed object or list.
    Returns the row unchanged when nothing inside is a record. Raises FormatError
    ('format.too-large') for a session cell over MAX_LINE_BYTES, and nothing else."""
    if not isinstance(row, dict) or detect_format(row) is not None:
        return row
    keys = [k for k in _WRAP_KEYS if k in row] + [k for k in row if k not in _WRAP_KEYS]
    for key in keys:
        value = row[key]
        if isinstance(value, bytes | bytearray):
            try:
                value = bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                continue
        candidate: Any = None
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            if len(value) > MAX_LINE_BYTES:
                raise fail("format.too-large", f"column {key!r}: {len(value)} characters")
            candidate = parse_text(value)
        elif isinstance(value, dict | list):
            candidate = value
        if candidate is not None and detect_format(candidate) is not None:
            return candidate
    return row


def parse_text(text: str) -> Any:
    """A JSON document, or else the lines of a JSONL text (bad lines kept as BadLine);
    None when neither yields anything."""
    value = _parse(text)
    if value is not _NOT_JSON:
        return value
    items: list[Any] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            parsed = _parse(line)
            items.append(
                BadLine(number, "format.bad-json", cap(line, 80)) if parsed is _NOT_JSON else parsed
            )
    return items if any(isinstance(i, dict) for i in items) else None


def _parse(text: str) -> Any:
    return decode(text.strip())


def _lines(handle: IO[bytes], name: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value or BadLine) for each non-blank line."""
    total = 0
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise _Refused(
                fail(
                    "format.too-large",
                    f"{name}: line {number} over {MAX_LINE_BYTES // (1024 * 1024)} MiB",
                )
            )
        total += len(raw)
        if total > MAX_DOCUMENT_BYTES:
            raise _Refused(fail("format.too-large", f"{name}: over {MAX_DOCUMENT_BYTES} bytes"))
        if number == 1:
            raw = raw.removeprefix(codecs.BOM_UTF8)
        if b"\x00" in raw:
            raise _Refused(fail("format.binary", f"{name}: NUL byte on line {number}"))
        value = decode_fast(raw)  # valid JSON is valid UTF-8: the checks below can wait
        if isinstance(value, dict):
            yield number, value
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Refused(fail("format.not-utf8", f"{name}: line {number}: {exc.reason}")) from exc
        if not text.strip():
            continue
        value = _parse(text)
        if value is _NOT_JSON:
            yield number, BadLine(number, "format.bad-json", cap(text, 80))
        elif not isinstance(value, dict):
            yield number, BadLine(number, "format.bad-type", cap(text, 80))
        else:
            yield number, value


def _is_row(line: dict[str, Any]) -> bool:
    if detect_format([line]) in _SESSION_FORMATS:
        return False
    if detect_format(line) is not None:
        return True
    try:
        return unwrap_row(line) is not line
    except FormatError:
        return True


def _jsonl(handle: IO[bytes], name: str) -> Iterator[Item]:
    items: list[Any] = []
    rows: bool | None = None
    index = 0
    for _, value in _lines(handle, name):
        if rows is None and isinstance(value, dict):
            rows = _is_row(value)
            if rows:
                for held in items:
                    yield f"{name}#{index}", fail(held.reason, f"{name}: line {held.line}")
                    index += 1
                items = []
        if rows:
            yield f"{name}#{index}", _row(value, name)
            index += 1
        else:
            items.append(value)
    if rows:
        return
    cut = _cut_at_end(items, name)
    if cut is not None:
        yield name, cut
    elif any(isinstance(i, dict) for i in items):
        yield name, items
    elif items:
        first = items[0]
        yield name, fail(first.reason, f"{name}: no line parses (line {first.line})")
    else:
        yield name, fail("format.empty", f"{name}: no lines")


def _cut_at_end(items: list[Any], name: str) -> FormatError | None:
    """`format.truncated` for a session whose last line is not complete JSON: the file was
    cut mid-record (copied while the harness was still writing it, or clipped in
    transfer). Its history stops at an unknown point, so a task from it would start
    from, or stop at, a state the run never settled in; nor should it win a duplicate
    check against the complete copy. A bad line before the end is a hole, not a cut:
    the readers mark that session `truncated` and go on."""
    if not items or not isinstance(items[-1], BadLine):
        return None
    if not any(isinstance(item, dict) for item in items):
        return None  # nothing parses: not JSON Lines at all (`format.bad-json`)
    last = items[-1]
    if last.reason != "format.bad-json":
        return None
    return fail(
        "format.truncated",
        f"{name}: cut mid-record: the last line ({last.line}) is not complete JSON "
        f"({last.excerpt})",
    )


def _row(value: Any, name: str) -> Record | FormatError:
    if isinstance(value, BadLine):
        return fail(value.reason, f"{name}: line {value.line}: {value.excerpt}")
    try:
        return unwrap_row(value)
    except FormatError as error:
        return error


def read_capped(handle: IO[bytes], limit: int) -> bytes:
    """`handle.read(limit)`, without asking for `limit` bytes up front: a read of 512 MB
    maps that much memory for every file, however small (three times the cost of
    reading a 500 KB run). The file's own size is asked first; a file that is longer
    than it said (it grew, or it is a pipe) is read on up to `limit` all the same."""
    try:
        expected = max(1, os.fstat(handle.fileno()).st_size - handle.tell() + 1)
    except (AttributeError, OSError, io.UnsupportedOperation):
        return handle.read(limit)
    if expected >= limit:
        return handle.read(limit)
    data = handle.read(expected)
    if len(data) < expected:
        return data  # end of file reached: everything there is
    return data + handle.read(limit - len(data))


def _json_document(handle: IO[bytes], name: str) -> Iterator[Item]:
    data = read_capped(handle, MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _Refused(fail("format.too-large", f"{name}: over {MAX_DOCUMENT_BYTES} bytes"))
    if b"\x00" in data:
        raise _Refused(fail("format.binary", f"{name}: NUL byte"))
    with collector_paused():
        value = decode_fast(data.removeprefix(codecs.BOM_UTF8))
    if value is _NOT_JSON:
        value = _decoded_text(data, name)
    if value is _NOT_JSON:
        text = data.decode("utf-8-sig")
        first = next(line for line in text.split("\n") if line.strip())
        if not isinstance(_parse(first), dict):
            raise _Refused(fail("format.bad-json", f"{name}: not JSON ({cap(first, 60)})"))
        yield from _jsonl(io.BytesIO(data), name)  # JSON Lines saved as .json
        return
    if isinstance(value, dict):
        yield name, _row(value, name)
    elif isinstance(value, list) and not value:
        yield name, fail("format.empty", f"{name}: empty array")
    elif isinstance(value, list) and detect_format(value) in _SESSION_FORMATS:
        yield name, value
    elif isinstance(value, list):
        for index, row in enumerate(value):
            yield (
                f"{name}#{index}",
                (
                    _row(row, name)
                    if isinstance(row, dict)
                    else fail("format.bad-type", f"{name}: row {index} is {type(row).__name__}")
                ),
            )
    else:
        yield name, fail("format.bad-type", f"{name}: top level is {type(value).__name__}")


def _decoded_text(data: bytes, name: str) -> Any:
    """The slow path of a .json document: refusals with their reasons, then the value."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Refused(fail("format.not-utf8", f"{name}: {exc.reason}")) from exc
    if not text.strip():
        raise _Refused(fail("format.empty", f"{name}: no content"))
    return _parse(text)


def _parquet(path: Path, name: str) -> Iterator[Item]:
    import pyarrow.parquet as pq  # only needed for .parquet; pulled in by `datasets`

    index = 0
    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=256)
        for batch in batches:
            for row in batch.to_pylist():
                yield f"{name}#{index}", _row(row, name)
                index += 1
    except Exception as exc:  # pyarrow raises its own hierarchy (ArrowInvalid, OSError...)
        yield f"{name}#{index}", fail("format.unreadable", f"{name}: {cap(str(exc))}")
        return
    if index == 0:
        yield name, fail("format.empty", f"{name}: no rows")
