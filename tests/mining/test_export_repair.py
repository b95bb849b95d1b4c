"""An `openai-chat` export (no exit codes recorded) whose agent ran pytest to a failure,
fixed the code and ran it to a pass: the inferred fail->pass gives a repair task, end
to end through `repo2rlenv mine`, and in Docker the task's oracle holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.cli import main

CALC = "def add(a, b):\n    return a - b\n"
TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
    "def test_zero():\n    assert add(0, 0) == 0\n"
)


def _call(call_id: str, name: str, args: dict) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def _result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _export() -> dict:
    fail = "F.\n=== FAILURES ===\n...\nFAILED test_calc.py::test_add\n1 failed, 1 passed in 0.03s"
    return {
        "format": "openai-chat",
        "messages": [
            {"role": "user", "content": "Write calc.py with add(a, b) and a test for it."},
            _call("c1", "write_file", {"path": "calc.py", "content": CALC}),
            _result("c1", "wrote calc.py"),
            _call("c2", "write_file", {"path": "test_calc.py", "content": TESTS}),
            _result("c2", "wrote test_calc.py"),
            _call("c3", "bash", {"command": "python -m pytest -q"}),
            _result("c3", fail),
            _call(
                "c4",
                "edit_file",
                {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"},
            ),
            _result("c4", "edited calc.py"),
            _call("c5", "bash", {"command": "python -m pytest -q"}),
            _result("c5", "..\n2 passed in 0.02s"),
            {"role": "assistant", "content": "Fixed: add() now adds."},
        ],
    }


def _mine(tmp_path: Path, *extra: str) -> dict:
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "chat.json").write_text(json.dumps(_export()))
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--dataset", str(folder), "--out", str(tmp_path / "out")]
    assert main([*args, "--json", str(report), *extra]) == 0
    return json.loads(report.read_text())


def test_an_export_without_exit_codes_gives_a_repair_task(tmp_path: Path) -> None:
    report = _mine(tmp_path, "--no-validate")
    assert report["emitted_by_kind"].get("repair") == 1, report["skipped"]
    (task,) = (tmp_path / "out").glob("repair/*/instruction.md")
    assert "1 failed, 1 passed" in task.read_text()


@pytest.mark.docker
@pytest.mark.slow
def test_the_inferred_repair_task_passes_its_oracle(docker_ready, tmp_path: Path) -> None:
    report = _mine(tmp_path, "--base-image", docker_ready)
    assert report["emitted_by_kind"].get("repair") == 1, report["skipped"]
    assert not any(reason.startswith("oracle.") for reason in report["skipped"])
