"""Hypothesis fuzzing of the two inputs a policy or a broken upstream controls.

- Request framing, against the real `python -m train.guard` process: whatever head and
  body arrive, the guard answers with one well-formed status line or closes, stays up,
  and nothing off the allowlist reaches the upstream.
- Upstream SSE, against the stream rewriters: whatever events arrive, split anywhere,
  either the stream is refused (`Unreadable`) or no call the check blocked reaches the
  client (read as a client reads it: JSON per event).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.guard.hostile import ARGS, GuardProcess, HostileUpstream, calls_in, payloads, raw
from train.guard import anthropic_api, openai_api
from train.guard.checker import Decision
from train.guard.facts import ToolCall, Violation
from train.guard.refusal import Unreadable
from train.guard.routes import GUARDED, PASSED
from train.guard.sse import SSEParser

GUARD_ARGS = ("--client-timeout-s", "1")  # the `guard` fixture's flags (conftest)

# -- request framing ---------------------------------------------------------------------
TOKENS = st.sampled_from(
    ["0", "4", "-6", "+4", "²", "0x4", "4 ", " 4", "ffffffffffffffffff", "1e3", "", "a"]
)
FRAMING = st.sampled_from(["Content-Length", "Transfer-Encoding", "content-length", "X-A"])
PATHS = st.sampled_from(
    [
        "/v1/chat/completions",
        "/v1/messages",
        "/v1/models",
        "//v1/load_lora_adapter",
        "/v1/../pause",
        "/guard/health",
        "*",
        "http://x/v1/models",
        "/v1/%2e%2e/pause",
        "",
    ]
)


@st.composite
def requests_bytes(draw: st.DrawFn) -> bytes:
    method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "G ET", ""]))
    path = draw(PATHS | st.text(min_size=0, max_size=20))
    version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/1.1 x"]))
    lines = [f"{method} {path} {version}"]
    for _ in range(draw(st.integers(0, 4))):
        name = draw(FRAMING)
        value = draw(TOKENS | st.sampled_from(["chunked", "gzip, chunked", "identity"]))
        lines.append(f"{name}:{draw(st.sampled_from([' ', '', '  ']))}{value}")
    head = "\r\n".join(lines).encode("utf-8", "replace") + b"\r\n\r\n"
    body = draw(st.binary(max_size=40))
    if draw(st.booleans()):
        size = draw(TOKENS)
        body = f"{size}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    return head + body


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=requests_bytes())
@pytest.mark.slow
def test_request_framing_fuzz(guard: GuardProcess, upstream: HostileUpstream, data: bytes) -> None:
    before = len(upstream.received)
    answer = raw(guard.port, data, timeout=3)
    if answer:
        assert answer.startswith((b"HTTP/1.1 ", b"HTTP/1.0 ")), answer[:100]
    for _, target in upstream.received[before:]:
        assert target in GUARDED or target in PASSED, target
    assert guard.alive()
    with socket.create_connection(("127.0.0.1", guard.port), timeout=5):
        pass


def test_the_guard_answers_after_the_fuzz(guard: GuardProcess) -> None:
    assert requests.get(f"{guard.url}/v1/models", timeout=10).status_code == 200


# -- upstream SSE --------------------------------------------------------------------------
def _block_all(calls: list[ToolCall]) -> list[Decision]:
    return [Decision(c, [Violation("test.block", "fuzz")]) for c in calls]


INDEX = st.sampled_from([0, 1, 0.0, -1, "0", None, True, 2**70])
KEY = st.sampled_from(["tool_calls", "tool\\u005fcalls", "function_call", "content", "role"])


@st.composite
def openai_event(draw: st.DrawFn) -> str:
    key = draw(KEY)
    call = {"index": draw(INDEX), "id": "c", "function": {"name": "bash", "arguments": ARGS}}
    value: object = (
        [call] if key.startswith("tool") else call["function"] if key == "function_call" else "x"
    )
    choice = {"index": draw(INDEX), "delta": {"__KEY__": value}}
    if draw(st.booleans()):
        choice["finish_reason"] = draw(st.sampled_from(["tool_calls", "stop", None]))
    text = json.dumps({"id": "x", "choices": [choice]}).replace("__KEY__", key)
    return draw(st.sampled_from([text, text[:-1], "[DONE]", "NaN", text.replace(" ", "")]))


@st.composite
def anthropic_event(draw: st.DrawFn) -> tuple[str | None, str]:
    index = draw(INDEX)
    kind = draw(
        st.sampled_from(
            [
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_start",
                "message_delta",
                "message_stop",
                "ping",
                "tool_use",
            ]
        )
    )
    payload: dict[str, object] = {"type": kind, "index": index}
    if kind == "content_block_start":
        block_type = draw(st.sampled_from(["tool_use", "text", "server_tool_use"]))
        payload["content_block"] = {"type": block_type, "id": "t", "name": "bash", "input": {}}
    if kind == "content_block_delta":
        payload["delta"] = {
            "type": draw(st.sampled_from(["input_json_delta", "text_delta"])),
            "partial_json": ARGS,
            "text": "x",
        }
    if kind == "message_start":
        content = draw(st.sampled_from([[], [{"type": "tool_use", "input": {"c": ARGS}}]]))
        payload["message"] = {"id": "m", "content": content}
    name = draw(st.sampled_from([kind, None, "content_block_delta", "ping"]))
    return name, json.dumps(payload)


def _run(rewriter: object, stream: bytes, cuts: list[int]) -> bytes | None:
    parser = SSEParser()
    out: list[bytes] = []
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    try:
        for piece in pieces:
            for event in parser.feed(piece):
                out += rewriter.feed(event)  # type: ignore[attr-defined]
        for event in parser.close():
            out += rewriter.feed(event)  # type: ignore[attr-defined]
        out += rewriter.close()  # type: ignore[attr-defined]
    except Unreadable:
        return None
    return b"".join(out)


def _cuts(data: st.DataObject, size: int) -> list[int]:
    return sorted(set(data.draw(st.lists(st.integers(0, size), max_size=6))))


@settings(max_examples=300, deadline=None)
@given(events=st.lists(openai_event(), min_size=1, max_size=8), data=st.data())
def test_openai_sse_fuzz(events: list[str], data: st.DataObject) -> None:
    stream = "".join(f"data: {e}\n\n" for e in events).encode()
    out = _run(openai_api.StreamRewriter(_block_all), stream, _cuts(data, len(stream)))
    if out is not None:
        text = out.decode("utf-8", "replace")
        assert not any("curl" in json.dumps(c) for p in payloads(text) for c in calls_in(p))


@settings(max_examples=300, deadline=None)
@given(events=st.lists(anthropic_event(), min_size=1, max_size=8), data=st.data())
def test_anthropic_sse_fuzz(events: list[tuple[str | None, str]], data: st.DataObject) -> None:
    stream = "".join(
        (f"event: {name}\n" if name else "") + f"data: {payload}\n\n" for name, payload in events
    ).encode()
    out = _run(anthropic_api.StreamRewriter(_block_all), stream, _cuts(data, len(stream)))
    if out is not None:
        text = out.decode("utf-8", "replace")
        assert not any("curl" in json.dumps(c) for p in payloads(text) for c in calls_in(p))


def test_the_fuzz_oracle_sees_an_unchecked_call(tmp_path: Path) -> None:
    """The property above can fail: a pass-through rewriter lets the call out."""
    stream = b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":'
    stream += json.dumps(ARGS).encode() + b"}}]}}]}\n\n"
    text = stream.decode()
    assert any("curl" in json.dumps(c) for p in payloads(text) for c in calls_in(p))
