"""pi's session log: a `session` header, then entries linked by `parentId`; tool calls
are `toolCall` content blocks answered by `toolResult` messages, and a context
compaction is an entry of its own that names the first entry it kept."""

from __future__ import annotations

from repo2rlenv.examples.renderers.clock import ROOT, Clock, abs_path, jsonl


def _tool_call(root: str, step: tuple) -> tuple[str, dict, str, bool]:
    """The tool call a file or shell step is in pi: (tool, arguments, result text, error)."""
    kind = step[0]
    if kind == "read":
        return ("read", {"path": abs_path(root, step[1])}, step[2], False)
    if kind == "write":
        arguments = {"path": abs_path(root, step[1]), "content": step[2]}
        return ("write", arguments, f"Successfully wrote {len(step[2])} bytes to {step[1]}", False)
    if kind == "edit":
        edits = [{"oldText": step[2], "newText": step[3]}]
        arguments = {"path": abs_path(root, step[1]), "edits": edits}
        return ("edit", arguments, f"Successfully replaced text in {step[1]}.", False)
    text = step[2].rstrip("\n") or "(no output)"
    if step[3]:
        text += f"\n\nCommand exited with code {step[3]}"
    return ("bash", {"command": step[1]}, text, bool(step[3]))


def _assistant(clock: Clock, content: dict, stop_reason: str) -> dict:
    return {
        "role": "assistant",
        "content": [content],
        "api": "openai-completions",
        "provider": "local",
        "model": "coder-1",
        "stopReason": stop_reason,
        "timestamp": clock.ms(),
    }


def pi(name: str, story: list[tuple], compact_after: int | None = None) -> str:
    clock, root = Clock(name), ROOT.format(name=name)
    header = {
        "type": "session",
        "version": 3,
        "id": clock.uid("s")[:36],
        "timestamp": clock.iso(),
        "cwd": root,
    }
    lines, parent = [header], None

    def entry(payload: dict, kind: str = "message") -> str:
        nonlocal parent
        ident = clock.uid("e")[:8]
        body = {"type": kind, "id": ident, "parentId": parent, "timestamp": clock.iso()}
        body.update({"message": payload} if kind == "message" else payload)
        lines.append(body)
        parent = ident
        return ident

    def tool(name_: str, arguments: dict, text: str, error: bool) -> None:
        call = f"call_{clock.uid('c')[:10]}"
        block = {"type": "toolCall", "id": call, "name": name_, "arguments": arguments}
        entry(_assistant(clock, block, "toolUse"))
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
            text = [{"type": "text", "text": step[1]}]
            entry({"role": "user", "content": text, "timestamp": clock.ms()})
        elif step[0] == "say":
            entry(_assistant(clock, {"type": "text", "text": step[1]}, "stop"))
        elif step[0] in ("read", "write", "edit", "run"):
            tool(*_tool_call(root, step))
        if compact_after is not None and index == compact_after:
            summary = "Earlier work summarised."
            kept = {"summary": summary, "firstKeptEntryId": parent, "tokensBefore": 48000}
            entry(kept, kind="compaction")
    return jsonl(lines)
