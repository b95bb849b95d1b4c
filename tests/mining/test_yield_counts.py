"""`mine`'s counts add up at each level (issue 29): records read = run reports + records
skipped whole + records that gave candidates; candidates = emitted + unchanged + skipped;
tasks = proven + unverified. A cut session is `format.truncated`, its complete copy
gives the task, and task ids do not depend on whether a file or its folder was mined."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from repo2rlenv.cli import main
from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.yield_counts import YieldCounts

pytestmark = pytest.mark.timeout(300)


def mine(dataset: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    """`mine --no-validate` in-process: its --json report and what it printed to stdout."""
    report = out.parent / f"{out.name}.json"
    capsys.readouterr()
    code = main(["mine", "-q", "--no-validate", "--dataset", str(dataset), "--out", str(out),
                 "--json", str(report)])  # fmt: skip
    assert code == 0
    return json.loads(report.read_text()), capsys.readouterr().out


def recount(report: dict) -> dict[str, int]:
    """The levels counted again from the per-record lines of the report, apart from
    the counting code: each skip's stage says whether it took a whole record."""
    skips = [s for r in report["records"] for s in r.get("skips", [])]
    whole = sum(1 for s in skips if s["stage"] == "record")
    tasks = sum(len(r["tasks"]) for r in report["records"])
    gave = sum(
        1
        for r in report["records"]
        if r["tasks"] or any(s["stage"] == "candidate" for s in r.get("skips", []))
    )
    return {
        "records_read": len(report["records"]),
        "records_skipped": whole,
        "records_with_candidates": gave,
        "candidates": tasks + len(skips) - whole,
        "tasks": tasks,
    }


def assert_adds_up(report: dict, printed: str) -> YieldCounts:
    counts = YieldCounts.model_validate(report["counts"])
    assert counts.mismatches() == []
    again = recount(report)
    assert counts.records_read == report["records_read"] == again["records_read"]
    assert counts.records_read == (
        counts.reports + counts.records_skipped + counts.records_with_candidates
    )
    assert (counts.records_skipped, counts.records_with_candidates) == (
        again["records_skipped"],
        again["records_with_candidates"],
    )
    assert counts.candidates == again["candidates"] == report["candidates"]
    assert counts.candidates == counts.emitted + counts.unchanged + counts.candidates_skipped
    assert counts.emitted + counts.unchanged == again["tasks"] == counts.proven + counts.unverified
    assert sum(report["skipped"].values()) == counts.records_skipped + counts.candidates_skipped
    headline = (
        f"sessions: {counts.records_read} records read → {counts.candidates} candidates → "
        f"{counts.emitted} emitted, {counts.unchanged} unchanged, "
        f"{counts.candidates_skipped} skipped"
    )
    assert headline in printed.splitlines()
    for reason, n in counts.candidates_skipped_by_reason.items():
        assert f"{reason} {n}" in printed
    return counts


def test_the_bundled_examples_add_up_and_keep_the_complete_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, printed = mine(SESSIONS_DIR, tmp_path / "out", capsys)
    counts = assert_adds_up(report, printed)
    assert counts.records_with_candidates < counts.candidates  # several per record
    assert counts.proven == 0 and counts.unverified == counts.emitted  # --no-validate
    records = {r["record_id"]: r for r in report["records"]}
    cut = records["claude_code/textstats-truncated.jsonl"]
    assert cut["reasons"] == ["format.truncated"] and not cut["tasks"]
    assert [s["stage"] for s in cut["skips"]] == ["record"]
    assert "build.no-passing-tests" not in counts.records_skipped_by_reason
    complete = records["claude_code/textstats.jsonl"]
    assert any(t.startswith("build-") for t in complete["tasks"])
    assert "novel.duplicate" not in complete["reasons"]

    again, printed = mine(SESSIONS_DIR, tmp_path / "out", capsys)
    rerun = assert_adds_up(again, printed)
    assert (rerun.emitted, rerun.unchanged) == (0, counts.emitted)


