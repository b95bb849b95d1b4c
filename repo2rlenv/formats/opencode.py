"""opencode sessions as written by `opencode export`: {info, messages: [{info, parts}]}.

Each assistant message is one model step; its `tool` parts hold both the call (input)
and, once finished, the result (output or error), so results sit in the same step as
their calls by construction. A part still `running` or `pending` when the session was
exported has no result and is not replayed as applied.
"""

from __future__ import annotations

from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.text import as_dict, as_int, as_list, as_str, parse_args, text_of


def read_opencode(record: dict[str, Any], record_id: str) -> ParsedSession:
    info = as_dict(record.get("info"))
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise fail("format.bad-type", "opencode: messages is not a list")
    builder = SessionBuilder("opencode")
    model = as_str(as_dict(info.get("model")).get("id"))
    for raw in messages:
        message = as_dict(raw)
        meta = as_dict(message.get("info"))
        parts = [as_dict(p) for p in as_list(message.get("parts"))]
        when = as_dict(meta.get("time")).get("created")
        if any(p.get("type") == "compaction" for p in parts) or meta.get("summary") is True:
            builder.compact()
        if meta.get("role") == "assistant":
            model = as_str(meta.get("modelID")) or model
            _assistant(builder, parts, model, when)
        elif meta.get("role") == "user":
            _user(builder, parts, when)
    return builder.finish(
        record_id=record_id,
        source_format="opencode",
        agent={
            "name": "opencode",
            "version": as_str(info.get("version")),
            "model_name": model,
            "extra": {"agent": info["agent"]} if isinstance(info.get("agent"), str) else None,
        },
        session_id=info.get("id"),
        cwd=info.get("directory"),
    )


def _user(builder: SessionBuilder, parts: list[dict[str, Any]], when: Any) -> None:
    texts = [p for p in parts if p.get("type") == "text"]
    typed = "\n".join(as_str(p.get("text")) or "" for p in texts if p.get("synthetic") is not True)
    injected = "\n".join(as_str(p.get("text")) or "" for p in texts if p.get("synthetic") is True)
    if typed or not injected:
        builder.user(typed, timestamp=when)
    if injected:
        builder.user(injected, typed_request=False, timestamp=when)


def _assistant(
    builder: SessionBuilder, parts: list[dict[str, Any]], model: str | None, when: Any
) -> None:
    text = "\n".join(as_str(p.get("text")) or "" for p in parts if p.get("type") == "text")
    thinking = "\n".join(as_str(p.get("text")) or "" for p in parts if p.get("type") == "reasoning")
    step_id = builder.agent(text, reasoning=thinking.strip() or None, model=model, timestamp=when)
    for part in parts:
        if part.get("type") != "tool":
            continue
        state = as_dict(part.get("state"))
        call = builder.call(
            part.get("callID") or part.get("id"),
            part.get("tool"),
            parse_args(state.get("input")),
            step_id=step_id,
        )
        call_id = call.call_id
        status = state.get("status")
        metadata = as_dict(state.get("metadata"))
        if status == "completed":
            output = state.get("output")
            text_out = output if isinstance(output, str) else text_of(output)
            builder.result(
                call_id, text_out, exit_code=as_int(metadata.get("exit")), data=metadata or None
            )
        elif status == "error":
            builder.result(
                call_id, text_of(state.get("error")), is_error=True, data=metadata or None
            )
