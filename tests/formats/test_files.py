"""How files become records: session files vs files of rows, wrapped sessions in
dataset rows, Parquet, record ids."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from repo2rlenv.formats import (
    BadLine,
    FormatError,
    detect_format,
    iter_file_records,
    read_record,
    unwrap_row,
)
from tests.conftest import SAMPLES, needs_samples

ATIF = SAMPLES / "atif/harbor-golden__terminus_2_hello-world-timeout.trajectory.json"
CLAUDE = SAMPLES / "claude_code/ved08_hunch__claude-session.jsonl"
HERMES = SAMPLES / "hermes/eriktobben_hermes-backup__20260515_202926_d07b8c3a.jsonl"
GYM = SAMPLES / (
    "openai_messages/agent-data-protocol__swe-gym_openhands_sampled_trajectories__sample_raw.json"
)


@needs_samples
def test_a_session_jsonl_is_one_record_of_its_lines() -> None:
    pairs = list(iter_file_records(CLAUDE))
    lines = [json.loads(x) for x in CLAUDE.read_text().splitlines() if x.strip()]
    assert pairs == [(CLAUDE.name, lines)]


@needs_samples
def test_a_jsonl_of_rows_is_one_record_per_row(tmp_path: Path) -> None:
    rows = json.loads(GYM.read_text())[:3]
    target = tmp_path / "rows.jsonl"
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = list(iter_file_records(target))
    assert [rid for rid, _ in pairs] == ["rows.jsonl#0", "rows.jsonl#1", "rows.jsonl#2"]
    assert [record for _, record in pairs] == rows


@needs_samples
def test_bad_lines_in_a_file_of_rows_are_refused_one_by_one(tmp_path: Path) -> None:
    doc = json.loads(ATIF.read_text())
    target = tmp_path / "rows.jsonl"
    target.write_text("{broken\n" + json.dumps(doc) + "\n" + json.dumps(doc)[:50] + "\n")
    pairs = list(iter_file_records(target))
    assert [rid for rid, _ in pairs] == ["rows.jsonl#0", "rows.jsonl#1", "rows.jsonl#2"]
    assert [r.reason if isinstance(r, FormatError) else "ok" for _, r in pairs] == [
        "format.bad-json",
        "ok",
        "format.bad-json",
    ]


@needs_samples
def test_json_array_of_rows_vs_array_of_chat_messages(tmp_path: Path) -> None:
    assert [rid for rid, _ in iter_file_records(GYM)] == [f"{GYM.name}#{i}" for i in range(5)]
    messages = json.loads(GYM.read_text())[0]["messages"]
    target = tmp_path / "chat.json"
    target.write_text(json.dumps(messages))
    [(rid, record)] = list(iter_file_records(target))
    assert rid == "chat.json" and record == messages
    parsed = read_record(record, rid)
    assert parsed.source_format == "openai-messages/swe-gym"


@needs_samples
def test_malformed_lines_stay_visible_as_markers(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    lines[3] = lines[3][:25]
    target = tmp_path / "s.jsonl"
    target.write_text("\n".join(lines))
    [(_, record)] = list(iter_file_records(target))
    marker = record[3]
    assert isinstance(marker, BadLine) and marker.line == 4 and marker.reason == "format.bad-json"
    assert len(record) == len(lines)


@needs_samples
def test_byte_order_mark_and_jsonl_saved_as_json(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    target.write_bytes(b"\xef\xbb\xbf" + CLAUDE.read_bytes())
    [(rid, record)] = list(iter_file_records(target))
    assert rid == "s.json" and detect_format(record) == "claude-code"
    assert read_record(record, rid).harness == "claude-code"


@needs_samples
@pytest.mark.parametrize("column", ["content", "text", "session", "jsonl", "payload"])
def test_wrapped_session_text_in_a_row(column: str) -> None:
    row = {"path": "sessions/x.jsonl", column: HERMES.read_text(), "stars": 3}
    record = unwrap_row(row)
    assert isinstance(record, list) and detect_format(record) == "hermes"
    assert read_record(record, "row").source_format == "hermes-jsonl"


@needs_samples
def test_wrapped_parsed_objects_bytes_and_plain_records() -> None:
    doc = json.loads(ATIF.read_text())
    assert unwrap_row({"id": 1, "trajectory": doc}) == doc
    assert unwrap_row({"blob": ATIF.read_bytes()}) == doc
    assert unwrap_row(doc) is doc  # a record is its own row
    row = json.loads(GYM.read_text())[0]
    assert unwrap_row(row) is row
    nothing = {"id": 1, "content": "hello", "meta": {"a": 1}}
    assert unwrap_row(nothing) is nothing


@needs_samples
def test_parquet_rows(tmp_path: Path) -> None:
    table = pa.table(
        {
            "path": ["a.json", "b.jsonl", "c.txt"],
            "content": [ATIF.read_text(), CLAUDE.read_text(), "just words"],
        }
    )
    target = tmp_path / "rows.parquet"
    pq.write_table(table, target)
    pairs = list(iter_file_records(target))
    assert [rid for rid, _ in pairs] == ["rows.parquet#0", "rows.parquet#1", "rows.parquet#2"]
    assert [detect_format(r) for _, r in pairs] == ["atif", "claude-code", None]
    with pytest.raises(FormatError) as caught:
        read_record(pairs[2][1], pairs[2][0])
    assert caught.value.reason == "format.unknown"


def test_broken_and_empty_parquet(tmp_path: Path) -> None:
    broken = tmp_path / "x.parquet"
    broken.write_bytes(b"PAR1 not really")
    [(_, error)] = list(iter_file_records(broken))
    assert isinstance(error, FormatError) and error.reason == "format.unreadable"
    empty = tmp_path / "e.parquet"
    pq.write_table(pa.table({"content": pa.array([], pa.string())}), empty)
    [(_, error)] = list(iter_file_records(empty))
    assert isinstance(error, FormatError) and error.reason == "format.empty"


def test_record_ids_are_stable_across_runs() -> None:
    first = [rid for rid, _ in iter_file_records(GYM)]
    assert first == [rid for rid, _ in iter_file_records(GYM)]


def test_capped_read_reads_a_file_whole_or_up_to_the_cap(tmp_path: Path) -> None:
    # read_capped asks the file's size instead of allocating the cap; what it returns
    # must still be exactly `handle.read(limit)`, for short, exact and long files.
    from repo2rlenv.formats.files import read_capped

    path = tmp_path / "run.json"
    path.write_bytes(b"x" * 1000)
    for limit in (1, 999, 1000, 1001, 10**9):
        with path.open("rb") as handle:
            handle.read(10)
            handle.seek(0)
            assert read_capped(handle, limit) == b"x" * min(limit, 1000)


def test_capped_read_reads_on_past_a_size_the_file_did_not_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file that grew after its size was asked (or states a size it does not have)
    # must still be read up to the cap, as handle.read(limit) would.
    import os
    import types

    from repo2rlenv.formats import files

    path = tmp_path / "run.json"
    path.write_bytes(b"y" * 5000)
    # (patched only around the reads: os.fstat is everyone's, tmp_path's removal included)
    with monkeypatch.context() as patch:
        patch.setattr(files.os, "fstat", lambda fd: types.SimpleNamespace(st_size=10))
        with path.open("rb") as handle:
            assert files.read_capped(handle, 4001) == b"y" * 4001
        with path.open("rb") as handle:
            assert files.read_capped(handle, 10**9) == b"y" * 5000
        read_end, write_end = os.pipe()  # no position to ask: read as before
        os.write(write_end, b"z" * 300)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as handle:
            assert files.read_capped(handle, 200) == b"z" * 200
