"""The proxy against recorded real vLLM responses, read back with the official clients."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import openai
import pytest
import requests

from tests.guard.control import admin
from tests.guard.replay import ReplayUpstream, fixture
from tests.guard.upstream import (
    ANTHROPIC_TOOLS,
    NOT_SHOWN,
    OPENAI_TOOLS,
    SCRIPTED_COMMAND,
    SHOWN,
    assert_anthropic_verdict,
)
from train.guard import GuardContext, GuardOptions, GuardServer, wire


def _openai(server: GuardServer, name: str, session: str = "s1") -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{server.base_url}/s/{session}/v1",
        api_key="x",
        default_headers={"x-replay": name},
        max_retries=0,
    )


def _anthropic(server: GuardServer, name: str, session: str = "s1") -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=f"{server.base_url}/s/{session}",
        api_key="x",
        default_headers={"x-replay": name},
        max_retries=0,
    )


def _ask(client: openai.OpenAI, user: str, stream: bool = False):
    return client.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": user}],
        tools=OPENAI_TOOLS,
        max_tokens=64,
        stream=stream,
    )


def _log(server: GuardServer, session: str, name: str) -> list[dict]:
    """The session's status is the sync point: once it answers, its log is on disk."""
    assert server.options.log_dir is not None
    admin(server, "GET", f"/guard/sessions/{session}").raise_for_status()
    path = Path(server.options.log_dir) / session / name
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_openai_blocked_call_is_replaced_by_a_notice(guard_server: GuardServer) -> None:
    completion = _ask(_openai(guard_server, "openai_single"), NOT_SHOWN)
    recorded = json.loads(fixture("openai_single")["body"])
    choice = completion.choices[0]
    assert completion.id == recorded["id"]
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert "network.unseen-host" in choice.message.content
    assert "example.org" in choice.message.content
    verdict = admin(guard_server, "GET", "/guard/sessions/s1").json()
    assert verdict["blocked"] is True and verdict["reward_override"] == 0.0
    on_disk = json.loads((Path(guard_server.options.log_dir) / "s1" / "verdict.json").read_text())
    assert on_disk["blocked"] is True and on_disk["rules"] == {"network.unseen-host": 1}


def test_openai_allowed_response_is_forwarded_as_judged(guard_server: GuardServer) -> None:
    response = requests.post(
        f"{guard_server.base_url}/s/s2/v1/chat/completions",
        headers={"x-replay": "openai_single"},
        timeout=30,
        json={
            "model": "tiny",
            "messages": [{"role": "user", "content": SHOWN}],
            "tools": OPENAI_TOOLS,
        },
    )
    assert response.status_code == 200
    # re-serialised from what was judged (issue 27): the same JSON, one reading of it
    assert response.json() == json.loads(fixture("openai_single")["body"])
    assert response.content == wire.dumps(wire.loads(fixture("openai_single")["body"])).encode()
    decisions = _log(guard_server, "s2", "decisions.jsonl")
    assert [d["verdict"] for d in decisions] == ["allow"]
    assert decisions[0]["tool"] == "bash" and SCRIPTED_COMMAND in decisions[0]["arguments"]


def test_openai_stream_two_calls_keeps_the_allowed_one(guard_server: GuardServer) -> None:
    stream = _ask(_openai(guard_server, "openai_two_calls_stream"), SHOWN, stream=True)
    content, calls, finish = "", {}, None
    for chunk in stream:
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    assert list(calls) == [0]
    assert json.loads(calls[0]["arguments"]) == {"command": "ls -la /workspace"}
    assert "access.hidden-files" in content and "/tests/test_outputs.py" in content
    assert finish == "tool_calls"


