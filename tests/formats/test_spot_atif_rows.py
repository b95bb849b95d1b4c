"""Spot checks of ATIF documents and SWE dataset rows against their raw JSON."""

from __future__ import annotations

import json
import re

from repo2rlenv.formats import EditFile, OtherTool, ReadFile, RunCommand, WriteFile
from tests.conftest import needs_samples
from tests.formats.raw import load
from tests.formats.samples import action_for, session, sessions

pytestmark = needs_samples

NEMO = "atif/NVIDIA_NeMo-Relay__examples_trajectory.json"
OPENHANDS = "atif/harbor-golden__openhands_hello-world.trajectory.json"
SUMMARY = "atif/harbor-golden__terminus_2_hello-world-context-summarization.trajectory.json"
INVALID = "atif/harbor-golden__terminus_2_hello-world-invalid-json.trajectory.json"
SCAN = "atif/huggingface_atif-scan__examples_synthetic.json"
GYM = "openai_messages/agent-data-protocol__swe-gym_openhands_sampled_trajectories__sample_raw.json"
SMITH = "openai_messages/agent-data-protocol__swe-smith__sample_raw.json"
NEBIUS = "openai_messages/agent-data-protocol__nebius_SWE-agent-trajectories__sample_raw.json"


def test_nemo_results_move_to_the_calling_step_and_history_is_not_a_turn() -> None:
    raw_steps = load(NEMO)["steps"]
    parsed = session(NEMO)
    calling = next(s for s in parsed.trajectory.steps if s.tool_calls)
    raw_results = next(s for s in raw_steps if s["source"] == "system")["observation"]["results"]
    assert sorted((r.source_call_id, r.content) for r in calling.observation.results) == sorted(
        (r["source_call_id"], r["content"]) for r in raw_results
    )
    first = parsed.trajectory.steps[0]
    assert first.source == "user" and first.model_name is None  # agent-only field dropped
    assert [t.text for t in parsed.user_turns] == [raw_steps[0]["message"][0]["content"]]
    assert all(a.ok and isinstance(a, OtherTool) for a in parsed.actions)


def test_openhands_atif_create_is_a_write() -> None:
    raw_call = next(
        c
        for s in load(OPENHANDS)["steps"]
        for c in s.get("tool_calls") or []
        if c["function_name"] == "str_replace_editor"
    )
    action = action_for(session(OPENHANDS), raw_call["tool_call_id"])
    assert isinstance(action, WriteFile) and action.ok
    assert (action.path, action.content) == (
        raw_call["arguments"]["path"],
        raw_call["arguments"]["file_text"],
    )


def test_terminus_keystrokes_become_commands_with_screen_output() -> None:
    raw_steps = load(SUMMARY)["steps"]
    parsed = session(SUMMARY)
    assert parsed.compacted and not parsed.truncated
    kept = {a.call_id for a in parsed.actions}
    for step in raw_steps:
        for call in step.get("tool_calls") or []:
            if step["step_id"] < parsed.compacted_at:  # before the summarisation: dropped
                assert call["tool_call_id"] not in kept
                continue
            action = action_for(parsed, call["tool_call_id"])
            if call["function_name"] == "bash_command":
                assert isinstance(action, RunCommand) and action.exit_code is None
                assert action.command + "\n" == call["arguments"]["keystrokes"]
                assert action.output == step["observation"]["results"][0]["content"]


def test_terminus_parser_error_step_keeps_its_observation_without_calls() -> None:
    raw_steps = load(INVALID)["steps"]
    parsed = session(INVALID)
    lonely = [
        i for i, s in enumerate(raw_steps) if s.get("observation") and not s.get("tool_calls")
    ]
    assert lonely
    for index in lonely:
        step = parsed.trajectory.steps[index]
        assert step.tool_calls is None
        assert [r.content for r in step.observation.results] == [
            r["content"] for r in raw_steps[index]["observation"]["results"]
        ]


def test_atif_without_agent_block_gets_a_placeholder() -> None:
    parsed = session(SCAN)
    assert parsed.trajectory.agent.name == "unknown" and parsed.harness == "unknown"
    commands = [
        c["arguments"]["command"] for s in load(SCAN)["steps"] for c in s.get("tool_calls") or []
    ]
    assert [a.command for a in parsed.actions] == commands


