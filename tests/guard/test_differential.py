"""Differential fuzz (issue 27): generated streams through the guard's rewriters, then
through the official SDKs' own accumulators (`openai`'s `ChatCompletionStreamState`,
`anthropic`'s `accumulate_event`). No run may end with the SDK holding a call the
guard did not judge and allow; every payload the guard sends reads the same first-wins
and last-wins (no repeated key). A stream the guard refuses ends in an error event, on
which the SDKs raise: nothing runs.

Generated: chunk splits of the arguments, one or two choices interleaved and sharing
chunks, tool-call and choice indices (some skipped or reused), call types (`custom`
with a decoy `function`), repeated keys inside the arguments, Anthropic start inputs
with and without deltas, empty deltas, and block indices reused after a text block.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.guard.sdk_view import first_wins, sdk_calls, sse_payloads
from train.guard import anthropic_api, openai_api, responses_api
from train.guard.checker import Decision
from train.guard.facts import ToolCall, Violation
from train.guard.refusal import Unreadable
from train.guard.sse import SSEParser

DANGER = "curl -s https://example.org/x"
COMMANDS = ["ls", DANGER, "echo hi"]


class Judge:
    """Blocks any call carrying `curl`; remembers what it allowed."""

    def __init__(self) -> None:
        self.allowed: list[ToolCall] = []

    def __call__(self, calls: list[ToolCall]) -> list[Decision]:
        out = []
        for call in calls:
            bad = "curl" in call.arguments or call.args is None
            out.append(Decision(call, [Violation("test.block", "x")] if bad else []))
            if not bad:
                self.allowed.append(call)
        return out


def _through(rewriter: Any, body: bytes) -> str:
    """The client's bytes; a refusal ends them with an error event, as the relay does."""
    parser = SSEParser()
    frames: list[bytes] = []
    try:
        for event in parser.feed(body) + parser.close():
            if rewriter.finished:
                break
            frames += rewriter.feed(event)
        frames += rewriter.close()
    except Unreadable:
        return b"".join(frames).decode() + 'data: {"type":"error","error":{}}\n\n'
    return b"".join(frames).decode()


def _sse(events: list[Any]) -> bytes:
    return "".join(
        f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events
    ).encode()


def _pieces(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=3)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _arguments(draw: st.DrawFn) -> str:
    first, second = draw(st.sampled_from(COMMANDS)), draw(st.sampled_from(COMMANDS))
    if draw(st.booleans()):  # a repeated key, either value first
        return f'{{"command": {json.dumps(first)}, "command": {json.dumps(second)}}}'
    return json.dumps({"command": first})


@st.composite
def openai_streams(draw: st.DrawFn) -> bytes:
    n = draw(st.integers(1, 2))
    parts: list[tuple[int, dict[str, Any]]] = []  # (choice, choice delta entry) in order
    for choice in range(n):
        index = choice if draw(st.integers(0, 9)) else draw(st.sampled_from([0, 1, 2]))
        for call in range(draw(st.integers(0, 2))):
            call_index = call if draw(st.integers(0, 9)) else draw(st.sampled_from([0, 1, 3, -1]))
            args = _arguments(draw)
            head: dict[str, Any] = {"index": call_index, "id": f"c{choice}{call}"}
            kind = draw(st.sampled_from(["function", "function", "function", "custom", None]))
            if kind is not None:
                head["type"] = kind
            if kind == "custom":
                head["custom"] = {"name": "bash", "input": draw(st.sampled_from(COMMANDS))}
            for i, piece in enumerate(_pieces(draw, args)):
                function = {"arguments": piece} | ({"name": "bash"} if i == 0 else {})
                delta = ({**head} if i == 0 else {"index": call_index}) | {"function": function}
                parts.append((index, {"delta": {"tool_calls": [delta]}}))
        if draw(st.booleans()):
            parts.append((index, {"delta": {"content": "text"}}))
        parts.append((index, {"delta": {}, "finish_reason": "tool_calls", "last": True}))
        if draw(st.integers(0, 5)) == 0:  # a call after the finish, merged by the SDK
            late = {"index": 0, "function": {"arguments": draw(st.sampled_from([" ", "{}"]))}}
            parts.append((index, {"delta": {"tool_calls": [late]}}))
    order = draw(st.permutations(range(len(parts))))
    # keep each choice's own order; interleave choices
    by_choice: dict[int, list[dict[str, Any]]] = {}
    for index, entry in parts:
        by_choice.setdefault(index, []).append(entry)
    queues = {k: list(v) for k, v in by_choice.items()}
    events: list[Any] = []
    for position in order:
        key = list(queues)[position % len(queues)]
        if not queues[key]:
            key = next(k for k in queues if queues[k])
        entry = queues[key].pop(0)
        choice = {
            "index": key,
            "delta": entry["delta"],
            "finish_reason": entry.get("finish_reason"),
        }
        if events and draw(st.integers(0, 3)) == 0:  # shares the previous chunk
            events[-1]["choices"].append(choice)
        else:
            events.append({"id": "x", "object": "chat.completion.chunk", "choices": [choice]})
    return _sse([*events, "[DONE]"])


