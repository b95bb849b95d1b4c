"""OpenAI Chat Completions: what a request declares, and rewriting its responses.

A blocked call is removed from `message.tool_calls` (or from the stream's
`delta.tool_calls`, the remaining calls renumbered from 0), its notice is added as
assistant text, and `finish_reason` becomes `stop` when no call is left, so the client
never runs it and still sees a well-formed completion.

Streams: text deltas pass through as they come; chunks carrying tool-call deltas are
held until the choice finishes, then the calls are checked together. When all pass,
the held chunks are forwarded; otherwise the notice comes first, then one chunk per
remaining call (whole arguments, renumbered from 0), then the finish.

What goes out is what was judged (issue 27): every chunk is re-serialised from what
the guard parsed (a repeated key reaches no client), a chunk carrying several choices
is split into one chunk per choice (so a choice that finishes never releases another
choice's unjudged call), and what the SDK's accumulator would read differently is
refused: a call type other than `function` (`custom`), a tool-call index that is not
the next one (the SDK merges deltas by list position), arguments with a repeated key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from train.guard import wire
from train.guard.calls import parse_arguments
from train.guard.checker import Decision
from train.guard.exchange import OpenAIStreamRecord
from train.guard.facts import ToolCall
from train.guard.openai_calls import (
    calls_of,
    check_arguments,
    check_call_type,
    legacy_call,
    notices,
    tool_call,
)
from train.guard.refusal import Unreadable, event_object, is_int, object_list
from train.guard.sse import Event, frame, json_frame

Check = Callable[[list[ToolCall]], list[Decision]]
CONVERSATION_ROLES = frozenset({"user", "tool", "function"})
LEGACY = -1
"""The key of a stream's legacy `function_call` among a choice's held calls."""


def declared_tools(body: dict[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            function = tool.get("function") or {}
            name = function.get("name") if isinstance(function, dict) else None
            if isinstance(name, str):
                names.add(name)
    for function in body.get("functions") or []:
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return names


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def conversation_texts(body: dict[str, Any]) -> list[str]:
    """The user and tool messages: where a host may legitimately have been shown."""
    return [
        _content_text(m.get("content"))
        for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") in CONVERSATION_ROLES
    ]


def rewrite_response(body: dict[str, Any], check: Check) -> tuple[bool, list[Decision]]:
    """Rewrites a non-streaming completion in place; (changed, decisions). Raises
    Unreadable when the body is not a completion the guard can read whole."""
    choices = object_list(body.get("choices"), "the completion has no list of choices")
    changed = False
    decisions: list[Decision] = []
    for choice in choices:
        if not is_int(choice.get("index", 0)):
            raise Unreadable("guard.upstream-unreadable", "a choice index is not an integer")
        message = choice.get("message")
        if message is None:
            continue
        if not isinstance(message, dict):
            raise Unreadable("guard.upstream-unreadable", "a choice's message is not an object")
        raw_calls, legacy = calls_of(message)
        if not raw_calls and legacy is None:
            continue
        calls = [tool_call(c) for c in raw_calls]
        if legacy is not None:
            calls.append(legacy_call(legacy))
        verdicts = check(calls)
        decisions += verdicts
        if all(d.allowed for d in verdicts):
            continue
        changed = True
        kept = [c for c, d in zip(raw_calls, verdicts, strict=False) if d.allowed]
        notice = notices(verdicts)
        message["content"] = (
            f"{message['content']}\n\n{notice}" if message.get("content") else notice
        )
        if kept:
            message["tool_calls"] = kept
        else:
            message.pop("tool_calls", None)
        if legacy is not None and not verdicts[-1].allowed:
            message.pop("function_call", None)
        if (
            not kept
            and message.get("function_call") is None
            and choice.get("finish_reason") in ("tool_calls", "function_call")
        ):
            choice["finish_reason"] = "stop"
    return changed, decisions


@dataclass
class _Choice:
    """A choice's held chunks: their frames (re-serialised), and of the chunks themselves
    only the first (the rewritten chunks' head) and the last (the finish)."""

    frames: list[bytes] = field(default_factory=list)
    first: dict[str, Any] = field(default_factory=dict)
    last: dict[str, Any] = field(default_factory=dict)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)


