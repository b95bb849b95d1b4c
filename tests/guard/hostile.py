"""A hostile upstream and a guard process for the attack tests.

`HostileUpstream` answers each request with the raw bytes its `x-attack` header names
(`RESPONSES`): odd statuses, legacy fields, escaped keys, lying SSE event names, float
indices, cut streams. It records every request that reaches it, so a test can tell
that a refused route never got there. `GuardProcess` is the real `python -m
train.guard`, on loopback, with its control plane's port and token.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BLOCKED = "curl -s https://example.org/data.csv"
"""A command every guard session without `example.org` in its instruction blocks."""
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
ANTHROPIC_TOOLS = [
    {"name": "bash", "input_schema": {"type": "object", "properties": {"command": {}}}}
]
ARGS = json.dumps({"command": BLOCKED})


def _http(status: int, body: bytes, ctype: str = "application/json", cut: bool = False) -> bytes:
    """A whole answer; `cut`: chunked, and the connection closes before the end."""
    if cut:
        head = f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head.encode() + b"%x\r\n%b\r\n" % (len(body), body)
    head = f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _sse(*events: Any, names: list[str | None] | None = None) -> bytes:
    out = []
    for i, event in enumerate(events):
        data = event if isinstance(event, str) else json.dumps(event)
        name = names[i] if names else None
        out.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
    return "".join(out).encode()


def _completion(message: dict[str, Any], finish: str = "tool_calls") -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    return json.dumps({"id": "c", "object": "chat.completion", "choices": [choice]}).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None, index: Any = 0) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
    }


CALL = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": ARGS}}
STREAM_CALL = {"index": 0, **CALL}
ANTHROPIC_START = {"type": "message_start", "message": {"id": "m", "content": [], "role": "x"}}
TOOL_BLOCK = {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}


def _anthropic(block_index: Any = 0, start_name: str = "content_block_start") -> bytes:
    events = [
        ANTHROPIC_START,
        {"type": "content_block_start", "index": block_index, "content_block": TOOL_BLOCK},
        {
            "type": "content_block_delta",
            "index": block_index,
            "delta": {"type": "input_json_delta", "partial_json": ARGS},
        },
        {"type": "content_block_stop", "index": block_index},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]
    names = [e["type"] for e in events]
    names[1] = start_name
    return _sse(*events, names=names)


RESPONSES: dict[str, bytes] = {
    "models": _http(200, b'{"object":"list","data":[{"id":"tiny"}]}'),
    "plain-200": _http(200, _completion({"tool_calls": [CALL]})),
    "status-201": _http(201, _completion({"tool_calls": [CALL]})),
    "status-203-stream": _http(
        203,
        _sse(_chunk({"tool_calls": [STREAM_CALL]}), _chunk({}, "tool_calls"), "[DONE]"),
        "text/event-stream",
    ),
    "legacy-function-call": _http(
        200, _completion({"function_call": {"name": "bash", "arguments": ARGS}}, "function_call")
    ),
    "legacy-function-call-stream": _http(
        200,
        _sse(
            _chunk({"function_call": {"name": "bash", "arguments": ARGS}}),
            _chunk({}, "function_call"),
            "[DONE]",
        ),
        "text/event-stream",
    ),
    "escaped-key-stream": _http(
        200,
        (
            _sse(_chunk({"tool_calls": [STREAM_CALL]})).replace(
                b'"tool_calls"', b'"tool\\u005fcalls"'
            )
            + _sse(_chunk({}, "tool_calls"), "[DONE]")
        ),
        "text/event-stream",
    ),
    "escaped-key": _http(
        200, _completion({"tool_calls": [CALL]}).replace(b'"tool_calls"', b'"tool\\u005fcalls"', 1)
    ),
    "float-index-stream": _http(
        200,
        _sse(
            _chunk({"tool_calls": [{**STREAM_CALL, "index": 0.0}]}),
            _chunk({}, "tool_calls"),
            "[DONE]",
        ),
        "text/event-stream",
    ),
    "float-choice-index-stream": _http(
        200,
        _sse(_chunk({"tool_calls": [STREAM_CALL]}, "tool_calls", index=0.0), "[DONE]"),
        "text/event-stream",
    ),
    "anthropic-ok-names": _http(200, _anthropic(), "text/event-stream"),
    "anthropic-lying-name": _http(
        200, _anthropic(start_name="content_block_delta"), "text/event-stream"
    ),
    "anthropic-float-index": _http(200, _anthropic(block_index=0.0), "text/event-stream"),
    "anthropic-tool-in-message-start": _http(
        200,
        _sse(
            {**ANTHROPIC_START, "message": {"id": "m", "content": [TOOL_BLOCK]}},
            {"type": "message_stop"},
        ),
        "text/event-stream",
    ),
    "anthropic-whole-201": _http(
        201,
        json.dumps(
            {"type": "message", "content": [{**TOOL_BLOCK, "input": {"command": BLOCKED}}]}
        ).encode(),
    ),
    "not-json-2xx": _http(200, b"tool_calls: bash " + BLOCKED.encode(), "text/plain"),
    "stray-line-stream": _http(
        200, b'{"choices":[{"delta":{"tool_calls":[]}}]}\n\ndata: [DONE]\n\n', "text/event-stream"
    ),
    "nan-stream": _http(
        200,
        _sse('{"choices":[{"index":0,"delta":{"content":NaN}}]}', "[DONE]"),
        "text/event-stream",
    ),
    "cut-stream": _http(
        200,
        _sse(_chunk({"content": "thinking"}), _chunk({"tool_calls": [STREAM_CALL]})),
        "text/event-stream",
        cut=True,
    ),
}


def payloads(text: str) -> list[object]:
    """The JSON a client would read: the whole body, or each SSE event's data."""
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            try:
                found.append(json.loads(line[5:]))
            except ValueError:
                continue
    return found


