"""The guard in front of a real vLLM server (CPU build, scripted tiny model).

One server per test session, shared with pi's tool-call test (`scripted_server` in
tests/conftest.py: about a minute to start on 2 cores); every request is tiny. The model
always calls `bash` with `curl -s https://example.org/data.csv`, so the same real
response is allowed or blocked depending only on the conversation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import openai
import pytest

from tests.guard.upstream import (
    ANTHROPIC_TOOLS,
    NOT_SHOWN,
    OPENAI_TOOLS,
    SCRIPTED_COMMAND,
    SHOWN,
    assert_anthropic_verdict,
    forced_calls_regex,
)
from train.guard import GuardOptions, GuardServer
from train.serving.server import VllmServer

pytestmark = [pytest.mark.vllm, pytest.mark.slow]


@pytest.fixture
def guard(scripted_server: VllmServer, tmp_path: Path) -> Iterator[GuardServer]:
    """The guard in front of the session's scripted server (tests/conftest.py)."""
    server = GuardServer(
        GuardOptions(
            upstream=scripted_server.base_url, port=0, log_dir=tmp_path, request_tokens=True
        )
    )
    server.start_background()
    yield server
    server.stop_background()


def _openai(guard: GuardServer, session: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{guard.base_url}/s/{session}/v1", api_key="x", max_retries=0, timeout=120
    )


@pytest.mark.parametrize("stream", [False, True])
def test_openai_real_upstream(guard: GuardServer, stream: bool) -> None:
    results = {}
    for user in (SHOWN, NOT_SHOWN):
        session = f"o{stream}{user == SHOWN}"
        response = _openai(guard, session).chat.completions.create(
            model="tiny",
            messages=[{"role": "user", "content": user}],
            tools=OPENAI_TOOLS,
            max_tokens=16,
            stream=stream,
        )
        if stream:
            chunks = list(response)
            calls = [c for ch in chunks if ch.choices for c in ch.choices[0].delta.tool_calls or []]
            text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
            finish = [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1]
            arguments = "".join(c.function.arguments or "" for c in calls)
        else:
            message = response.choices[0].message
            calls = message.tool_calls or []
            text = message.content or ""
            finish = response.choices[0].finish_reason
            arguments = calls[0].function.arguments if calls else ""
        results[user] = (bool(calls), finish, "[guard]" in text)
        if calls:
            assert json.loads(arguments) == {"command": SCRIPTED_COMMAND}
    assert results == {SHOWN: (True, "tool_calls", False), NOT_SHOWN: (False, "stop", True)}
    status = guard.close_session(f"o{stream}False")
    assert status is not None and status["blocked"] is True
    exchange = json.loads(
        (Path(guard.options.log_dir) / f"o{stream}False" / "exchanges.jsonl")
        .read_text()
        .splitlines()[0]
    )
    assert exchange["prompt_token_ids"] and exchange["completion_token_ids"]
    assert len(exchange["logprobs"]) == len(exchange["completion_token_ids"])


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_real_upstream(guard: GuardServer, stream: bool) -> None:
    for user in (SHOWN, NOT_SHOWN):
        client = anthropic.Anthropic(
            base_url=f"{guard.base_url}/s/a{stream}{user == SHOWN}",
            api_key="x",
            max_retries=0,
            timeout=120,
        )
        kwargs = {
            "model": "tiny",
            "max_tokens": 16,
            "tools": ANTHROPIC_TOOLS,
            "messages": [{"role": "user", "content": user}],
        }
        if stream:
            with client.messages.stream(**kwargs) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        assert_anthropic_verdict(message, user == SHOWN)


def test_forced_parallel_calls_from_real_upstream(guard: GuardServer) -> None:
    regex = forced_calls_regex(["cat /solution/solve.sh", "python3 -m pytest -q"])
    stream = _openai(guard, "forced").chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": NOT_SHOWN}],
        tools=OPENAI_TOOLS,
        max_tokens=128,
        stream=True,
        extra_body={"structured_outputs": {"regex": regex}},
    )
    calls: dict[int, str] = {}
    text = ""
    for chunk in stream:
        for call in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            calls[call.index] = calls.get(call.index, "") + (call.function.arguments or "")
        text += (chunk.choices[0].delta.content or "") if chunk.choices else ""
    assert {i: json.loads(a) for i, a in calls.items()} == {0: {"command": "python3 -m pytest -q"}}
    assert "access.hidden-files" in text


def test_the_upstream_connection_outlives_a_tool_run(guard: GuardServer) -> None:
    """vLLM's uvicorn closes idle connections after 5 s unless told otherwise; started
    by `VllmServer`, it keeps them, so the turn after a 6 s tool run reuses the guard's
    connection instead of opening one on the response's path."""
    client = _openai(guard, "idle")
    for turn in range(2):
        if turn:
            time.sleep(6)
        client.chat.completions.create(
            model="tiny",
            messages=[{"role": "user", "content": SHOWN}],
            tools=OPENAI_TOOLS,
            max_tokens=16,
        )
    assert guard.upstream_connections == 1
