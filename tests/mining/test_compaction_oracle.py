"""In Docker, the repair tasks drawn from the part of a session after its compaction (pi)
and from a Claude Code `{messages, meta}` export hold their oracle: the start state built
from what was read after the cut is the real one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.cli import main
from tests.formats.test_claude_export import _export
from tests.formats.test_compaction_replay import _pi_session


def _mine(tmp_path: Path, name: str, text: str, *extra: str) -> dict:
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / name).write_text(text)
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--dataset", str(folder), "--out", str(tmp_path / "out")]
    assert main([*args, "--json", str(report), *extra]) == 0
    return json.loads(report.read_text())


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("session.jsonl", _pi_session(read_after=True)),
        ("export.json", json.dumps(_export())),
    ],
    ids=["pi-after-compaction", "claude-export"],
)
def test_repair_task_passes_its_oracle(
    docker_ready: str, tmp_path: Path, name: str, text: str
) -> None:
    report = _mine(tmp_path, name, text, "--base-image", docker_ready)
    assert report["emitted_by_kind"].get("repair") == 1, report["skipped"]
    assert not any(reason.startswith("oracle.") for reason in report["skipped"])
