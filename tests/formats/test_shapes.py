"""Shapes the real samples do not show but the formats allow: branches, compaction,
patches through the shell, legacy layouts, orphan results. Each record is hand-written
from the format description (design/FORMATS.md) and kept minimal."""

from __future__ import annotations

import json
from typing import Any

import pytest

from repo2rlenv.formats import (
    ApplyPatch,
    EditFile,
    OtherTool,
    ReadFile,
    RunCommand,
    UnifiedDiff,
    detect_format,
    read_record,
)

PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"


# -- pi -------------------------------------------------------------------------------
def _pi(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "session", "version": 3, "id": "s", "cwd": "/w"}, *entries]


def _msg(eid: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "message": message}


def test_pi_tree_keeps_only_the_branch_of_the_last_entry() -> None:
    record = _pi(
        [
            _msg("u1", None, {"role": "user", "content": "first try"}),
            _msg(
                "a1",
                "u1",
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": "t1",
                            "name": "write",
                            "arguments": {"path": "a.txt", "content": "abandoned"},
                        }
                    ],
                },
            ),
            _msg(
                "r1",
                "a1",
                {
                    "role": "toolResult",
                    "toolCallId": "t1",
                    "isError": False,
                    "content": [{"type": "text", "text": "ok"}],
                },
            ),
            _msg("u2", None, {"role": "user", "content": "second try"}),
            _msg(
                "a2",
                "u2",
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": "t2",
                            "name": "write",
                            "arguments": {"path": "a.txt", "content": "kept"},
                        }
                    ],
                },
            ),
            _msg(
                "r2",
                "a2",
                {
                    "role": "toolResult",
                    "toolCallId": "t2",
                    "isError": False,
                    "content": [{"type": "text", "text": "ok"}],
                },
            ),
        ]
    )
    parsed = read_record(record, "tree")
    assert [t.text for t in parsed.user_turns] == ["second try"]
    assert [(a.path, a.content) for a in parsed.actions] == [("a.txt", "kept")]


def test_pi_compaction_and_user_shell_commands() -> None:
    record = _pi(
        [
            {"type": "compaction", "id": "c", "parentId": None, "summary": "earlier work"},
            _msg("u", "c", {"role": "user", "content": "go on"}),
            _msg(
                "b",
                "u",
                {
                    "role": "bashExecution",
                    "command": "make",
                    "output": "done",
                    "exitCode": 2,
                    "cancelled": False,
                },
            ),
            _msg(
                "a",
                "b",
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": "t",
                            "name": "bash",
                            "arguments": {"command": "sleep 9"},
                        }
                    ],
                },
            ),
            _msg(
                "r",
                "a",
                {
                    "role": "toolResult",
                    "toolCallId": "t",
                    "isError": True,
                    "content": [{"type": "text", "text": "partial\n\nCommand aborted"}],
                },
            ),
        ]
    )
    parsed = read_record(record, "pi")
    assert parsed.compacted
    user_run, aborted = parsed.actions
    assert isinstance(user_run, RunCommand) and (user_run.command, user_run.exit_code) == (
        "make",
        2,
    )
    assert not user_run.ok
    assert isinstance(aborted, RunCommand) and aborted.exit_code is None and not aborted.ok


# -- Claude Code ----------------------------------------------------------------------
def _claude(*entries: dict[str, Any]) -> list[dict[str, Any]]:
    out, parent = [], None
    for index, entry in enumerate(entries):
        uuid = f"u{index}"
        out.append({"uuid": uuid, "parentUuid": parent, "sessionId": "s", "cwd": "/w", **entry})
        parent = uuid
    return out


def _use(tid: str, name: str, args: dict[str, Any], mid: str = "m1") -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {
            "id": mid,
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}],
        },
    }


def _answer(tid: str, content: Any, structured: Any = None, error: bool = False) -> dict:
    entry = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": error}
            ],
        },
    }
    if structured is not None:
        entry["toolUseResult"] = structured
    return entry