def calls_in(value: object) -> list[object]:
    """Every tool call a client could run: OpenAI `tool_calls`, `function_call`,
    Anthropic `tool_use` blocks, anywhere in the payload."""
    out: list[object] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("tool_calls", "function_call") and item:
                out.append(item)
            elif key == "type" and item in ("tool_use", "input_json_delta"):
                out.append(value)
            else:
                out += calls_in(item)
    elif isinstance(value, list):
        for item in value:
            out += calls_in(item)
    return out


class HostileUpstream:
    def __init__(self) -> None:
        self.received: list[tuple[str, str]] = []
        self.hold = threading.Event()
        self.left = threading.Event()
        """Set when a client of a held (`x-attack: hold`) request closed its connection."""
        self._loop = asyncio.new_event_loop()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> None:
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, sock=self._listener)
        )
        self._thread.start()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                await reader.readexactly(int(headers.get("content-length", "0")))
                self.received.append((method, target))
                attack = headers.get("x-attack", "models")
                if attack == "hold":
                    try:
                        await asyncio.wait_for(reader.read(1), 30)
                    finally:
                        self.left.set()
                    return
                writer.write(RESPONSES[attack])
                await writer.drain()
                if attack.startswith("cut"):
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            writer.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class GuardProcess:
    """`python -m train.guard` on loopback; `url` the model port, `admin_url` its control
    plane, `token` the secret the trainer would hold."""

    def __init__(self, upstream: str, work: Path, *extra: str) -> None:
        self.port, self.admin_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.admin_url = f"http://127.0.0.1:{self.admin_port}"
        self.log_dir = work / "logs"
        token_file = work / "admin-token"
        command = [sys.executable, "-m", "train.guard", "--upstream", upstream]
        command += ["--port", str(self.port), "--admin-port", str(self.admin_port)]
        command += ["--admin-token-file", str(token_file), "--log-dir", str(self.log_dir)]
        command += ["--atif-scan", "off", *extra]
        self.stderr = (work / "guard.stderr").open("w")
        self.process = subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=self.stderr
        )
        deadline = time.monotonic() + 60
        while not token_file.exists() or not self._listening():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError(
                    f"the guard did not start: {(work / 'guard.stderr').read_text()}"
                )
            time.sleep(0.1)
        self.token = token_file.read_text().strip()

    def _listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.admin_port), timeout=1).close()
            return True
        except OSError:
            return False

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def open_files(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.stderr.close()


def raw(
    port: int,
    data: bytes,
    timeout: float = 10.0,
    read: Callable[[socket.socket], bytes] | None = None,
) -> bytes:
    """Sends `data` on a fresh connection, returns all the guard answers before it closes
    (or before `timeout`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        if read is not None:
            return read(sock)
        chunks = []
        try:
            while True:
                piece = sock.recv(65536)
                if not piece:
                    break
                chunks.append(piece)
        except TimeoutError:
            pass
        return b"".join(chunks)


# -- shapes where one reading of the bytes hid the call another reader runs (issue 27) --
BENIGN = json.dumps({"command": "ls"})
BENIGN_CALL = {
    "id": "call_2",
    "type": "function",
    "function": {"name": "bash", "arguments": BENIGN},
}
DANGER_INPUT = {"command": BLOCKED}


_USAGE = {"input_tokens": 1, "output_tokens": 1}
_START = {**ANTHROPIC_START, "message": {**ANTHROPIC_START["message"], "usage": _USAGE}}
_END = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": _USAGE}


def _anthropic_events(*blocks: dict[str, Any]) -> bytes:
    events = [_START, *blocks, _END]
    events += [{"type": "message_stop"}]
    return _sse(*events, names=[e["type"] for e in events])


def _dup(text: str, key: str, first: str) -> str:
    """`text` with `"key": first,` inserted before its first `"key":`: the same key
    twice, the dangerous value first."""
    at = text.index(f'"{key}"')
    return text[:at] + f'"{key}": {first}, ' + text[at:]


_BENIGN_COMPLETION = _completion({"tool_calls": [BENIGN_CALL]}).decode()
_BENIGN_CHUNK = json.dumps(_chunk({"tool_calls": [{"index": 0, **BENIGN_CALL}]}))
_DUP_COMMAND_ARGS = _dup(BENIGN, "command", json.dumps(BLOCKED))
_TOOL_START = {"type": "content_block_start", "index": 0}
SHAPES: dict[str, bytes] = {
    "anthropic-start-input-empty-delta": _http(
        200,
        _anthropic_events(
            {**_TOOL_START, "content_block": {**TOOL_BLOCK, "input": DANGER_INPUT}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": ""},
            },
            {"type": "content_block_stop", "index": 0},
        ),
        "text/event-stream",
    ),
    "anthropic-index-reuse": _http(
        200,
        _anthropic_events(
            {**_TOOL_START, "content_block": {"type": "text", "text": ""}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "ok"},
            },
            {"type": "content_block_stop", "index": 0},
            {**_TOOL_START, "content_block": {**TOOL_BLOCK, "input": DANGER_INPUT}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": BENIGN},
            },
            {"type": "content_block_stop", "index": 0},
        ),
        "text/event-stream",
    ),
    "anthropic-overlapping-blocks": _http(
        200,
        _anthropic_events(
            {**_TOOL_START, "content_block": {**TOOL_BLOCK, "input": DANGER_INPUT}},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": "x"},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": BENIGN},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "content_block_stop", "index": 1},
        ),
        "text/event-stream",
    ),
    "openai-n2-one-chunk": _http(
        200,
        _sse(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "choices": [
                    {"index": 0, "delta": {"tool_calls": [STREAM_CALL]}, "finish_reason": None},
                    {
                        "index": 1,
                        "delta": {"tool_calls": [{"index": 0, **BENIGN_CALL}]},
                        "finish_reason": "tool_calls",
                    },
                ],
            },
            _chunk({}, "tool_calls"),
            "[DONE]",
        ),
        "text/event-stream",
    ),
    "openai-custom-call": _http(
        200,
        _completion(
            {
                "tool_calls": [
                    {**BENIGN_CALL, "type": "custom", "custom": {"name": "bash", "input": BLOCKED}}
                ]
            }
        ),
    ),
    "openai-custom-call-stream": _http(
        200,
        _sse(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            **BENIGN_CALL,
                            "type": "custom",
                            "custom": {"name": "bash", "input": BLOCKED},
                        }
                    ]
                }
            ),
            _chunk({}, "tool_calls"),
            "[DONE]",
        ),
        "text/event-stream",
    ),
    "dup-arguments": _http(200, _dup(_BENIGN_COMPLETION, "arguments", json.dumps(ARGS)).encode()),
    "dup-arguments-stream": _http(
        200,
        _sse(
            _dup(_BENIGN_CHUNK, "arguments", json.dumps(ARGS)), _chunk({}, "tool_calls"), "[DONE]"
        ),
        "text/event-stream",
    ),
    "dup-tool-calls": _http(
        200, _dup(_BENIGN_COMPLETION, "tool_calls", json.dumps([CALL])).encode()
    ),
    "dup-tool-calls-stream": _http(
        200,
        _sse(
            _dup(json.dumps(_chunk({"tool_calls": []})), "tool_calls", json.dumps([STREAM_CALL])),
            _chunk({}, "stop"),
            "[DONE]",
        ),
        "text/event-stream",
    ),
    "dup-command": _http(
        200,
        _completion(
            {
                "tool_calls": [
                    {**BENIGN_CALL, "function": {"name": "bash", "arguments": _DUP_COMMAND_ARGS}}
                ]
            }
        ),
    ),
    "dup-command-stream": _http(
        200,
        _sse(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            **BENIGN_CALL,
                            "function": {"name": "bash", "arguments": _DUP_COMMAND_ARGS},
                        }
                    ]
                }
            ),
            _chunk({}, "tool_calls"),
            "[DONE]",
        ),
        "text/event-stream",
    ),
    "anthropic-dup-command-stream": _http(
        200,
        _anthropic_events(
            {**_TOOL_START, "content_block": TOOL_BLOCK},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": _DUP_COMMAND_ARGS},
            },
            {"type": "content_block_stop", "index": 0},
        ),
        "text/event-stream",
    ),
    "anthropic-dup-block-type": _http(
        200,
        json.dumps({"type": "message", "content": [{**TOOL_BLOCK, "input": DANGER_INPUT}]})
        .replace('"input":', '"type": "text", "text": "", "input":')
        .encode(),
    ),
    "anthropic-dup-block-type-stream": _http(
        200,
        _sse(
            _START,
            json.dumps(
                {**_TOOL_START, "content_block": {**TOOL_BLOCK, "input": DANGER_INPUT}}
            ).replace('"input":', '"type": "text", "text": "", "input":'),
            {"type": "content_block_stop", "index": 0},
            _END,
            {"type": "message_stop"},
        ),
        "text/event-stream",
    ),
}
RESPONSES.update(SHAPES)

REFUSALS: dict[str, bytes] = {
    "cut-short-body": _http(200, _completion({"tool_calls": [CALL]})).replace(
        b"Content-Length: ", b"Content-Length: 1"
    ),
    "string-choice-index-stream": _http(
        200,
        _sse(_chunk({"content": "hi"}), _chunk({"tool_calls": [STREAM_CALL]}, index="0"), "[DONE]"),
        "text/event-stream",
    ),
    "string-choice-index": _http(
        200,
        json.dumps(
            {"id": "c", "choices": [{"index": "0", "message": {"tool_calls": [CALL]}}]}
        ).encode(),
    ),
}
RESPONSES.update(REFUSALS)
