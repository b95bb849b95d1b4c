"""Hermes' session log: OpenAI chat messages a line, after a `session_meta` line; tool
results are JSON text in `tool` messages."""

from __future__ import annotations

import json

from repo2rlenv.examples.renderers.clock import Clock, jsonl


def hermes(name: str, story: list[tuple]) -> str:
    clock = Clock(name)
    lines: list[dict] = [
        {
            "role": "session_meta",
            "tools": [],
            "model": "gpt-5.3-codex",
            "platform": "cli",
            "timestamp": "2026-01-01T10:00:00.000000",
        }
    ]

    def call(tool_name: str, arguments: dict, result: dict) -> None:
        ident = "call_" + clock.uid("c")[:20]
        lines.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": ident,
                        "type": "function",
                        "function": {"name": tool_name, "arguments": json.dumps(arguments)},
                    }
                ],
            }
        )
        lines.append({"role": "tool", "tool_call_id": ident, "content": json.dumps(result)})

    for step in story:
        if step[0] == "user":
            lines.append({"role": "user", "content": step[1]})
        elif step[0] == "say":
            lines.append({"role": "assistant", "content": step[1]})
        elif step[0] == "write":
            call(
                "write_file",
                {"path": step[1], "content": step[2]},
                {"bytes_written": len(step[2].encode())},
            )
        elif step[0] == "run":
            call(
                "terminal",
                {"command": step[1]},
                {"output": step[2], "exit_code": step[3], "error": None},
            )
    return jsonl(lines)
