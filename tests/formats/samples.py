"""Parsed real samples, shared by the spot checks (each file is read once per run)."""

from __future__ import annotations

from functools import cache

from repo2rlenv.formats import (
    Action,
    FormatError,
    ParsedSession,
    iter_file_records,
    read_record,
)
from tests.conftest import SAMPLES


@cache
def sessions(rel: str) -> tuple[ParsedSession, ...]:
    out = []
    for record_id, record in iter_file_records(SAMPLES / rel):
        assert not isinstance(record, FormatError), record
        out.append(read_record(record, record_id))
    return tuple(out)


def session(rel: str, index: int = 0) -> ParsedSession:
    return sessions(rel)[index]


def action_for(parsed: ParsedSession, call_id: str) -> Action:
    matches = [a for a in parsed.actions if a.call_id == call_id]
    assert len(matches) == 1, (call_id, matches)
    return matches[0]
