"""ATIF (Harbor's agent trajectory format): one JSON document of numbered steps; the
example is the chat-only story."""

from __future__ import annotations

import json


def atif(name: str, story: list[tuple]) -> str:
    steps = []
    for step in story:
        source = "user" if step[0] == "user" else "agent"
        steps.append({"step_id": len(steps) + 1, "source": source, "message": step[1]})
    return (
        json.dumps(
            {
                "schema_version": "ATIF-v1.6",
                "session_id": f"example-{name}",
                "agent": {"name": "example-agent", "version": "1.0"},
                "steps": steps,
            },
            indent=2,
        )
        + "\n"
    )
