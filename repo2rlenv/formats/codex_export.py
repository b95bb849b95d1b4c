"""Codex rollouts exported as one JSON document, `{messages, meta}`.

Found in public repositories of delivered coding tasks (`trajectory.json`,
`trajectory-1.json`): the exporter turned a Codex CLI rollout into chat messages whose
content blocks are `text`, `tool_call` (`{tool_call_id, name, arguments}`) and
`tool_output` (`{text}`, the call id on the `tool` message), and kept the rollout's
header in `meta.session_meta` (`originator: codex_cli_rs`, `cli_version`, `cwd`) and its
turn contexts in `meta.turn_contexts`. The block types are those of the Claude Code
export, but the tools are Codex's (`exec_command`, `apply_patch`, `write_stdin`,
`shell_command`) and a result is Codex's framed text ("Process exited with code N",
"Output:"): read as Claude Code, every call was an unknown tool and no test run was
seen. So the document is rebuilt into the rollout lines it came from and read by the
Codex reader, which knows those tools and that framing.
"""

from __future__ import annotations

from typing import Any

from repo2rlenv.formats.text import as_dict, as_list, as_str

_CALL_ID = ("tool_call_id", "call_id", "id")
_PATCHED = "Success. Updated the following files:"
"""What Codex's apply_patch answers only when the patch applied. The exporter dropped the
rollout's `patch_apply_end` events and the result's exit code, so this line is the one
proof left that a patch landed (the Codex reader trusts no patch without one)."""


def is_codex_export(record: dict[str, Any]) -> bool:
    """A `{messages, meta}` document whose meta keeps a Codex rollout header."""
    session = as_dict(as_dict(record.get("meta")).get("session_meta"))
    origin = (as_str(session.get("originator")) or "").lower()
    # the exporter writes other harnesses' sessions with the same header (opencode's
    # carry `source: opencode`, `originator: ide`): only Codex's own are Codex
    return isinstance(record.get("messages"), list) and "codex" in origin


def export_lines(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The rollout lines (`{timestamp, type, payload}`) the export was made from."""
    meta = as_dict(record.get("meta"))
    session = as_dict(meta.get("session_meta"))
    lines: list[dict[str, Any]] = [_line("session_meta", session, session.get("timestamp"))]
    contexts = [as_dict(c) for c in as_list(meta.get("turn_contexts"))]
    if contexts:  # the first turn's cwd and model; later turns rarely change them
        lines.append(_line("turn_context", contexts[0], None))
    names: dict[Any, Any] = {}
    for raw in as_list(record.get("messages")):
        message = as_dict(raw)
        when = as_dict(message.get("_metadata")).get("timestamp") or message.get("timestamp")
        for item in _items(message):
            lines.append(_line("response_item", item, when))
            if item["type"] == "function_call":
                names[item["call_id"]] = item["name"]
            elif item["type"] == "function_call_output" and _patched(
                names.get(item["call_id"]), item["output"]
            ):
                event = {"type": "patch_apply_end", "call_id": item["call_id"], "success": True}
                lines.append(_line("event_msg", event, when))
    return lines


def _patched(name: Any, output: Any) -> bool:
    return name == "apply_patch" and (as_str(output) or "").startswith(_PATCHED)


def _line(kind: str, payload: dict[str, Any], when: Any) -> dict[str, Any]:
    return {"timestamp": when, "type": kind, "payload": payload}


def _first(block: dict[str, Any], names: tuple[str, ...]) -> Any:
    return next((block[n] for n in names if block.get(n) is not None), None)


def _items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat message as the response items it stands for."""
    role = as_str(message.get("role")) or ""
    content = message.get("content")
    blocks = [as_dict(b) for b in as_list(content)] if isinstance(content, list) else []
    if not isinstance(content, list):
        blocks = [{"type": "text", "text": as_str(content) or ""}]
    items: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            part = "output_text" if role == "assistant" else "input_text"
            items.append(
                {
                    "type": "message",
                    "role": role if role in ("assistant", "user") else "developer",
                    "content": [{"type": part, "text": as_str(block.get("text")) or ""}],
                }
            )
        elif kind == "tool_call":
            items.append(
                {
                    "type": "function_call",
                    "name": block.get("name"),
                    "arguments": block.get("arguments") or block.get("input"),
                    "call_id": _first(block, _CALL_ID),
                }
            )
        elif kind == "tool_output":
            call_id = _first(block, _CALL_ID) or message.get("tool_call_id")
            output = _first(block, ("text", "output", "content"))
            items.append({"type": "function_call_output", "call_id": call_id, "output": output})
    return items