class StreamRewriter:
    """Text chunks are forwarded at once (re-serialised, one choice each); the
    exchange record is built as the chunks pass, and no chunk is kept beyond its own
    feed but the first and last of a held choice.

    Tool calls are held until their choice finishes. `prepare` is told of a call as soon
    as its arguments close into a JSON object, a token or more before the finish, so the
    part of its check that depends on the call alone is done by the time it counts."""

    def __init__(self, check: Check, prepare: Callable[[ToolCall], None] | None = None) -> None:
        self.check = check
        self.prepare = prepare
        self.choices: dict[int, _Choice] = {}
        self.seen: set[int] = set()
        """Choice indices the client has been sent (or held)."""
        self.done: set[int] = set()
        """Choices whose held calls were judged and sent."""
        self.record = OpenAIStreamRecord()
        self.decisions: list[Decision] = []
        self.changed = False
        self.finished = False
        """`[DONE]` was seen: the stream is over for the client."""

    def feed(self, event: Event) -> list[bytes]:
        """Every chunk is parsed as JSON (a key spelled `"tool\\u005fcalls"` is still
        `tool_calls`); one the guard cannot read raises Unreadable."""
        if event.data is not None and event.data.strip() == "[DONE]":
            self.finished = True
            return [*self._flush_all(), event.frame()]
        chunk = event_object(event, "a chunk")
        if chunk is None:
            return [event.frame()]
        choices = object_list(
            chunk.get("choices"), "a chunk's choices are not a list", optional=True
        )
        for choice in choices:
            delta = choice.get("delta") or {}
            if (
                not is_int(choice.get("index", 0))
                or not isinstance(delta, dict)
                or "message" in choice
            ):
                raise Unreadable("guard.upstream-unreadable", "a choice the guard cannot read")
            tool_calls = delta.get("tool_calls") or []
            legacy = delta.get("function_call")
            if not isinstance(tool_calls, list) or not (legacy is None or isinstance(legacy, dict)):
                raise Unreadable("guard.upstream-unreadable", "a tool-call delta is malformed")
        self.record.take(chunk)  # after the checks: the record sorts choice indices
        if len(choices) < 2:
            return self._feed_choice(chunk, choices[0] if choices else None)
        rest = {k: v for k, v in chunk.items() if k != "choices"}
        return [f for c in choices for f in self._feed_choice({**rest, "choices": [c]}, c)]

    def _feed_choice(self, chunk: dict[str, Any], choice: dict[str, Any] | None) -> list[bytes]:
        """One chunk of at most one choice, re-serialised: held with its choice's calls,
        or out at once.

        The SDK places choices by list position (a new index is appended), so a new
        choice must carry the next index, and one whose first chunk is held is opened
        at once with an empty delta: a later choice released first still lands at its
        own position."""
        data = json_frame(chunk)
        if choice is None:
            return [data]
        index = choice.get("index", 0)
        opener: list[bytes] = []
        if index not in self.seen:
            if index != len(self.seen):
                raise Unreadable("guard.choice-index", "a choice index is not the next one")
            self.seen.add(index)
            empty = {"index": index, "delta": {}, "finish_reason": None}
            opener = [json_frame({**chunk, "choices": [empty]})]
        delta = choice.get("delta") or {}
        tool_calls = delta.get("tool_calls") or []
        legacy = delta.get("function_call")
        state = self.choices.get(index)
        if not tool_calls and legacy is None and state is None:
            return [data]
        out = opener
        if state is None:
            if index in self.done:  # the SDK would merge it into the calls already sent
                raise Unreadable("guard.choice-finished", "a tool call after its choice finished")
            state = self.choices[index] = _Choice()
        for call in tool_calls:
            if isinstance(call, dict) and is_int(call.get("index", 0)) and call.get("index", 0) < 0:
                # the SDK reads -1 as the last call (Python list position)
                raise Unreadable("guard.tool-call-index", "a tool call index is negative")
            self._add(state, call)
        if legacy is not None:
            self._add(state, {"index": LEGACY, "function": legacy})
        if not state.frames:
            state.first = chunk
        state.last = chunk
        state.frames.append(data)
        if choice.get("finish_reason"):
            out += self._finish(index)
        return out

    def _add(self, state: _Choice, call: Any) -> None:
        if not isinstance(call, dict) or not is_int(call.get("index", 0)):
            raise Unreadable("guard.upstream-unreadable", "a tool call index is not an integer")
        check_call_type(call)
        function = call.get("function") or {}
        if not isinstance(function, dict):
            raise Unreadable("guard.upstream-unreadable", "a tool call's function is malformed")
        name, arguments = function.get("name") or "", function.get("arguments") or ""
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise Unreadable("guard.upstream-unreadable", "a tool call's name or arguments")
        key = call.get("index", 0)
        entry = state.calls.get(key)
        if entry is None:
            if key != LEGACY and key != sum(1 for k in state.calls if k != LEGACY):
                # the SDK inserts a new call at list position `index` (appending past
                # the end) and merges later deltas by position: a skipped index makes
                # the guard's call and the SDK's two different calls
                raise Unreadable("guard.tool-call-index", "a tool call index is not the next one")
            entry = state.calls[key] = {"id": "", "name": "", "arguments": ""}
        entry["id"] = entry["id"] or str(call.get("id") or "")
        entry["name"] += name
        if arguments:
            entry["arguments"] += arguments
            self._closed(entry)

    def _closed(self, entry: dict[str, str]) -> None:
        if self.prepare is None or not entry["name"] or not entry["arguments"].endswith("}"):
            return
        raw, args = parse_arguments(entry["arguments"])
        if args is not None:
            self.prepare(ToolCall(entry["id"], entry["name"], raw, args, "openai"))

    def close(self) -> list[bytes]:
        """The upstream ended without `[DONE]`: settle what is still held."""
        return self._flush_all()

    def _flush_all(self) -> list[bytes]:
        return [frame for index in list(self.choices) for frame in self._finish(index)]

    def _finish(self, index: int) -> list[bytes]:
        state = self.choices.pop(index)
        self.done.add(index)
        order = sorted(state.calls)
        for i in order:
            check_arguments(state.calls[i]["arguments"])
        calls = [
            ToolCall(
                state.calls[i]["id"],
                state.calls[i]["name"],
                *parse_arguments(state.calls[i]["arguments"]),
                "openai",
            )
            for i in order
        ]
        verdicts = self.check(calls) if calls else []
        self.decisions += verdicts
        if all(d.allowed for d in verdicts):
            return state.frames
        self.changed = True
        first = state.first
        head = {
            "id": first.get("id"),
            "object": "chat.completion.chunk",
            "created": first.get("created"),
            "model": first.get("model"),
        }
        out = [_chunk(head, index, {"content": notices(verdicts)})]
        kept = 0
        for call_index, decision in zip(order, verdicts, strict=True):
            if decision.allowed and call_index == LEGACY:
                call = state.calls[call_index]
                legacy = {"name": call["name"], "arguments": call["arguments"]}
                out.append(_chunk(head, index, {"function_call": legacy}))
            elif decision.allowed:
                call = state.calls[call_index]
                out.append(
                    _chunk(
                        head,
                        index,
                        {
                            "tool_calls": [
                                {
                                    "index": kept,
                                    "id": call["id"],
                                    "type": "function",
                                    "function": {
                                        "name": call["name"],
                                        "arguments": call["arguments"],
                                    },
                                }
                            ]
                        },
                    )
                )
                kept += 1
        last = state.last
        finish = next(
            (
                c.get("finish_reason")
                for c in last.get("choices") or []
                if c.get("index", 0) == index
            ),
            None,
        )
        if finish is not None:
            closing = {**head, **{k: v for k, v in last.items() if k != "choices"}}
            legacy_kept = any(
                d.allowed for i, d in zip(order, verdicts, strict=True) if i == LEGACY
            )
            reason = (
                "stop"
                if finish in ("tool_calls", "function_call") and not kept and not legacy_kept
                else finish
            )
            out.append(_chunk(closing, index, {}, reason))
        return out


def _chunk(
    head: dict[str, Any], index: int, delta: dict[str, Any], finish: str | None = None
) -> bytes:
    """A rewritten chunk: the held tool-call deltas are replayed whole, one per call."""
    body = {**head, "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}
    return frame(wire.dumps(body))
