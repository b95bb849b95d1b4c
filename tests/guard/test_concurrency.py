"""48 concurrent streaming sessions: every response arrives whole and unmixed."""

from __future__ import annotations

import asyncio
import json

import aiohttp
from anthropic.types import RawMessageStreamEvent
from openai.types.chat import ChatCompletionChunk
from pydantic import TypeAdapter

from tests.guard.upstream import ANTHROPIC_TOOLS, OPENAI_TOOLS
from train.guard import GuardServer

SESSIONS = 48
FIXTURES = ("openai_single_stream", "openai_two_calls_stream", "anthropic_single_stream")
EVENT = TypeAdapter(RawMessageStreamEvent)


def _request(number: int) -> tuple[str, str, dict]:
    name = FIXTURES[number % len(FIXTURES)]
    shown = number % 2 == 0
    user = "Get https://example.org/data.csv" if shown else "Summarise the data."
    if name.startswith("anthropic"):
        return (
            name,
            "/v1/messages",
            {
                "model": "tiny",
                "max_tokens": 64,
                "stream": True,
                "tools": ANTHROPIC_TOOLS,
                "messages": [{"role": "user", "content": user}],
            },
        )
    return (
        name,
        "/v1/chat/completions",
        {
            "model": "tiny",
            "stream": True,
            "tools": OPENAI_TOOLS,
            "messages": [{"role": "user", "content": user}],
        },
    )


async def _one(client: aiohttp.ClientSession, base: str, number: int, session: str) -> bytes:
    name, path, body = _request(number)
    headers = {"x-replay": name, "x-replay-chunk": str(3 + number % 11)}
    async with client.post(f"{base}/s/{session}{path}", json=body, headers=headers) as response:
        assert response.status == 200
        return await response.read()


def _parse(name: str, raw: bytes) -> None:
    """Every event is one the official SDK's types accept."""
    for block in raw.decode().split("\n\n"):
        data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
        if not data or data[0] == "[DONE]":
            continue
        if name.startswith("anthropic"):
            EVENT.validate_python(json.loads(data[0]))
        else:
            ChatCompletionChunk.model_validate_json(data[0])


async def _run(base: str) -> tuple[list[bytes], list[bytes]]:
    async with aiohttp.ClientSession() as client:
        sequential = [await _one(client, base, n, f"seq-{n}") for n in range(SESSIONS)]
        concurrent = await asyncio.gather(
            *[_one(client, base, n, f"par-{n}") for n in range(SESSIONS)]
        )
    return sequential, list(concurrent)


def test_48_concurrent_streams_match_the_sequential_run(guard_server: GuardServer) -> None:
    sequential, concurrent = asyncio.run(_run(guard_server.base_url))
    assert concurrent == sequential
    for number, raw in enumerate(concurrent):
        name, _, _ = _request(number)
        _parse(name, raw)
        blocked = b"[guard]" in raw
        if name == "openai_two_calls_stream":
            assert blocked, "the /tests read is blocked whatever the conversation"
        else:
            assert blocked == (number % 2 == 1)
        assert raw.rstrip().endswith(b"[DONE]") or raw.rstrip().endswith(b'"message_stop"}')
    statuses = {s: guard_server.guard.sessions[f"par-{s}"].blocked for s in range(SESSIONS)}
    assert statuses == {n: b"[guard]" in concurrent[n] for n in range(SESSIONS)}
