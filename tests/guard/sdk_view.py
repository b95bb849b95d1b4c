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


def sdk_calls(api: str, text: str, stream: bool) -> list[str]:
    """The calls (as JSON text) the official SDK would hand the harness."""
    if stream:
        payloads = sse_payloads(text)
        return _openai_stream(payloads) if api == "openai" else _anthropic_stream(payloads)
    try:
        body = json.loads(text)
    except ValueError:
        return []
    if not isinstance(body, dict) or "error" in body:
        return []
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
