"""SWE-style runs: mini-swe-agent, SWE-agent `.traj`, OpenHands event histories.

Excerpts are written here in the shape of real published runs; the real files (MIT) are
in tests/data/swe (see SOURCES.md there).
"""

from __future__ import annotations

import json
from pathlib import Path

from repo2rlenv.anchors.find import find_anchor
from repo2rlenv.formats import (
    EditFile,
    OtherTool,
    ReadFile,
    RunCommand,
    WriteFile,
    detect_format,
    iter_file_records,
    read_record,
)
from repo2rlenv.formats.swe_common import instance_from_name
from repo2rlenv.replay import replay

DATA = Path(__file__).resolve().parent.parent / "data" / "swe"
SHA = "a" * 40
FOOTER = "\n(Open file: {file})\n(Current directory: /testbed)\nbash-$"


def _mini_v1() -> dict:
    cut = (
        "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long."
        "\n</warning><output_head>\nline one\n</output_head>\n<elided_chars>\n12345 characters"
        " elided\n</elided_chars>\n<output_tail>\nlast line\n</output_tail>"
    )
    return {
        "trajectory_format": "mini-swe-agent-1",
        "info": {
            "exit_status": "Submitted",
            "submission": "diff --git a/src/a.py b/src/a.py\n",
            "mini_version": "1.9.0",
            "config": {"environment": {"cwd": "/testbed"}},
        },
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "<pr_description>\nFix a.py\n</pr_description>"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\ncat src/a.py\n```"},
            {"role": "user", "content": cut},
            {"role": "assistant", "content": "```bash\nls\n```\nand\n```bash\npwd\n```"},
            {"role": "user", "content": "Please always provide EXACTLY ONE action."},
            {"role": "assistant", "content": "```bash\npython -c 'import a'\n```"},
            {"role": "user", "content": "<returncode>1</returncode>\n<output>\nboom\n</output>"},
        ],
    }


def test_mini_swe_agent_is_not_read_as_openai_messages() -> None:
    record = _mini_v1()
    assert detect_format(record) == "mini-swe-agent"
    assert detect_format(record["messages"]) == "mini-swe-agent"  # bare list of messages


def test_mini_swe_agent_fenced_commands_and_observations() -> None:
    session = read_record(_mini_v1(), "run/django__django-11039.traj.json")
    assert [t.text for t in session.user_turns] == ["<pr_description>\nFix a.py\n</pr_description>"]
    commands = [a for a in session.actions if isinstance(a, RunCommand)]
    assert [c.command for c in commands] == ["cat src/a.py", "python -c 'import a'"]
    assert commands[0].output_complete is False
    assert "line one" in (commands[0].output or "") and "last line" in (commands[0].output or "")
    assert (commands[0].exit_code, commands[1].exit_code) == (0, 1)
    assert commands[1].output == "boom\n" and commands[1].output_complete
    swe = session.trajectory.extra["swe"]
    assert swe["instance_id"] == "django__django-11039"
    assert swe["exit_status"] == "Submitted" and swe["submission"].startswith("diff --git")
    assert session.cwd == "/testbed"


def test_cut_cat_output_is_never_a_full_read() -> None:
    """The checkout differs from the cut output; a full read would be a mismatch."""
    session = read_record(_mini_v1(), "x.traj.json")
    replayed = replay(session, {"src/a.py": "line one\nmiddle\nlast line\n"})
    assert replayed.workspace.mismatches == []


def test_mini_swe_agent_tool_calls() -> None:
    record = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"mini_version": "2.2.7", "exit_status": "Submitted", "submission": ""},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {
                "role": "assistant",
                "content": "look",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "<returncode>0</returncode>\n<output>\na.py\n</output>",
            },
            {"role": "user", "content": "Tool call error: no tool call"},
            {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}},
        ],
    }
    session = read_record(record, "django__django-1.traj.json")
    [command] = session.actions
    assert isinstance(command, RunCommand)
    assert (command.command, command.output, command.exit_code) == ("ls", "a.py\n", 0)
    assert len(session.user_turns) == 1


def _swe_agent_text() -> dict:
    prompt = "ISSUE: TimeDelta rounds down" + FOOTER.format(file="n/a")
    return {
        "environment": "main",
        "info": {"exit_status": "submitted", "submission": "diff --git a/f.py b/f.py\n"},
        "trajectory": [],
        "history": [
            {"role": "system", "content": "SETTING: ...", "agent": "main"},
            {"role": "user", "content": "demo", "agent": "main", "is_demo": True},
            {"role": "user", "content": prompt, "agent": "main", "message_type": "observation"},
            {"role": "assistant", "content": "t", "thought": "t", "action": "create r.py\n"},
            {
                "role": "user",
                "content": "[File: r.py (1 lines total)]\n1:" + FOOTER.format(file="/testbed/r.py"),
            },
            {
                "role": "assistant",
                "content": "e",
                "thought": "e",
                "action": "edit 1:1\nprint(1)\nend_of_edit\n",
            },
            {
                "role": "user",
                "content": "[File: /testbed/r.py (1 lines total)]"
                + FOOTER.format(file="/testbed/r.py"),
            },
            {
                "role": "assistant",
                "content": "s",
                "thought": "s",
                "action": "str_replace_editor str_replace /testbed/f.py"
                " --old_str 'a = 1' --new_str 'a = 2'",
            },
            {
                "role": "user",
                "content": "The file /testbed/f.py has been edited."
                + FOOTER.format(file="/testbed/r.py"),
            },
            {"role": "assistant", "content": "x", "thought": "x", "action": "python r.py"},
            {"role": "user", "content": "1" + FOOTER.format(file="/testbed/r.py")},
        ],
    }


def test_swe_agent_text_actions() -> None:
    record = _swe_agent_text()
    assert detect_format(record) == "swe-agent"
    session = read_record(record, "sweagent/marshmallow-code__marshmallow-1867.traj")
    kinds = [type(a) for a in session.actions]
    assert kinds == [WriteFile, OtherTool, EditFile, RunCommand]
    create, line_edit, replace, run = session.actions
    assert isinstance(create, WriteFile) and (create.path, create.content) == ("r.py", "")
    assert isinstance(line_edit, OtherTool) and line_edit.modifies == "/testbed/r.py"
    assert isinstance(replace, EditFile) and replace.path == "/testbed/f.py"
    assert (replace.edits[0].old, replace.edits[0].new) == ("a = 1", "a = 2")
    assert isinstance(run, RunCommand) and run.output == "1"
    assert len(session.user_turns) == 1 and session.cwd == "/testbed"
    assert session.trajectory.extra["swe"]["instance_id"] == "marshmallow-code__marshmallow-1867"


def test_swe_agent_function_calling_real_file() -> None:
    [(rid, record)] = list(
        iter_file_records(
            DATA / "swe-agent-function-calling/marshmallow-code__marshmallow-1867.traj"
        )
    )
    session = read_record(record, rid)
    assert session.source_format == "swe-agent-traj/function-calling"
    edits = [a for a in session.actions if isinstance(a, EditFile)]
    assert edits and all(e.path == "/testbed/src/marshmallow/fields.py" for e in edits)
    assert not any(isinstance(a, OtherTool) and a.name == "unknown" for a in session.actions)
    inserts = [a for a in session.actions if isinstance(a, OtherTool) and a.name == "insert"]
    assert [i.modifies for i in inserts] == ["/testbed/reproduce.py"]
    swe = session.trajectory.extra["swe"]
    assert swe["instance_id"] == "marshmallow-code__marshmallow-1867"
    assert "fields.py" in swe["submission"]
    anchor = find_anchor(session)  # testbed checkout: the instance id names the repository
    assert anchor is not None
    assert anchor.url == "https://github.com/marshmallow-code/marshmallow"
    assert anchor.commit == "bfd2593d4b416122e30cdefe0c72d322ef471611"


def test_real_mini_swe_agent_files() -> None:
    for path in sorted((DATA / "mini-swe-agent").iterdir()):
        [(rid, record)] = list(iter_file_records(path))
        assert detect_format(record) == "mini-swe-agent", path.name
        session = read_record(record, rid)
        assert len(session.user_turns) == 1, path.name
        assert session.actions and all(isinstance(a, RunCommand) for a in session.actions)


def _openhands_row() -> dict:
    return {
        "instance_id": "owner__proj-7",
        "instance": {"repo": "owner/proj", "base_commit": SHA, "instance_id": "owner__proj-7"},
        "instruction": "Fix the bug",
        "test_result": {"git_patch": "diff --git a/m.py b/m.py\n"},
        "history": [
            {"id": 0, "source": "user", "action": "message", "args": {"content": "Fix the bug"}},
            {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}},
            {
                "id": 2,
                "cause": 1,
                "observation": "run",
                "content": "m.py",
                "extras": {"metadata": {"exit_code": 0, "working_dir": "/workspace/proj"}},
            },
            {
                "id": 3,
                "source": "agent",
                "action": "edit",
                "args": {
                    "path": "/workspace/proj/m.py",
                    "command": "str_replace",
                    "old_str": "x = 1",
                    "new_str": "x = 2",
                },
            },
            {"id": 4, "cause": 3, "observation": "edit", "content": "edited", "extras": {}},
            [
                {
                    "id": 5,
                    "source": "agent",
                    "action": "edit",
                    "args": {"path": "/workspace/proj/n.py", "content": "draft"},
                },
                {"id": 6, "cause": 5, "observation": "edit", "content": "ok", "extras": {}},
            ],
            {
                "id": 7,
                "source": "agent",
                "action": "read",
                "args": {"path": "/workspace/proj/m.py", "start": 0, "end": -1},
            },
            {
                "id": 8,
                "cause": 7,
                "observation": "read",
                "content": "Here's the result of running `cat -n` on /workspace/proj/m.py:\n"
                "     1\tx = 2\n",
                "extras": {},
            },
        ],
    }


def test_openhands_events_and_instance_anchor() -> None:
    row = _openhands_row()
    assert detect_format(row) == "openhands"
    session = read_record(row, "output.jsonl#0")
    run, edit, drafted, read = session.actions
    assert isinstance(run, RunCommand) and (run.output, run.exit_code) == ("m.py", 0)
    assert isinstance(edit, EditFile) and edit.path == "/workspace/proj/m.py"
    assert isinstance(drafted, OtherTool) and drafted.modifies == "/workspace/proj/n.py"
    assert isinstance(read, ReadFile) and read.complete and read.content == "x = 2"
    assert session.cwd == "/workspace/proj"
    anchor = find_anchor(session)
    assert anchor is not None
    assert (anchor.url, anchor.commit) == ("https://github.com/owner/proj", SHA)
    assert session.trajectory.extra["swe"]["instance_id"] == "owner__proj-7"


def test_instance_id_from_file_name() -> None:
    assert (
        instance_from_name("a/b/pylint-dev__astroid-1268.traj.json") == "pylint-dev__astroid-1268"
    )
    assert instance_from_name("x/pvlib__pvlib-python-1154.traj") == "pvlib__pvlib-python-1154"
    assert instance_from_name("rows.jsonl#3") is None
    assert instance_from_name("human_thought__swe-bench__humanevalfix-python-0.traj") is None
    assert instance_from_name("notes.json") is None


def test_traj_json_shape_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "astropy__astropy-12907.traj.json"
    path.write_text(json.dumps(_mini_v1()))
    [(rid, record)] = list(iter_file_records(path))
    assert read_record(record, rid).trajectory.extra["swe"]["instance_id"] == (
        "astropy__astropy-12907"
    )


def test_openai_message_rows_with_repo_and_commit_are_anchored() -> None:
    """SWE-Gym-style rows carry the instance beside the messages; the same content as
    ATIF anchors, so this must too."""
    row = {
        "instance_id": "owner__proj-3",
        "repo": "owner/proj",
        "base_commit": SHA,
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "done"},
        ],
    }
    assert detect_format(row) == "openai-messages"
    anchor = find_anchor(read_record(row, "rows.jsonl#0"))
    assert anchor is not None and (anchor.url, anchor.commit) == (
        "https://github.com/owner/proj",
        SHA,
    )


def test_cut_notices_of_each_harness() -> None:
    from repo2rlenv.formats.swe_common import is_cut

    assert is_cut("<output_head>\na\n</output_head>\n<elided_chars>\n9 characters elided")
    assert is_cut("head\n[... 300 characters elided ...]\ntail")
    assert is_cut("Observations should not exceed 100000 characters. 12 characters were elided.")
    assert is_cut("x\n<response clipped><NOTE>To save on context only part of this file")
    # OpenHands' shell output cut (SWE-Gym's moto run lists a folder this way)
    assert is_cut("tra\n[... Observation truncated due to length ...]\nace/moto/tests")
    assert not is_cut("def elide(x):\n    return x\n")
    assert not is_cut("")


def _resolver_row() -> dict:
    """OpenHands resolver `output.jsonl` (2024): each action's arguments are the
    event's own fields (no `args`), and observations carry no `cause`."""
    return {
        "issue": {"owner": "o", "repo": "r", "number": 5, "title": "Add a licence"},
        "instruction": "Please fix the following issue for the repository in /workspace.",
        "base_commit": "",
        "git_patch": "diff --git a/LICENSE b/LICENSE\n",
        "history": [
            {"content": "Please fix the issue", "action": "message", "wait_for_response": False},
            {"command": "touch LICENSE", "thought": "Create it.", "action": "run"},
            {
                "content": "\r\nroot@c0ffee:/workspace # ",
                "command_id": -1,
                "command": "touch LICENSE",
                "exit_code": 0,
                "observation": "run",
            },
            {"code": "print(open('LICENSE').read())", "thought": "Check.", "action": "run_ipython"},
            {
                "content": "MIT",
                "code": "print(open('LICENSE').read())",
                "observation": "run_ipython",
            },
            {"outputs": {}, "thought": "The licence is added.", "action": "finish"},
        ],
    }


def test_openhands_flattened_events_without_cause() -> None:
    row = _resolver_row()
    assert detect_format(row) == "openhands"
    session = read_record(row, "output.jsonl#0")
    touch, ipython = session.actions
    assert isinstance(touch, RunCommand) and touch.command == "touch LICENSE"
    assert touch.exit_code == 0 and "root@c0ffee" in (touch.output or "")
    # IPython code can write any file: a python command, which replay treats as opaque
    assert isinstance(ipython, RunCommand) and ipython.command.startswith("python3 -c ")
    assert ipython.output == "MIT"


def test_other_action_logs_are_not_openhands() -> None:
    """Only OpenHands' own action names make a flattened event: a UI log of clicks is not
    an OpenHands history (nor is a SWE-agent step, whose `action` has its `observation`)."""
    assert detect_format([{"action": "click", "target": "#ok"}, {"action": "scroll"}]) is None
    assert detect_format([{"action": "run", "command": "ls"}]) == "openhands"


def test_openhands_think_and_finish_are_text_not_tools() -> None:
    row = _openhands_row()
    row["history"] += [
        {"id": 9, "source": "agent", "action": "think", "args": {"thought": "maybe m.py"}},
        {"id": 10, "cause": 9, "observation": "think", "content": "Your thought has been logged."},
        {
            "id": 11,
            "source": "agent",
            "action": "finish",
            "args": {"final_thought": "Fixed m.py.", "task_completed": "true", "outputs": {}},
        },
    ]
    session = read_record(row, "output.jsonl#0")
    assert not [a for a in session.actions if isinstance(a, OtherTool) and a.name != "llm_edit"]
    messages = [s.message for s in session.trajectory.steps if s.source == "agent"]
    assert "maybe m.py" in messages and "Fixed m.py." in messages
    assert not any("thought has been logged" in str(s.message) for s in session.trajectory.steps)


def test_mopenhands_image_namespace_is_not_the_repository() -> None:
    """Multi-SWE-bench's OpenHands writes the Docker image namespace as `repo`
    (`mswebench/alibaba_m_fastjson2`); the repository is `alibaba/fastjson2`."""
    row = _openhands_row()
    row["instance_id"] = "alibaba__fastjson2-2775"
    row["instance"] = {
        "repo": "mswebench/alibaba_m_fastjson2",
        "instance_id": "alibaba__fastjson2-2775",
        "base_commit": SHA,
    }
    session = read_record(row, "output.jsonl#0")
    assert session.trajectory.extra["swe"]["repo"] == "alibaba/fastjson2"
    anchor = find_anchor(session)
    assert anchor is not None and anchor.url == "https://github.com/alibaba/fastjson2"


def test_swe_gym_sample_suffix_is_not_part_of_the_instance() -> None:
    """SWE-Gym's sampled OpenHands trajectories number each sample of an instance
    (`getmoto__moto-6387_0`); the instance, as its table spells it, is the rest."""
    row = {
        "instance_id": "getmoto__moto-6387_0",
        "resolved": True,
        "messages": [
            {"role": "system", "content": "You are OpenHands agent."},
            {"role": "user", "content": "Fix the bug in /workspace/getmoto__moto__4.1"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "toolu_01",
                        "type": "function",
                        "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_01", "content": "moto"},
        ],
    }
    session = read_record(row, "rows.json#3")
    assert session.trajectory.extra["swe"]["instance_id"] == "getmoto__moto-6387"


def test_swe_gym_row_submission_is_its_git_patch() -> None:
    """A SWE-Gym OpenHands row keeps the run's final diff in `test_result.git_patch`
    (as OpenHands' `output.jsonl` does): it is the run's submission."""
    row = {
        "instance_id": "getmoto__moto-6387_0",
        "messages": [
            {"role": "user", "content": "Fix the bug"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "toolu_01",
                        "type": "function",
                        "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_01", "content": "moto"},
        ],
        "test_result": {"git_patch": "diff --git a/m.py b/m.py\n", "report": {"resolved": True}},
    }
    session = read_record(row, "rows.json#0")
    assert session.trajectory.extra["swe"]["submission"] == "diff --git a/m.py b/m.py\n"


def test_real_openhands_multi_swe_bench_row() -> None:
    """A real row of OpenHands' Multi-SWE-bench example output (ponyc, C): every action
    maps (think/finish are text), the instance anchors it, the git_patch is its submission."""
    [(rid, row)] = list(iter_file_records(DATA / "openhands" / "ponylang__ponyc-4593.output.jsonl"))
    assert detect_format(row) == "openhands"
    session = read_record(row, rid)
    names = {a.name for a in session.actions if isinstance(a, OtherTool)}
    assert names <= {"str_replace_editor"}  # `insert` edits: their effect is not replayed
    assert sum(isinstance(a, RunCommand) for a in session.actions) == 12
    assert sum(isinstance(a, EditFile) for a in session.actions) == 6
    assert session.cwd == "/workspace/ponylang__ponyc__0.1"
    swe = session.trajectory.extra["swe"]
    assert swe["instance_id"] == "ponylang__ponyc-4593"
    assert swe["submission"].startswith("diff --git a/packages/cli/command_parser.pony")
    anchor = find_anchor(session)
    assert anchor is not None and anchor.url == "https://github.com/ponylang/ponyc"
    assert anchor.commit == "ff61416da46dd4a0712d330c59c25d6e8fbf36af"


def test_real_openhands_resolver_row() -> None:
    """A real OpenHands resolver output row (2024): flattened actions, cause-less
    observations, an IPython cell; before, all 4 calls were unknown tools."""
    [(rid, row)] = list(iter_file_records(DATA / "openhands" / "resolver-output-0.jsonl"))
    session = read_record(row, rid)
    commands = [a for a in session.actions if isinstance(a, RunCommand)]
    assert [c.command.split()[0] for c in commands] == ["touch", "python3", "cat"]
    assert commands[0].exit_code == 0 and commands[2].output.startswith("MIT License")
    assert not [a for a in session.actions if isinstance(a, OtherTool)]


def test_swe_gym_cut_shell_output_is_partial() -> None:
    """A SWE-Gym OpenHands row's shell output cut by OpenHands is no full read of the
    file it shows (before, `cat` of a cut file was taken as the whole file)."""
    call = {"name": "execute_bash", "arguments": json.dumps({"command": "cat /workspace/m.py"})}
    cut = "x = 1\n[... Observation truncated due to length ...]\ny = 2\n"
    cut += "[Command finished with exit code 0]"
    row = {
        "instance_id": "owner__proj-7_0",
        "messages": [
            {"role": "user", "content": "Fix it"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "toolu_01", "type": "function", "function": call}],
            },
            {"role": "tool", "tool_call_id": "toolu_01", "content": f"OBSERVATION:\n{cut}"},
        ],
    }
    [run] = read_record(row, "rows.json#0").actions
    assert isinstance(run, RunCommand) and run.exit_code == 0
    assert run.output_complete is False
