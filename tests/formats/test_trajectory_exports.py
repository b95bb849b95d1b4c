"""`{messages, meta}` exports as found in public repositories of delivered coding tasks
(`trajectory.json`, `sessions/develop-1.json`): one exporter writes both Codex rollouts
(`meta.session_meta.originator = codex_cli_rs`, Codex's tools and framed results) and
Claude Code sessions (`meta.session_meta.cwd`), with the call id of a result on the
`tool` message rather than on its `tool_output` block. The records below are written in
that shape (the real files state no licence); the session is a small Node package whose
agent wrote its tests and ran them to a pass with `npm test` (`node --test`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repo2rlenv.cli import main
from repo2rlenv.formats import detect_format, read_record
from repo2rlenv.replay import replay

pytestmark = pytest.mark.timeout(60)

ROOT = "/home/dev/tasks/calc"
FILES = {
    "package.json": (
        '{\n  "name": "calc",\n  "version": "1.0.0",\n  "scripts": {"test": "node --test"}\n}\n'
    ),
    "src/add.js": "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n",
    "test/add.test.js": (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "const { add } = require('../src/add');\n\n"
        "test('adds two numbers', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n\n"
        "test('adds negatives', () => {\n  assert.strictEqual(add(-2, -3), -5);\n});\n"
    ),
}
NPM_TEST = (
    "\n> calc@1.0.0 test\n> node --test\n\n✔ adds two numbers (0.4ms)\n✔ adds negatives (0.1ms)\n"
    "ℹ tests 2\nℹ suites 0\nℹ pass 2\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\n"
)
REQUEST = "Create a small calc package with an add function and node tests for it."


def _tool(call_id: str, text: str) -> dict[str, Any]:
    """An OpenAI-style `tool` message: the id beside the block, not inside it."""
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": [{"type": "tool_output", "text": text}],
    }


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    block = {
        "type": "tool_call",
        "tool_call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
    }
    return {"role": "assistant", "content": [block]}


def _codex_export() -> dict[str, Any]:
    patch = (
        "*** Begin Patch\n"
        + "".join(
            f"*** Add File: {ROOT}/{path}\n" + "".join(f"+{line}\n" for line in text.splitlines())
            for path, text in FILES.items()
        )
        + "*** End Patch\n"
    )
    framed = (
        "Command: /bin/bash -lc 'npm test'\nChunk ID: 9e5b86\nWall time: 0.4 seconds\n"
        f"Process exited with code 0\nOriginal token count: 60\nOutput:\n{NPM_TEST}"
    )
    session = {"id": "019d", "cwd": ROOT, "originator": "codex_cli_rs", "cli_version": "0.116.0"}
    return {
        "meta": {"session_meta": session, "turn_contexts": [{"cwd": ROOT, "model": "gpt-5"}]},
        "messages": [
            {
                "role": "system",
                "content": [
                    {
                        "type": "text",
                        "text": f"<environment_context>\n  <cwd>{ROOT}</cwd>\n"
                        "</environment_context>",
                    }
                ],
            },
            {"role": "user", "content": [{"type": "text", "text": REQUEST}]},
            _call("call_1", "exec_command", {"cmd": "ls -la", "workdir": ROOT}),
            _tool(
                "call_1",
                "Command: /bin/bash -lc 'ls -la'\nChunk ID: 1\nWall time: 0.0 seconds\n"
                "Process exited with code 0\nOriginal token count: 5\nOutput:\ntotal 0\n",
            ),
            _call("call_2", "apply_patch", {"input": patch}),
            _tool(
                "call_2",
                "Success. Updated the following files:\n"
                + "".join(f"A {ROOT}/{p}\n" for p in FILES),
            ),
            _call("call_3", "exec_command", {"cmd": "npm test", "workdir": ROOT}),
            _tool("call_3", framed),
            {"role": "assistant", "content": [{"type": "text", "text": "Done: both tests pass."}]},
        ],
    }


def _claude_export() -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": REQUEST}]},
        _call("toolu_0", "Bash", {"command": f"ls -la {ROOT}"}),
        _tool("toolu_0", "total 0"),
    ]
    for n, (path, text) in enumerate(FILES.items(), 1):
        messages.append(
            _call(f"toolu_{n}", "Write", {"file_path": f"{ROOT}/{path}", "content": text})
        )
        messages.append(_tool(f"toolu_{n}", f"File created successfully at: {ROOT}/{path}"))
    messages += [_call("toolu_9", "Bash", {"command": "npm test"}), _tool("toolu_9", NPM_TEST)]
    session = {"session_id": "4eea", "version": "2.1.90", "git_branch": "main", "cwd": ROOT}
    return {"meta": {"session_meta": session, "token_counts": []}, "messages": messages}


def test_codex_export_reads_as_codex() -> None:
    record = _codex_export()
    assert detect_format(record) == "codex"  # read as Claude Code, every call was unknown
    parsed = read_record(record, "trajectory.json")
    assert parsed.source_format == "codex" and parsed.cwd == ROOT
    runs = [c for c in replay(parsed).commands if c.runner]
    assert [(c.runner, c.exit_code, c.exit_inferred) for c in runs] == [("node-test", 0, False)]


def test_claude_export_takes_the_call_id_from_the_tool_message() -> None:
    record = _claude_export()
    assert detect_format(record) == "claude-code"
    parsed = read_record(record, "develop-1.json")
    assert parsed.cwd == ROOT  # from meta.session_meta
    runs = [c for c in replay(parsed).commands if c.runner]
    assert [(c.runner, c.exit_code, c.exit_inferred) for c in runs] == [("node-test", 0, True)]


@pytest.mark.parametrize("make", [_codex_export, _claude_export])
def test_export_yields_a_node_build_task(tmp_path: Path, make: Any) -> None:
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / "session.json").write_text(json.dumps(make()))
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--no-validate", "--dataset", str(folder), "--out"]
    assert main([*args, str(tmp_path / "out"), "--json", str(report)]) == 0
    result = json.loads(report.read_text())
    assert result["emitted_by_kind"].get("build") == 1, result.get("skipped_by_reason")
    task = next((tmp_path / "out" / "build").iterdir())
    grading = json.loads((task / "tests" / "grading.json").read_text())
    assert "node-test" in json.dumps(grading)


def _claude_export_in_subfolder() -> dict[str, Any]:
    """The package lives in `repo/`; the agent `cd`s there once and later runs `npm test`
    bare, in Claude Code's persistent shell."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": REQUEST}]}
    ]
    messages += [
        _call("toolu_0", "Bash", {"command": f"ls -la {ROOT}"}),
        _tool("toolu_0", "total 0"),
    ]
    for n, (path, text) in enumerate(FILES.items(), 1):
        messages.append(
            _call(f"toolu_{n}", "Write", {"file_path": f"{ROOT}/repo/{path}", "content": text})
        )
        messages.append(_tool(f"toolu_{n}", "File created successfully"))
    messages += [
        _call("toolu_7", "Bash", {"command": f"cd {ROOT}/repo && npm install 2>&1 | tail -3"}),
        _tool("toolu_7", "up to date, audited 1 package in 200ms"),
        _call("toolu_8", "Bash", {"command": "npm test 2>&1"}),
        _tool("toolu_8", NPM_TEST),
    ]
    session = {"session_id": "4eeb", "version": "2.1.90", "cwd": ROOT}
    return {"meta": {"session_meta": session}, "messages": messages}


