"""Anthropic Messages: what a request declares, and rewriting its responses.

A blocked `tool_use` block is replaced, in place, by a `text` block carrying the notice,
so block indices stay contiguous; `stop_reason` becomes `end_turn` when no tool use is
left. In streams, text blocks pass through as they come; a tool-use block is held from
`content_block_start` to its `content_block_stop`, checked, then replayed as it was or
replaced by a text block at the same index.

What goes out is what was judged (issue 27): every event is re-serialised from what
the guard parsed (a repeated key, such as a block typed `tool_use` then `text`, reaches
no client), a tool block's input is the one the SDK keeps (the start's `input` when
its deltas add up to nothing, else the deltas' JSON), and what the SDK would place
differently is refused: a block that starts at any index but the next (the SDK appends
blocks and applies deltas by list position), a delta or stop for a block not open,
input JSON with a repeated key.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from train.guard import wire
from train.guard.calls import parse_arguments
from train.guard.checker import Decision
from train.guard.exchange import AnthropicStreamRecord
from train.guard.facts import ToolCall
from train.guard.refusal import Unreadable, event_object, is_int, object_list
from train.guard.sse import Event, frame, json_frame
from train.guard.wire import has_duplicate_keys

Check = Callable[[list[ToolCall]], list[Decision]]
TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use"})
EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)
"""The stream's event types (by the JSON `type`); any other is refused."""
TOOL_DELTAS = frozenset({"input_json_delta"})


def declared_tools(body: dict[str, Any]) -> set[str]:
    return {
        t["name"]
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("name"), str)
    }


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    if block.get("type") == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return "\n".join(_block_text(b) for b in content)
        return content if isinstance(content, str) else ""
    return ""


def conversation_texts(body: dict[str, Any]) -> list[str]:
    """User turns, tool results included (Anthropic puts them in user messages)."""
    out = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            out.append("\n".join(_block_text(b) for b in content))
        else:
            out.append(_block_text(content))
    return out


def _tool_call(block: dict[str, Any]) -> ToolCall:
    text, args = parse_arguments(block.get("input", {}))
    return ToolCall(
        str(block.get("id") or ""), str(block.get("name") or ""), text, args, "anthropic"
    )


def rewrite_response(body: dict[str, Any], check: Check) -> tuple[bool, list[Decision]]:
    """Raises Unreadable when the body is not a message whose blocks can be read."""
    content = object_list(body.get("content"), "the message has no list of content blocks")
    positions = [
        i for i, b in enumerate(content) if isinstance(b, dict) and b.get("type") in TOOL_BLOCKS
    ]
    if not positions:
        return False, []
    decisions = check([_tool_call(content[i]) for i in positions])
    if all(d.allowed for d in decisions):
        return False, decisions
    for i, decision in zip(positions, decisions, strict=True):
        if not decision.allowed:
            content[i] = {"type": "text", "text": decision.notice()}
    if body.get("stop_reason") == "tool_use" and all(not d.allowed for d in decisions):
        body["stop_reason"] = "end_turn"
    return True, decisions


@dataclass
class _Held:
    start: dict[str, Any]
    frames: list[bytes] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)


