"""Spot checks of Codex, opencode and Hermes actions against their raw records."""

from __future__ import annotations

import json
import re

from repo2rlenv.formats import ApplyPatch, EditFile, OtherTool, ReadFile, RunCommand, WriteFile
from tests.conftest import needs_samples
from tests.formats.raw import load
from tests.formats.samples import action_for, session

pytestmark = needs_samples

SCOUT = "codex/samar-58_scout__codex-session.jsonl"
SOLSMILE = "codex/yashpunmiya_Solsmile__codex-session.jsonl"
CODEX_OLD = "codex/SublyFi_privacy-x402__codex-session.jsonl"
TUIPTV = "opencode/iesta_TUIPTV__opencode_session.json"
PFM = "opencode/italo-luz_pfm-categorization__opencode-session.json"
HERMES_JSON = "hermes/eriktobben_hermes-backup__session_20260515_202554_b03a52.json"
HERMES_JSONL = "hermes/eriktobben_hermes-backup__20260515_202926_d07b8c3a.jsonl"


def _payloads(rel: str, kind: str) -> list[dict]:
    return [
        line["payload"]
        for line in load(rel)
        if line["type"] == "response_item" and line["payload"]["type"] == kind
    ]


def test_codex_apply_patch_keeps_the_patch_text() -> None:
    parsed = session(SCOUT)
    calls = _payloads(SCOUT, "custom_tool_call")
    assert len(calls) == 2
    for call in calls:
        action = action_for(parsed, call["call_id"])
        assert isinstance(action, ApplyPatch) and action.ok and action.patch == call["input"]


def test_codex_exec_command_output_and_exit_code() -> None:
    parsed = session(SCOUT)
    outputs = {p["call_id"]: p["output"] for p in _payloads(SCOUT, "function_call_output")}
    for call in _payloads(SCOUT, "function_call"):
        args = json.loads(call["arguments"])
        action = action_for(parsed, call["call_id"])
        assert isinstance(action, RunCommand)
        assert (action.command, action.cwd) == (args["cmd"], args["workdir"])
        raw_output = outputs[call["call_id"]]
        code = int(re.search(r"Process exited with code (\d+)", raw_output).group(1))
        assert action.exit_code == code
        assert action.output == raw_output.split("Output:\n", 1)[1]


def test_codex_shell_command_failure_and_missing_output() -> None:
    parsed = session(SOLSMILE)
    outputs = {p["call_id"]: p["output"] for p in _payloads(SOLSMILE, "function_call_output")}
    calls = _payloads(SOLSMILE, "function_call")
    assert {c["name"] for c in calls} == {"shell_command"}
    failing = next(c for c in calls if outputs.get(c["call_id"], "").startswith("Exit code: 1"))
    assert action_for(parsed, failing["call_id"]).exit_code == 1
    assert not action_for(parsed, failing["call_id"]).ok
    silent = [c for c in calls if c["call_id"] not in outputs]
    assert len(silent) == 1
    action = action_for(parsed, silent[0]["call_id"])
    assert not action.ok and action.output is None


def test_codex_user_turns_come_from_user_messages_not_injected_context() -> None:
    for rel in (SOLSMILE, CODEX_OLD):
        typed = [
            line["payload"]["message"]
            for line in load(rel)
            if line["type"] == "event_msg" and line["payload"]["type"] == "user_message"
        ]
        assert [t.text for t in session(rel).user_turns] == typed
    meta = load(SOLSMILE)[0]["payload"]
    assert session(SOLSMILE).git == meta["git"] and session(SOLSMILE).cwd == meta["cwd"]


def _tool_parts(rel: str) -> list[dict]:
    return [p for m in load(rel)["messages"] for p in m["parts"] if p["type"] == "tool"]


