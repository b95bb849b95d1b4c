"""Claude Code's session log: a JSONL chain of entries linked by `parentUuid`, tool calls
as `tool_use` blocks answered by `tool_result` blocks plus a structured `toolUseResult`."""

from __future__ import annotations

from repo2rlenv.examples.renderers.clock import ROOT, Clock, abs_path, gutter, jsonl


def _tool_call(root: str, step: tuple) -> tuple[str, dict, str, object, bool]:
    """The tool call a file or shell step is in Claude Code: (tool, input, the text the
    model saw, the structured result, whether it is an error)."""
    kind = step[0]
    if kind == "write":
        path = abs_path(root, step[1])
        return (
            "Write",
            {"file_path": path, "content": step[2]},
            f"File created successfully at: {path}",
            {"type": "create", "filePath": path, "content": step[2], "structuredPatch": []},
            False,
        )
    if kind == "edit":
        path = abs_path(root, step[1])
        return (
            "Edit",
            {"file_path": path, "old_string": step[2], "new_string": step[3], "replace_all": False},
            f"The file {path} has been updated.",
            {
                "filePath": path,
                "oldString": step[2],
                "newString": step[3],
                "replaceAll": False,
                "structuredPatch": [],
            },
            False,
        )
    if kind == "read":
        path = abs_path(root, step[1])
        lines = len(step[2].splitlines())
        file = {
            "filePath": path,
            "content": step[2],
            "numLines": lines,
            "startLine": 1,
            "totalLines": lines,
        }
        return ("Read", {"file_path": path}, gutter(step[2]), {"type": "text", "file": file}, False)
    command, output, code = step[1], step[2], step[3]
    tool_input = {"command": command, "description": "Run command"}
    if code == 0:
        out = output.rstrip("\n")
        result = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
        return ("Bash", tool_input, out, result, False)
    text = f"Exit code {code}\n{output.rstrip()}"
    return ("Bash", tool_input, text, f"Error: {text}", True)


def claude_code(name: str, story: list[tuple]) -> str:
    clock, root = Clock(name), ROOT.format(name=name)
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

    def tool(name_: str, tool_input: dict, content: str, result: object, error: bool) -> None:
        call = "toolu_" + clock.uid("t")[:24]
        assistant("tool_use", {"type": "tool_use", "id": call, "name": name_, "input": tool_input})
        block = {"tool_use_id": call, "type": "tool_result", "content": content, "is_error": error}
        entry("user", {"role": "user", "content": [block]}, toolUseResult=result)

    for step in story:
        if step[0] == "user":
            entry("user", {"role": "user", "content": step[1]})
        elif step[0] == "say":
            assistant("end_turn", {"type": "text", "text": step[1]})
        elif step[0] in ("write", "edit", "read", "run"):
            tool(*_tool_call(root, step))
    return jsonl(lines)
