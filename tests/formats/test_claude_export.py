"""Claude Code `{messages, meta}` exports with `tool_call` / `tool_output` blocks. No
public file of this shape was found; the excerpt follows the format notes (Windows root,
no exit codes, Claude Code tool names and its Read gutter)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repo2rlenv.cli import main
from repo2rlenv.formats import detect_format, read_record
from repo2rlenv.formats.base import EditFile, ReadFile, RunCommand
from repo2rlenv.replay import replay

ROOT = "C:\\Users\\maria\\calc"
CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n"
TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)


def _gutter(text: str) -> str:
    return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.splitlines(), 1))


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_call", "id": call_id, "name": name, "input": args}
    return {"role": "assistant", "content": [block]}


def _output(call_id: str, text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_output", "tool_call_id": call_id, "output": text}],
    }


def _export() -> dict[str, Any]:
    failing = "F.\nFAILED test_calc.py::test_mul - assert 5 == 6\n1 failed, 1 passed in 0.03s"
    edit = {
        "file_path": f"{ROOT}\\calc.py",
        "old_string": "def mul(a, b):\n    return a + b",
        "new_string": "def mul(a, b):\n    return a * b",
    }
    return {
        "meta": {"session_id": "9f1c", "cwd": ROOT, "model": "claude-sonnet-4-5"},
        "messages": [
            {"role": "user", "content": "mul gives wrong results, please fix it"},
            _call("toolu_1", "Read", {"file_path": f"{ROOT}\\calc.py"}),
            _output("toolu_1", _gutter(CALC)),
            _call("toolu_2", "Read", {"file_path": f"{ROOT}\\test_calc.py"}),
            _output("toolu_2", _gutter(TESTS)),
            _call("toolu_3", "Bash", {"command": "python -m pytest -q"}),
            _output("toolu_3", f"Exit code 1\n{failing}"),
            _call("toolu_4", "Edit", edit),
            _output("toolu_4", "The file has been updated."),
            _call("toolu_5", "Bash", {"command": "python -m pytest -q"}),
            _output("toolu_5", "..\n2 passed in 0.02s"),
            {"role": "assistant", "content": [{"type": "text", "text": "Fixed: mul multiplies."}]},
        ],
    }


def test_export_reads_as_claude_code_actions() -> None:
    record = _export()
    assert detect_format(record) == "claude-code"
    parsed = read_record(record, "export.json")
    assert parsed.source_format == "claude-code-export" and parsed.cwd == ROOT
    kinds = [type(a) for a in parsed.actions]
    assert kinds == [ReadFile, ReadFile, RunCommand, EditFile, RunCommand]
    first_run, second_run = parsed.actions[2], parsed.actions[4]
    assert first_run.exit_code == 1 and second_run.exit_code is None  # no status recorded
    assert parsed.actions[0].content == CALC.rstrip("\n") and parsed.actions[0].complete
    commands = replay(parsed).commands
    assert [(c.exit_code, c.exit_inferred) for c in commands] == [(1, False), (0, True)]


def test_export_without_tool_blocks_stays_openai_messages() -> None:
    record = {"meta": {}, "messages": [{"role": "user", "content": "hi"}]}
    assert detect_format(record) == "openai-messages"


def test_export_yields_a_repair_task(tmp_path: Path) -> None:
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / "export.json").write_text(json.dumps(_export()))
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--no-validate", "--dataset", str(folder), "--out"]
    assert main([*args, str(tmp_path / "out"), "--json", str(report)]) == 0
    result = json.loads(report.read_text())
    assert result["emitted_by_kind"].get("repair") == 1
    task = next((tmp_path / "out" / "repair").iterdir())
    assert (task / "environment" / "workspace" / "calc.py").read_text() == CALC
    assert "maria" not in "".join(p.read_text() for p in task.rglob("*") if p.is_file())
