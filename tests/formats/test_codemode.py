"""Codex code-mode (codex-tui 0.144): shell and patch calls made from JavaScript inside one
`exec` custom tool. The excerpts are written here in the shape of real rollouts
(custom_tool_call name "exec", JavaScript input, "Script completed" output header)."""

from __future__ import annotations

from typing import Any

from repo2rlenv.formats import ApplyPatch, OtherTool, RunCommand, read_record
from repo2rlenv.formats.codemode import cell_output, nested_calls


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-20T10:00:00Z", "type": kind, "payload": payload}


def _rollout(*cells: tuple[str, str, Any]) -> list[dict[str, Any]]:
    lines = [
        _line("session_meta", {"id": "s1", "cwd": "/home/dev/calc", "cli_version": "0.144.0"}),
        _line("turn_context", {"cwd": "/home/dev/calc", "model": "gpt-5.5"}),
        _line("event_msg", {"type": "user_message", "message": "Write add() with tests"}),
    ]
    for call_id, script, output in cells:
        lines.append(
            _line(
                "response_item",
                {"type": "custom_tool_call", "name": "exec", "call_id": call_id, "input": script},
            )
        )
        lines.append(
            _line(
                "response_item",
                {"type": "custom_tool_call_output", "call_id": call_id, "output": output},
            )
        )
    return lines


PATCH = "*** Begin Patch\n*** Add File: calc.py\n+def add(a, b):\n+    return a + b\n*** End Patch"


def test_nested_calls_take_literals_constants_joins_and_nothing_computed() -> None:
    script = (
        'const patch = ["*** Begin Patch", "*** Add File: a.py", "+x = 1", "*** End Patch"]'
        '.join("\\n");\n'
        "await tools.apply_patch(patch);\n"
        "const r = await tools.exec_command({cmd: `python -m pytest -q`, workdir: '/w', "
        "yield_time_ms: 30000});\n"
        "text(r?.output ?? '');\n"
        "let dir = '/a'; dir = '/b';\n"
        "await tools.exec_command({cmd: 'ls ' + dir, workdir: dir});\n"
    )
    calls = nested_calls(script)
    assert calls is not None
    assert [c.name for c in calls] == ["apply_patch", "exec_command", "exec_command"]
    assert calls[0].args == {"input": "*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch"}
    assert calls[1].args == {"cmd": "python -m pytest -q", "workdir": "/w", "yield_time_ms": 30000}
    # `dir` is reassigned: its value at the call is unknown, so neither argument is taken.
    assert calls[2].args == {}


def test_cell_output_header_and_content_parts() -> None:
    parts = [
        {"type": "input_text", "text": "Script completed\nWall time 0.4 seconds\nOutput:"},
        {"type": "input_text", "text": "3 passed in 0.01s"},
    ]
    assert cell_output(parts).text == "3 passed in 0.01s"
    assert cell_output(parts).state == "completed"
    failed = cell_output("Script failed\nWall time 0.1 seconds\nOutput:\nTypeError: x")
    assert failed.state == "failed"


def test_code_mode_calls_read_as_ordinary_codex_actions() -> None:
    record = _rollout(
        (
            "c1",
            f"const patch = {PATCH!r};\nawait tools.apply_patch(patch);\ntext('done');",
            "Script completed\nWall time 0.1 seconds\nOutput:\ndone",
        ),
        (
            "c2",
            'const r = await tools.exec_command({cmd: "python -m pytest -q", '
            'workdir: "/home/dev/calc"});\ntext(JSON.stringify(r));',
            'Script completed\nWall time 1.2 seconds\nOutput:\n{"exit_code":0,'
            '"output":"1 passed in 0.01s\\n"}',
        ),
        (
            "c3",
            'await tools.exec_command({cmd: "false"});',
            "Script failed\nWall time 0.1 seconds\nOutput:\nError: boom",
        ),
    )
    parsed = read_record(record, "r1")
    patch, run, failed = parsed.actions
    assert isinstance(patch, ApplyPatch) and patch.patch.startswith("*** Begin Patch")
    assert isinstance(run, RunCommand)
    assert (run.command, run.cwd, run.exit_code) == ("python -m pytest -q", "/home/dev/calc", 0)
    assert run.output == "1 passed in 0.01s\n" and run.ok
    assert isinstance(failed, RunCommand) and not failed.ok
    # one observation per raw output, as in the record
    results = [r for s in parsed.trajectory.steps if s.observation for r in s.observation.results]
    assert len(results) == 3


