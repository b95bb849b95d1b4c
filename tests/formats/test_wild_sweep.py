"""Defects found by the second sweep over real published sessions (docs/real-sessions.md,
"Second sweep"). Each test uses a short excerpt written in the shape of the real file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repo2rlenv.cli import main
from repo2rlenv.formats import FormatError, ReadFile, RunCommand, read_record
from repo2rlenv.formats.framing import codex_output

PYTEST_FAIL = "1 failed, 1 passed in 0.16s"
PYTEST_PASS = "2 passed in 0.06s"


def _harbor_claude_step(
    step_id: int, call_id: str, name: str, args: dict, content: str, meta: dict[str, Any]
) -> dict[str, Any]:
    """One step as Harbor's Claude Code converter writes it: the tool's raw result and
    Claude Code's `toolUseResult` go to `extra.tool_result_metadata`, and the observation
    text is the shown result with `[stdout]` / `[metadata]` / `[error]` sections added."""
    return {
        "step_id": step_id,
        "source": "agent",
        "message": f"Executed {name} {call_id}",
        "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": args}],
        "observation": {"results": [{"source_call_id": call_id, "content": content}]},
        "extra": {
            "cwd": "/workspace",
            "is_sidechain": False,
            "tool_use_name": name,
            "tool_result_metadata": meta,
        },
    }


def _harbor_claude_atif() -> dict[str, Any]:
    source = "def add(a, b):\n    return a - b\n"
    failed = f"Exit code 1\n===== FAILURES =====\n{PYTEST_FAIL}"
    return {
        "schema_version": "ATIF-v1.2",
        "session_id": "s",
        "agent": {"name": "claude-code", "version": "2.0.46", "model_name": "m"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Fix add() in calc.py."},
            _harbor_claude_step(
                2,
                "t1",
                "Read",
                {"file_path": "/workspace/calc.py"},
                "     1→def add(a, b):\n     2→    return a - b\n\n[metadata] "
                + json.dumps({"type": "text", "file": {"filePath": "/workspace/calc.py"}}),
                {
                    "tool_use_result": {
                        "type": "text",
                        "file": {
                            "filePath": "/workspace/calc.py",
                            "content": source,
                            "numLines": 3,
                            "startLine": 1,
                            "totalLines": 3,
                        },
                    }
                },
            ),
            _harbor_claude_step(
                3,
                "t2",
                "Bash",
                {"command": "python -m pytest -q"},
                f"{failed}\n\n[error] tool reported failure",
                {
                    "is_error": True,
                    "raw_tool_result": {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "content": failed,
                        "is_error": True,
                    },
                },
            ),
            _harbor_claude_step(
                4,
                "t3",
                "Bash",
                {"command": "python -m pytest -q"},
                f"{PYTEST_PASS}\n\n[stdout]\n{PYTEST_PASS}",
                {
                    "tool_use_result": {
                        "stdout": PYTEST_PASS,
                        "stderr": "",
                        "interrupted": False,
                        "isImage": False,
                    }
                },
            ),
        ],
    }


def test_harbor_claude_code_atif_reads_status_and_reads_from_tool_result_metadata() -> None:
    """Harbor's Claude Code ATIF keeps Claude Code's own result record beside each step:
    a failed Bash call is `is_error` with an "Exit code N" banner, a passing one has its
    stdout, a Read its whole file. Ignored, every status was unknown and every read
    partial, so no fail->pass was ever seen in these runs."""
    session = read_record(_harbor_claude_atif(), "harbor-claude")
    read, failed, passed = session.actions
    assert isinstance(read, ReadFile) and read.complete
    assert read.content.rstrip("\n") == "def add(a, b):\n    return a - b"
    assert isinstance(failed, RunCommand) and not failed.ok and failed.exit_code == 1
    assert "[error] tool reported failure" not in (failed.output or "")
    assert isinstance(passed, RunCommand) and passed.ok and passed.exit_code == 0
    assert passed.output == PYTEST_PASS  # no "[stdout]" copy of the same text


def test_harbor_claude_code_atif_takes_the_session_root_from_extra() -> None:
    """The converter records the working folder only in `extra` (`agent.extra.cwds`, each
    step's `extra.cwd`). Without it the root was unknown, every `/workspace/...` edit fell
    outside the workspace, and a real fail->pass around a code fix read as
    `repair.no-change`."""
    record = _harbor_claude_atif()
    assert read_record(record, "steps").cwd == "/workspace"
    record["agent"]["extra"] = {"cwds": ["/app"]}
    for step in record["steps"]:
        step.pop("extra", None)
    assert read_record(record, "agent").cwd == "/app"
    record["agent"]["extra"] = {"cwds": ["/app", "/srv"]}  # two roots: none is the root
    assert read_record(record, "ambiguous").cwd is None


def _subagent_lines() -> list[dict[str, Any]]:
    """A Claude Code sub-agent transcript (`projects/<p>/agent-<id>.jsonl`, 2.0.x): every
    line is `isSidechain`, and it opens with the sub-agent's own reply; the prompt it
    answers came from the parent agent's Task call."""
    base = {"isSidechain": True, "cwd": "/workspace", "sessionId": "s", "agentId": "a1"}
    return [
        {
            **base,
            "type": "assistant",
            "uuid": "1",
            "parentUuid": None,
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "2",
            "parentUuid": "1",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "app.py"}],
            },
        },
    ]


