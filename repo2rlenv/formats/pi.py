"""pi coding agent sessions (`~/.pi/agent/sessions/*.jsonl`), legacy v1 and tree v2/v3.

v2+ entries carry id/parentId: the file holds every branch the user ever explored,
and only the branch that ends at the last entry is the session as it finally stood.
Legacy v1 files are a flat list.
"""

from __future__ import annotations

from typing import Any

from repo2rlenv.formats.base import ParsedSession, RunCommand
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.framing import pi_bash
from repo2rlenv.formats.records import split_bad
from repo2rlenv.formats.text import as_dict, as_int, as_list, as_str, parse_args, text_of

_SUMMARY_ROLES = ("compactionSummary", "branchSummary")


def read_pi(lines: list[Any], record_id: str) -> ParsedSession:
    entries, bad = split_bad(lines)
    header = entries[0] if entries and entries[0].get("type") == "session" else {}
    version = as_int(header.get("version"))
    tree = (version or 1) >= 2 or any("parentId" in e for e in entries[1:3])
    builder = SessionBuilder("pi")
    builder.truncated = bool(bad)
    model = as_str(header.get("modelId"))
    for entry in _branch(entries) if tree else entries:
        kind = entry.get("type")
        if kind == "message":
            model = _message(builder, as_dict(entry.get("message")), entry, model)
        elif kind == "compaction":
            builder.compact()
            builder.system(text_of(entry.get("summary")), timestamp=entry.get("timestamp"))
        elif kind == "branch_summary":
            builder.system(text_of(entry.get("summary")), timestamp=entry.get("timestamp"))
        elif kind == "custom_message":
            builder.system(text_of(entry.get("content")), timestamp=entry.get("timestamp"))
        elif kind == "model_change":
            model = as_str(entry.get("modelId")) or model
    return builder.finish(
        record_id=record_id,
        source_format=f"pi-v{version or 1}",
        agent={"name": "pi", "version": f"session-v{version or 1}", "model_name": model},
        session_id=header.get("id"),
        cwd=header.get("cwd"),
    )


def _branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The path from the root to the last entry that has an id, in file order."""
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    leaf = next((e for e in reversed(entries) if isinstance(e.get("id"), str)), None)
    keep: set[int] = set()
    node = leaf
    while node is not None and id(node) not in keep:
        keep.add(id(node))
        parent = node.get("parentId")
        node = by_id.get(parent) if isinstance(parent, str) else None
    return [e for e in entries if id(e) in keep]


def _message(
    builder: SessionBuilder, message: dict[str, Any], entry: dict[str, Any], model: str | None
) -> str | None:
    role = message.get("role")
    when = entry.get("timestamp")
    content = message.get("content")
    if role == "user":
        builder.user(text_of(content), timestamp=when)
    elif role == "assistant":
        parts = [p for p in as_list(content) if isinstance(p, dict)]
        model = as_str(message.get("model")) or model
        text = "\n".join(as_str(p.get("text")) or "" for p in parts if p.get("type") == "text")
        thinking = "\n".join(
            as_str(p.get("thinking")) or "" for p in parts if p.get("type") == "thinking"
        )
        stop = message.get("stopReason")
        extra = {"stop_reason": stop} if stop in ("aborted", "error") else None
        step_id = builder.agent(
            text if isinstance(content, list) else text_of(content),
            reasoning=thinking.strip() or None,
            model=model,
            timestamp=when,
            extra=extra,
        )
        for part in parts:
            if part.get("type") == "toolCall":
                builder.call(
                    part.get("id"),
                    part.get("name"),
                    parse_args(part.get("arguments")),
                    step_id=step_id,
                )
    elif role == "toolResult":
        _tool_result(builder, message, when)
    elif role == "bashExecution":
        _user_command(builder, message, when)
    elif role in _SUMMARY_ROLES:
        if role == "compactionSummary":
            builder.compact()
        builder.system(text_of(message.get("summary", content)), timestamp=when)
    elif content is not None:
        builder.system(text_of(content), timestamp=when)  # extension ("custom") messages
    return model


def _tool_result(builder: SessionBuilder, message: dict[str, Any], when: Any) -> None:
    text = text_of(message.get("content"))
    failed = message.get("isError") is True
    exit_code = None
    if message.get("toolName") == "bash":
        text, exit_code = pi_bash(text, failed)
    builder.result(
        message.get("toolCallId"),
        text,
        is_error=failed,
        exit_code=exit_code,
        data=message.get("details"),
        timestamp=when,
    )


def _user_command(builder: SessionBuilder, message: dict[str, Any], when: Any) -> None:
    """`!cmd` typed by the user: it changes the workspace like any agent command."""
    command = as_str(message.get("command"))
    if command is None:
        return
    output = as_str(message.get("output"))
    shown = f"$ {command}" + (f"\n{output}" if output else "")
    step_id = builder.system(shown, timestamp=when)
    exit_code = as_int(message.get("exitCode"))
    ok = exit_code == 0 and message.get("cancelled") is not True
    builder.action(
        RunCommand(
            step_id=step_id,
            call_id=f"user-bash-{step_id}",
            ok=ok,
            command=command,
            output=output,
            exit_code=exit_code,
        )
    )