def test_a_crafted_folder_counts_every_record_and_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four records: a task, its byte-for-byte copy (a duplicate candidate), a file no
    reader takes and a session cut mid-line that sorts before its complete copy."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(SESSIONS_DIR / "opencode" / "roman.json", folder / "roman.json")
    shutil.copy(SESSIONS_DIR / "opencode" / "roman.json", folder / "roman-again.json")
    (folder / "notes.txt").write_text("not a session\n")
    whole = (SESSIONS_DIR / "claude_code" / "textstats.jsonl").read_bytes()
    (folder / "a-cut.jsonl").write_bytes(whole[: len(whole) // 2])
    shutil.copy(SESSIONS_DIR / "claude_code" / "textstats.jsonl", folder / "textstats.jsonl")
    report, printed = mine(folder, tmp_path / "out", capsys)
    counts = assert_adds_up(report, printed)
    assert counts.records_read == 5
    assert counts.records_skipped_by_reason == {
        "format.truncated": 1,
        "format.unsupported-file": 1,
    }
    assert counts.records_with_candidates == 3
    assert counts.candidates_skipped_by_reason["novel.duplicate"] == 1
    by_record = {r["record_id"]: r for r in report["records"]}
    assert by_record["a-cut.jsonl"]["reasons"] == ["format.truncated"]
    assert any(t.startswith("build-") for t in by_record["textstats.jsonl"]["tasks"])
    assert [line for line in printed.splitlines() if "records:" in line] == [
        "  records: 5 read = 3 gave candidates + 2 skipped whole "
        "(format.truncated 1, format.unsupported-file 1) + 0 run reports"
    ]


def test_counts_that_do_not_add_up_are_named() -> None:
    wrong = YieldCounts(
        records_read=3, reports=0, records_skipped=1, records_skipped_by_reason={"x": 1},
        records_with_candidates=1, records_without_outcome=1, candidates=4, emitted=2,
        unchanged=0, candidates_skipped=1, candidates_skipped_by_reason={"y": 1}, proven=0,
        unverified=2, by_status={"unverified": 2},
    )  # fmt: skip
    assert [m.split(":")[0] for m in wrong.mismatches()] == ["records", "candidates"]


def test_a_report_without_events_prints_zeros_that_add_up() -> None:
    from repo2rlenv.emit import YieldReport

    lines = YieldReport(pipeline="sessions").summary()
    assert lines[0] == "sessions: 0 records read → 0 candidates → 0 emitted, 0 unchanged, 0 skipped"
    assert not any("do not add up" in line for line in lines)


def test_task_ids_are_the_same_from_a_file_its_folder_or_the_whole_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    everything, _ = mine(SESSIONS_DIR, tmp_path / "all", capsys)
    folder, _ = mine(SESSIONS_DIR / "claude_code", tmp_path / "folder", capsys)
    ids = {r["record_id"]: r["tasks"] for r in everything["records"]}
    for record in folder["records"]:
        assert record["tasks"] == ids[f"claude_code/{record['record_id']}"]
    for rel in ("claude_code/textstats.jsonl", "opencode/roman.json", "pi/stock.jsonl"):
        single, _ = mine(SESSIONS_DIR / rel, tmp_path / rel.replace("/", "-"), capsys)
        (record,) = single["records"]
        assert record["tasks"] and record["tasks"] == ids[rel]


def test_a_damaged_copy_that_sorts_first_loses_to_the_complete_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy of a session with a line that does not parse in the middle (read on,
    marked truncated) gives the same tasks as the complete session; it sorts first, yet
    the complete one keeps them, and the damaged copy's are duplicates naming it."""
    folder = tmp_path / "in"
    folder.mkdir()
    lines = (SESSIONS_DIR / "claude_code" / "textstats.jsonl").read_bytes().splitlines(True)
    damaged = [*lines[:3], b'{"type": "user", "message": {"role": "us\n', *lines[3:]]
    (folder / "a-damaged.jsonl").write_bytes(b"".join(damaged))
    shutil.copy(SESSIONS_DIR / "claude_code" / "textstats.jsonl", folder / "b-complete.jsonl")
    report, printed = mine(folder, tmp_path / "out", capsys)
    assert_adds_up(report, printed)
    by_record = {r["record_id"]: r for r in report["records"]}
    complete, copy = by_record["b-complete.jsonl"], by_record["a-damaged.jsonl"]
    assert complete["tasks"] and "novel.duplicate" not in complete["reasons"]
    assert not copy["tasks"]
    duplicates = [s for s in copy["skips"] if s["reason"] == "novel.duplicate"]
    assert len(duplicates) == len(complete["tasks"])
    for skip, task in zip(duplicates, complete["tasks"], strict=True):
        assert f"repeats {task}, kept from b-complete.jsonl" in skip["detail"]

    # With no complete copy the damaged session still gives its tasks (held, not lost),
    # and its two copies keep the first in input order.
    (folder / "b-complete.jsonl").unlink()
    shutil.copy(folder / "a-damaged.jsonl", folder / "c-damaged.jsonl")
    alone, printed = mine(folder, tmp_path / "alone", capsys)
    assert_adds_up(alone, printed)
    by_record = {r["record_id"]: r for r in alone["records"]}
    kinds = [task.split("-")[0] for task in complete["tasks"]]
    assert [task.split("-")[0] for task in by_record["a-damaged.jsonl"]["tasks"]] == kinds
    second = by_record["c-damaged.jsonl"]
    again = [s for s in second["skips"] if s["reason"] == "novel.duplicate"]
    assert not second["tasks"] and len(again) == len(kinds)
    assert all("kept from a-damaged.jsonl" in s["detail"] for s in again)