def _gym_calls(row: dict) -> list[tuple[dict, str | None]]:
    answers = {m["tool_call_id"]: m["content"] for m in row["messages"] if m["role"] == "tool"}
    return [
        (c, answers.get(c["id"]))
        for m in row["messages"]
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or []
    ]


def test_swe_gym_editor_and_bash_calls() -> None:
    rows = load(GYM)
    kinds = set()
    for index, row in enumerate(rows):
        parsed = session(GYM, index)
        assert parsed.cwd == re.search(
            r"<uploaded_files>\n(.*)\n", row["messages"][1]["content"]
        ).group(1)
        for call, answer in _gym_calls(row):
            args = json.loads(call["function"]["arguments"])
            action = action_for(parsed, call["id"])
            sub = args.get("command") if call["function"]["name"] == "str_replace_editor" else None
            if sub == "create":
                assert isinstance(action, WriteFile) and action.content == args["file_text"]
            elif sub == "str_replace":
                assert isinstance(action, EditFile)
                assert (action.edits[0].old, action.edits[0].new) == (
                    args["old_str"],
                    args.get("new_str", ""),
                )
            elif sub in ("insert", "undo_edit"):
                assert isinstance(action, OtherTool) and action.modifies == args["path"]
            elif call["function"]["name"] == "execute_bash" and answer:
                code = re.search(r"\[Command finished with exit code (-?\d+)\]", answer)
                assert isinstance(action, RunCommand) and action.command == args["command"]
                assert action.exit_code == (int(code.group(1)) if code else None)
            kinds.add(type(action).__name__ + (sub or ""))
    assert {"WriteFilecreate", "EditFilestr_replace", "OtherToolinsert"} <= kinds


def test_swe_smith_markup_calls() -> None:
    for index, row in enumerate(load(SMITH)):
        parsed = session(SMITH, index)
        messages = row["messages"]
        marked = [
            (m["content"], messages[i + 1]["content"] if i + 1 < len(messages) else "")
            for i, m in enumerate(messages)
            if m["role"] == "assistant" and "<function=" in m["content"]
        ]
        assert len(parsed.actions) == len(marked)
        for (text, answer), action in zip(marked, parsed.actions, strict=True):
            name = re.search(r"<function=([^>]+)>", text).group(1)
            params = dict(re.findall(r"<parameter=([^>]+)>\n?(.*?)\n?</parameter>", text, re.S))
            if name == "bash":
                assert isinstance(action, RunCommand) and action.command == params["command"]
            elif name == "submit":
                assert isinstance(action, OtherTool)
            elif params.get("command") == "create":
                assert isinstance(action, WriteFile) and action.path == params["path"]
            elif params.get("command") == "view" and "files and directories" in answer:
                assert isinstance(action, OtherTool)  # a directory listing is not a file read
            elif params.get("command") == "view":
                assert isinstance(action, ReadFile) and action.path == params["path"]


def test_nebius_create_edit_and_shell_directory() -> None:
    rows = load(NEBIUS)
    seen = set()
    for index, row in enumerate(rows):
        parsed = session(NEBIUS, index)
        items = row["trajectory"]
        actions = iter(parsed.actions)
        for position, item in enumerate(items):
            if item["role"] != "ai" or "```" not in item["text"]:
                continue
            command = re.search(r"```\n(.*?)```", item["text"], re.S).group(1).strip("\n")
            action = next(actions)
            before = items[position - 1]["text"] if position else ""
            shown = re.search(r"\(Open file: (.*)\)\n\(Current directory: (.*)\)", before or "")
            if command.startswith("create "):
                assert isinstance(action, WriteFile) and action.content == ""
                assert action.path == command.split()[1]
                seen.add("create")
            elif command.startswith("edit "):
                assert isinstance(action, OtherTool) and action.name == "edit"
                assert action.modifies == shown.group(1)
                seen.add("edit")
            elif command.split()[0] not in ("open", "goto", "find_file", "search_file", "submit"):
                assert isinstance(action, RunCommand) and action.command == command
                assert action.cwd == (shown.group(2) if shown else None)
                seen.add("bash")
    assert seen == {"create", "edit", "bash"}
    assert all(len(parsed.actions) > 0 for parsed in sessions(NEBIUS))
