"""OpenAI Responses API (`/v1/responses`): what a request declares, and rewriting its
responses, whole or streamed (issue 27, point 3). Codex and the OpenAI Agents SDK
speak it.

Which output items are calls, and how each is judged: `responses_items`. A blocked
call item is replaced, at its output index, by an assistant message carrying the
notice; the rest of the response is re-serialised from what the guard read.

Streams: events of shown items (message, reasoning) pass at once; a call item is held
from `response.output_item.added` to its `response.output_item.done`, judged on the
done item (what the SDK's final response and codex run), then released as it came or
replaced. What the SDK's accumulator (`ResponseStreamState`) would read differently is
refused: an output index that is not the next one or is reused, an event for an item
not open, an item whose type changes, deltas that do not add up to the done item's
arguments or input, a call the stream never judged in a lifecycle event's
`response.output` (the SDK takes the final response, and replacements of finished
items, from there), a response that completes with an item still open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from train.guard.checker import Decision
from train.guard.facts import ToolCall
from train.guard.refusal import Unreadable, event_object, is_int
from train.guard.responses_items import (
    TOOL_NAMES,
    judged_key,
    kind,
    notice_item,
    tool_call,
)
from train.guard.sse import Event, json_frame

Check = Callable[[list[ToolCall]], list[Decision]]
LIFECYCLE = frozenset(
    {
        "response.created",
        "response.queued",
        "response.in_progress",
        "response.completed",
        "response.failed",
        "response.incomplete",
    }
)
TERMINAL = frozenset({"response.completed", "response.failed", "response.incomplete"})
CALL_DELTAS = {
    "response.function_call_arguments.delta": ("function_call", "arguments"),
    "response.custom_tool_call_input.delta": ("custom_tool_call", "input"),
}
CALL_DONES = {
    "response.function_call_arguments.done": ("function_call", "arguments"),
    "response.custom_tool_call_input.done": ("custom_tool_call", "input"),
}
SHOWN_EVENTS = frozenset(
    {
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.delta",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.delta",
        "response.refusal.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.reasoning_part.added",
        "response.reasoning_part.done",
    }
)
"""Events that only add to a shown item (they must name an open one)."""


def declared_tools(body: dict[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") in ("function", "custom") and isinstance(tool.get("name"), str):
            names.add(tool["name"])
        elif tool.get("type") in TOOL_NAMES:
            names.add(TOOL_NAMES[tool["type"]])
    return names


CLIENT_TOOLS = frozenset({"function", "custom", *TOOL_NAMES})
"""Request tool types whose calls the client runs (and the guard checks); any other
(`web_search`, `code_interpreter`, `mcp`, `computer_use_preview`, ...) is refused."""


def hosted_tools(body: dict[str, Any]) -> list[str]:
    """The request's tools of a type the client does not run: a server with a tool
    server (vLLM's `--tool-server`) would run them itself, outside the sandbox and
    before the guard sees a byte, so such a request is refused, not forwarded."""
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        return ["(tools is not a list)"]
    return [
        str(t.get("type"))[:40] if isinstance(t, dict) else "(not an object)"
        for t in tools
        if not isinstance(t, dict) or t.get("type") not in CLIENT_TOOLS
    ]


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return []


def conversation_texts(body: dict[str, Any]) -> list[str]:
    """The user's words and the tools' outputs: where a host may have been shown."""
    given = body.get("input")
    if isinstance(given, str):
        return [given]
    out: list[str] = []
    for item in given if isinstance(given, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "user":
            out.append("\n".join(_texts(item.get("content"))))
        elif str(item.get("type", "")).endswith("_output"):
            output = item.get("output")
            out.append("\n".join(_texts(output)) if isinstance(output, list) else str(output or ""))
    return out


def rewrite_response(body: dict[str, Any], check: Check) -> tuple[bool, list[Decision]]:
    """Rewrites a whole response in place; raises Unreadable on an item it cannot read."""
    output = body.get("output")
    if not isinstance(output, list):
        raise Unreadable("guard.upstream-unreadable", "the response has no list of output items")
    positions = [i for i, item in enumerate(output) if kind(item) == "call"]
    if not positions:
        return False, []
    decisions = check([tool_call(output[i]) for i in positions])
    for i, decision in zip(positions, decisions, strict=True):
        if not decision.allowed:
            output[i] = notice_item(decision, i)
    return not all(d.allowed for d in decisions), decisions


@dataclass
class _Item:
    """An output item open in the stream: its added item, and for a call the held
    frames and the deltas of its arguments or input."""

    item: dict[str, Any]
    call: bool
    frames: list[bytes] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    done_text: str | None = None


class StreamRewriter:
    def __init__(self, check: Check) -> None:
        self.check = check
        self.open: dict[int, _Item] = {}
        self.started = 0
        """Output items added so far: the index the next one must carry."""
        self.judged: dict[str, dict[str, Any]] = {}
        """Each judged call item (`judged_key`) -> what the client was sent for it."""
        self.final: dict[str, Any] = {}
        self.decisions: list[Decision] = []
        self.changed = False
        self.finished = False
        self.record = self

    def response(self) -> dict[str, Any]:
        """The exchange log's record: the last lifecycle response, as sent."""
        return self.final

    def feed(self, event: Event) -> list[bytes]:
        payload = event_object(event)
        if payload is None:
            return [event.frame()]
        if not isinstance(payload.get("type"), str):
            raise Unreadable("guard.upstream-unreadable", "an event is not a typed JSON object")
        name = payload["type"]
        if event.event is not None and event.event != name:
            raise Unreadable("guard.upstream-unreadable", "an event's name is not its type")
        if name in LIFECYCLE:
            return self._lifecycle(name, payload)
        if name == "error":
            return [json_frame(payload, name)]
        index = payload.get("output_index")
        if not is_int(index):
            raise Unreadable(
                "guard.upstream-unreadable", f"event {name[:60]!r} has no output index"
            )
        if name == "response.output_item.added":
            return self._added(index, payload)
        state = self.open.get(index)
        if state is None:
            raise Unreadable("guard.output-index", "an event for an output item not open")
        if name == "response.output_item.done":
            return self._done(index, state, payload)
        frame = json_frame(payload, name)
        if not state.call:
            if name not in SHOWN_EVENTS:
                raise Unreadable("guard.unknown-event", f"event {name[:60]!r} on a shown item")
            return [frame]
        expected = CALL_DELTAS.get(name) or CALL_DONES.get(name)
        if expected is None or expected[0] != state.item["type"]:
            raise Unreadable("guard.item-type-changed", f"event {name[:60]!r} on a call item")
        text = payload.get("delta") if name in CALL_DELTAS else payload.get(expected[1])
        if not isinstance(text, str):
            raise Unreadable("guard.upstream-unreadable", "a call delta is not a string")
        if name in CALL_DELTAS:
            state.parts.append(text)
        else:
            state.done_text = text
        state.frames.append(frame)
        return []

    def _added(self, index: int, payload: dict[str, Any]) -> list[bytes]:
        if index != self.started:  # the SDK places items by output index
            raise Unreadable("guard.output-index", "an output index is not the next one")
        self.started += 1
        item = payload.get("item")
        call = kind(item) == "call"
        self.open[index] = _Item(item, call)
        frame = json_frame(payload, payload["type"])
        if call:
            self.open[index].frames.append(frame)
            return []
        return [frame]

    def _done(self, index: int, state: _Item, payload: dict[str, Any]) -> list[bytes]:
        del self.open[index]
        item = payload.get("item")
        if kind(item) != ("call" if state.call else "shown") or item["type"] != state.item["type"]:
            raise Unreadable("guard.item-type-changed", "an output item's type changed")
        frame = json_frame(payload, payload["type"])
        if not state.call:
            return [frame]
        for key in ("id", "call_id", "name"):
            if state.item.get(key) not in (None, item.get(key)):
                raise Unreadable("guard.item-type-changed", f"a call item's {key} changed")
        field_ = {"function_call": "arguments", "custom_tool_call": "input"}.get(item["type"])
        if field_ is not None:
            final, started = item.get(field_, ""), state.item.get(field_) or ""
            streamed = started + "".join(state.parts)
            if (streamed and streamed != final) or state.done_text not in (None, final):
                # the SDK's snapshot holds the deltas; its final response the done item
                raise Unreadable("guard.call-mismatch", "a call's deltas are not its done item")
        decision = self.check([tool_call(item)])[0]
        self.decisions.append(decision)
        if decision.allowed:
            self.judged[judged_key(item)] = item
            return [*state.frames, frame]
        self.changed = True
        notice = notice_item(decision, index)
        self.judged[judged_key(item)] = notice
        opened = {**notice, "status": "in_progress", "content": []}
        added = {"type": "response.output_item.added", "output_index": index, "item": opened}
        done = {"type": "response.output_item.done", "output_index": index, "item": notice}
        return [
            json_frame(added, added["type"]),
            json_frame(done, done["type"]),
        ]

    def _lifecycle(self, name: str, payload: dict[str, Any]) -> list[bytes]:
        """A lifecycle response's output may only repeat what the stream judged (the
        SDK takes the final response from `response.completed`, and replaces finished
        items from the others): each call in it is swapped for what the client got."""
        response = payload.get("response")
        if not isinstance(response, dict):
            raise Unreadable("guard.upstream-unreadable", f"{name} carries no response")
        output = response.get("output")
        if output is not None and not isinstance(output, list):
            raise Unreadable("guard.upstream-unreadable", "a response's output is not a list")
        for i, item in enumerate(output or []):
            if kind(item) == "call":
                sent = self.judged.get(judged_key(item))
                if sent is None:
                    raise Unreadable("guard.unjudged-call", f"{name} carries a call not judged")
                output[i] = sent
        if name in TERMINAL:
            if self.open and name == "response.completed":
                raise Unreadable("guard.unfinished-item", "the response completed an item open")
            self.finished = True
        self.final = response
        return [json_frame(payload, name)]

    def close(self) -> list[bytes]:
        return []
