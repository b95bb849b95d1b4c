"""Independent counts straight from the raw sample files.

Nothing here imports the readers: each function walks the raw JSON the way a person
reading the format description would, so a reader that drops or duplicates a call or
a result disagrees with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import SAMPLES


def load_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load(rel: str) -> Any:
    path = SAMPLES / rel
    return load_lines(path) if path.suffix == ".jsonl" else json.loads(path.read_text())


def atif(doc: dict[str, Any]) -> tuple[int, int]:
    calls = sum(len(step.get("tool_calls") or []) for step in doc["steps"])
    results = sum(
        len((step.get("observation") or {}).get("results") or []) for step in doc["steps"]
    )
    return calls, results


def pi(lines: list[dict[str, Any]]) -> tuple[int, int]:
    messages = [line["message"] for line in lines if line.get("type") == "message"]
    calls = sum(
        1
        for m in messages
        if m["role"] == "assistant"
        for part in m["content"]
        if part["type"] == "toolCall"
    )
    results = sum(1 for m in messages if m["role"] == "toolResult")
    return calls, results


def claude(lines: list[dict[str, Any]]) -> tuple[int, int]:
    def blocks(kind: str, line_type: str) -> int:
        return sum(
            1
            for line in lines
            if line.get("type") == line_type and isinstance(line["message"]["content"], list)
            for block in line["message"]["content"]
            if block["type"] == kind
        )

    return blocks("tool_use", "assistant"), blocks("tool_result", "user")


def codex(lines: list[dict[str, Any]]) -> tuple[int, int]:
    kinds = [line["payload"].get("type") for line in lines if line["type"] == "response_item"]
    calls = sum(
        kinds.count(k)
        for k in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
    )
    results = sum(kinds.count(k) for k in ("function_call_output", "custom_tool_call_output"))
    return calls, results


def opencode(doc: dict[str, Any]) -> tuple[int, int]:
    parts = [p for m in doc["messages"] for p in m["parts"] if p["type"] == "tool"]
    done = [p for p in parts if p["state"]["status"] in ("completed", "error")]
    return len(parts), len(done)


def chat(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """OpenAI messages with real tool_calls (Hermes, SWE-Gym)."""
    calls = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
    results = sum(1 for m in messages if m.get("role") == "tool")
    return calls, results


def followed(
    items: list[dict[str, Any]], is_call: Any, role_key: str, answer_role: str
) -> tuple[int, int]:
    """Calls written as text: a call is an assistant item that `is_call`; its result is
    the item right after it when that item has `answer_role`."""
    calls = results = 0
    for index, item in enumerate(items):
        if is_call(item):
            calls += 1
            after = items[index + 1] if index + 1 < len(items) else None
            results += bool(after and after[role_key] == answer_role)
    return calls, results


def swe_smith(row: dict[str, Any]) -> tuple[int, int]:
    return followed(
        row["messages"],
        lambda m: m["role"] == "assistant" and "<function=" in m["content"],
        "role",
        "user",
    )


def nebius(row: dict[str, Any]) -> tuple[int, int]:
    return followed(
        row["trajectory"],
        lambda m: m["role"] == "ai" and "```" in (m["text"] or ""),
        "role",
        "user",
    )
