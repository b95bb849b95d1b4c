"""Session readers: published agent sessions in, ATIF trajectories and actions out.

The contract the miner consumes:

- `iter_file_records(path)` turns a local .jsonl/.json/.parquet file into
  (record_id, record | FormatError) pairs;
- `unwrap_row(row)` finds the record inside a Hugging Face dataset row;
- `detect_format(record)` names the reader a record needs;
- `read_record(record, record_id)` returns a `ParsedSession` and raises only
  `FormatError`, whose `reason` is a code listed in `REASONS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from repo2rlenv.formats.atif import read_atif
from repo2rlenv.formats.base import (
    Action,
    ApplyPatch,
    EditFile,
    EditSpan,
    FormatError,
    OtherTool,
    ParsedSession,
    ReadFile,
    Record,
    RunCommand,
    UnifiedDiff,
    UserTurn,
    WriteFile,
)
from repo2rlenv.formats.claude import read_claude
from repo2rlenv.formats.codex import read_codex
from repo2rlenv.formats.collector import collector_paused
from repo2rlenv.formats.detect import detect_format
from repo2rlenv.formats.files import (
    MAX_DOCUMENT_BYTES,
    MAX_LINE_BYTES,
    iter_file_records,
    unwrap_row,
)
from repo2rlenv.formats.hermes import read_hermes
from repo2rlenv.formats.mini_swe_agent import read_mini_swe_agent
from repo2rlenv.formats.openai_messages import read_openai_messages
from repo2rlenv.formats.opencode import read_opencode
from repo2rlenv.formats.openhands import read_openhands
from repo2rlenv.formats.pi import read_pi
from repo2rlenv.formats.reasons import REASONS, fail
from repo2rlenv.formats.records import BadLine
from repo2rlenv.formats.swe_agent import read_swe_agent
from repo2rlenv.formats.text import cap

READERS: dict[str, Callable[[Any, str], ParsedSession]] = {
    "atif": read_atif,
    "pi": read_pi,
    "claude-code": read_claude,
    "codex": read_codex,
    "opencode": read_opencode,
    "hermes": read_hermes,
    "openai-messages": read_openai_messages,
    "mini-swe-agent": read_mini_swe_agent,
    "swe-agent": read_swe_agent,
    "openhands": read_openhands,
}
FORMATS = tuple(READERS)
"""The format names `detect_format` can return, one per reader: derived from READERS so
a reader is registered in one place (tests/test_registries.py checks that each is
detected and documented)."""


def read_record(record: Record, record_id: str) -> ParsedSession:
    """Parse one record. Raises only FormatError: a reader that meets a shape it does not
    handle reports `format.malformed` with the details instead of crashing the miner."""
    fmt = detect_format(record)
    if fmt is None:
        raise fail("format.unknown", f"{record_id}: {_shape(record)}")
    try:
        with collector_paused():
            return READERS[fmt](record, record_id)
    except FormatError as exc:
        exc.source_format = exc.source_format or fmt
        raise
    except ValidationError as exc:
        raise fail("format.invalid-atif", f"{record_id} ({fmt}): {cap(str(exc), 300)}") from exc
    except (RecursionError, MemoryError) as exc:
        raise fail("format.too-large", f"{record_id} ({fmt}): {type(exc).__name__}") from exc
    except Exception as exc:
        raise fail(
            "format.malformed", f"{record_id} ({fmt}): {type(exc).__name__}: {cap(str(exc))}"
        ) from exc


def _shape(record: Any) -> str:
    if isinstance(record, dict):
        return "object with keys " + ", ".join(sorted(map(str, record))[:12])
    if isinstance(record, list):
        kinds = sorted({i["type"] for i in record if isinstance(i, dict) and _tag(i.get("type"))})
        seen = f"; line types {', '.join(kinds[:12])}" if kinds else ""
        return f"list of {len(record)} items{seen}"
    return type(record).__name__


def _tag(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 40


__all__ = [
    "FORMATS",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "READERS",
    "REASONS",
    "Action",
    "ApplyPatch",
    "BadLine",
    "EditFile",
    "EditSpan",
    "FormatError",
    "OtherTool",
    "ParsedSession",
    "ReadFile",
    "Record",
    "RunCommand",
    "UnifiedDiff",
    "UserTurn",
    "WriteFile",
    "detect_format",
    "iter_file_records",
    "read_record",
    "unwrap_row",
]
