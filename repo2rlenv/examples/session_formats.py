"""Render the example stories in the on-disk formats real harnesses write.

`python -m repo2rlenv.examples.session_formats DIR` writes the bundled example session
dataset; the committed copy in `repo2rlenv/examples/sessions/` is this output (a test
keeps them equal). Ids and timestamps are derived from the story, so output is stable.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from repo2rlenv.examples.session_stories import STORIES

ROOT = "/home/dev/projects/{name}"
T0 = 1767225600  # 2026-01-01T00:00:00Z


class _Clock:
    def __init__(self, name: str) -> None:
        self.name, self.tick = name, 0

    def iso(self) -> str:
        self.tick += 1
        minutes, seconds = divmod(self.tick, 60)
        return f"2026-01-01T10:{minutes:02d}:{seconds:02d}.000Z"

    def ms(self) -> int:
        self.tick += 1
        return (T0 + self.tick) * 1000

    def uid(self, kind: str = "") -> str:
        self.tick += 1
        return hashlib.sha256(f"{self.name}{kind}{self.tick}".encode()).hexdigest()


def _abs(root: str, path: str) -> str:
    return path if path.startswith("/") or path.startswith("..") else f"{root}/{path}"


def _gutter(text: str) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), 1))


def claude_code(name: str, story: list[tuple]) -> str:
    clock, root = _Clock(name), ROOT.format(name=name)
    session, parent, lines = clock.uid("s")[:32], None, []

    def entry(kind: str, message: dict, **extra) -> None:
        nonlocal parent
        uuid = clock.uid("u")[:32]
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": clock.iso(),
                "userType": "external",
                "entrypoint": "cli",
                "cwd": root,
                "sessionId": session,
                "version": "2.1.126",
                "gitBranch": "main",
                **extra,
            }
        )
        parent = uuid

    def assistant(stop_reason: str, block: dict) -> None:
        entry(
            "assistant",
            {
                "model": "claude-sonnet-4-6",
                "id": "msg_" + clock.uid()[:24],
                "type": "message",
                "role": "assistant",
                "stop_reason": stop_reason,
                "content": [block],
            },
        )

    def tool(name_: str, tool_input: dict, content: str, result: object, error: bool = False):
        call = "toolu_" + clock.uid("t")[:24]
        assistant("tool_use", {"type": "tool_use", "id": call, "name": name_, "input": tool_input})
        entry(
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": call,
                        "type": "tool_result",
                        "content": content,
                        "is_error": error,
                    }
                ],
            },
            toolUseResult=result,
        )

    for step in story:
        if step[0] == "user":
            entry("user", {"role": "user", "content": step[1]})
        elif step[0] == "say":
            assistant("end_turn", {"type": "text", "text": step[1]})
        elif step[0] == "write":
            path = _abs(root, step[1])
            tool(
                "Write",
                {"file_path": path, "content": step[2]},
                f"File created successfully at: {path}",
                {"type": "create", "filePath": path, "content": step[2], "structuredPatch": []},
            )
        elif step[0] == "edit":
            path = _abs(root, step[1])
            tool(
                "Edit",
                {
                    "file_path": path,
                    "old_string": step[2],
                    "new_string": step[3],
                    "replace_all": False,
                },
                f"The file {path} has been updated.",
                {
                    "filePath": path,
                    "oldString": step[2],
                    "newString": step[3],
                    "replaceAll": False,
                    "structuredPatch": [],
                },
            )
        elif step[0] == "read":
            path = _abs(root, step[1])
            tool(
                "Read",
                {"file_path": path},
                _gutter(step[2]),
                {
                    "type": "text",
                    "file": {
                        "filePath": path,
                        "content": step[2],
                        "numLines": len(step[2].splitlines()),
                        "startLine": 1,
                        "totalLines": len(step[2].splitlines()),
                    },
                },
            )
        elif step[0] == "run":
            command, output, code = step[1], step[2], step[3]
            if code == 0:
                tool(
                    "Bash",
                    {"command": command, "description": "Run command"},
                    output.rstrip("\n"),
                    {
                        "stdout": output.rstrip("\n"),
                        "stderr": "",
                        "interrupted": False,
                        "isImage": False,
                    },
                )
            else:
                text = f"Exit code {code}\n{output.rstrip()}"
                tool(
                    "Bash",
                    {"command": command, "description": "Run command"},
                    text,
                    f"Error: {text}",
                    error=True,
                )
    return "".join(json.dumps(line) + "\n" for line in lines)


def pi(name: str, story: list[tuple], compact_after: int | None = None) -> str:
    clock, root = _Clock(name), ROOT.format(name=name)
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": clock.uid("s")[:36],
            "timestamp": clock.iso(),
            "cwd": root,
        }
    ]
    parent = None

    def entry(payload: dict, kind: str = "message") -> str:
        nonlocal parent
        ident = clock.uid("e")[:8]
        body = {"type": kind, "id": ident, "parentId": parent, "timestamp": clock.iso()}
        body.update({"message": payload} if kind == "message" else payload)
        lines.append(body)
        parent = ident
        return ident

    def tool(name_: str, arguments: dict, text: str, error: bool = False) -> None:
        call = f"call_{clock.uid('c')[:10]}"
        entry(
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": call, "name": name_, "arguments": arguments}
                ],
                "api": "openai-completions",
                "provider": "local",
                "model": "coder-1",
                "stopReason": "toolUse",
                "timestamp": clock.ms(),
            }
        )
        entry(
            {
                "role": "toolResult",
                "toolCallId": call,
                "toolName": name_,
                "content": [{"type": "text", "text": text}],
                "isError": error,
                "timestamp": clock.ms(),
            }
        )

    for index, step in enumerate(story):
        if step[0] == "user":
            entry(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": step[1]}],
                    "timestamp": clock.ms(),
                }
            )
        elif step[0] == "say":
            entry(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": step[1]}],
                    "api": "openai-completions",
                    "provider": "local",
                    "model": "coder-1",
                    "stopReason": "stop",
                    "timestamp": clock.ms(),
                }
            )
        elif step[0] == "read":
            tool("read", {"path": _abs(root, step[1])}, step[2])
        elif step[0] == "write":
            tool(
                "write",
                {"path": _abs(root, step[1]), "content": step[2]},
                f"Successfully wrote {len(step[2])} bytes to {step[1]}",
            )
        elif step[0] == "edit":
            tool(
                "edit",
                {"path": _abs(root, step[1]), "edits": [{"oldText": step[2], "newText": step[3]}]},
                f"Successfully replaced text in {step[1]}.",
            )
        elif step[0] == "run":
            text = step[2].rstrip("\n") or "(no output)"
            if step[3]:
                text += f"\n\nCommand exited with code {step[3]}"
            tool("bash", {"command": step[1]}, text, error=bool(step[3]))
        if compact_after is not None and index == compact_after:
            entry(
                {
                    "summary": "Earlier work summarised.",
                    "firstKeptEntryId": parent,
                    "tokensBefore": 48000,
                },
                kind="compaction",
            )
    return "".join(json.dumps(line) + "\n" for line in lines)


def codex(name: str, story: list[tuple]) -> str:
    clock, root = _Clock(name), ROOT.format(name=name)
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
    return "".join(json.dumps(line) + "\n" for line in lines)


def opencode(name: str, story: list[tuple]) -> str:
    clock, root = _Clock(name), ROOT.format(name=name)
    session = "ses_" + clock.uid("s")[:26]
    messages: list[dict] = []
    current: dict | None = None

    def part(kind: str, **fields) -> None:
        assert current is not None
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
            current = {
                "info": {
                    "id": "msg_" + clock.uid("m")[:26],
                    "sessionID": session,
                    "role": "user",
                    "time": {"created": clock.ms()},
                },
                "parts": [],
            }
            messages.append(current)
            part("text", text=step[1])
            user_id = current["info"]["id"]
            current = {
                "info": {
                    "id": "msg_" + clock.uid("m")[:26],
                    "sessionID": session,
                    "role": "assistant",
                    "parentID": user_id,
                    "modelID": "coder-1",
                    "providerID": "local",
                    "mode": "build",
                    "time": {"created": clock.ms()},
                },
                "parts": [],
            }
            messages.append(current)
            part("step-start")
        elif step[0] == "say":
            part("text", text=step[1])
            part("step-finish", reason="stop")
        elif step[0] == "write":
            part(
                "tool",
                tool="write",
                callID="call_" + clock.uid("c")[:16],
                state={
                    "status": "completed",
                    "input": {"filePath": _abs(root, step[1]), "content": step[2]},
                    "output": "",
                    "title": step[1],
                    "metadata": {"exists": False},
                },
            )
        elif step[0] == "run":
            part(
                "tool",
                tool="bash",
                callID="call_" + clock.uid("c")[:16],
                state={
                    "status": "completed",
                    "input": {"command": step[1], "description": "run"},
                    "output": step[2],
                    "title": step[1],
                    "metadata": {"output": step[2], "exit": step[3], "description": "run"},
                },
            )
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


def hermes(name: str, story: list[tuple]) -> str:
    clock = _Clock(name)
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
    return "".join(json.dumps(line) + "\n" for line in lines)


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


def render_all() -> dict[str, str]:
    files = {
        "claude_code/textstats.jsonl": claude_code("textstats", STORIES["textstats"]),
        "pi/stock.jsonl": pi("stock", STORIES["stock"]),
        "opencode/roman.json": opencode("roman", STORIES["roman"]),
        "hermes/slug.jsonl": hermes("slug", STORIES["slug"]),
        "codex/orders.jsonl": codex("orders", STORIES["orders"]),
        "atif/chat-only.json": atif("chat-only", STORIES["chat-only"]),
        "claude_code/outside-root.jsonl": claude_code("outside-root", STORIES["outside-root"]),
        "pi/stock-compacted.jsonl": pi("stock-compacted", STORIES["stock"], compact_after=2),
    }
    truncated = claude_code("textstats-cut", STORIES["textstats"])
    files["claude_code/textstats-truncated.jsonl"] = truncated[: len(truncated) * 2 // 3]
    return files


def write_all(out: Path) -> list[Path]:
    written = []
    for rel, text in sorted(render_all().items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written


SESSIONS_DIR = Path(__file__).resolve().parent / "sessions"

if __name__ == "__main__":
    for path in write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else SESSIONS_DIR):
        print(path)