class StreamRewriter:
    """Text deltas are forwarded at once (re-serialised); the exchange record is built
    as the events pass, and no parsed event outlives its own feed."""

    def __init__(self, check: Check) -> None:
        self.check = check
        self.held: dict[int, _Held] = {}
        self.open_blocks: set[int] = set()
        """Indices of the (non tool-use) blocks started and not stopped."""
        self.started = 0
        """Blocks started so far: the index the next start must carry."""
        self.allowed_tool_blocks = 0
        self.blocked_tool_blocks = 0
        self.record = AnthropicStreamRecord()
        self.decisions: list[Decision] = []
        self.changed = False
        self.finished = False
        """`message_stop` was seen: the stream is over for the client."""

    def feed(self, event: Event) -> list[bytes]:
        """Every event is parsed and judged by its JSON `type`, never by the SSE event
        name (which must agree with it when present); indices are integers."""
        payload = event_object(event)
        if payload is None:
            return [event.frame()]
        kind = payload.get("type")
        if kind not in EVENTS or (event.event is not None and event.event != kind):
            raise Unreadable(
                "guard.upstream-unreadable",
                f"event {str(event.event)[:40]!r} of type {str(kind)[:40]!r} is not one the "
                "guard reads",
            )
        index = payload.get("index")
        if kind.startswith("content_block_") and not is_int(index):
            raise Unreadable("guard.upstream-unreadable", "a content block index is not an integer")
        self.record.take(payload)  # after the index check: the record sorts indices
        out = json_frame(payload, kind)
        if kind == "message_start":
            message = payload.get("message")
            if not isinstance(message, dict) or message.get("content") not in (None, []):
                raise Unreadable("guard.upstream-unreadable", "message_start carries content")
        elif kind == "content_block_start":
            return self._start(index, payload, event.data, out)
        elif kind == "content_block_delta":
            delta = payload.get("delta")
            if not isinstance(delta, dict):
                raise Unreadable("guard.upstream-unreadable", "a content block delta is malformed")
            if index in self.held:
                held = self.held[index]
                held.frames.append(out)
                if delta.get("type") not in TOOL_DELTAS or not isinstance(
                    delta.get("partial_json"), str
                ):
                    raise Unreadable("guard.upstream-unreadable", "a tool-use delta is malformed")
                held.parts.append(delta["partial_json"])
                return []
            if delta.get("type") in TOOL_DELTAS or index not in self.open_blocks:
                raise Unreadable("guard.upstream-unreadable", "a delta for no open block")
        elif kind == "content_block_stop":
            if index in self.held:
                return self._settle(index, out)
            if index not in self.open_blocks:
                raise Unreadable("guard.block-index", "a stop for no open block")
            self.open_blocks.discard(index)
        elif kind == "message_delta":
            settled = self._settle_all()
            delta = payload.get("delta") or {}
            if (
                isinstance(delta, dict)
                and delta.get("stop_reason") == "tool_use"
                and self.blocked_tool_blocks
                and not self.allowed_tool_blocks
            ):
                payload = copy.deepcopy(payload)
                payload["delta"]["stop_reason"] = "end_turn"
                return [*settled, frame(wire.dumps(payload), kind)]
            return [*settled, out]
        elif kind == "message_stop":
            self.finished = True
            return [*self._settle_all(), out]
        return [out]

    def _start(self, index: int, payload: dict[str, Any], data: str, out: bytes) -> list[bytes]:
        """A block opens: a tool block is held until its stop, any other goes out."""
        block = payload.get("content_block")
        if not isinstance(block, dict):
            raise Unreadable("guard.upstream-unreadable", "a content block start is malformed")
        if has_duplicate_keys(data):  # a block typed `tool_use`, then `text`
            raise Unreadable("guard.duplicate-keys", "a content block start repeats a key")
        if index != self.started or self.held or self.open_blocks:
            # the SDK appends blocks as their starts arrive and applies deltas by
            # list position: a block started while a held tool block is open
            # would reach the client first and take the tool block's position
            raise Unreadable("guard.block-index", "a content block starts out of order")
        self.started += 1
        if block.get("type") in TOOL_BLOCKS:
            self.held[index] = _Held(block, [out])
            return []
        self.open_blocks.add(index)
        return [out]

    def close(self) -> list[bytes]:
        return self._settle_all()

    def _settle_all(self) -> list[bytes]:
        return [f for index in sorted(self.held) for f in self._settle(index, None)]

    def _settle(self, index: int, stop: bytes | None) -> list[bytes]:
        held = self.held.pop(index)
        block = dict(held.start)
        joined = "".join(held.parts)
        if joined:  # as the SDK: an empty buffer keeps the start's input
            if not joined.strip():  # the SDK fails on it; the guard would read `{}`
                raise Unreadable("guard.upstream-unreadable", "a tool block's input is blank")
            if has_duplicate_keys(joined):
                raise Unreadable("guard.duplicate-keys", "a tool block's input repeats a key")
            block["input"] = joined
        decision = self.check([_tool_call(block)])[0]
        self.decisions.append(decision)
        if decision.allowed:
            self.allowed_tool_blocks += 1
            return [*held.frames, *([stop] if stop else [])]
        self.blocked_tool_blocks += 1
        self.changed = True
        return [
            frame(
                wire.dumps(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    }
                ),
                "content_block_start",
            ),
            frame(
                wire.dumps(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": decision.notice()},
                    }
                ),
                "content_block_delta",
            ),
            frame(wire.dumps({"type": "content_block_stop", "index": index}), "content_block_stop"),
        ]