def test_openai_stream_blocked_call_ends_with_stop(guard_server: GuardServer) -> None:
    chunks = list(_ask(_openai(guard_server, "openai_single_stream"), NOT_SHOWN, stream=True))
    assert all(not c.choices or not c.choices[0].delta.tool_calls for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.count("[guard]") == 1


def test_anthropic_blocked_and_allowed(guard_server: GuardServer) -> None:
    client = _anthropic(guard_server, "anthropic_single", session="a1")
    blocked = client.messages.create(
        model="tiny",
        max_tokens=64,
        tools=ANTHROPIC_TOOLS,
        messages=[{"role": "user", "content": NOT_SHOWN}],
    )
    assert [b.type for b in blocked.content] == ["text"]
    assert "network.unseen-host" in blocked.content[0].text
    assert blocked.stop_reason == "end_turn"
    client = _anthropic(guard_server, "anthropic_single", session="a2")
    allowed = client.messages.create(
        model="tiny",
        max_tokens=64,
        tools=ANTHROPIC_TOOLS,
        messages=[{"role": "user", "content": SHOWN}],
    )
    assert allowed.content[0].type == "tool_use"
    assert allowed.content[0].input == {"command": SCRIPTED_COMMAND}
    assert allowed.stop_reason == "tool_use"


@pytest.mark.parametrize("shown", [False, True])
def test_anthropic_stream_parses_with_the_sdk(guard_server: GuardServer, shown: bool) -> None:
    client = _anthropic(guard_server, "anthropic_single_stream", session=f"as{shown}")
    with client.messages.stream(
        model="tiny",
        max_tokens=64,
        tools=ANTHROPIC_TOOLS,
        messages=[{"role": "user", "content": SHOWN if shown else NOT_SHOWN}],
    ) as s:
        message = s.get_final_message()
    assert_anthropic_verdict(message, shown)


def test_registered_context_and_header_session(guard_server: GuardServer) -> None:
    context = {"instruction": "Data: https://example.org/data.csv", "workdir": "/workspace"}
    put = admin(guard_server, "PUT", "/guard/sessions/reg", json=context)
    assert put.status_code == 200 and put.json()["blocked"] is False
    client = openai.OpenAI(
        base_url=f"{guard_server.base_url}/v1",
        api_key="x",
        max_retries=0,
        default_headers={"x-replay": "openai_single", "x-guard-session": "reg"},
    )
    completion = _ask(client, NOT_SHOWN)
    assert completion.choices[0].message.tool_calls[0].function.name == "bash"
    bad = admin(guard_server, "PUT", "/guard/sessions/reg2", json={"nope": 1})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "guard.bad-context"
    again = admin(guard_server, "PUT", "/guard/sessions/reg", json={})
    assert again.status_code == 409 and again.json()["error"]["type"] == "guard.session-exists"
    closed = admin(guard_server, "DELETE", "/guard/sessions/reg").json()
    assert closed["decisions"] == 1 and closed["blocked"] is False


def test_exchange_log_keeps_upstream_tokens(replay: ReplayUpstream, tmp_path: Path) -> None:
    server = GuardServer(
        GuardOptions(
            upstream=replay.base_url,
            port=0,
            log_dir=tmp_path,
            request_tokens=True,
            model_map={"harness": "adapter-v3"},
        )
    )
    server.start_background()
    try:
        client = openai.OpenAI(
            base_url=f"{server.base_url}/s/t/v1",
            api_key="x",
            max_retries=0,
            default_headers={"x-replay": "openai_single_stream"},
        )
        list(
            client.chat.completions.create(
                model="harness",
                messages=[{"role": "user", "content": NOT_SHOWN}],
                tools=OPENAI_TOOLS,
                stream=True,
            )
        )
        status = server.close_session("t")
        assert status is not None and status["blocked"] is True
        assert server.close_session("t") is None
    finally:
        server.stop_background()
    forwarded = json.loads(replay.received[-1]["body"])
    assert forwarded["model"] == "adapter-v3"
    assert forwarded["logprobs"] is True and forwarded["return_token_ids"] is True
    (exchange,) = [
        json.loads(x) for x in (tmp_path / "t" / "exchanges.jsonl").read_text().splitlines()
    ]
    recorded = fixture("openai_single_stream")["body"]
    first = json.loads(recorded.split("\n")[0][len("data: ") :])
    assert exchange["prompt_token_ids"] == first["prompt_token_ids"]
    assert len(exchange["completion_token_ids"]) == len(exchange["logprobs"]) > 0
    assert exchange["model"] == "harness" and exchange["upstream_model"] == "adapter-v3"
    assert exchange["rewritten"] is True
    assert exchange["blocked_calls"][0]["rules"] == ["network.unseen-host"]
    assert exchange["response"]["choices"][0]["tool_calls"][0]["name"] == "bash"
    assert exchange["request"]["messages"][0]["content"] == NOT_SHOWN


def test_passthrough_and_errors(guard_server: GuardServer, replay: ReplayUpstream) -> None:
    models = requests.get(f"{guard_server.base_url}/v1/models?x=1", timeout=10)
    assert models.json()["data"][0]["id"] == "tiny"
    assert replay.received[-1]["path"] == "/v1/models"
    broken = requests.post(
        f"{guard_server.base_url}/v1/chat/completions",
        timeout=10,
        headers={"x-replay": "not-json"},
        json={"model": "tiny"},
    )
    assert broken.status_code == 502
    assert broken.json()["error"]["type"] == "guard.upstream-unparseable"
    bad_id = requests.get(f"{guard_server.base_url}/s/bad%20id/v1/models", timeout=10)
    assert bad_id.status_code == 400


def test_unreachable_upstream_is_a_502(tmp_path: Path) -> None:
    """A refusal: the code and the guard's words (no exception text), and the exchange
    logged with status 502."""
    logs = tmp_path / "logs"
    server = GuardServer(GuardOptions(upstream="http://127.0.0.1:9", port=0, log_dir=logs))
    server.start_background()
    try:
        response = requests.post(
            f"{server.base_url}/s/gone/v1/chat/completions", json={}, timeout=30
        )
    finally:
        server.stop_background()
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["type"] == "guard.upstream-unreachable"
    assert "Error" not in error["message"] and "127.0.0.1" not in error["message"]
    lines = (logs / "gone" / "exchanges.jsonl").read_text().splitlines()
    assert [json.loads(line)["status"] for line in lines] == [502]


def test_context_for_session_from_default_task(replay: ReplayUpstream) -> None:
    default = GuardContext(instruction="mirror at example.org")
    server = GuardServer(GuardOptions(upstream=replay.base_url, port=0, default_context=default))
    server.start_background()
    try:
        completion = _ask(_openai(server, "openai_single", session="any"), NOT_SHOWN)
    finally:
        server.stop_background()
    assert completion.choices[0].message.tool_calls is not None
