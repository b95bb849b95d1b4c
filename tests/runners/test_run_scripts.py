"""`bash run_tests.sh`: a script the session wrote and ran is a test run when its known
text runs a registered runner (delivered-task sessions test through such scripts)."""

from __future__ import annotations

import json

import pytest

from repo2rlenv.formats import read_record
from repo2rlenv.replay import replay
from repo2rlenv.replay.test_scripts import script_paths
from tests.formats.test_trajectory_exports import FILES, NPM_TEST, REQUEST, ROOT, _call, _tool

pytestmark = pytest.mark.timeout(30)

SCRIPT = '#!/usr/bin/env bash\nset -euo pipefail\necho "=== unit ==="\nnode --test test/*.test.js\n'


def _session(script_known: bool) -> dict:
    messages = [{"role": "user", "content": [{"type": "text", "text": REQUEST}]}]
    files = {**FILES, "run_tests.sh": SCRIPT}
    for n, (path, text) in enumerate(files.items(), 1):
        if path == "run_tests.sh" and not script_known:
            continue
        messages.append(_call(f"t{n}", "Write", {"file_path": f"{ROOT}/{path}", "content": text}))
        messages.append(_tool(f"t{n}", "File created successfully"))
    messages += [_call("t9", "Bash", {"command": "bash run_tests.sh 2>&1"}), _tool("t9", NPM_TEST)]
    return {"meta": {"session_meta": {"session_id": "s", "cwd": ROOT}}, "messages": messages}


def test_a_known_script_running_node_test_is_a_node_test_run() -> None:
    runs = [c for c in replay(read_record(_session(True), "s.json")).commands if c.runner]
    assert [(c.runner, c.exit_code) for c in runs] == [("node-test", 0)]


def test_an_unknown_script_is_no_test_run() -> None:
    runs = [c for c in replay(read_record(_session(False), "s.json")).commands if c.runner]
    assert runs == []


@pytest.mark.parametrize(
    "command, paths",
    [
        ("bash run_tests.sh 2>&1 | tail -30", ["run_tests.sh"]),
        ("cd repo && sh -e ./scripts/test.sh", ["./scripts/test.sh"]),
        ("./run_tests.sh", ["./run_tests.sh"]),
        ("bash -c 'node --test'", []),
        ("run_tests.sh", []),  # a bare name is looked up on PATH, not in the folder
    ],
)
def test_script_paths(command: str, paths: list[str]) -> None:
    assert script_paths(command) == paths


def test_a_script_chaining_two_runners_is_no_one_runners_run():
    """`npm run test:frontend` running `node --test` then `vitest` (a real delivered-task
    project's shape): its output mixes both runners' results, and a vitest test would be
    verified with node --test. A chain of one runner stays that runner's."""
    from repo2rlenv.runners import detect

    package = json.dumps(
        {
            "scripts": {
                "test:unit": "node --test tests/unit/*.test.js",
                "test:component": "vitest run tests/component",
                "test:frontend": "npm run test:unit && npm run test:component",
                "test:all": "npm run test:component && vitest run tests/integration",
            }
        }
    )
    assert detect(["npm", "run", "test:frontend"], lambda: package) is None
    found = detect(["npm", "run", "test:all"], lambda: package)
    assert found is not None and found.runner.name == "vitest"
