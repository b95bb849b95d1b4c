"""Codex's rollout log: `session_meta` and `turn_context` first, then `response_item`s
(messages, `function_call`s and their outputs) with the `event_msg` Codex logs beside
each message."""

from __future__ import annotations

import json

from repo2rlenv.examples.renderers.clock import ROOT, Clock, jsonl


def codex(name: str, story: list[tuple]) -> str:
    clock, root = Clock(name), ROOT.format(name=name)
    lines = [
        {
            "timestamp": clock.iso(),
            "type": "session_meta",
            "payload": {
                "id": clock.uid("s")[:36],
                "timestamp": clock.iso(),
                "cwd": root,
                "originator": "codex_cli_rs",
                "cli_version": "0.101.0",
                "source": "cli",
                "model_provider": "openai",
            },
        },
        {
            "timestamp": clock.iso(),
            "type": "turn_context",
            "payload": {"cwd": root, "approval_policy": "on-request", "model": "gpt-5"},
        },
    ]

    def item(payload: dict, kind: str = "response_item") -> None:
        lines.append({"timestamp": clock.iso(), "type": kind, "payload": payload})

    def message(user: bool, text: str) -> None:
        """A message, then the event Codex logs beside it."""
        role, part, event = (
            ("user", "input_text", "user_message")
            if user
            else ("assistant", "output_text", "agent_message")
        )
        item({"type": "message", "role": role, "content": [{"type": part, "text": text}]})
        item({"type": event, "message": text}, kind="event_msg")

    for step in story:
        if step[0] in ("user", "say"):
            message(step[0] == "user", step[1])
        elif step[0] == "run":
            call = "call_" + clock.uid("c")[:24]
            item(
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": step[1], "workdir": root}),
                    "call_id": call,
                }
            )
            item(
                {
                    "type": "function_call_output",
                    "call_id": call,
                    "output": f"Chunk ID: {clock.uid()[:6]}\nWall time: 0.0100 seconds\n"
                    f"Process exited with code {step[3]}\nOriginal token count: "
                    f"{len(step[2].split())}\nOutput:\n{step[2]}",
                }
            )
    item({"type": "task_complete", "last_agent_message": None}, kind="event_msg")
    return jsonl(lines)
