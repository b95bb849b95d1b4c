"""Issue 27: shapes where the guard judged one reading of the bytes and the client ran
another. Each hides `BLOCKED` from the guard's old reading; the real `python -m
train.guard` process sits between the hostile upstream and the client, and what it
sends is read the way clients read it: by the official SDKs' own accumulators
(`openai`, `anthropic`) and by a first-wins JSON reader. No reading may find the call.
"""

from __future__ import annotations

import json

import pytest
import requests

from tests.guard.hostile import (
    ANTHROPIC_TOOLS,
    BLOCKED,
    REFUSALS,
    SHAPES,
    TOOLS,
    GuardProcess,
    calls_in,
)
from tests.guard.sdk_view import first_wins, sdk_calls, sse_payloads

pytestmark = pytest.mark.slow


def _api(shape: str) -> str:
    return "anthropic" if shape.startswith("anthropic") else "openai"


def _stream(shape: str) -> bool:
    return SHAPES[shape].split(b"\r\n\r\n", 1)[0].find(b"text/event-stream") >= 0


def _body(raw: bytes) -> str:
    return raw.split(b"\r\n\r\n", 1)[1].decode()


def _danger(api: str, text: str, stream: bool) -> list[str]:
    """Every reading of `text` that yields a call carrying the blocked command."""
    found = [c for c in sdk_calls(api, text, stream) if "curl" in c]
    payloads = sse_payloads(text) if stream else [text]
    for data in payloads:
        try:
            value = first_wins(data)
        except ValueError:
            continue
        found += [json.dumps(call) for call in calls_in(value) if "curl" in json.dumps(call)]
        for call in calls_in(value):  # arguments are JSON text: read them first-wins too
            for item in call if isinstance(call, list) else [call]:
                args = (
                    (item.get("function") or {}).get("arguments")
                    if isinstance(item, dict)
                    else None
                )
                if isinstance(args, str):
                    try:
                        inner = first_wins(args)
                    except ValueError:
                        continue
                    if "curl" in json.dumps(inner):
                        found.append(args)
    if stream and api == "anthropic":  # a tool block's input, joined and read first-wins
        parts: dict[object, str] = {}
        for data in payloads:
            event = json.loads(data)
            delta = event.get("delta") or {}
            if event.get("type") == "content_block_delta" and "partial_json" in delta:
                parts[event.get("index")] = (
                    parts.get(event.get("index"), "") + delta["partial_json"]
                )
        for joined in parts.values():
            try:
                if "curl" in json.dumps(first_wins(joined)):
                    found.append(joined)
            except ValueError:
                continue
    return found


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_shape_hides_a_call_some_reader_runs(shape: str) -> None:
    """The shapes are real attacks: unguarded, the SDK or a first-wins reader (or, for
    the partial-JSON shape, the harness parsing the SDK's `input`) finds the call."""
    text = _body(SHAPES[shape])
    found = _danger(_api(shape), text, _stream(shape))
    assert found, shape


def _send(guard: GuardProcess, shape: str) -> requests.Response:
    stream = _stream(shape)
    if _api(shape) == "anthropic":
        body = {"model": "tiny", "max_tokens": 8, "messages": [{"role": "user", "content": "go"}]}
        body |= {"tools": ANTHROPIC_TOOLS, "stream": stream}
        path = "/s/shape/v1/messages"
    else:
        body = {"model": "tiny", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}
        body |= {"stream": stream, "n": 2}
        path = "/s/shape/v1/chat/completions"
    return requests.post(f"{guard.url}{path}", json=body, headers={"x-attack": shape}, timeout=20)


OUTCOME = {
    # judged as the SDK assembles it, then blocked by the rule it breaks
    "anthropic-start-input-empty-delta": "network.unseen-host",
    "openai-n2-one-chunk": "network.unseen-host",
    # what cannot be assembled one way: refused with its reason code
    "anthropic-index-reuse": "guard.block-index",
    "anthropic-overlapping-blocks": "guard.block-index",
    "openai-custom-call": "guard.unknown-call-type",
    "openai-custom-call-stream": "guard.unknown-call-type",
    "dup-command": "guard.duplicate-keys",
    "dup-command-stream": "guard.duplicate-keys",
    "anthropic-dup-command-stream": "guard.duplicate-keys",
    "anthropic-dup-block-type": "guard.duplicate-keys",
    "anthropic-dup-block-type-stream": "guard.duplicate-keys",
    # a repeated key in the body around the call: re-serialised, the judged call only
    "dup-arguments": None,
    "dup-arguments-stream": None,
    "dup-tool-calls": None,
    "dup-tool-calls-stream": None,
}


def test_every_shape_has_an_outcome() -> None:
    assert set(OUTCOME) == set(SHAPES)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_reader_finds_an_unjudged_call(guard: GuardProcess, shape: str) -> None:
    answer = _send(guard, shape)
    text = answer.text
    assert not _danger(_api(shape), text, _stream(shape)), text
    code = OUTCOME[shape]
    if code is not None:
        assert code in text, text
    elif shape.startswith("dup-arguments"):  # the call the guard judged (and allowed)
        calls = sdk_calls(_api(shape), text, _stream(shape))
        assert len(calls) == 1 and "ls" in calls[0], text
    assert BLOCKED not in text.replace('\\"', '"') or "[guard]" in text
    assert guard.alive()


@pytest.mark.parametrize("attack", list(REFUSALS))
def test_refusals_say_a_code_and_are_logged(guard: GuardProcess, attack: str) -> None:
    """A cut body and a bad choice index: the client gets a stable reason code, no
    exception text, and the exchange is logged with status 502."""
    session = f"refused-{attack}"
    stream = attack.endswith("-stream")
    payload = {"model": "tiny", "messages": [{"role": "user", "content": "go"}], "stream": stream}
    answer = requests.post(
        f"{guard.url}/s/{session}/v1/chat/completions",
        json=payload | {"tools": TOOLS},
        headers={"x-attack": attack},
        timeout=20,
    )
    text = answer.text
    assert "guard.upstream-" in text and "guard.internal" not in text, text
    assert "Error" not in text and "(" not in text.partition("):")[2], text  # no exception text
    assert BLOCKED not in text.replace('\\"', '"')
    requests.get(
        f"{guard.admin_url}/guard/sessions/{session}",
        headers={"authorization": f"Bearer {guard.token}"},
        timeout=10,
    )  # the session's status runs what is queued after a response
    log = guard.log_dir / session / "exchanges.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    assert [json.loads(line)["status"] for line in lines] == [502]
    assert guard.alive()
