"""The exchange record: one request/response pair, with what the trainer needs from it.

Token ids and logprobs are taken from vLLM's extensions when present
(`prompt_token_ids`, `choices[].token_ids`, `choices[].logprobs.content[].logprob`);
Anthropic responses carry none, so their fields stay null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from repo2rlenv import ui
from train.guard.checker import Decision


def blocked_summary(decisions: list[Decision]) -> list[dict[str, Any]]:
    return [
        {"call_id": d.call.id, "tool": d.call.name, "rules": d.rules}
        for d in decisions
        if not d.allowed
    ]


def openai_tokens(response: dict[str, Any]) -> dict[str, Any]:
    """Token fields of a non-streaming completion or of a reassembled stream."""
    choices = response.get("choices") or []
    first = choices[0] if choices and isinstance(choices[0], dict) else {}
    logprobs = first.get("logprobs")
    if isinstance(logprobs, dict):
        values = [t.get("logprob") for t in logprobs.get("content") or []]
    elif isinstance(logprobs, list):
        values = logprobs
    else:
        values = None
    return {
        "prompt_token_ids": response.get("prompt_token_ids"),
        "completion_token_ids": first.get("token_ids") or None,
        "logprobs": values or None,
        "finish_reason": first.get("finish_reason"),
    }


def anthropic_tokens(response: dict[str, Any]) -> dict[str, Any]:
    """Also the Responses API's line: neither carries token ids; its `status` stands in
    for the stop reason."""
    return {
        "prompt_token_ids": None,
        "completion_token_ids": None,
        "logprobs": None,
        "finish_reason": response.get("stop_reason", response.get("status")),
    }


@dataclass
class _StreamRecord:
    """A record the stream rewriter builds as each payload passes (nothing of the
    stream is kept but the record: a parsed event dies as soon as it is read, so the
    collector never scans the events of 48 streams at once). The payloads are hostile:
    one the record cannot take (`"token_ids": 5`) is reported once and ends the
    record's additions; the response is still checked and the exchange still logged,
    with what was read before it."""

    broken: str | None = None

    def take(self, payload: dict[str, Any]) -> None:
        if self.broken is not None:
            return
        try:
            self.add(payload)  # type: ignore[attr-defined]
        except Exception as exc:  # hostile shapes: the record is for the log only
            self.broken = f"{type(exc).__name__}: {exc}"[:200]
            ui.error(f"guard: the exchange record of a stream stops here: {self.broken}")


@dataclass
class OpenAIStreamRecord(_StreamRecord):
    """The upstream's stream, reassembled for the exchange log."""

    id: str | None = None
    model: str | None = None
    prompt_token_ids: list[int] | None = None
    choices: dict[int, dict[str, Any]] = field(default_factory=dict)
    usage: dict[str, Any] | None = None

    def add(self, chunk: dict[str, Any]) -> None:
        self.id = self.id or chunk.get("id")
        self.model = self.model or chunk.get("model")
        if chunk.get("prompt_token_ids") is not None:
            self.prompt_token_ids = chunk["prompt_token_ids"]
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            index = choice.get("index", 0)
            slot = self.choices.get(index)
            if slot is None:  # not setdefault: that builds a slot for every event
                slot = self.choices[index] = {
                    "content": "",
                    "tool_calls": {},
                    "token_ids": [],
                    "logprobs": [],
                    "finish_reason": None,
                }
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                slot["content"] += delta["content"]
            for call in delta.get("tool_calls") or []:
                entry = slot["tool_calls"].get(call.get("index", 0))
                if entry is None:
                    entry = slot["tool_calls"][call.get("index", 0)] = {
                        "id": None,
                        "name": "",
                        "arguments": "",
                    }
                entry["id"] = entry["id"] or call.get("id")
                function = call.get("function") or {}
                entry["name"] += function.get("name") or ""
                entry["arguments"] += function.get("arguments") or ""
            if choice.get("token_ids"):
                slot["token_ids"] += choice["token_ids"]
            logprobs = choice.get("logprobs") or {}
            slot["logprobs"] += [t.get("logprob") for t in logprobs.get("content") or []]
            if choice.get("finish_reason"):
                slot["finish_reason"] = choice["finish_reason"]

    def response(self) -> dict[str, Any]:
        choices = []
        for index, slot in sorted(self.choices.items()):
            calls = [slot["tool_calls"][i] for i in sorted(slot["tool_calls"])]
            choices.append(
                {
                    "index": index,
                    "content": slot["content"],
                    "tool_calls": calls,
                    "token_ids": slot["token_ids"],
                    "logprobs": slot["logprobs"],
                    "finish_reason": slot["finish_reason"],
                }
            )
        return {
            "id": self.id,
            "model": self.model,
            "prompt_token_ids": self.prompt_token_ids,
            "choices": choices,
            "usage": self.usage,
        }


@dataclass
class AnthropicStreamRecord(_StreamRecord):
    """The upstream's Messages stream, reassembled for the exchange log."""

    message: dict[str, Any] = field(default_factory=dict)
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None

    def add(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "message_start":
            self.message = dict(payload.get("message") or {})
        elif kind == "content_block_start":
            self.blocks[payload.get("index", 0)] = dict(payload.get("content_block") or {})
        elif kind == "content_block_delta":
            block = self.blocks.setdefault(payload.get("index", 0), {})
            delta = payload.get("delta") or {}
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            if "partial_json" in delta:
                block["partial_json"] = block.get("partial_json", "") + delta["partial_json"]
        elif kind == "message_delta":
            self.stop_reason = (payload.get("delta") or {}).get("stop_reason")
            self.usage = payload.get("usage") or self.usage

    def response(self) -> dict[str, Any]:
        return {
            **self.message,
            "content": [self.blocks[i] for i in sorted(self.blocks)],
            "stop_reason": self.stop_reason,
            "usage": self.usage or self.message.get("usage"),
        }
