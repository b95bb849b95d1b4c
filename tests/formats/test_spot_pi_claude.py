"""Spot checks of pi and Claude Code actions against the raw lines they came from."""

from __future__ import annotations

from repo2rlenv.formats import EditFile, OtherTool, ReadFile, RunCommand, WriteFile
from tests.conftest import needs_samples
from tests.formats.raw import load
from tests.formats.samples import action_for, session

pytestmark = needs_samples

PI_V1 = "pi/badlogic_pi-mono__large-session.jsonl"
PI_V3 = "pi/castai_kimchi-dev__session.jsonl"
CLAUDE = "claude_code/SublyFi_privacy-x402__claude-session.jsonl"
FLUX = "claude_code/YatharthPnwr_Flux__claude-session.jsonl"


def _pi_calls(rel: str) -> list[tuple[dict, dict | None, dict]]:
    """(tool call, its toolResult message or None, the assistant message) in file order."""
    lines = load(rel)
    results = {
        line["message"]["toolCallId"]: line["message"]
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "toolResult"
    }
    out = []
    for line in lines:
        message = line.get("message") or {}
        if line.get("type") == "message" and message.get("role") == "assistant":
            for part in message["content"]:
                if part["type"] == "toolCall":
                    out.append((part, results.get(part["id"]), message))
    return out


def _text(result: dict) -> str:
    return "".join(part.get("text", "") for part in result["content"])


def test_pi_v1_edit_is_replayed_with_its_exact_strings() -> None:
    parsed = session(PI_V1)
    call, result, _ = next(
        c for c in _pi_calls(PI_V1) if c[0]["name"] == "edit" and "newText" in c[0]["arguments"]
    )
    action = action_for(parsed, call["id"])
    assert isinstance(action, EditFile)
    assert action.path == call["arguments"]["path"]
    assert [(e.old, e.new) for e in action.edits] == [
        (call["arguments"]["oldText"], call["arguments"]["newText"])
    ]
    assert action.ok is (result is not None and not result["isError"])


def test_pi_edit_without_new_text_and_calls_of_aborted_turns_are_not_applied() -> None:
    parsed = session(PI_V1)
    calls = _pi_calls(PI_V1)
    broken = next(c for c in calls if c[0]["name"] == "edit" and "newText" not in c[0]["arguments"])
    action = action_for(parsed, broken[0]["id"])
    assert isinstance(action, OtherTool) and not action.ok
    assert action.modifies == broken[0]["arguments"]["path"]
    unanswered = [c for c in calls if c[1] is None]
    assert unanswered and all(c[2]["stopReason"] in ("aborted", "error") for c in unanswered)
    assert not any(action_for(parsed, c[0]["id"]).ok for c in unanswered)


def test_pi_bash_exit_code_comes_from_the_trailer() -> None:
    parsed = session(PI_V1)
    for call, result, _ in _pi_calls(PI_V1):
        if call["name"] != "bash" or result is None:
            continue
        action = action_for(parsed, call["id"])
        assert isinstance(action, RunCommand) and action.command == call["arguments"]["command"]
        text = _text(result)
        if text.rstrip().endswith("Command exited with code 2"):
            assert action.exit_code == 2 and not action.ok
            assert text.startswith(action.output) and "exited with code" not in action.output[-40:]
        elif not result["isError"]:
            assert action.exit_code == 0 and action.ok and action.output == text


def test_pi_reads_know_when_they_saw_the_whole_file() -> None:
    parsed = session(PI_V1)
    seen_partial = seen_whole = False
    for call, result, _ in _pi_calls(PI_V1):
        if call["name"] != "read" or result is None or result["isError"]:
            continue
        action = action_for(parsed, call["id"])
        assert isinstance(action, ReadFile) and action.path == call["arguments"]["path"]
        text = _text(result)
        if "more lines not shown" in text[-120:]:
            seen_partial = True
            assert not action.complete and "more lines not shown" not in action.content
            assert text.startswith(action.content)
        elif "offset" not in call["arguments"]:
            seen_whole = True
            assert action.complete and action.content == text
    assert seen_partial and seen_whole


