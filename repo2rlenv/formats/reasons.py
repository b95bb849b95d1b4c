"""Every reason a record can be refused, in one place, so the yield table can explain
each code it counts. Codes are stable strings: tests and manifests refer to them."""

from __future__ import annotations

from repo2rlenv.formats.base import FormatError

REASONS: dict[str, str] = {
    "format.empty": "the file or record holds nothing (no bytes, no lines, no rows)",
    "format.binary": "the file holds NUL bytes: it is binary, not a text session",
    "format.not-utf8": "the file is not valid UTF-8 text",
    "format.too-large": "a line, cell or file exceeds the size cap (see formats.files)",
    "format.bad-json": "the text is not JSON (no line of a JSONL file parses)",
    "format.bad-type": "a field the format requires has the wrong type (e.g. steps not a list)",
    "format.unsupported-file": "the file extension is not .jsonl, .json or .parquet",
    "format.unreadable": "the file could not be opened or decoded (I/O or Parquet error)",
    "format.unknown": "no reader recognises the record's shape",
    "format.no-messages": "the record is a session container but holds no user or agent turn",
    "format.subagent-transcript": (
        "a Claude Code sub-agent's own file (every turn isSidechain): its prompt came from "
        "the parent agent, not a person, so it holds no request"
    ),
    "format.truncated": (
        "the record is cut: its last line is not complete JSON (a file copied mid-write), "
        "or it stops so early that no usable turn survives"
    ),
    "format.invalid-atif": "the normalised trajectory fails ATIF validation",
    "format.malformed": "a field has a shape the reader does not handle (details in the message)",
}
"""Code -> meaning. Readers never invent a code outside this table."""


def fail(code: str, message: str) -> FormatError:
    """Build the error for `code`; an unknown code is a programming error, caught in tests."""
    if code not in REASONS:
        raise ValueError(f"unregistered reason code {code!r}")
    return FormatError(code, message)
