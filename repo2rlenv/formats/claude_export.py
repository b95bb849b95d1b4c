"""Claude Code conversations exported as one JSON document, `{messages, meta}`.

No published file of this shape was found to check against (see
docs/real-sessions.md); the reader follows the format notes: chat messages whose
content blocks are `text`, `thinking`, `tool_call` (a Claude Code tool: Bash, Read,
Edit, Write...) and `tool_output` (the call's result), with the session's facts in
`meta`. Field names vary between exporters, so each block field is taken from the
names exporters use for it (`id`/`tool_use_id`/`call_id`, `input`/`arguments`/`args`,
`output`/`content`/`text`). Such exports keep no exit status and no structured tool
result: a Bash result is its text, and replay infers a test run's exit status from the
runner's summary line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.framing import claude_bash
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.shell_cwd import ShellCwd
from repo2rlenv.formats.text import as_dict, as_list, as_str, parse_args, text_of

EXPORT_BLOCKS = frozenset({"tool_call", "tool_output"})
"""Block types that tell this export from an OpenAI-message document."""

Typed = Callable[[str], bool]
_CALL_ID = ("id", "tool_use_id", "call_id", "tool_call_id")
_RESULT_ID = ("tool_call_id", "tool_use_id", "call_id", "id")


def is_claude_export(record: dict[str, Any], scan: int) -> bool:
    messages = record.get("messages")
    if not isinstance(messages, list) or not isinstance(record.get("meta"), dict):
        return False
    return any(
        as_dict(block).get("type") in EXPORT_BLOCKS
        for message in messages[:scan]
        for block in as_list(as_dict(message).get("content"))[:scan]
    )


def read_claude_export(record: dict[str, Any], record_id: str, typed: Typed) -> ParsedSession:
    """`typed(text)` says whether user text is a request (shared with the JSONL reader)."""
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise fail("format.bad-type", "claude-export: messages is not a list")
    meta = as_dict(record.get("meta"))
    # exporters that keep Claude Code's session header nest it (`meta.session_meta`)
    meta = {**as_dict(meta.get("session_meta")), **meta}
    # the same exporter writes opencode sessions (`source: opencode`, tools `bash`,
    # `read`, `apply_patch`): their calls are mapped by opencode's profile
    harness = "opencode" if as_str(meta.get("source")) == "opencode" else "claude-code"
    builder = SessionBuilder(harness)
    model = as_str(meta.get("model"))
    shell = ShellCwd(as_str(meta.get("cwd")) or as_str(meta.get("project_path")))
    for raw in messages:
        message = as_dict(raw)
        role, content = message.get("role"), message.get("content")
        when = message.get("timestamp") or as_dict(message.get("_metadata")).get("timestamp")
        if message.get("isCompactSummary") is True:
            builder.compact()
            builder.system(text_of(content), timestamp=when)
        elif role == "assistant":
            model = as_str(message.get("model")) or model
            _assistant(builder, _with_calls(content, message), model, when, shell)
        elif role in ("user", "tool"):
            _user(builder, content, when, typed, message.get("tool_call_id"), shell)
        else:
            builder.system(text_of(content), timestamp=when)
    return builder.finish(
        record_id=record_id,
        source_format="claude-code-export" if harness == "claude-code" else "opencode-export",
        agent={
            "name": harness,
            "version": as_str(meta.get("version")) or as_str(meta.get("claude_code_version")),
            "model_name": model,
        },
        session_id=meta.get("session_id") or meta.get("sessionId") or meta.get("id"),
        cwd=meta.get("cwd") or meta.get("project_path") or meta.get("projectPath"),
    )


def _with_calls(content: Any, message: dict[str, Any]) -> Any:
    """The assistant's blocks, with the calls of an OpenAI-style `tool_calls` list added
    when no block holds them (some exports keep the calls only there, `content: []`)."""
    blocks = as_list(content) if isinstance(content, list) else None
    if blocks is None or any(as_dict(b).get("type") in ("tool_call", "tool_use") for b in blocks):
        return content
    calls = []
    for raw in as_list(message.get("tool_calls")):
        call = as_dict(raw)
        function = as_dict(call.get("function"))
        if as_str(function.get("name")):
            calls.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": function["name"],
                    "arguments": function.get("arguments"),
                }
            )
    return [*blocks, *calls]


def _first(block: dict[str, Any], names: tuple[str, ...]) -> Any:
    return next((block[n] for n in names if block.get(n) is not None), None)


def add_text_block(builder: SessionBuilder, step_id: int, block: dict[str, Any]) -> bool:
    """A Claude `text` or `thinking` content block added to the agent step; False for
    any other block (a tool call: each reader knows its own spellings)."""
    kind = block.get("type")
    if kind == "text":
        builder.add_text(step_id, as_str(block.get("text")) or "")
    elif kind == "thinking":
        builder.add_text(step_id, as_str(block.get("thinking")) or "", reasoning=True)
    return kind in ("text", "thinking")


def _assistant(
    builder: SessionBuilder, content: Any, model: str | None, when: Any, shell: ShellCwd
) -> None:
    if not isinstance(content, list):
        builder.agent(text_of(content), model=model, timestamp=when)
        return
    step_id = builder.agent(model=model, timestamp=when)
    for block in (as_dict(b) for b in content):
        if add_text_block(builder, step_id, block):
            continue
        if block.get("type") in ("tool_call", "tool_use"):
            args = _first(block, ("input", "arguments", "args", "parameters"))
            name = block.get("name") or block.get("tool")
            parsed = parse_args(args)
            context = None
            if name == "Bash":  # the persistent shell's directory (formats/shell_cwd.py)
                context = {"cwd": shell.cwd} if shell.cwd else None
                shell.after_command(as_str(parsed.get("command")) or "")
            builder.call(_first(block, _CALL_ID), name, parsed, step_id=step_id, context=context)


def _user(
    builder: SessionBuilder,
    content: Any,
    when: Any,
    typed: Typed,
    message_call: Any = None,
    shell: ShellCwd | None = None,
) -> None:
    """`message_call`: the call id an OpenAI-style `tool` message carries beside its
    blocks, for `tool_output` blocks that name none."""
    if not isinstance(content, list):
        text = text_of(content)
        builder.user(text, typed_request=typed(text), timestamp=when)
        return
    texts: list[str] = []
    for block in (as_dict(b) for b in content):
        kind = block.get("type")
        if kind in ("tool_output", "tool_result"):
            shown = text_of(_first(block, ("output", "content", "text")))
            failed = block.get("is_error") is True or block.get("isError") is True
            call_id = _first(block, _RESULT_ID) or message_call
            call, exit_code = builder.find(call_id), None
            if call is not None and call.name == "Bash":
                # no structured result: "Exit code N" opening the text is the only status
                failed = failed or shown.startswith("Exit code ")
                if shell is not None:
                    shell.after_output(shown)
                shown, exit_code, interrupted = claude_bash(shown, None, failed)
                failed = failed or interrupted
            builder.result(call_id, shown, is_error=failed, exit_code=exit_code, timestamp=when)
        elif kind == "text" and as_str(block.get("text")):
            texts.append(block["text"])
    if texts:
        text = "\n".join(texts)
        builder.user(text, typed_request=typed(text), timestamp=when)
