"""Hermes Agent sessions (`~/.hermes/sessions`): the session log object
`{session_id, model, platform, system_prompt, tools, messages}`, the gateway
transcript JSONL (`{"role": "session_meta", ...}` then one OpenAI message per line), and
request dumps (`request_dump_*.json`: `{timestamp, session_id, reason, request: {url,
headers, body: {model, messages, tools}}, error}`), of which only the body is read: the
headers carry the (partly masked) bearer token and never reach the trajectory.
Tool results are JSON strings; `formats.framing.hermes_result` unwraps them.
"""

from __future__ import annotations

from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.framing import hermes_result
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.records import split_bad
from repo2rlenv.formats.text import as_dict, as_list, as_str, parse_args, text_of


def read_hermes(record: dict[str, Any] | list[Any], record_id: str) -> ParsedSession:
    builder = SessionBuilder("hermes")
    if isinstance(record, dict) and isinstance(record.get("request"), dict):
        body = as_dict(record["request"].get("body"))
        meta = {
            "session_id": record.get("session_id"),
            "model": body.get("model"),
            "tools": body.get("tools"),
        }
        messages, source_format = body.get("messages"), "hermes-request-dump"
        if not isinstance(messages, list):
            raise fail("format.bad-type", "hermes: request body messages is not a list")
    elif isinstance(record, dict):
        meta, messages, source_format = record, record.get("messages"), "hermes-json"
        if not isinstance(messages, list):
            raise fail("format.bad-type", "hermes: messages is not a list")
    else:
        lines, bad = split_bad(record)
        builder.truncated = bool(bad)
        head = lines[0] if lines and lines[0].get("role") == "session_meta" else {}
        meta, messages, source_format = head, lines[1:] if head else lines, "hermes-jsonl"
    if isinstance(meta.get("system_prompt"), str):
        builder.system(meta["system_prompt"], timestamp=meta.get("session_start"))
    for raw in messages:
        _message(builder, as_dict(raw))
    tools = [t for t in as_list(meta.get("tools")) if isinstance(t, dict)]
    return builder.finish(
        record_id=record_id,
        source_format=source_format,
        agent={
            "name": "hermes",
            "version": "unknown",
            "model_name": as_str(meta.get("model")),
            "tool_definitions": tools or None,
            "extra": {"platform": meta["platform"]}
            if isinstance(meta.get("platform"), str)
            else None,
        },
        session_id=meta.get("session_id"),
    )


def _message(builder: SessionBuilder, message: dict[str, Any]) -> None:
    role = message.get("role")
    when = message.get("timestamp")
    if role == "user":
        builder.user(text_of(message.get("content")), timestamp=when)
    elif role == "system":
        builder.system(text_of(message.get("content")), timestamp=when)
    elif role == "assistant":
        reasoning = as_str(message.get("reasoning")) or as_str(message.get("reasoning_content"))
        step_id = builder.agent(
            text_of(message.get("content")), reasoning=reasoning, timestamp=when
        )
        for raw in as_list(message.get("tool_calls")):
            call = as_dict(raw)
            function = as_dict(call.get("function"))
            builder.call(
                call.get("id") or call.get("call_id"),
                function.get("name"),
                parse_args(function.get("arguments")),
                step_id=step_id,
            )
    elif role == "tool":
        shown = text_of(message.get("content"))
        output, exit_code, failed, data = hermes_result(shown)
        builder.result(
            message.get("tool_call_id"),
            output,
            content=shown,
            is_error=failed,
            exit_code=exit_code,
            data=data,
            timestamp=when,
        )