def test_claude_read_from_text_strips_gutter_and_banners() -> None:
    shown = (
        "     1→alpha\n     2→beta\n\n<system-reminder>\nWhenever you read a file...\n"
        "</system-reminder>\n"
    )
    record = _claude(
        {"type": "user", "message": {"role": "user", "content": "look"}},
        _use("r1", "Read", {"file_path": "/w/a.py"}),
        _answer("r1", shown),
        _use("r2", "Read", {"file_path": "/w/b.py", "offset": 10}, mid="m2"),
        _answer("r2", "    10\tx\n    11\ty"),
        _use("r3", "Read", {"file_path": "/w/empty.py"}, mid="m3"),
        _answer(
            "r3",
            "<system-reminder>Warning: the file exists but the contents are empty."
            "</system-reminder>",
        ),
    )
    whole, window, empty = read_record(record, "c").actions
    assert isinstance(whole, ReadFile) and whole.content == "alpha\nbeta" and whole.complete
    assert window.content == "x\ny" and not window.complete
    assert empty.content == "" and empty.complete


def test_claude_multiedit_replace_all_interrupts_and_sidechains() -> None:
    edits = [
        {"old_string": "a", "new_string": "b", "replace_all": True},
        {"old_string": "c", "new_string": "d"},
    ]
    record = _claude(
        {"type": "user", "isCompactSummary": True, "message": {"content": "summary"}},
        {"type": "user", "message": {"role": "user", "content": "edit"}},
        _use("e", "MultiEdit", {"file_path": "f.py", "edits": edits}),
        _answer("e", "ok"),
        _use("b", "Bash", {"command": "sleep 100"}, mid="m2"),
        _answer("b", "", {"stdout": "", "stderr": "", "interrupted": True}),
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
            },
        },
        {
            "type": "assistant",
            "isSidechain": True,
            "message": {
                "id": "side",
                "content": [
                    {"type": "tool_use", "id": "s", "name": "Write", "input": {"file_path": "x"}}
                ],
            },
        },
    )
    parsed = read_record(record, "c")
    edit, bash = parsed.actions
    assert isinstance(edit, EditFile) and [(e.old, e.new, e.replace_all) for e in edit.edits] == [
        ("a", "b", True),
        ("c", "d", False),
    ]
    assert isinstance(bash, RunCommand) and not bash.ok
    assert [t.text for t in parsed.user_turns] == ["edit"]
    assert parsed.compacted


# -- Codex ----------------------------------------------------------------------------
def _codex(*payloads: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    head = {"type": "session_meta", "payload": {"id": "s", "cwd": "/repo", "cli_version": "1"}}
    return [head] + [{"type": kind, "payload": payload} for kind, payload in payloads]


def _fc(cid: str, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "response_item", {
        "type": "function_call",
        "name": name,
        "call_id": cid,
        "arguments": json.dumps(args),
    }


def _out(cid: str, output: str) -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "function_call_output", "call_id": cid, "output": output}


def test_codex_patch_through_the_shell_and_changes_map() -> None:
    change = {"/repo/n.txt": {"type": "add", "content": "one\ntwo\n"}}
    record = _codex(
        ("event_msg", {"type": "user_message", "message": "add files"}),
        _fc("p1", "exec_command", {"cmd": f"apply_patch <<'EOF'\n{PATCH}EOF\n"}),
        ("event_msg", {"type": "patch_apply_end", "call_id": "p1", "success": True, "changes": {}}),
        _out("p1", "Exit code: 0\nOutput:\nSuccess."),
        _fc("p2", "shell", {"command": ["apply_patch"]}),
        (
            "event_msg",
            {"type": "patch_apply_end", "call_id": "p2", "success": True, "changes": change},
        ),
        _out("p2", json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})),
        (
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p3", "input": PATCH},
        ),
        (
            "response_item",
            {"type": "custom_tool_call_output", "call_id": "p3", "output": "aborted"},
        ),
    )
    shell_patch, from_changes, aborted = read_record(record, "x").actions
    assert isinstance(shell_patch, ApplyPatch) and shell_patch.patch == PATCH and shell_patch.ok
    assert isinstance(from_changes, UnifiedDiff) and from_changes.ok
    assert from_changes.diff == "--- /dev/null\n+++ /repo/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    assert isinstance(aborted, ApplyPatch) and not aborted.ok


