"""Wire formats without HTTP: SSE framing and the two APIs' rewriters."""

from __future__ import annotations

import json

import pytest
from anthropic.types import Message
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.guard.replay import fixture
from train.guard import anthropic_api, openai_api
from train.guard.checker import Decision
from train.guard.facts import ToolCall, Violation
from train.guard.refusal import Unreadable
from train.guard.sse import SSEParser


def _block_if(word: str):
    def check(calls: list[ToolCall]) -> list[Decision]:
        return [
            Decision(c, [Violation("test.rule", "blocked in test")] if word in c.arguments else [])
            for c in calls
        ]

    return check


def _events(raw: bytes, splits: list[int]) -> list:
    parser = SSEParser()
    events, last = [], 0
    for cut in sorted(set(splits)):
        events += parser.feed(raw[last:cut])
        last = cut
    return events + parser.feed(raw[last:]) + parser.close()


RAW = fixture("openai_two_calls_stream")["body"].encode()


@given(st.lists(st.integers(min_value=0, max_value=len(RAW)), max_size=40))
def test_sse_events_do_not_depend_on_where_reads_split(splits: list[int]) -> None:
    whole = _events(RAW, [])
    assert [e.raw for e in _events(RAW, splits)] == [e.raw for e in whole]
    assert whole[-1].data == "[DONE]"


def test_sse_crlf_and_event_names() -> None:
    events = SSEParser().feed(b"event: ping\r\ndata: {}\r\n\r\n: comment\n\ndata: a\ndata: b\n\n")
    assert [(e.event, e.data) for e in events] == [("ping", "{}"), (None, None), (None, "a\nb")]


def _rewrite_stream(name: str, check) -> tuple[list[bytes], object]:
    module = anthropic_api if name.startswith("anthropic") else openai_api
    rewriter = module.StreamRewriter(check)
    raw = fixture(name)["body"].encode()
    frames = [f for e in _events(raw, []) for f in rewriter.feed(e)] + rewriter.close()
    return frames, rewriter


def _data(frames: list[bytes]) -> list[str]:
    out = []
    for frame in frames:
        for line in frame.decode().split("\n"):
            if line.startswith("data: "):
                out.append(line[6:])
    return out


def test_openai_stream_untouched_when_allowed_is_byte_identical() -> None:
    frames, rewriter = _rewrite_stream("openai_two_calls_stream", _block_if("nothing"))
    assert b"".join(frames) == fixture("openai_two_calls_stream")["body"].encode()
    assert rewriter.changed is False and len(rewriter.decisions) == 2


