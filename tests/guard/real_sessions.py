"""Tool calls exactly as real harnesses emitted them, read from the public sample sessions.

Each `RealCall` carries the raw tool name and arguments, the session's working
directory, the tool names the session declared, and the conversation text (user
messages and tool outputs) that came before it, which is what the guard's host rule
sees. Only this module knows the five on-disk formats.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import SAMPLES


@dataclass
class RealCall:
    source: str
    index: int
    name: str
    args: Any
    workdir: str
    before: list[str] = field(default_factory=list)


@dataclass
class RealSession:
    source: str
    workdir: str
    declared: set[str]
    calls: list[RealCall]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text(c.get("text") or c.get("content") or "") if isinstance(c, dict) else str(c)
            for c in content
        )
    if isinstance(content, dict):
        return _text(content.get("text") or content.get("content") or "")
    return ""


class _Builder:
    def __init__(self, source: str, workdir: str) -> None:
        self.session = RealSession(source, workdir, set(), [])
        self.texts: list[str] = []

    def text(self, value: Any) -> None:
        text = _text(value)
        if text:
            self.texts.append(text)

    def call(self, name: str, args: Any) -> None:
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return
        if not isinstance(args, dict):
            return
        self.session.declared.add(name)
        self.session.calls.append(
            RealCall(
                self.session.source,
                len(self.session.calls),
                name,
                args,
                self.session.workdir,
                list(self.texts),
            )
        )


def _jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def read_pi(path: Path) -> RealSession:
    lines = _jsonl(path)
    cwd = next((r.get("cwd") for r in lines if r.get("type") == "session"), None) or "/workspace"
    b = _Builder(f"pi/{path.name}", cwd)
    for row in lines:
        message = row.get("message") if row.get("type") == "message" else row
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("user", "toolResult"):
            b.text(message.get("content"))
        elif role == "assistant":
            for part in message.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "toolCall":
                    b.call(part.get("name", ""), part.get("arguments"))
    return b.session


def read_opencode(path: Path) -> RealSession:
    data = json.loads(path.read_text(encoding="utf-8"))
    workdir = data.get("info", {}).get("directory") or "/workspace"
    for message in data.get("messages", []):
        for part in message.get("parts", []):
            state = part.get("state") or {}
            if part.get("type") == "tool" and isinstance(state.get("input"), dict):
                workdir = state["input"].get("workdir") or workdir
                break
    b = _Builder(f"opencode/{path.name}", workdir)
    for message in data.get("messages", []):
        for part in message.get("parts", []):
            if part.get("type") == "text" and message.get("info", {}).get("role") == "user":
                b.text(part.get("text"))
            elif part.get("type") == "tool":
                state = part.get("state") or {}
                b.call(part.get("tool", ""), state.get("input"))
                b.text(state.get("output"))
    return b.session


def _openai_messages(b: _Builder, messages: list[dict[str, Any]]) -> None:
    for message in messages:
        role = message.get("role")
        if role in ("user", "tool"):
            b.text(message.get("content"))
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                b.call(function.get("name", ""), function.get("arguments"))


def read_hermes(path: Path) -> RealSession:
    if path.suffix == ".jsonl":
        rows = _jsonl(path)
        meta, messages = rows[0], rows[1:]
    else:
        meta = json.loads(path.read_text(encoding="utf-8"))
        messages = meta.get("messages", [])
    b = _Builder(f"hermes/{path.name}", "/home/erik/Projects/minify")
    for tool in meta.get("tools") or []:
        name = (tool.get("function") or {}).get("name") or tool.get("name")
        if name:
            b.session.declared.add(name)
    _openai_messages(b, messages)
    return b.session


def read_claude(path: Path) -> RealSession:
    rows = _jsonl(path)
    cwd = next((r["cwd"] for r in rows if isinstance(r.get("cwd"), str)), "/workspace")
    b = _Builder(f"claude_code/{path.name}", cwd)
    for row in rows:
        message = row.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if row.get("type") == "user":
            b.text(content)
        elif row.get("type") == "assistant" and isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "tool_use":
                    b.call(part.get("name", ""), part.get("input"))
    return b.session


def read_codex(path: Path) -> RealSession:
    rows = _jsonl(path)
    cwd = next(
        (
            r["payload"]["cwd"]
            for r in rows
            if r.get("type") == "session_meta" and isinstance(r.get("payload", {}).get("cwd"), str)
        ),
        "/workspace",
    )
    b = _Builder(f"codex/{path.name}", cwd)
    for row in rows:
        payload = row.get("payload") or {}
        kind = payload.get("type")
        if row.get("type") != "response_item":
            continue
        if kind == "message" and payload.get("role") == "user":
            b.text(payload.get("content"))
        elif kind == "function_call":
            b.call(payload.get("name", ""), payload.get("arguments"))
        elif kind == "custom_tool_call":
            b.call(payload.get("name", ""), {"input": payload.get("input", "")})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            b.text(payload.get("output"))
    return b.session


READERS = {
    "pi": read_pi,
    "opencode": read_opencode,
    "hermes": read_hermes,
    "claude_code": read_claude,
    "codex": read_codex,
}


def real_sessions() -> Iterator[RealSession]:
    for folder, reader in READERS.items():
        for path in sorted((SAMPLES / folder).iterdir()):
            if path.suffix in (".json", ".jsonl"):
                yield reader(path)
