"""What a client would run: the calls the official SDKs' own accumulators assemble
from the bytes the guard sent, and every call a first-wins JSON reader finds.

`sdk_calls` feeds each SSE payload to `openai`'s `ChatCompletionStreamState` or
`anthropic`'s `accumulate_event` (the code `stream.get_final_completion()` runs) and
returns the calls of the final snapshot; a whole body is read the way the SDKs read it
(the standard library's `json`, last key wins). `first_wins` reads JSON keeping the
first of duplicate keys, as cJSON or simdjson in a harness would.
"""

from __future__ import annotations

import json
from typing import Any


def _pairs_first(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        out.setdefault(key, value)
    return out


def first_wins(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_pairs_first)


def sse_payloads(text: str) -> list[str]:
    return [
        line[5:].strip()
        for line in text.splitlines()
        if line.startswith("data:") and line[5:].strip() != "[DONE]"
    ]


def _openai_stream(payloads: list[str]) -> list[str]:
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    for data in payloads:
        value = json.loads(data)
        if "error" in value:
            return []  # the SDK raises on an error event: nothing runs
        state.handle_chunk(ChatCompletionChunk.construct(**value))
    return [
        json.dumps(call.to_dict())
        for choice in state.current_completion_snapshot.choices
        for call in [
            *(choice.message.tool_calls or []),
            *([choice.message.function_call] if choice.message.function_call else []),
        ]
    ]


def _anthropic_stream(payloads: list[str]) -> list[str]:
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot = None
    bufs: dict[int, bytes] = {}
    for data in payloads:
        value = json.loads(data)
        if value.get("type") == "error":
            return []
        snapshot = accumulate_event(event=value, current_snapshot=snapshot, json_bufs=bufs)
    if snapshot is None:
        return []
    return [json.dumps(b.to_dict()) for b in snapshot.content if b.type.endswith("tool_use")]


CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call", "shell_call")
"""Responses output items a client runs; any other item with `call` in its type
counts too, so an item the guard let through unjudged is caught."""


def _is_call(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and "call" in str(item.get("type"))
        and not str(item.get("type")).endswith("_output")
    )


def _responses_stream(payloads: list[str]) -> list[str]:
    """Every call item a client of `openai`'s `ResponseStreamState` runs: the final
    response's (`get_final_response`, the Agents SDK) and each
    `response.output_item.done` item's (what codex runs). The running snapshot is left
    out: it shows items still in progress (it never adds custom-tool input deltas, so
    a streamed custom call reads `""` there) and no client runs one from it."""
    from openai._models import construct_type_unchecked
    from openai._types import omit
    from openai.lib.streaming.responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    calls: list[dict[str, Any]] = []
    for data in payloads:
        value = json.loads(data)
        if "error" in value and value.get("type") != "error":
            return []  # the SDK raises on an error payload: nothing runs
        event = construct_type_unchecked(type_=ResponseStreamEvent, value=value)
        for out in state.handle_event(event):
            item = getattr(out, "item", None)
            if out.type == "response.output_item.done" and item is not None:
                calls.append(item.to_dict())
    final = state._completed_response
    if final is not None:
        calls += [i.to_dict() for i in final.output or []]
    return [json.dumps(c) for c in calls if _is_call(c)]


def sdk_calls(api: str, text: str, stream: bool) -> list[str]:
    """The calls (as JSON text) the official SDK would hand the harness."""
    if stream:
        payloads = sse_payloads(text)
        if api == "responses":
            return _responses_stream(payloads)
        return _openai_stream(payloads) if api == "openai" else _anthropic_stream(payloads)
    try:
        body = json.loads(text)
    except ValueError:
        return []
    if not isinstance(body, dict) or "error" in body:
        return []
    if api == "responses":
        return [json.dumps(i) for i in body.get("output") or [] if _is_call(i)]
    if api == "openai":
        return [
            json.dumps(c)
            for choice in body.get("choices") or []
            for c in [
                *((choice.get("message") or {}).get("tool_calls") or []),
                *(
                    [choice["message"]["function_call"]]
                    if (choice.get("message") or {}).get("function_call")
                    else []
                ),
            ]
        ]
    return [
        json.dumps(b) for b in body.get("content") or [] if str(b.get("type")).endswith("tool_use")
    ]