def test_claude_export_follows_the_persistent_shell_directory(tmp_path: Path) -> None:
    parsed = read_record(_claude_export_in_subfolder(), "develop-1.json")
    runs = [c for c in replay(parsed).commands if c.runner]
    assert [(c.cwd, c.runner, c.exit_code) for c in runs] == [("repo", "node-test", 0)]
    folder = tmp_path / "wild"
    folder.mkdir()
    (folder / "develop-1.json").write_text(json.dumps(_claude_export_in_subfolder()))
    report = tmp_path / "yield.json"
    args = ["mine", "-q", "--no-validate", "--dataset", str(folder), "--out"]
    assert main([*args, str(tmp_path / "out"), "--json", str(report)]) == 0
    result = json.loads(report.read_text())
    assert result["emitted_by_kind"].get("build") == 1, result.get("skipped")


def test_shell_cwd_resets_and_unknowns() -> None:
    from repo2rlenv.formats.shell_cwd import ShellCwd

    shell = ShellCwd("/p")
    shell.after_command("cd sub && ls")
    assert shell.cwd == "/p/sub"
    shell.after_command("(ls) && cd ../other")  # no leading cd: the shell stays
    assert shell.cwd == "/p/sub"
    shell.after_output("x\nShell cwd was reset to /p")
    assert shell.cwd == "/p"
    shell.after_command('cd "$HOME"/x')
    assert shell.cwd is None
    windows = ShellCwd("C:\\TASK-99")
    windows.after_command("cd repo")
    assert windows.cwd == "C:\\TASK-99\\repo"


