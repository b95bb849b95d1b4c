"""OpenAI chat-message records: dataset rows with `messages` (SWE-Gym / OpenHands with
real `tool_calls`, SWE-smith with calls as text markup), nebius SWE-agent rows with a
`trajectory`, and bare lists of chat messages."""

from __future__ import annotations

from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.framing import openhands_observation
from repo2rlenv.formats.markup import read_nebius, read_swe_smith, uploaded_root
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.swe_common import is_cut, swe_extra
from repo2rlenv.formats.text import as_dict, as_list, as_str, parse_args, text_of

OPENHANDS_TOOLS = frozenset(
    {
        "execute_bash",
        "str_replace_editor",
        "finish",
        "think",
        "browser",
        "execute_ipython_cell",
        "web_read",
    }
)


def read_openai_messages(record: dict[str, Any] | list[Any], record_id: str) -> ParsedSession:
    row = record if isinstance(record, dict) else {}
    messages = record if isinstance(record, list) else row.get("messages")
    if not isinstance(messages, list) and isinstance(row.get("trajectory"), list):
        return read_nebius(row, record_id)
    if not isinstance(messages, list):
        raise fail("format.bad-type", "openai-messages: messages is not a list")
    variant = _variant(messages)
    if variant == "swe-smith":
        return read_swe_smith(row, messages, record_id)
    harness = "openhands" if variant == "swe-gym" else "openai"
    builder = SessionBuilder(harness)
    cwd: str | None = None
    legacy: Call | None = None
    for raw in messages:
        message = as_dict(raw)
        role, text = message.get("role"), text_of(message.get("content"))
        if role == "assistant":
            step_id = builder.agent(text, reasoning=as_str(message.get("reasoning_content")))
            for call in as_list(message.get("tool_calls")):
                call = as_dict(call)
                function = as_dict(call.get("function"))
                builder.call(
                    call.get("id"),
                    function.get("name"),
                    parse_args(function.get("arguments")),
                    step_id=step_id,
                )
            function = as_dict(message.get("function_call"))
            if function.get("name"):
                legacy = builder.call(
                    None, function["name"], parse_args(function.get("arguments")), step_id=step_id
                )
        elif role == "tool" or (role == "function" and legacy is not None):
            call_id = message.get("tool_call_id") if role == "tool" else legacy.call_id
            output, exit_code, failed = (
                openhands_observation(text) if harness == "openhands" else (text, None, False)
            )
            answered = builder.result(
                call_id, output, content=text, is_error=failed, exit_code=exit_code
            )
            if answered is not None and harness == "openhands" and is_cut(output):
                answered.context["output_cut"] = True  # OpenHands cut it: never a full read
        elif role == "user":
            cwd = cwd or uploaded_root(text)
            builder.user(text)
        else:
            builder.system(text)
    suffix = "/swe-gym" if variant == "swe-gym" else ""
    return builder.finish(
        record_id=record_id,
        source_format=f"openai-messages{suffix}",
        agent={
            "name": harness,
            "version": "unknown",
            "model_name": as_str(row.get("model")) or as_str(row.get("model_name")),
        },
        session_id=row.get("instance_id") or row.get("id"),
        cwd=cwd,
        # a row's repo + base_commit anchor it; SWE-Gym's OpenHands rows keep the run's
        # final diff where OpenHands' output.jsonl does
        extra=swe_extra(
            record_id, row, submission=as_dict(row.get("test_result")).get("git_patch")
        ),
    )


def _variant(messages: list[Any]) -> str:
    names: set[str] = set()
    markup = False
    for raw in messages:
        message = as_dict(raw)
        if message.get("role") != "assistant":
            continue
        for call in as_list(message.get("tool_calls")):
            name = as_dict(as_dict(call).get("function")).get("name")
            names.add(name if isinstance(name, str) else "")
        markup = markup or "<function=" in text_of(message.get("content"))
    if names:
        return "swe-gym" if names <= OPENHANDS_TOOLS else "openai"
    return "swe-smith" if markup else "openai"
