"""The garbage task issue 17 found in a real Windows session: its instruction was a
compaction summary, its one workspace file was named `C:/Users/<user>/.../.env` and held
the error of a failed `cat`, and its answer was a word of that error. Excerpt written in
the shape of that export (OpenAI messages, no exit codes)."""

from __future__ import annotations

import json
from pathlib import Path

from repo2rlenv.cli import main
from repo2rlenv.formats import read_record
from repo2rlenv.replay import replay

ROOT = "C:/Users/maria/Documents/shop"
SUMMARY = (
    "This session is being continued from a previous conversation that ran out of "
    "context. The conversation is summarized below:\n" + "Analysis: ...\n" * 400
)


def _export(first_user: str) -> dict:
    cat = f"cat {ROOT}/.env"
    error = f"cat: {ROOT}/.env: No such file or directory"
    return {
        "format": "openai-chat",
        "messages": [
            {"role": "user", "content": first_user},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": cat})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": error},
            {"role": "assistant", "content": "There is 1 problem: the .env file is missing."},
        ],
    }


def test_the_summary_is_no_request_and_the_session_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / "export.json").write_text(json.dumps(_export(SUMMARY)))
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--no-validate", "--dataset", str(folder)]
    assert main([*args, "--out", str(tmp_path / "out"), "--json", str(report)]) == 0
    result = json.loads(report.read_text())
    assert result["emitted"] == 0
    assert result["skipped"] == {"parsed.compacted": 1}


def test_the_failed_cat_of_a_windows_path_names_and_reads_nothing() -> None:
    parsed = read_record(_export("How many problems does the .env file have?"), "export.json")
    replayed = replay(parsed)
    assert replayed.workspace.files == {}