def test_pi_v3_multi_block_edit_and_limited_read() -> None:
    parsed = session(PI_V3)
    calls = _pi_calls(PI_V3)
    edit_call = next(c[0] for c in calls if c[0]["name"] == "edit")
    action = action_for(parsed, edit_call["id"])
    assert isinstance(action, EditFile) and len(action.edits) == 3
    assert [(e.old, e.new) for e in action.edits] == [
        (e["oldText"], e["newText"]) for e in edit_call["arguments"]["edits"]
    ]
    limited = next(
        c for c in calls if c[0]["name"] == "read" and c[0]["arguments"].get("limit") == 200
    )
    read = action_for(parsed, limited[0]["id"])
    assert isinstance(read, ReadFile) and not read.complete
    assert "more lines in file" not in read.content and _text(limited[1]).startswith(read.content)
    missing = next(c for c in calls if c[0]["name"] == "read" and c[1]["isError"])
    failed = action_for(parsed, missing[0]["id"])
    assert not failed.ok and failed.content is None and not failed.complete


def test_pi_v3_user_turns_are_the_user_messages() -> None:
    lines = load(PI_V3)
    typed = [
        "".join(p["text"] for p in line["message"]["content"])
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "user"
    ]
    parsed = session(PI_V3)
    assert [t.text for t in parsed.user_turns] == typed
    assert parsed.cwd == lines[0]["cwd"] and parsed.source_format == "pi-v3"


def _claude_pairs(rel: str) -> list[tuple[dict, dict | None, dict | None]]:
    """(tool_use block, tool_result block, toolUseResult) in file order."""
    lines = load(rel)
    results = {}
    for line in lines:
        if line.get("type") == "user" and isinstance(line["message"]["content"], list):
            for block in line["message"]["content"]:
                if block["type"] == "tool_result":
                    results[block["tool_use_id"]] = (block, line.get("toolUseResult"))
    return [
        (block, *results.get(block["id"], (None, None)))
        for line in lines
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if block["type"] == "tool_use"
    ]


def test_claude_edit_write_and_failed_bash() -> None:
    parsed = session(CLAUDE)
    pairs = _claude_pairs(CLAUDE)
    edit_use = next(p[0] for p in pairs if p[0]["name"] == "Edit")
    edit = action_for(parsed, edit_use["id"])
    assert isinstance(edit, EditFile) and edit.ok and edit.path == edit_use["input"]["file_path"]
    assert edit.edits[0].old == edit_use["input"]["old_string"]
    assert edit.edits[0].new == edit_use["input"]["new_string"]
    assert edit.edits[0].replace_all is False
    for use, _, _ in (p for p in pairs if p[0]["name"] == "Write"):
        write = action_for(parsed, use["id"])
        assert isinstance(write, WriteFile) and write.content == use["input"]["content"]
    use, result, _ = next(p for p in pairs if p[1] and p[1].get("is_error"))
    failed = action_for(parsed, use["id"])
    assert isinstance(failed, RunCommand) and not failed.ok
    assert result["content"].startswith("Exit code 1") and failed.exit_code == 1


def test_claude_reads_use_the_structured_file_view() -> None:
    parsed = session(CLAUDE)
    reads = [p for p in _claude_pairs(CLAUDE) if p[0]["name"] == "Read"]
    assert len(reads) == 2
    for use, _, structured in reads:
        action = action_for(parsed, use["id"])
        shown = structured["file"]
        assert isinstance(action, ReadFile) and action.content == shown["content"]
        assert action.complete is (shown["numLines"] == shown["totalLines"])
        assert action.complete is ("limit" not in use["input"])


def test_claude_bash_output_is_stdout() -> None:
    parsed = session(CLAUDE)
    use, _, structured = next(
        p
        for p in _claude_pairs(CLAUDE)
        if p[0]["name"] == "Bash" and isinstance(p[2], dict) and p[2]["stdout"]
    )
    action = action_for(parsed, use["id"])
    assert action.output == structured["stdout"] and action.exit_code == 0


def test_claude_abandoned_branch_and_injected_skill_text_are_not_user_turns() -> None:
    lines = load(FLUX)
    by_uuid = {line.get("uuid"): line for line in lines}
    children: dict[str, list[dict]] = {}
    for line in lines:
        children.setdefault(line.get("parentUuid"), []).append(line)
    fork = next(k for k, v in children.items() if k and len(v) > 1)
    abandoned, kept = (c["message"]["content"] for c in children[fork])
    turns = [t.text for t in session(FLUX).user_turns]
    assert kept in turns and abandoned not in turns
    meta = [line["message"]["content"][0]["text"] for line in lines if line.get("isMeta")]
    assert meta and not any(m in turns for m in meta)
    assert by_uuid[fork]["type"] == "system"