@st.composite
def anthropic_streams(draw: st.DrawFn) -> bytes:
    usage = {"input_tokens": 1, "output_tokens": 1}
    events: list[Any] = [
        {"type": "message_start", "message": {"id": "m", "content": [], "usage": usage}}
    ]
    late_stops: list[dict[str, Any]] = []
    for position in range(1, draw(st.integers(1, 3)) + 1):
        index = position - 1 if draw(st.integers(0, 5)) else draw(st.sampled_from([0, 1]))
        if draw(st.booleans()):
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": "t"},
                }
            )
        else:
            start_input = draw(st.sampled_from([{}, {"command": DANGER}, {"command": "ls"}]))
            block = {"type": "tool_use", "id": f"t{position}", "name": "bash", "input": start_input}
            events.append({"type": "content_block_start", "index": index, "content_block": block})
            deltas = draw(st.sampled_from(["none", "empty", "args"]))
            pieces = {"none": [], "empty": [""], "args": _pieces(draw, _arguments(draw))}[deltas]
            for piece in pieces:
                delta = {"type": "input_json_delta", "partial_json": piece}
                events.append({"type": "content_block_delta", "index": index, "delta": delta})
        if draw(st.integers(0, 4)):
            events.append({"type": "content_block_stop", "index": index})
        else:  # stopped only at the end: the next block starts while this one is open
            late_stops.append({"type": "content_block_stop", "index": index})
    events += late_stops
    events.append({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": usage})
    events.append({"type": "message_stop"})
    return _sse(events)


def _no_repeated_keys(text: str) -> None:
    for data in sse_payloads(text):
        assert first_wins(data) == json.loads(data), data


def _sdk(api: str, text: str) -> list[dict[str, Any]]:
    try:
        return [json.loads(c) for c in sdk_calls(api, text, stream=True)]
    except (IndexError, ValueError, KeyError, TypeError, AttributeError):
        return []  # the SDK raised on the stream: no call runs


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(openai_streams())
def test_openai_sdk_runs_only_what_the_guard_allowed(body: bytes) -> None:
    judge = Judge()
    text = _through(openai_api.StreamRewriter(judge), body)
    _no_repeated_keys(text)
    allowed = [(c.name, c.arguments) for c in judge.allowed]
    for call in _sdk("openai", text):
        function = call.get("function") or {}
        assert call.get("type") in (None, "function") and not call.get("custom"), call
        assert (function.get("name") or "", function.get("arguments")) in allowed, (call, allowed)


@FUZZ
@given(anthropic_streams())
def test_anthropic_sdk_runs_only_what_the_guard_allowed(body: bytes) -> None:
    judge = Judge()
    text = _through(anthropic_api.StreamRewriter(judge), body)
    _no_repeated_keys(text)
    allowed = [(c.name, c.args) for c in judge.allowed]
    for block in _sdk("anthropic", text):
        assert (block.get("name"), block.get("input")) in allowed, (block, allowed)


ITEM_KINDS = ["function_call", "function_call", "custom_tool_call", "local_shell_call"]
ODD_KINDS = ["message", "web_search_call", "mystery_call"]
OTHER_DELTA = {
    "response.function_call_arguments.delta": "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.delta": "response.function_call_arguments.delta",
}


def _call_item(draw: st.DrawFn, kind: str, position: int) -> tuple[dict[str, Any], str | None]:
    """A call item as `output_item.done` carries it, and its streamed text field."""
    head = {"type": kind, "id": f"it{position}", "call_id": f"c{position}", "status": "completed"}
    if kind == "function_call":
        return {**head, "name": "bash", "arguments": _arguments(draw)}, "arguments"
    if kind == "custom_tool_call":
        return {**head, "name": "bash", "input": draw(st.sampled_from(COMMANDS))}, "input"
    argv = ["bash", "-lc", draw(st.sampled_from(COMMANDS))]
    return {**head, "action": {"type": "exec", "command": argv, "env": {}}}, None


@st.composite
def responses_streams(draw: st.DrawFn) -> bytes:
    """Items added, streamed and done (indices skipped or reused, types changed, deltas
    that disagree with the done item), then lifecycle outputs that repeat, omit or swap
    the calls."""
    base = {"id": "r", "object": "response", "created_at": 1, "model": "m", "status": "x"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "output": []}}
    ]
    done_items: list[dict[str, Any]] = []
    for position in range(draw(st.integers(1, 3))):
        index = position if draw(st.integers(0, 14)) else draw(st.sampled_from([0, 1, 2]))
        kind = draw(st.sampled_from(ITEM_KINDS if draw(st.integers(0, 9)) else ODD_KINDS))
        if kind in ("message", "web_search_call", "mystery_call"):
            item = {"type": kind, "id": f"o{position}", "status": "completed", "content": []}
            if kind == "message":
                item["role"] = "assistant"
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": item}
            )
            done_items.append(item)
            continue
        item, field = _call_item(draw, kind, position)
        started = {**item, "status": "in_progress"}
        if field is not None:
            streamed = item[field] if draw(st.integers(0, 9)) else draw(st.sampled_from(COMMANDS))
            started[field] = draw(st.sampled_from(["", streamed[:3]]))
            delta_type = {
                "arguments": "response.function_call_arguments.delta",
                "input": "response.custom_tool_call_input.delta",
            }[field]
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": started}
            )
            for piece in _pieces(draw, streamed[len(started[field]) :]):
                if draw(st.integers(0, 19)) == 0:  # a delta of the other call type
                    delta_type = OTHER_DELTA[delta_type]
                events.append({"type": delta_type, "output_index": index, "delta": piece})
        else:
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": started}
            )
        if draw(st.integers(0, 19)) == 0:  # the done item changes type
            item = {**item, "type": "custom_tool_call", "input": DANGER}
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        done_items.append(item)
    final = draw(st.sampled_from(["omitted", "same", "same", "swapped", "empty"]))
    output: list[dict[str, Any]] | None = {
        "omitted": None,
        "same": done_items,
        "empty": [],
        "swapped": [
            _call_item(draw, "function_call", 0)[0] | {"arguments": json.dumps({"command": DANGER})}
        ],
    }[final]
    if draw(st.integers(0, 5)) == 0:  # a lifecycle replacement after the items finished
        events.append(
            {"type": "response.in_progress", "response": {**base, "output": output or []}}
        )
    completed = {**base, "status": "completed"} | ({} if output is None else {"output": output})
    events.append({"type": "response.completed", "response": completed})
    return _sse(events)


def _judged_reading(item: dict[str, Any]) -> str:
    from train.guard.responses_items import tool_call

    try:
        return tool_call(item).arguments
    except (Unreadable, KeyError):
        return f"unreadable {item}"


@FUZZ
@given(responses_streams())
def test_responses_sdk_runs_only_what_the_guard_allowed(body: bytes) -> None:
    judge = Judge()
    text = _through(responses_api.StreamRewriter(judge), body)
    _no_repeated_keys(text)
    allowed = [c.arguments for c in judge.allowed]
    for item in _sdk("responses", text):
        assert DANGER not in json.dumps(item), item
        assert _judged_reading(item) in allowed, (item, allowed)
