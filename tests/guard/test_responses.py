"""The Responses API through the guard (issue 27, point 3): `/v1/responses` whole and
streamed, read back with the official `openai` client; the call items a client runs
(`function_call`, `custom_tool_call`, `local_shell_call`) judged by the chat rules;
what the SDK would assemble differently refused with a reason code.

Before issue 27 the route answered 404 (a client could not use it); these fail there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from aiohttp import web

from tests.guard.test_differential import DANGER, Judge, _through
from tests.local_http import serving
from train.guard import GuardOptions, GuardServer, responses_api
from train.guard.refusal import Unreadable
from train.guard.sse import SSEParser

pytestmark = pytest.mark.timeout(60)
TOOLS = [
    {"type": "function", "name": "bash", "parameters": {"type": "object"}},
    {"type": "custom", "name": "apply_patch"},
    {"type": "local_shell"},
]


def _function(command: str, call_id: str = "c1") -> dict[str, Any]:
    arguments = json.dumps({"command": command})
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": "bash",
        "arguments": arguments,
        "status": "completed",
    }


def _local(argv: list[str]) -> dict[str, Any]:
    return {
        "type": "local_shell_call",
        "id": "ls1",
        "call_id": "l1",
        "status": "completed",
        "action": {"type": "exec", "command": argv, "env": {}},
    }


def _response(output: list[dict[str, Any]], status: str = "completed") -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "m",
        "status": status,
        "output": output,
        "tool_choice": "auto",
        "tools": [],
        "parallel_tool_calls": True,
    }


def _events(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _stream(item: dict[str, Any], deltas: list[str], completed: list[dict[str, Any]] | None):
    started = {**item, "status": "in_progress"}
    field = "arguments" if item["type"] == "function_call" else "input"
    delta_type = {
        "function_call": "response.function_call_arguments.delta",
        "custom_tool_call": "response.custom_tool_call_input.delta",
    }.get(item["type"])
    if delta_type:
        started[field] = ""
    events = [
        {"type": "response.created", "response": _response([], "in_progress")},
        {"type": "response.output_item.added", "output_index": 0, "item": started},
    ]
    events += [
        {"type": delta_type, "output_index": 0, "item_id": item["id"], "delta": d} for d in deltas
    ]
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    final = _response([] if completed is None else completed)
    if completed is None:
        final.pop("output")
    events.append({"type": "response.completed", "response": final})
    return _events(*events)


@pytest.fixture
def answers() -> list[bytes]:
    return []


@pytest.fixture
def base(answers: list[bytes], tmp_path: Path) -> Iterator[str]:
    """A guard in front of an upstream answering each request with the next of `answers`
    (SSE when it starts with `event:`)."""

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        body = answers.pop(0)
        ctype = "text/event-stream" if body.startswith(b"event:") else "application/json"
        return web.Response(body=body, content_type=ctype)

    with serving(answer) as upstream:
        server = GuardServer(GuardOptions(upstream=upstream, port=0, log_dir=tmp_path / "logs"))
        server.start_background()
        try:
            yield server.base_url
        finally:
            server.stop_background()


def _client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0)


def test_a_dangerous_function_call_never_reaches_the_sdk(base: str, answers: list) -> None:
    answers.append(json.dumps(_response([_function(DANGER), _function("ls", "c2")])).encode())
    response = _client(base).responses.create(model="m", input="hi", tools=TOOLS)
    calls = [i for i in response.output if i.type == "function_call"]
    assert [json.loads(c.arguments)["command"] for c in calls] == ["ls"]
    assert "[guard]" in response.output[0].content[0].text


def test_a_local_shell_argv_is_judged_by_the_shell_rules(base: str, answers: list) -> None:
    answers.append(json.dumps(_response([_local(["bash", "-lc", "cat /etc/sha*ow"])])).encode())
    response = _client(base).responses.create(model="m", input="hi", tools=TOOLS)
    assert [i.type for i in response.output] == ["message"]
    assert "secrets.credentials" in response.output[0].content[0].text


def test_a_streamed_dangerous_call_never_reaches_the_stream_accumulator(
    base: str, answers: list
) -> None:
    item = _function(DANGER)
    answers.append(_stream(item, [item["arguments"][:9], item["arguments"][9:]], [item]))
    with _client(base).responses.stream(model="m", input="hi", tools=TOOLS) as stream:
        done = [e.item for e in stream if e.type == "response.output_item.done"]
        final = stream.get_final_response()
    assert [i.type for i in done] == ["message"]
    assert [i.type for i in final.output] == ["message"]


def test_a_streamed_benign_call_reaches_the_client_whole(base: str, answers: list) -> None:
    item = _function("ls")
    answers.append(_stream(item, [item["arguments"]], None))
    with _client(base).responses.stream(model="m", input="hi", tools=TOOLS) as stream:
        final = stream.get_final_response()
    assert [(i.type, i.arguments) for i in final.output] == [("function_call", item["arguments"])]


def _feed(body: bytes) -> str:
    return _through(responses_api.StreamRewriter(Judge()), body)


@pytest.mark.parametrize(
    ("case", "code"),
    [
        # deltas benign, the done item (what the final response holds) dangerous
        ("mismatch", "guard.call-mismatch"),
        # the completed response carries a call the stream never judged
        ("unjudged", "guard.unjudged-call"),
        ("reused-index", "guard.output-index"),
        ("type-change", "guard.item-type-changed"),
        ("hosted", "guard.unchecked-item"),
        ("unknown", "guard.unknown-item-type"),
    ],
)
def test_what_the_sdk_would_read_differently_is_refused(case: str, code: str) -> None:
    benign, bad = _function("ls"), _function(DANGER)
    if case == "mismatch":
        body = _stream(bad, [benign["arguments"]], None)
    elif case == "unjudged":
        body = _stream(benign, [], [bad])
    elif case == "reused-index":
        message = {"type": "message", "id": "m", "role": "assistant", "content": []}
        again = _events({"type": "response.output_item.added", "output_index": 0, "item": message})
        done = b"event: response.output_item.done"
        body = _stream(benign, [], None).replace(done, again + done, 1)
    elif case == "type-change":
        custom = {
            "type": "custom_tool_call",
            "id": benign["id"],
            "call_id": "c1",
            "name": "bash",
            "input": DANGER,
        }
        body = _stream(benign, [], None).replace(
            json.dumps(
                {"type": "response.output_item.done", "output_index": 0, "item": benign}
            ).encode(),
            json.dumps(
                {"type": "response.output_item.done", "output_index": 0, "item": custom}
            ).encode(),
        )
    elif case == "hosted":
        body = _stream({"type": "code_interpreter_call", "id": "ci", "code": "import os"}, [], None)
    else:
        body = _stream({"type": "mystery_call", "id": "x", "run": DANGER}, [], None)
    rewriter, parser = responses_api.StreamRewriter(Judge()), SSEParser()
    with pytest.raises(Unreadable) as caught:
        for event in parser.feed(body) + parser.close():
            rewriter.feed(event)
    assert caught.value.code == code


def test_a_refused_stream_ends_in_an_error_the_sdk_raises_on() -> None:
    text = _feed(_stream(_function(DANGER), [_function("ls")["arguments"]], None))
    assert DANGER not in text


def test_an_item_typed_as_a_call_then_as_a_message_is_refused(base: str, answers: list) -> None:
    """A first-wins reader would run the call; the guard would read a message."""
    item = json.dumps(_function(DANGER))[:-1] + ', "type": "message", "content": []}'
    answers.append(
        json.dumps(_response([])).replace('"output": []', f'"output": [{item}]').encode()
    )
    with pytest.raises(openai.APIStatusError) as caught:
        _client(base).responses.create(model="m", input="hi", tools=TOOLS)
    assert caught.value.status_code == 502
    assert "guard.duplicate-keys" in str(caught.value)


def test_a_stream_with_a_hosted_tool_ends_in_an_error_the_sdk_raises(
    base: str, answers: list
) -> None:
    answers.append(_stream({"type": "code_interpreter_call", "id": "ci", "code": "x"}, [], None))
    with (
        pytest.raises(openai.APIError, match=r"guard\.unchecked-item"),
        _client(base).responses.stream(model="m", input="hi", tools=TOOLS) as stream,
    ):
        stream.get_final_response()


def test_a_request_with_a_hosted_tool_is_refused_before_the_upstream(
    base: str, answers: list
) -> None:
    """vLLM with a tool server would run `code_interpreter` before the guard saw a byte."""
    answers.append(json.dumps(_response([])).encode())
    with pytest.raises(openai.BadRequestError) as caught:
        _client(base).responses.create(
            model="m", input="hi", tools=[*TOOLS, {"type": "code_interpreter", "container": "x"}]
        )
    assert caught.value.code == "guard.hosted-tool"
    assert answers  # never forwarded: the upstream's answer is still unread


@pytest.mark.parametrize("extra", [{"env": {"BASH_ENV": "/tmp/x.sh"}}, {"user": "root"}])
def test_a_local_shell_call_that_sets_env_or_user_is_refused(
    base: str, answers: list, extra: dict[str, Any]
) -> None:
    """The client would set them for an `ls` the rules allow; no rule reads them."""
    item = _local(["ls"])
    item["action"].update(extra)
    answers.append(json.dumps(_response([item])).encode())
    with pytest.raises(openai.APIStatusError) as caught:
        _client(base).responses.create(model="m", input="hi", tools=TOOLS)
    assert caught.value.code == "guard.unchecked-item"