def _tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    block = {
        "type": "tool_use",
        "tool_call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
    }
    return {"role": "assistant", "content": [block]}


def test_opencode_session_in_the_codex_shaped_header_is_not_codex() -> None:
    """The exporter writes opencode sessions with a rollout-like header (`originator:
    ide`, `source: opencode`) and `tool_use` blocks of opencode's tools: read as Codex,
    no call was seen (`parsed.no-tool-calls`)."""
    session = {"id": "ses_2bf1", "cwd": ROOT, "originator": "ide", "cli_version": "1.3.8"}
    record = {
        "meta": {"session_meta": {**session, "source": "opencode"}},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": REQUEST}]},
            _tool_use("call_1", "bash", {"command": "npm test", "description": "run tests"}),
            _tool("call_1", NPM_TEST),
        ],
    }
    assert detect_format(record) == "claude-code"
    parsed = read_record(record, "develop-2.json")
    assert parsed.source_format == "opencode-export" and parsed.harness == "opencode"
    runs = [c for c in replay(parsed).commands if c.runner]
    assert [(c.runner, c.exit_code, c.exit_inferred) for c in runs] == [("node-test", 0, True)]


def test_calls_kept_only_in_the_openai_tool_calls_list_are_read() -> None:
    record = _claude_export()
    for message in record["messages"]:
        blocks = message["content"]
        if message["role"] == "assistant" and blocks[0]["type"] == "tool_call":
            block = blocks[0]
            function = {"name": block["name"], "arguments": block["arguments"]}
            message["tool_calls"] = [{"id": block["tool_call_id"], "function": function}]
            message["content"] = []
    parsed = read_record(record, "bugfix-2.json")
    runs = [c for c in replay(parsed).commands if c.runner]
    assert [(c.runner, c.exit_code) for c in runs] == [("node-test", 0)]


def test_opencode_1_3_read_keeps_the_first_line_on_the_tag_line() -> None:
    """opencode 1.3 prints `<content>1: {` (the first line beside the tag); before, such a
    read was never a full read, so no package.json of these sessions was known."""
    lines = FILES["package.json"].splitlines()
    shown = (
        f"<path>{ROOT}/package.json</path>\n<type>file</type>\n<content>"
        + "\n".join(f"{n}: {line}" for n, line in enumerate(lines, 1))
        + f"\n\n(End of file - total {len(lines)} lines)\n</content>"
    )
    session = {"id": "ses_2bf2", "cwd": ROOT, "originator": "ide", "source": "opencode"}
    record = {
        "meta": {"session_meta": session},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": REQUEST}]},
            _tool_use("call_1", "read", {"filePath": f"{ROOT}/package.json"}),
            _tool("call_1", shown),
        ],
    }
    read = next(a for a in read_record(record, "develop-2.json").actions if a.kind == "read")
    assert read.complete and read.content == FILES["package.json"].rstrip("\n")


def test_claude_read_with_a_result_id_reference_is_a_full_read() -> None:
    """Claude Code 2.1.9x results end with `[result-id: r19]` on a line of its own; the
    gutter check failed on it, so no file these sessions read was known in full."""
    lines = FILES["package.json"].splitlines()
    shown = "".join(f"{n}\t{line}\n" for n, line in enumerate(lines, 1)) + "[result-id: r19]"
    record = _claude_export()
    record["messages"][1:1] = [
        _call("toolu_r", "Read", {"file_path": f"{ROOT}/package.json"}),
        _tool("toolu_r", shown),
    ]
    read = next(a for a in read_record(record, "bugfix-2.json").actions if a.kind == "read")
    assert read.complete and read.content == FILES["package.json"].rstrip("\n")
