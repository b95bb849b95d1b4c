"""Windows session roots, home paths and user names, and the dataset a task records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.cli import main
from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.privacy import scrub_bundle, scrub_instruction, scrub_paths
from repo2rlenv.replay import replay
from repo2rlenv.replay.paths import PathResolver
from repo2rlenv.source import dataset_label
from tests.mining.factory import SessionBuilder

WIN_ROOT = "C:\\Users\\alice\\Documents\\calc"
CTX = SessionContext(dataset="exports", revision=None, record_id="r", base_image="img:1")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("C:\\Users\\alice\\Documents\\calc\\src\\calc.py", "src/calc.py"),
        ("c:/users/alice/documents/calc/test_calc.py", "test_calc.py"),
        ("/c/Users/alice/Documents/calc/a.py", "a.py"),
        ("src\\util.py", "src/util.py"),
        ("C:/Users/alice/Documents/.env", None),
        ("D:\\data\\x.csv", None),
        ("\\\\server\\share\\x.py", None),
    ],
)
def test_windows_root_confines_like_a_posix_one(path: str, expected: str | None) -> None:
    assert PathResolver(WIN_ROOT).resolve(path) == expected


@pytest.mark.parametrize("root", [None, "/home/alice/calc"])
def test_a_windows_path_is_never_a_relative_name(root: str | None) -> None:
    assert PathResolver(root).resolve("C:/Users/alice/Documents/calc/.env") is None
    assert PathResolver(root).resolve("C:\\Users\\alice\\x.py") is None


def test_scrub_every_spelling_of_root_and_home() -> None:
    text = (
        "C:\\Users\\alice\\Documents\\calc\\calc.py, C:/Users/alice/Documents/calc/t.py, "
        '"C:\\\\Users\\\\alice\\\\Documents\\\\calc\\\\x.py", C:\\Users\\alice\\.ssh, '
        "/home/bob/src, /Users/carol/x, /root/.cache"
    )
    out = scrub_paths(text, WIN_ROOT)
    assert out == (
        '/workspace/calc.py, /workspace/t.py, "/workspace/x.py", ~/.ssh, ~/src, ~/x, ~/.cache'
    )
    said = scrub_instruction("alice here: see C:\\Users\\alice\\notes.txt", WIN_ROOT)
    assert "alice" not in said and said == "user here: see ~/notes.txt"


def test_dataset_label_never_an_absolute_path(tmp_path: Path) -> None:
    folder = tmp_path / "my-sessions"
    folder.mkdir()
    assert dataset_label(str(folder)) == "my-sessions"
    assert dataset_label("nebius/SWE-agent-trajectories") == "nebius/SWE-agent-trajectories"


def _windows_repair():
    return (
        SessionBuilder(cwd=WIN_ROOT)
        .user(f"alice here: the add test in {WIN_ROOT}\\test_calc.py fails, fix it")
        .write(f"{WIN_ROOT}\\calc.py", "def add(a, b):\n    return a - b\n")
        .write(
            f"{WIN_ROOT}\\test_calc.py",
            f"# from {WIN_ROOT}\nfrom calc import add\n\ndef test_add():\n"
            "    assert add(2, 2) == 4\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
        )
        .run("python -m pytest -q", "F.\n1 failed, 1 passed in 0.01s\n", 1)
        .edit(f"{WIN_ROOT}\\calc.py", "return a - b", "return a + b")
        .run("python -m pytest -q", "..\n2 passed in 0.01s\n", 0)
        .build()
    )


def test_windows_session_gives_a_task_with_workspace_names_and_no_user() -> None:
    outcomes = list(KINDS["repair"](replay(_windows_repair()), CTX))
    bundles = [o for o in outcomes if not isinstance(o, Reject)]
    assert len(bundles) == 1, [getattr(o, "reason", "") for o in outcomes]
    bundle = scrub_bundle(bundles[0], WIN_ROOT)
    paths = [f.path for f in bundle.files]
    assert "environment/workspace/calc.py" in paths
    assert not any(":" in p or "\\" in p for p in paths)
    text = bundle.instruction + "".join(f.content.decode() for f in bundle.files)
    assert "alice" not in text and "C:" not in text and "Users" not in text


def test_mined_tasks_name_the_dataset_folder_not_its_path(tmp_path: Path) -> None:
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--no-validate", "--dataset", str(SESSIONS_DIR)]
    assert main([*args, "--out", str(tmp_path / "out"), "--json", str(report)]) == 0
    assert json.loads(report.read_text())["emitted"] > 0
    tomls = list((tmp_path / "out").rglob("task.toml"))
    assert tomls
    for toml in tomls:
        text = toml.read_text()
        assert str(SESSIONS_DIR) not in text and f'"{SESSIONS_DIR.name}"' in text


def test_opencode_export_with_a_windows_root_writes_workspace_files() -> None:
    """The shape of a real opencode export made on Windows (w12z/Cap): before, replay
    named its files `C:\\Users\\<user>\\cap\\plan.md`."""
    from repo2rlenv.formats import read_record

    root = "C:\\Users\\22967\\cap"

    def tool(call_id: str, name: str, args: dict, output: str = "") -> dict:
        state = {"status": "completed", "input": args, "output": output}
        return {"type": "tool", "tool": name, "callID": call_id, "state": state}

    record = {
        "info": {"id": "ses_1", "directory": root, "version": "1.14.0"},
        "messages": [
            {
                "info": {"role": "user", "time": {"created": 1}},
                "parts": [{"type": "text", "text": "write the plan"}],
            },
            {
                "info": {"role": "assistant", "time": {"created": 2}},
                "parts": [
                    tool("c1", "write", {"filePath": f"{root}\\plan.md", "content": "# Plan\n"}),
                    tool(
                        "c2", "write", {"filePath": f"{root}\\scripts\\Grid.gd", "content": "x\n"}
                    ),
                    tool(
                        "c3",
                        "read",
                        {"filePath": "C:\\Users\\22967\\AppData\\Local\\Temp\\out.txt"},
                        "<content>\n1: secret\n</content>",
                    ),
                ],
            },
        ],
    }
    replayed = replay(read_record(record, "opencode-session.json"))
    assert sorted(replayed.workspace.files) == ["plan.md", "scripts/Grid.gd"]
    assert replayed.outside == ["C:\\Users\\22967\\AppData\\Local\\Temp\\out.txt"]


def test_many_revealed_names_cost_one_scan() -> None:
    text = " ".join(f"/home/person{i}x/a" for i in range(20_000)) + " person5x said so."
    out = scrub_instruction(text, None)
    assert out.endswith("~/a user said so.") and "person" not in out