def test_a_cell_without_tools_calls_stays_one_exec_call() -> None:
    parsed = read_record(_rollout(("c1", "text(1 + 1)", "Script completed\nOutput:\n2")), "r1")
    (action,) = parsed.actions
    assert isinstance(action, OtherTool) and action.name == "exec"


def test_several_calls_in_one_cell_share_the_text_but_no_exit_code() -> None:
    script = (
        'const a = await tools.exec_command({cmd: "pytest -q"});\n'
        'const b = await tools.exec_command({cmd: "git status"});\n'
        "text(a.output + b.output);"
    )
    parsed = read_record(_rollout(("c1", script, "Script completed\nOutput:\nok")), "r1")
    first, second = parsed.actions
    assert isinstance(first, RunCommand) and isinstance(second, RunCommand)
    assert first.exit_code is None and second.exit_code is None


def test_a_session_of_unknown_tools_gets_its_own_reason(tmp_path) -> None:
    from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline

    # The cell holds no `tools.*` call a profile knows: every action is an unknown tool.
    record = _rollout(
        ("c1", "await tools.view_image({path: 'a.png'});", "Script completed\nOutput:\n"),
        ("c2", "text(1)", "Script completed\nOutput:\n1"),
    )
    parsed = read_record(record, "r1")
    options = MineOptions(
        dataset=str(tmp_path),
        base_image="python:3.12-slim",
        validate_tasks=False,
        repo_cache=tmp_path / "cache",
    )
    (event,) = SessionPipeline(options, runtime=None).session_events(parsed, "r1", None)
    assert event.reason == "parsed.unknown-tools"
    assert "view_image x1" in event.detail and "exec x1" in event.detail


def test_a_yielded_cell_is_settled_by_the_wait_on_it() -> None:
    record = _rollout(
        (
            "c1",
            'const r = await tools.exec_command({cmd: "python -m pytest -q", yield_time_ms: 10});'
            "\ntext(JSON.stringify(r));",
            "Script running with cell ID 7\nWall time 10.1 seconds\nOutput:\n",
        ),
    )
    record.append(
        _line(
            "response_item",
            {
                "type": "function_call",
                "name": "wait",
                "call_id": "w1",
                "arguments": '{"cell_id":"7","yield_time_ms":30000}',
            },
        )
    )
    record.append(
        _line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "w1",
                "output": 'Script completed\nWall time 2.0 seconds\nOutput:\n{"exit_code":1,'
                '"output":"1 failed in 0.02s\\n"}',
            },
        )
    )
    run, wait = read_record(record, "r1").actions
    assert isinstance(run, RunCommand) and run.exit_code == 1
    assert run.output == "1 failed in 0.02s\n"
    assert isinstance(wait, OtherTool) and wait.name == "wait"


def test_a_chat_without_tool_calls_is_no_tool_calls(tmp_path) -> None:
    from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline

    record = [
        {"role": "user", "content": "logout does not work"},
        {"role": "assistant", "content": "It is already implemented in src/app/page.tsx."},
    ]
    options = MineOptions(
        dataset=str(tmp_path),
        base_image="python:3.12-slim",
        validate_tasks=False,
        repo_cache=tmp_path / "cache",
    )
    parsed = read_record(record, "chat.jsonl")
    (event,) = SessionPipeline(options, runtime=None).session_events(parsed, "chat.jsonl", None)
    assert event.reason == "parsed.no-tool-calls"


def test_hostile_cells_are_bounded() -> None:
    assert nested_calls("}{)(" * 20_000) is None  # over the size cap: not parsed
    calls = nested_calls(
        "await tools.exec_command({cmd: " + "(" * 3000 + '"ls"' + ")" * 3000 + "});"
    )
    assert calls is not None and calls[0].args == {}  # too deep to evaluate: unknown
    assert nested_calls("const s = 'tools.exec_command({cmd: \"rm -rf /\"})'; text(s);") == []
