"""A compacted session replays from its last compaction: the earlier file knowledge is
dropped, the summary is never a request, and the first real request after it can be.
Excerpts written in the shape of real Claude Code, pi, Codex and summary-message files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repo2rlenv.cli import main
from repo2rlenv.formats import read_record
from repo2rlenv.formats.base import WriteFile
from repo2rlenv.replay import replay

SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
    "1. Primary Request and Intent: write calc.py with add and mul, with tests."
)
OLD_CALC = "def add(a, b):\n    return a + b\n"
CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)


# -- Claude Code ------------------------------------------------------------------------
def _claude_line(uuid: str, parent: str | None, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s1",
        "cwd": "/Users/ana/calc",
        "version": "2.1.90",
        "timestamp": f"2026-04-26T10:00:{len(uuid):02d}Z",
        **fields,
    }


def _claude(after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    write = {"file_path": "/Users/ana/calc/calc.py", "content": OLD_CALC}
    lines = [
        _claude_line("u1", None, "user", message={"role": "user", "content": "write calc.py"}),
        _claude_line(
            "a1",
            "u1",
            "assistant",
            message={
                "id": "m1",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": write}],
            },
        ),
        _claude_line(
            "r1",
            "a1",
            "user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
        ),
        # the real shape: the boundary starts a new root, linked only logically
        _claude_line(
            "b1",
            None,
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            logicalParentUuid="r1",
            compactMetadata={"trigger": "manual", "preTokens": 167766},
        ),
        _claude_line(
            "s1",
            "b1",
            "user",
            isCompactSummary=True,
            message={"role": "user", "content": SUMMARY},
        ),
        _claude_line(
            "c1",
            "s1",
            "user",
            message={
                "role": "user",
                "content": "<command-name>/compact</command-name>\n"
                "<command-message>compact</command-message>\n<command-args></command-args>",
            },
        ),
    ]
    return lines + after


def _claude_edit(parent: str) -> list[dict[str, Any]]:
    edit = {"file_path": "/Users/ana/calc/calc.py", "old_string": "a + b", "new_string": "a+b"}
    return [
        _claude_line(
            "a2",
            parent,
            "assistant",
            message={
                "id": "m2",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t2", "name": "Edit", "input": edit}],
            },
        ),
        _claude_line(
            "r2",
            "a2",
            "user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "edited"}],
            },
        ),
    ]


def test_claude_code_replays_from_the_boundary_with_the_first_typed_request() -> None:
    notice = "<task-notification>\n<task-id>b1</task-id>\n<summary>Monitor event</summary>"
    note = _claude_line("n1", "c1", "user", message={"role": "user", "content": notice})
    ask = _claude_line("q1", "n1", "user", message={"role": "user", "content": "tidy calc.py"})
    parsed = read_record(_claude([note, ask, *_claude_edit("q1")]), "claude.jsonl")
    assert parsed.compacted and parsed.dropped_events == 2  # the first request and the Write
    assert [t.text for t in parsed.user_turns] == ["tidy calc.py"]  # not the summary or /compact
    assert not any(isinstance(a, WriteFile) for a in parsed.actions)
    state = replay(parsed).workspace.latest("calc.py")
    assert state.status == "partial"  # the Write before the compaction is no longer known


def test_claude_code_compaction_with_nothing_typed_after_it_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / "s.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in _claude(_claude_edit("c1")))
    )
    result = _mine(folder, tmp_path)
    assert result["skipped"] == {"parsed.compacted": 1}


# -- pi ---------------------------------------------------------------------------------
class _Pi:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": "p1", "cwd": "/home/ana/calc"}
        ]
        self.calls = 0

    def add(self, entry: dict[str, Any]) -> None:
        entry = {"id": f"e{len(self.lines)}", "parentId": self.lines[-1].get("id"), **entry}
        if len(self.lines) == 1:
            entry["parentId"] = None
        entry["timestamp"] = f"2026-05-01T10:{len(self.lines):02d}:00Z"
        self.lines.append(entry)

    def user(self, text: str) -> None:
        content = [{"type": "text", "text": text}]
        self.add({"type": "message", "message": {"role": "user", "content": content}})

    def tool(self, name: str, args: dict[str, Any], text: str, error: bool = False) -> None:
        self.calls += 1
        call_id = f"call_{self.calls}"
        call = {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
        self.add({"type": "message", "message": {"role": "assistant", "content": [call]}})
        result = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": error,
        }
        self.add({"type": "message", "message": result})

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)


def _pi_session(read_after: bool) -> str:
    pi = _Pi()
    pi.user("Create calc.py with add and mul, and tests for them.")
    pi.tool("write", {"path": "/home/ana/calc/calc.py", "content": CALC}, "Successfully wrote")
    pi.tool("write", {"path": "/home/ana/calc/test_calc.py", "content": TESTS}, "Successfully")
    pi.add(
        {
            "type": "compaction",
            "summary": "The user asked for calc.py with add and mul, and tests.",
            "firstKeptEntryId": "e1",
            "tokensBefore": 120000,
        }
    )
    pi.user("mul gives wrong answers: run the tests and fix it.")
    if read_after:
        pi.tool("read", {"path": "/home/ana/calc/calc.py"}, CALC)
        pi.tool("read", {"path": "/home/ana/calc/test_calc.py"}, TESTS)
    failed = "F.\nFAILED test_calc.py::test_mul\n1 failed, 1 passed in 0.02s"
    pi.tool("bash", {"command": "python -m pytest -q"}, failed + "\n\nCommand exited with code 1")
    pi.tool("write", {"path": "/home/ana/calc/calc.py", "content": FIXED}, "Successfully wrote")
    pi.tool("bash", {"command": "python -m pytest -q"}, "..\n2 passed in 0.01s")
    return pi.text()


def _mine(folder: Path, tmp_path: Path) -> dict[str, Any]:
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--no-validate", "--dataset", str(folder), "--out"]
    assert main([*args, str(tmp_path / "out"), "--json", str(report)]) == 0
    return json.loads(report.read_text())


def test_pi_task_after_a_compaction_starts_from_what_was_read_after_it(tmp_path: Path) -> None:
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / "session.jsonl").write_text(_pi_session(read_after=True))
    result = _mine(folder, tmp_path)
    assert result["emitted_by_kind"].get("repair") == 1
    assert "parsed.compacted" not in result["skipped"]
    assert "build.compacted-start" in result["skipped"]  # the folder was not empty then
    task = next((tmp_path / "out" / "repair").iterdir())
    start = task / "environment" / "workspace"
    assert (start / "calc.py").read_text() == CALC
    instruction = (task / "instruction.md").read_text()
    assert "Primary Request" not in instruction and "summary" not in instruction.lower()


def test_pi_knowledge_from_before_the_compaction_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / "session.jsonl").write_text(_pi_session(read_after=False))
    parsed = read_record(
        [json.loads(x) for x in _pi_session(read_after=False).splitlines()], "s.jsonl"
    )
    assert [t.text for t in parsed.user_turns] == [
        "mul gives wrong answers: run the tests and fix it."
    ]
    replayed = replay(parsed)
    assert replayed.workspace.before("test_calc.py", replayed.events).status == "unknown"
    result = _mine(folder, tmp_path)
    assert result["emitted"] == 0
    assert "reconstructable.tests-unknown" in result["skipped"]


# -- Codex ------------------------------------------------------------------------------
def _codex(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-05-01T10:00:00.000Z", "type": kind, "payload": payload}


def test_codex_compacted_item_cuts_the_history() -> None:
    patch = "*** Begin Patch\n*** Add File: calc.py\n+def add(a, b):\n+    return a + b\n"
    patch += "*** End Patch"
    cat = json.dumps({"command": ["bash", "-lc", "cat calc.py"], "workdir": "/home/ana/calc"})
    lines = [
        _codex("session_meta", {"id": "c1", "cwd": "/home/ana/calc", "cli_version": "0.130.0"}),
        _codex("event_msg", {"type": "user_message", "message": "write calc.py"}),
        _codex(
            "response_item",
            {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": patch},
        ),
        _codex("response_item", {"type": "custom_tool_call_output", "call_id": "p1", "output": ""}),
        _codex("compacted", {"message": "", "replacement_history": []}),
        _codex("event_msg", {"type": "context_compacted"}),
        _codex("event_msg", {"type": "user_message", "message": "show me calc.py"}),
        _codex(
            "response_item",
            {"type": "function_call", "call_id": "x1", "name": "shell", "arguments": cat},
        ),
        _codex(
            "response_item",
            {"type": "function_call_output", "call_id": "x1", "output": OLD_CALC},
        ),
    ]
    parsed = read_record(lines, "rollout.jsonl")
    assert parsed.compacted and [t.text for t in parsed.user_turns] == ["show me calc.py"]
    assert [a.kind for a in parsed.actions] == ["command"]
    state = replay(parsed).workspace.files["calc.py"]
    assert state.initial.status == "known"  # known from the read after the cut, not the patch


# -- a summary sent as a message, in any format -------------------------------------------
def test_a_summary_message_drops_what_came_before_it() -> None:
    def bash(call_id: str, command: str) -> dict[str, Any]:
        args = json.dumps({"command": command})
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": args}}
            ],
        }

    record = {
        "format": "openai-chat",
        "messages": [
            {"role": "user", "content": "make notes.txt"},
            bash("t1", "echo hi > notes.txt"),
            {"role": "tool", "tool_call_id": "t1", "content": ""},
            {"role": "user", "content": SUMMARY},
            {"role": "user", "content": "append a line to notes.txt"},
            bash("t2", "echo more >> notes.txt"),
            {"role": "tool", "tool_call_id": "t2", "content": ""},
        ],
    }
    parsed = read_record(record, "export.json")
    assert parsed.compacted and parsed.dropped_events == 2
    assert [t.text for t in parsed.user_turns] == ["append a line to notes.txt"]
    assert replay(parsed).workspace.latest("notes.txt").status == "partial"


def test_terminus_handoff_answers_are_a_summary_not_a_request() -> None:
    """terminus-2 hands over with the previous agent's answers about the earlier work."""
    steps = [
        {"step_id": 1, "source": "user", "message": "Create hello.txt"},
        {"step_id": 2, "source": "system", "message": "Performed context summarization."},
        {
            "step_id": 3,
            "source": "user",
            "message": "Here are the answers the other agent provided.\n\n1. test_dir exists\n\n"
            "Continue working on this task from where the previous agent left off.",
        },
    ]
    record = {
        "schema_version": "ATIF-v1.5",
        "session_id": "t",
        "agent": {"name": "terminus-2", "version": "2.0.0"},
        "steps": steps,
    }
    parsed = read_record(record, "trajectory.json")
    assert parsed.compacted and parsed.user_turns == []


def test_a_bare_continue_after_a_compaction_is_no_request() -> None:
    pi = _Pi()
    pi.user("Create calc.py.")
    pi.add({"type": "compaction", "summary": "Wrote calc.py.", "tokensBefore": 9000})
    pi.user("continue")
    pi.tool("bash", {"command": "ls"}, "calc.py")
    pi.user("Now add a README.")
    pi.user("continue")  # a later one is an ordinary message again
    parsed = read_record([json.loads(x) for x in pi.text().splitlines()], "s.jsonl")
    assert [t.text for t in parsed.user_turns] == ["Now add a README.", "continue"]