def test_claude_subagent_transcript_has_its_own_reason() -> None:
    """It was `format.no-messages` ("no user or agent turn"), which is false: it holds
    agent turns, but none of them answers a person, so it can give no task."""
    with pytest.raises(FormatError) as caught:
        read_record(_subagent_lines(), "agent-a1.jsonl")
    assert caught.value.reason == "format.subagent-transcript"


def test_a_reader_refusal_is_counted_under_the_format_detected(tmp_path: Path) -> None:
    """A record the reader refused was counted under format `unknown` although its
    format was detected: the yield table then blamed detection."""
    folder = tmp_path / "wild"
    folder.mkdir()
    lines = _subagent_lines()
    (folder / "agent-a1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--no-validate", "--dataset", str(folder), "--out", str(tmp_path / "o")]
    assert main([*args, "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["skipped_by_format"] == {"claude-code": 1}


def test_codex_desktop_output_header_with_command_line() -> None:
    """Codex Desktop (0.118) opens each exec_command output with a `Command: ...` line
    before `Chunk ID` / `Wall time` / `Process exited with code N`. The header was not
    recognised: no exit status, and the header text was taken as output, so `cat F`
    would have put "Command: /bin/zsh -lc ..." into the file's content."""
    header = (
        "Command: /bin/zsh -lc 'cat app.py'\nChunk ID: 5853d5\nWall time: 0.0000 seconds\n"
        "Process exited with code {code}\nOriginal token count: 9\nOutput:\n"
    )
    assert codex_output(header.format(code=0) + "x = 1\n") == ("x = 1\n", 0)
    assert codex_output(header.format(code=2) + "boom\n") == ("boom\n", 2)
    # a command over several lines (a heredoc) keeps its header recognised
    multi = "Command: /bin/zsh -lc \"cat <<'EOF' > a.py\nx = 1\nEOF\"\n" + header.split("\n", 1)[1]
    assert codex_output(multi.format(code=0)) == ("", 0)
    # output that merely starts with the word is output, not a header
    assert codex_output("Command: not found\n") == ("Command: not found\n", None)


def _stream_json_lines() -> list[dict[str, Any]]:
    """Gemini CLI's `--output-format stream-json` log (a run committed as
    transcript.jsonl): chat-shaped `message` lines between tool events that carry no
    role."""
    return [
        {"type": "init", "session_id": "s", "model": "m"},
        {"type": "message", "role": "user", "content": "Build the landing page."},
        {
            "type": "tool_use",
            "tool_name": "run_shell_command",
            "tool_id": "t1",
            "parameters": {"command": "npm test"},
        },
        {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "ok"},
        {"type": "message", "role": "assistant", "content": "Done.", "delta": True},
        {"type": "result", "status": "success", "stats": {"tool_calls": 1}},
    ]


def test_tool_events_of_an_unknown_harness_are_not_a_chat_without_tools() -> None:
    """The `message` lines made the file look like OpenAI messages; its 68 tool calls
    were dropped without a word and the skip said `parsed.no-tool-calls`, which is
    false. A chat file whose other lines are tool events no reader knows is not
    recognised, and the skip names the event types it saw."""
    with pytest.raises(FormatError) as caught:
        read_record(_stream_json_lines(), "transcript.jsonl")
    assert caught.value.reason == "format.unknown"
    assert "tool_use" in str(caught.value) and "tool_result" in str(caught.value)
