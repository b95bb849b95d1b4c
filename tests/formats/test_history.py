"""Compaction summaries in any format, harness-cut output, and failed reads."""

from __future__ import annotations

import pytest

from repo2rlenv.formats import read_record
from repo2rlenv.formats.calls import Call, ToolResult
from repo2rlenv.formats.history import harness_cut, is_compaction_summary
from repo2rlenv.formats.mappers import read_with
from repo2rlenv.formats.readview import pi_read
from repo2rlenv.replay import replay
from tests.mining.factory import SessionBuilder

SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\nAnalysis: the user asked to fix parser.py ..."
)


def test_a_summary_sent_as_a_user_message_compacts_and_is_no_request() -> None:
    record = {
        "format": "openai-chat",
        "messages": [
            {"role": "user", "content": SUMMARY},
            {"role": "assistant", "content": "Continuing with the parser."},
            {"role": "user", "content": "now run the tests"},
        ],
    }
    parsed = read_record(record, "export.json")
    assert parsed.compacted
    assert [t.text for t in parsed.user_turns] == ["now run the tests"]
    assert parsed.trajectory.steps[0].source == "system"


def test_claude_code_summary_line_without_its_flag_still_compacts() -> None:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s",
            "message": {"role": "user", "content": SUMMARY},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "sessionId": "s",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
            },
        },
    ]
    parsed = read_record(lines, "claude.jsonl")
    assert parsed.compacted and parsed.user_turns == []


@pytest.mark.parametrize(
    "text",
    [
        "line 1\n[... 4213 characters elided ...]\nline 90",
        "<elided_chars>\n3000 characters elided\n</elided_chars>",
        "a\nb\n[Output truncated: 120 more lines]",
        "Total output lines: 812\n\nfoo",
        "A\nB\n[OUTPUT TRUNCATED: 120 more lines]",  # case-insensitive, ASCII
        # Non-ASCII text, where the pattern's case-insensitivity also folds the long s
        # (`ſ`) to `s` and `K` (Kelvin) to `k`: a lower()-only shortcut would miss these.
        "Total output lineſ: 812\n\nfoo",
        "naïve\n[... 12 LINES OMITTED]",
    ],
)
def test_harness_cuts_are_recognised(text: str) -> None:
    assert harness_cut(text)


def test_ordinary_text_is_neither_cut_nor_summary() -> None:
    text = "def truncate(s):\n    return s[:10]\n"
    assert not harness_cut(text) and not is_compaction_summary(text)
    assert not is_compaction_summary("Please continue the session from yesterday")


def test_a_read_the_harness_cut_is_partial() -> None:
    shown = "import os\n[... 4213 characters elided ...]\nprint(os.name)"
    call = Call(1, "c1", "read", {"path": "/w/a.py"}, ToolResult(text=shown))
    action = read_with(pi_read)(call)
    assert action.content == shown and not action.complete


def _cat(output: str):
    session = SessionBuilder().user("what is in .env?").run("cat .env", output, None).build()
    return replay(session).workspace.files.get(".env")


def test_cat_without_exit_code_reads_its_output_but_not_its_error_or_a_cut() -> None:
    seen = _cat("DEBUG=1\n")
    assert seen is not None and seen.observations == [(1, "DEBUG=1\n")]
    for output in (
        "cat: .env: No such file or directory",
        "A=1\n[... 900 characters elided ...]\nZ=2",
    ):
        history = _cat(output)
        assert history is None or history.observations == [], output