def test_openai_stream_renumbers_the_calls_left() -> None:
    frames, rewriter = _rewrite_stream("openai_two_calls_stream", _block_if("ls -la"))
    chunks = [ChatCompletionChunk.model_validate_json(d) for d in _data(frames) if d != "[DONE]"]
    indexes = {c.index for ch in chunks for c in ch.choices[0].delta.tool_calls or []}
    assert indexes == {0}
    args = "".join(
        c.function.arguments or "" for ch in chunks for c in ch.choices[0].delta.tool_calls or []
    )
    assert json.loads(args) == {"command": "cat /tests/test_outputs.py"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert (
        rewriter.record.response()["choices"][0]["tool_calls"][1]["arguments"]
        == '{"command": "ls -la /workspace"}'
    )


def test_openai_stream_without_done_still_settles() -> None:
    raw = fixture("openai_single_stream")["body"].encode()
    cut = raw[: raw.index(b'"finish_reason":"tool_calls"')]
    cut = cut[: cut.rindex(b"\n\n") + 2]
    rewriter = openai_api.StreamRewriter(_block_if("curl"))
    frames = [f for e in _events(cut, []) for f in rewriter.feed(e)] + rewriter.close()
    text = "".join(json.loads(d)["choices"][0]["delta"].get("content") or "" for d in _data(frames))
    assert "test.rule" in text
    assert not any("tool_calls" in json.loads(d)["choices"][0]["delta"] for d in _data(frames))


def test_openai_bad_chunk_is_refused_not_dropped() -> None:
    """Changed on purpose: every chunk is parsed, and one that is not JSON refuses the
    stream (it used to be dropped and counted, and a text chunk passed undecoded)."""
    rewriter = openai_api.StreamRewriter(_block_if("x"))
    events = SSEParser().feed(b'data: {"text\n\ndata: [DONE]\n\n')
    with pytest.raises(Unreadable) as refused:
        rewriter.feed(events[0])
    assert refused.value.code == "guard.upstream-unreadable"


def test_openai_non_stream_two_calls() -> None:
    body = json.loads(fixture("openai_two_calls")["body"])
    changed, decisions = openai_api.rewrite_response(body, _block_if("/tests"))
    completion = ChatCompletion.model_validate(body)
    assert changed and [d.allowed for d in decisions] == [False, True]
    message = completion.choices[0].message
    assert [c.function.arguments for c in message.tool_calls] == [
        '{"command": "ls -la /workspace"}'
    ]
    assert completion.choices[0].finish_reason == "tool_calls"
    assert "test.rule" in message.content


def test_openai_text_only_response_is_not_checked() -> None:
    body = json.loads(fixture("openai_no_tools")["body"])
    changed, decisions = openai_api.rewrite_response(body, _block_if(""))
    assert (changed, decisions) == (False, [])


def test_anthropic_non_stream_and_stream_agree() -> None:
    body = json.loads(fixture("anthropic_single")["body"])
    changed, _ = anthropic_api.rewrite_response(body, _block_if("curl"))
    message = Message.model_validate(body)
    assert changed and message.stop_reason == "end_turn"
    frames, rewriter = _rewrite_stream("anthropic_single_stream", _block_if("curl"))
    payloads = [json.loads(d) for d in _data(frames)]
    starts = [p for p in payloads if p["type"] == "content_block_start"]
    assert [s["content_block"]["type"] for s in starts] == ["text"]
    assert [s["index"] for s in starts] == [0]
    delta = next(p for p in payloads if p["type"] == "message_delta")
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert payloads[-1]["type"] == "message_stop"
    assert rewriter.record.response()["content"][0]["partial_json"].startswith('{"command"')


def test_declared_tools_and_conversation_texts() -> None:
    openai_body = {
        "tools": [{"type": "function", "function": {"name": "bash"}}, {"bad": 1}],
        "messages": [
            {"role": "system", "content": "see https://docs.x.io"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": "curl https://a.b"},
            {"role": "tool", "content": "out"},
        ],
    }
    assert openai_api.declared_tools(openai_body) == {"bash"}
    assert openai_api.conversation_texts(openai_body) == ["hi", "out"]
    anthropic_body = {
        "tools": [{"name": "bash"}],
        "system": "https://docs.x.io",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "tool_result", "content": [{"type": "text", "text": "b"}]},
                ],
            },
            {"role": "assistant", "content": "c"},
        ],
    }
    assert anthropic_api.declared_tools(anthropic_body) == {"bash"}
    assert anthropic_api.conversation_texts(anthropic_body) == ["a\nb"]


def test_a_large_sse_event_is_buffered_in_linear_time() -> None:
    """Issue 18: one 80 MB event took 36 s (the buffer was copied on every read). A
    32 MiB event in 4 KiB reads is now joined once; over the limit it is refused."""
    import time

    parser = SSEParser()
    piece = b"x" * 4096
    started = time.perf_counter()
    parser.feed(b"data: ")
    for _ in range(8192):
        assert parser.feed(piece) == []
    (event,) = parser.feed(b"\n\n")
    assert len(event.data or "") == 8192 * 4096
    assert time.perf_counter() - started < 5
    with pytest.raises(ValueError, match=r"sse\.event-too-large"):
        for _ in range(17_000):
            parser.feed(piece)


def test_openai_stream_record_survives_a_hostile_chunk_and_still_checks() -> None:
    """The record is built as chunks pass: a chunk shaped to break it (`token_ids` an
    integer) must not stop the stream, its check, or the record of what came before."""
    raw = fixture("openai_two_calls_stream")["body"].encode()
    events = _events(raw, [])
    hostile = events[1].raw.replace(b'"token_ids":null', b'"token_ids":5', 1)
    assert hostile != events[1].raw
    rewriter = openai_api.StreamRewriter(_block_if("ls -la"))
    frames = []
    for event in [events[0], *_events(hostile, []), *events[2:]]:
        frames += rewriter.feed(event)
    frames += rewriter.close()
    assert rewriter.record.broken is not None and "TypeError" in rewriter.record.broken
    assert [d.allowed for d in rewriter.decisions] == [True, False]
    assert "ls -la" not in "".join(_data(frames)).replace("[guard]", "")
    assert rewriter.record.response()["id"] == json.loads(_data([events[0].raw])[0])["id"]


def test_stream_rewriters_keep_no_parsed_event() -> None:
    """Nothing of a long stream is kept but its record and the held frames: a rewriter
    that kept each parsed chunk would hand the collector tens of objects per token."""
    for name in ("openai_two_calls_stream", "anthropic_single_stream"):
        _, rewriter = _rewrite_stream(name, _block_if("nothing"))
        kept = [v for v in vars(rewriter).values() if isinstance(v, list) and v]
        assert all(not isinstance(x, dict) for v in kept for x in v), name
