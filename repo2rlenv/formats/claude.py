"""Claude Code sessions (`~/.claude/projects/<project>/<session>.jsonl`).

One assistant API message is written as several lines (one per content block) sharing
`message.id`; they become one agent step. Lines form a tree through parentUuid: a
prompt the user abandoned or rewound is a side branch, so when the tree branches only
the path to the last line is kept (plus tool results, which are never conversation
branches). Sub-agent (sidechain) lines belong to another conversation and are skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.claude_export import add_text_block, read_claude_export
from repo2rlenv.formats.framing import claude_bash
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.records import split_bad
from repo2rlenv.formats.text import as_dict, as_list, as_str, parse_args, text_of

_NOT_TYPED = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "[Request interrupted by user",
    "<task-notification>",
    "<bash-stdout>",
    "<bash-stderr>",
)
"""User-role text Claude Code writes itself: command output, interruption notes, and the
notices of background tasks (`Monitor`, background shells) it feeds back to the model."""

_LOCAL_COMMAND = re.compile(
    r"<command-name>/(?:compact|clear|model|context|cost|config|status|help|resume|memory"
    r"|permissions|login|logout|exit|doctor|ide|mcp|agents|hooks|vim|theme)</command-name>"
)
"""A built-in slash command the user typed (`/compact` right after a compaction summary):
it steers the harness and asks the agent nothing, so it is never a request. Custom
commands are not listed: their expansion is the request."""


def read_claude(lines: list[Any] | dict[str, Any], record_id: str) -> ParsedSession:
    if isinstance(lines, dict):  # a `{messages, meta}` export of one conversation
        return read_claude_export(lines, record_id, _typed)
    entries, bad = split_bad(lines)
    turns = [e for e in entries if e.get("type") in ("user", "assistant")]
    if turns and all(e.get("isSidechain") is True for e in turns):
        raise fail(
            "format.subagent-transcript",
            f"claude-code: {record_id} is a sub-agent's transcript (agentId "
            f"{_first(turns, 'agentId') or '?'}); its prompt came from the parent agent",
        )
    entries = _main_branch([e for e in entries if e.get("isSidechain") is not True])
    builder = SessionBuilder("claude-code")
    builder.truncated = bool(bad)
    step_id: int | None = None
    message_id: Any = None
    for entry in entries:
        kind = entry.get("type")
        if kind == "assistant":
            message = as_dict(entry.get("message"))
            if step_id is None or message.get("id") is None or message.get("id") != message_id:
                step_id = builder.agent(
                    model=as_str(message.get("model")), timestamp=entry.get("timestamp")
                )
                message_id = message.get("id")
            _assistant(builder, step_id, message.get("content"))
        elif kind == "user":
            _user(builder, entry)
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            builder.compact()
    branch = _first(entries, "gitBranch")
    return builder.finish(
        record_id=record_id,
        source_format="claude-code",
        agent={
            "name": "claude-code",
            "version": _first(entries, "version"),
            "model_name": _first(
                [as_dict(e.get("message")) for e in entries if e.get("type") == "assistant"],
                "model",
            ),
        },
        session_id=_first(entries, "sessionId"),
        cwd=_first(entries, "cwd"),
        git={"branch": branch} if branch else None,
    )


def _first(entries: list[dict[str, Any]], key: str) -> str | None:
    return next((e[key] for e in entries if isinstance(e.get(key), str) and e[key]), None)


def _main_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    nodes = [e for e in entries if isinstance(e.get("uuid"), str)]
    fanout = Counter(e.get("parentUuid") for e in nodes if isinstance(e.get("parentUuid"), str))
    if not nodes or max(fanout.values(), default=0) < 2:
        return entries
    by_uuid = {e["uuid"]: e for e in nodes}
    keep: set[str] = set()
    node: dict[str, Any] | None = nodes[-1]
    while node is not None and node["uuid"] not in keep:
        keep.add(node["uuid"])
        parent = node.get("parentUuid") or node.get("logicalParentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    return [
        e
        for e in entries
        if not isinstance(e.get("uuid"), str) or e["uuid"] in keep or _only_results(e)
    ]


def _only_results(entry: dict[str, Any]) -> bool:
    blocks = as_list(as_dict(entry.get("message")).get("content"))
    return bool(blocks) and all(as_dict(b).get("type") == "tool_result" for b in blocks)


def _assistant(builder: SessionBuilder, step_id: int, content: Any) -> None:
    if not isinstance(content, list):
        builder.add_text(step_id, text_of(content))
        return
    for block in (as_dict(b) for b in content):
        if add_text_block(builder, step_id, block):
            continue
        if block.get("type") in ("tool_use", "server_tool_use"):
            builder.call(
                block.get("id"), block.get("name"), parse_args(block.get("input")), step_id=step_id
            )


def _user(builder: SessionBuilder, entry: dict[str, Any]) -> None:
    message = as_dict(entry.get("message"))
    content = message.get("content")
    when = entry.get("timestamp")
    if entry.get("isCompactSummary") is True:
        builder.compact()
        builder.system(text_of(content), timestamp=when)
        return
    injected = entry.get("isMeta") is True
    if not isinstance(content, list):
        text = text_of(content)
        builder.user(text, typed_request=not injected and _typed(text), timestamp=when)
        return
    blocks = [as_dict(b) for b in content]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    for block in results:
        _tool_result(
            builder, block, entry.get("toolUseResult") if len(results) == 1 else None, when
        )
    texts = [as_str(b.get("text")) or "" for b in blocks if b.get("type") == "text"]
    if any(texts):
        text = "\n".join(t for t in texts if t)
        builder.user(text, typed_request=not injected and _typed(text), timestamp=when)


def _typed(text: str) -> bool:
    """Text the user typed as a request (not harness output or a built-in command)."""
    return not text.startswith(_NOT_TYPED) and _LOCAL_COMMAND.search(text[:500]) is None


def _tool_result(builder: SessionBuilder, block: dict[str, Any], data: Any, when: Any) -> None:
    shown = text_of(block.get("content"))
    failed = block.get("is_error") is True
    call = builder.find(block.get("tool_use_id"))
    output, exit_code = shown, None
    if call is not None and call.name == "Bash":
        output, exit_code, interrupted = claude_bash(shown, data, failed)
        failed = failed or interrupted
    builder.result(
        block.get("tool_use_id"),
        output,
        content=shown,
        is_error=failed,
        exit_code=exit_code,
        data=data,
        timestamp=when,
    )
