"""`python -m train.guard`: serves, answers, stops cleanly; bad options exit 2."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.guard.replay import ReplayUpstream
from tests.guard.upstream import OPENAI_TOOLS
from train.serving.server import free_port

REPO = Path(__file__).resolve().parents[2]


def _guard(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "train.guard", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_cli_serves_with_a_context_file(replay: ReplayUpstream, tmp_path: Path) -> None:
    context = tmp_path / "context.json"
    context.write_text(json.dumps({"instruction": "data: https://example.org/data.csv"}))
    port = free_port()
    process = _guard(
        "--upstream",
        replay.base_url,
        "--port",
        str(port),
        "--context",
        str(context),
        "--log-dir",
        str(tmp_path / "logs"),
        "--model-map",
        "harness=tiny",
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                health = requests.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        assert health.json()["data"][0]["id"] == "tiny"
        completion = requests.post(
            f"http://127.0.0.1:{port}/s/cli/v1/chat/completions",
            timeout=30,
            headers={"x-replay": "openai_single"},
            json={
                "model": "harness",
                "tools": OPENAI_TOOLS,
                "messages": [{"role": "user", "content": "go"}],
            },
        ).json()
        assert completion["choices"][0]["message"]["tool_calls"]
        assert json.loads(replay.received[-1]["body"])["model"] == "tiny"
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert f"127.0.0.1:{port}" in err
    verdict = json.loads((tmp_path / "logs" / "cli" / "verdict.json").read_text())
    assert verdict == {
        "after_response_failures": 0,
        "blocked": False,
        "blocked_calls": 0,
        "decisions": 1,
        "reward_override": None,
        "rules": {},
        "session_id": "cli",
    }


def test_cli_rejects_bad_options(tmp_path: Path) -> None:
    bad_map = _guard("--upstream", "http://127.0.0.1:9", "--model-map", "no-equals-sign")
    _, err = bad_map.communicate(timeout=60)
    assert bad_map.returncode == 2 and "HARNESS=UPSTREAM" in err
    (tmp_path / "task").mkdir()
    no_task = _guard("--upstream", "http://127.0.0.1:9", "--task-dir", str(tmp_path / "task"))
    _, err = no_task.communicate(timeout=60)
    assert no_task.returncode == 2 and "task.toml" in err
