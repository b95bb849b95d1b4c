"""opencode's `export` document: one JSON object holding the session's messages, each
with its `parts` (text, step markers, and tool parts that carry their whole state)."""

from __future__ import annotations

import json

from repo2rlenv.examples.renderers.clock import ROOT, T0, Clock, abs_path


def _tool_part(root: str, step: tuple) -> dict:
    """A write or shell step as opencode's completed tool part (without its ids)."""
    if step[0] == "write":
        return {
            "tool": "write",
            "state": {
                "status": "completed",
                "input": {"filePath": abs_path(root, step[1]), "content": step[2]},
                "output": "",
                "title": step[1],
                "metadata": {"exists": False},
            },
        }
    return {
        "tool": "bash",
        "state": {
            "status": "completed",
            "input": {"command": step[1], "description": "run"},
            "output": step[2],
            "title": step[1],
            "metadata": {"output": step[2], "exit": step[3], "description": "run"},
        },
    }


def opencode(name: str, story: list[tuple]) -> str:
    clock, root = Clock(name), ROOT.format(name=name)
    session = "ses_" + clock.uid("s")[:26]
    messages: list[dict] = []
    current: dict = {}

    def message(role: str, **info) -> None:
        nonlocal current
        ident = "msg_" + clock.uid("m")[:26]
        current = {"info": {"id": ident, "sessionID": session, "role": role, **info}, "parts": []}
        current["info"]["time"] = {"created": clock.ms()}
        messages.append(current)

    def part(kind: str, **fields) -> None:
        current["parts"].append(
            {
                "id": "prt_" + clock.uid("p")[:26],
                "sessionID": session,
                "messageID": current["info"]["id"],
                "type": kind,
                **fields,
            }
        )

    for step in story:
        if step[0] == "user":
            message("user")
            part("text", text=step[1])
            user_id = current["info"]["id"]
            agent = {"modelID": "coder-1", "providerID": "local", "mode": "build"}
            message("assistant", parentID=user_id, **agent)
            part("step-start")
        elif step[0] == "say":
            part("text", text=step[1])
            part("step-finish", reason="stop")
        elif step[0] in ("write", "run"):
            tool = _tool_part(root, step)
            call = "call_" + clock.uid("c")[:16]
            part("tool", tool=tool["tool"], callID=call, state=tool["state"])
    export = {
        "info": {
            "id": session,
            "version": "1.14.46",
            "directory": root,
            "title": name,
            "time": {"created": T0 * 1000},
        },
        "messages": messages,
    }
    return json.dumps(export, indent=2) + "\n"