def test_opencode_bash_exit_codes_errors_and_running_calls() -> None:
    parsed = session(TUIPTV)
    parts = _tool_parts(TUIPTV)
    for part in parts:
        action = action_for(parsed, part["callID"])
        state = part["state"]
        if part["tool"] == "bash" and state["status"] == "completed":
            assert isinstance(action, RunCommand) and action.exit_code == state["metadata"]["exit"]
            assert action.ok is (state["metadata"]["exit"] == 0)
            assert action.output == state["output"]
        elif state["status"] in ("error", "running"):
            assert not action.ok
    assert any(p["state"]["status"] == "running" for p in parts)
    failed_edit = next(p for p in parts if p["tool"] == "edit" and p["state"]["status"] == "error")
    assert isinstance(action_for(parsed, failed_edit["callID"]), EditFile)


def test_opencode_reads_edits_and_writes() -> None:
    parsed = session(TUIPTV)
    parts = _tool_parts(TUIPTV)
    for part in parts:
        action = action_for(parsed, part["callID"])
        state = part["state"]
        if part["tool"] == "write":
            assert isinstance(action, WriteFile)
            assert (action.path, action.content) == (
                state["input"]["filePath"],
                state["input"]["content"],
            )
        if part["tool"] == "edit" and state["status"] == "completed":
            assert isinstance(action, EditFile)
            assert (action.edits[0].old, action.edits[0].new) == (
                state["input"]["oldString"],
                state["input"]["newString"],
            )
        if part["tool"] == "read" and "<type>directory</type>" in state.get("output", ""):
            assert isinstance(action, OtherTool)
        elif part["tool"] == "read" and state["status"] == "completed":
            body = state["output"].split("<content>\n", 1)[1]
            shown = [m.group(1) for m in re.finditer(r"^\d+: (.*)$", body, re.M)]
            assert isinstance(action, ReadFile) and action.content == "\n".join(shown)
            assert action.complete is (
                "(End of file" in body
                and "offset" not in state["input"]
                and "limit" not in state["input"]
            )


def test_opencode_plan_agent_tools_are_other_tools() -> None:
    parsed = session(PFM)
    kinds = {p["tool"]: type(action_for(parsed, p["callID"])) for p in _tool_parts(PFM)}
    assert kinds["task"] is OtherTool and kinds["question"] is OtherTool
    assert kinds["read"] is ReadFile and kinds["bash"] is RunCommand


def _hermes_calls(messages: list[dict]) -> list[tuple[dict, dict]]:
    answers = {m["tool_call_id"]: m for m in messages if m.get("role") == "tool"}
    return [
        (call, answers.get(call["id"]))
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    ]


def test_hermes_json_writes_terminal_and_patch() -> None:
    parsed = session(HERMES_JSON)
    for call, answer in _hermes_calls(load(HERMES_JSON)["messages"]):
        args = json.loads(call["function"]["arguments"])
        action = action_for(parsed, call["id"])
        name = call["function"]["name"]
        if name == "write_file":
            assert isinstance(action, WriteFile) and action.ok
            assert (action.path, action.content) == (args["path"], args["content"])
        elif name == "terminal":
            result = json.loads(answer["content"])
            assert isinstance(action, RunCommand) and action.exit_code == result["exit_code"]
            assert action.output == result["output"] and action.cwd == args["workdir"]
            assert action.ok is (result["exit_code"] == 0)
        elif name == "patch":
            assert isinstance(action, EditFile)
            assert (action.path, action.edits[0].old, action.edits[0].new) == (
                args["path"],
                args["old_string"],
                args["new_string"],
            )


def test_hermes_jsonl_reads_strip_the_gutter_and_know_their_window() -> None:
    messages = load(HERMES_JSONL)[1:]
    parsed = session(HERMES_JSONL)
    checked = 0
    for call, answer in _hermes_calls(messages):
        if call["function"]["name"] != "read_file":
            continue
        action = action_for(parsed, call["id"])
        result = json.loads(answer["content"])
        assert isinstance(action, ReadFile)
        if result.get("error"):
            assert not action.ok and action.content is None
            continue
        lines = [line.split("|", 1)[1] for line in result["content"].split("\n")]
        assert action.content == "\n".join(lines)
        assert action.complete is (not result["truncated"])
        if action.complete:  # the reconstruction is byte-exact: it matches the file size
            assert len(action.content.encode()) == result["file_size"]
        checked += 1
    assert checked >= 5