def test_codex_legacy_layout_local_shell_and_old_output_json() -> None:
    record = [
        {"id": "s", "timestamp": "2025-05-01T10:00:00Z", "instructions": ""},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
        {
            "type": "local_shell_call",
            "call_id": "c",
            "status": "completed",
            "action": {
                "type": "exec",
                "command": ["bash", "-lc", "ls -a"],
                "working_directory": "/repo",
            },
        },
        {
            "type": "function_call_output",
            "call_id": "c",
            "output": json.dumps({"output": "a\nb\n", "metadata": {"exit_code": 3}}),
        },
    ]
    assert detect_format(record) == "codex"
    parsed = read_record(record, "legacy")
    [command] = parsed.actions
    assert isinstance(command, RunCommand)
    assert (command.command, command.cwd, command.output, command.exit_code) == (
        "ls -a",
        "/repo",
        "a\nb\n",
        3,
    )
    assert [t.text for t in parsed.user_turns] == ["ls"]


# -- opencode -------------------------------------------------------------------------
def _part(
    tool: str, args: dict[str, Any], status: str = "completed", output: str = "", **state: Any
) -> dict[str, Any]:
    return {
        "type": "tool",
        "tool": tool,
        "callID": f"c-{tool}",
        "state": {"status": status, "input": args, "output": output, **state},
    }


def test_opencode_old_read_layout_multiedit_patch_and_compaction() -> None:
    old_read = "<file>\n00001| one\n00002| two\n\n(End of file - total 2 lines)\n</file>"
    record = {
        "info": {"id": "ses_1", "directory": "/w"},
        "messages": [
            {
                "info": {"role": "user"},
                "parts": [{"type": "text", "text": "go"}, {"type": "compaction"}],
            },
            {
                "info": {"role": "assistant"},
                "parts": [
                    _part("read", {"filePath": "/w/a"}, output=old_read),
                    _part(
                        "multiedit",
                        {
                            "filePath": "/w/a",
                            "edits": [
                                {
                                    "filePath": "/w/a",
                                    "oldString": "one",
                                    "newString": "1",
                                    "replaceAll": True,
                                }
                            ],
                        },
                    ),
                    _part("patch", {"patchText": PATCH}),
                ],
            },
        ],
    }
    parsed = read_record(record, "oc")
    read, multi, patch = parsed.actions
    assert isinstance(read, ReadFile) and read.content == "one\ntwo" and read.complete
    assert isinstance(multi, EditFile) and multi.edits[0].replace_all
    assert isinstance(patch, ApplyPatch) and patch.patch == PATCH
    assert parsed.compacted


# -- Hermes ---------------------------------------------------------------------------
def test_hermes_patch_mode_reports_its_diff() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    record = [
        {"role": "session_meta", "model": "m", "platform": "cli"},
        {"role": "user", "content": "fix"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "p",
                    "function": {
                        "name": "patch",
                        "arguments": json.dumps({"mode": "patch", "patch": PATCH}),
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "p",
            "content": json.dumps({"success": True, "diff": diff}),
        },
    ]
    [action] = read_record(record, "h").actions
    assert isinstance(action, UnifiedDiff) and action.diff == diff and action.ok


# -- ATIF and the builder -------------------------------------------------------------
def _atif(steps: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.4",
        "agent": {"name": "x", "version": "1"},
        "steps": steps,
        **extra,
    }


def test_atif_repairs_loose_documents() -> None:
    sub = {
        "schema_version": "ATIF-v1.7",
        "trajectory_id": "sub-1",
        "agent": {"name": "x", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    record = _atif(
        [
            {
                "step_id": 7,
                "source": "user",
                "message": [{"type": "text", "text": "do it"}],
                "reasoning_content": "user steps cannot reason",
                "timestamp": "not a time",
            },
            {
                "step_id": 8,
                "source": "agent",
                "message": "",
                "llm_call_count": 0,
                "metrics": {"prompt_tokens": 5},
                "reasoning_content": "r",
                "tool_calls": [
                    {
                        "tool_call_id": "a",
                        "function_name": "Shell",
                        "arguments": '{"command": "ls"}',
                    }
                ],
                "observation": {"results": [{"source_call_id": "ghost", "content": "??"}]},
            },
            {
                "step_id": 9,
                "source": "system",
                "message": None,
                "observation": {"results": [{"source_call_id": "a", "content": "files"}]},
            },
        ],
        continued_trajectory_ref="next.json",
        subagent_trajectories=[sub, {"bad": 1}],
    )
    parsed = read_record(record, "loose")
    steps = parsed.trajectory.steps
    assert [s.step_id for s in steps] == [1, 2, 3]
    assert steps[0].message == "do it" and steps[0].reasoning_content is None
    assert steps[0].timestamp is None
    assert steps[1].metrics is None and steps[1].reasoning_content is None  # llm_call_count 0
    assert [(r.source_call_id, r.content) for r in steps[1].observation.results] == [
        (None, "??"),
        ("a", "files"),
    ]
    assert steps[1].observation.results[0].extra == {"source_call_id": "ghost"}
    [command] = parsed.actions
    assert isinstance(command, RunCommand) and (command.command, command.output) == ("ls", "files")
    assert parsed.truncated
    assert [s.trajectory_id for s in parsed.trajectory.subagent_trajectories] == ["sub-1"]


def test_orphan_results_and_repeated_call_ids_are_kept() -> None:
    record = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "same", "function": {"name": "bash", "arguments": '{"command": "a"}'}},
                {"id": "same", "function": {"name": "bash", "arguments": '{"command": "b"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "same", "content": "B"},
        {"role": "tool", "tool_call_id": "nobody", "content": "lost"},
    ]
    parsed = read_record(record, "o")
    first, second = parsed.actions
    assert (first.command, first.ok, second.command, second.output) == ("a", False, "b", "B")
    assert first.call_id != second.call_id
    orphan = parsed.trajectory.steps[-1]
    assert orphan.source == "system"
    assert orphan.observation.results[0].extra == {"orphan_call_id": "nobody"}


@pytest.mark.parametrize(
    ("record", "fmt"),
    [
        ({"schema_version": "ATIF-v1.2", "steps": []}, "atif"),
        ({"steps": [{"step_id": 1, "source": "user", "message": ""}]}, "atif"),
        ([{"type": "session", "id": "x", "cwd": "/"}], "pi"),
        ([{"type": "message", "message": {"role": "toolResult"}}], "pi"),
        ([{"type": "permission-mode", "permissionMode": "default"}], "claude-code"),
        ([{"type": "user", "uuid": "u", "message": {}}], "claude-code"),
        ([{"type": "event_msg", "payload": {}}], "codex"),
        ({"info": {"id": "ses"}, "messages": [{"info": {}, "parts": []}]}, "opencode"),
        ({"session_id": "s", "messages": []}, "hermes"),
        ([{"role": "session_meta"}], "hermes"),
        ([{"role": "assistant", "finish_reason": "stop"}], "hermes"),
        ([{"role": "user", "content": "x"}], "openai-messages"),
        ({"messages": [{"role": "user", "content": "x"}], "instance_id": "i"}, "openai-messages"),
        ({"trajectory": [{"role": "ai", "text": "x"}]}, "openai-messages"),
        ({"messages": "not a list"}, None),
        ([{"type": ["unhashable"], "role": {"x": 1}}], None),
        ("a string", None),
    ],
)
def test_detection(record: Any, fmt: str | None) -> None:
    assert detect_format(record) == fmt


def test_other_tools_and_unknown_harness_reads_are_not_trusted() -> None:
    record = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "r", "function": {"name": "read_file", "arguments": '{"path": "a"}'}},
                {"id": "g", "function": {"name": "grep", "arguments": '{"q": "x"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "r", "content": "     1\tsecret"},
        {"role": "tool", "tool_call_id": "g", "content": "hit"},
    ]
    read, grep = read_record(record, "generic").actions
    assert isinstance(read, ReadFile) and read.content is None and not read.complete
    assert isinstance(grep, OtherTool) and grep.name == "grep" and grep.ok
