"""The guard as a policy under training would probe it (issue 18), against the real
`python -m train.guard` process on loopback, with a hostile upstream behind it.

Each attack must meet a clear error or a `[guard]` notice; the process stays up; no
tool call reaches the client unchecked (the blocked command never comes back).
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
import requests

from tests.guard.hostile import (
    ANTHROPIC_TOOLS,
    BLOCKED,
    TOOLS,
    GuardProcess,
    HostileUpstream,
    calls_in,
    payloads,
    raw,
)

pytestmark = pytest.mark.slow
GUARD_ARGS = ("--client-timeout-s", "2")  # the `guard` fixture's flags (conftest)


def _admin(
    guard: GuardProcess, method: str, path: str, token: str | None = "", **kw
) -> requests.Response:
    headers = {} if token is None else {"authorization": f"Bearer {token or guard.token}"}
    return requests.request(method, f"{guard.admin_url}{path}", headers=headers, timeout=10, **kw)


def _chat(
    guard: GuardProcess, attack: str, path: str = "/s/atk/v1/chat/completions", **body
) -> requests.Response:
    payload = {"model": "tiny", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}
    payload |= body
    return requests.post(
        f"{guard.url}{path}", json=payload, headers={"x-attack": attack}, timeout=20
    )


def _messages(guard: GuardProcess, attack: str) -> requests.Response:
    payload = {"model": "tiny", "max_tokens": 8, "messages": [{"role": "user", "content": "go"}]}
    payload["tools"] = ANTHROPIC_TOOLS
    return requests.post(
        f"{guard.url}/s/atk/v1/messages", json=payload, headers={"x-attack": attack}, timeout=20
    )


def _unchecked(text: str) -> bool:
    """A call carrying the blocked command reached the client."""
    return any(
        "curl" in json.dumps(call) for payload in payloads(text) for call in calls_in(payload)
    )


def _up(guard: GuardProcess) -> None:
    assert guard.alive()
    assert requests.get(f"{guard.url}/v1/models", timeout=10).status_code == 200


# -- 1. the control plane ---------------------------------------------------------------
def test_admin_routes_are_not_on_the_model_port(guard: GuardProcess) -> None:
    for method, path, body in [
        ("PUT", "/guard/sessions/victim", {}),
        ("PUT", "/s/x/guard/sessions/victim", {"hidden_paths": []}),
        ("PUT", "//guard/./sessions/victim", {"rules_file": "/etc/passwd"}),
        ("GET", "/guard/health", None),
    ]:
        answer = requests.request(method, f"{guard.url}{path}", json=body, timeout=10)
        assert answer.status_code == 404, path
        assert answer.json()["error"]["type"] == "guard.route-not-allowed"
    assert _admin(guard, "GET", "/guard/sessions/victim").status_code == 404
    _up(guard)


def test_control_plane_needs_the_token(guard: GuardProcess) -> None:
    assert _admin(guard, "GET", "/guard/health", token=None).status_code == 401
    assert _admin(guard, "GET", "/guard/health", token="x" * 43).status_code == 401
    health = _admin(guard, "GET", "/guard/health")
    assert health.status_code == 200 and health.json()["ok"] is True


def test_settings_never_carry_code(guard: GuardProcess, tmp_path: Path) -> None:
    evil = tmp_path / "evil.py"
    marker = tmp_path / "ran"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\nRULES = []\n")
    for body in ({"rules_file": str(evil)}, {"plugins": ["os:system"]}):
        answer = _admin(guard, "PUT", "/guard/sessions/code", json=body)
        assert answer.status_code == 400 and answer.json()["error"]["type"] == "guard.bad-context"
    assert not marker.exists()


def test_a_task_folder_cannot_import_a_module(guard: GuardProcess, tmp_path: Path) -> None:
    task = tmp_path / "task"
    (task / "tests").mkdir(parents=True)
    (task / "instruction.md").write_text("Fix it.")
    (task / "task.toml").write_text('version = "1.0"\n[metadata.guard]\nplugins = ["os:system"]\n')
    answer = _admin(guard, "PUT", "/guard/sessions/task1", json={"task_dir": str(task)})
    assert answer.status_code == 400, answer.text


def test_a_blocked_session_cannot_be_reset(guard: GuardProcess) -> None:
    assert _admin(guard, "PUT", "/guard/sessions/reset", json={}).status_code == 200
    answer = _chat(guard, "plain-200", "/s/reset/v1/chat/completions")
    assert "[guard]" in answer.text
    again = _admin(guard, "PUT", "/guard/sessions/reset", json={"hidden_paths": []})
    assert again.status_code == 409
    status = _admin(guard, "GET", "/guard/sessions/reset").json()
    assert status["blocked"] is True and status["reward_override"] == 0.0


@pytest.mark.parametrize("session", ["..", ".", "a/b", "a%2f..", "x" * 129])
def test_session_ids_are_safe_names(guard: GuardProcess, session: str) -> None:
    answer = requests.post(
        f"{guard.url}/v1/chat/completions",
        json={"model": "tiny", "messages": []},
        headers={"x-guard-session": session, "x-attack": "plain-200"},
        timeout=10,
    )
    assert answer.status_code == 400
    assert _admin(guard, "PUT", f"/guard/sessions/{session}", json={}).status_code in (400, 404)
    assert not (guard.log_dir.parent / "verdict.json").exists()
    assert not (guard.log_dir / "verdict.json").exists()


# -- 2. the allowlist --------------------------------------------------------------------
VLLM_DEV_ROUTES = [
    ("POST", "/v1/load_lora_adapter"),
    ("POST", "/v1/unload_lora_adapter"),
    ("POST", "//v1/load_lora_adapter"),
    ("POST", "/v1/./load_lora_adapter"),
    ("POST", "/v1/chat/completions/../../v1/load_lora_adapter"),
    ("POST", "/s/x/v1/load_lora_adapter"),
    ("POST", "/v1/%6coad_lora_adapter"),
    ("POST", "/pause"),
    ("POST", "/resume"),
    ("POST", "/reset_prefix_cache"),
    ("GET", "/server_info"),
    ("POST", "/sleep"),
    ("GET", "/v1/responses"),
    ("POST", "/v1/completions"),
    ("GET", "/metrics"),
    ("DELETE", "/v1/models"),
    ("GET", "/v1/chat/completions"),
]


@pytest.mark.parametrize(("method", "path"), VLLM_DEV_ROUTES)
def test_vllm_dev_and_admin_routes_never_reach_the_upstream(
    guard: GuardProcess, upstream: HostileUpstream, method: str, path: str
) -> None:
    before = len(upstream.received)
    answer = requests.request(method, f"{guard.url}{path}", json={"lora_name": "x"}, timeout=10)
    assert answer.status_code in (400, 404, 405)
    assert answer.json()["error"]["type"].startswith("guard.")
    assert len(upstream.received) == before


@pytest.mark.parametrize(
    "path",
    [
        "/v1/chat/completions/",
        "//v1/chat/completions",
        "/v1/./chat/completions",
        "/v1/x/../chat/completions",
        "/s/atk//v1/chat/completions/",
    ],
)
def test_every_spelling_of_the_model_route_is_checked(
    guard: GuardProcess, upstream: HostileUpstream, path: str
) -> None:
    answer = _chat(guard, "plain-200", path)
    assert answer.status_code == 200 and "[guard]" in answer.text
    assert not _unchecked(answer.text)
    assert upstream.received[-1] == ("POST", "/v1/chat/completions")


# -- 3. every response shape -------------------------------------------------------------
@pytest.mark.parametrize(
    "attack",
    [
        "status-201",
        "status-203-stream",
        "legacy-function-call",
        "legacy-function-call-stream",
        "escaped-key",
        "escaped-key-stream",
    ],
)
def test_tool_calls_in_any_shape_are_checked(guard: GuardProcess, attack: str) -> None:
    answer = _chat(guard, attack, stream="stream" in attack)
    assert "[guard]" in answer.text and "network.unseen-host" in answer.text, answer.text
    assert not _unchecked(answer.text)
    _up(guard)


@pytest.mark.parametrize(
    "attack",
    [
        "float-index-stream",
        "float-choice-index-stream",
        "not-json-2xx",
        "stray-line-stream",
        "nan-stream",
        "cut-stream",
    ],
)
def test_responses_the_guard_cannot_read_are_refused(guard: GuardProcess, attack: str) -> None:
    try:
        answer = _chat(guard, attack, stream="stream" in attack)
        text = answer.text
    except requests.exceptions.ChunkedEncodingError as exc:  # closed after the error event
        text = str(exc)
        pytest.fail(f"the refusal must arrive whole: {text}")
    assert "guard." in text and ("[guard] response refused" in text or answer.status_code == 502)
    assert BLOCKED not in text.replace('\\"', '"')
    _up(guard)


@pytest.mark.parametrize(
    "attack",
    ["anthropic-lying-name", "anthropic-float-index", "anthropic-tool-in-message-start"],
)
def test_anthropic_events_are_judged_by_their_json_type(guard: GuardProcess, attack: str) -> None:
    answer = _messages(guard, attack)
    assert "[guard] response refused" in answer.text
    assert '"tool_use"' not in answer.text
    _up(guard)


@pytest.mark.parametrize("attack", ["anthropic-ok-names", "anthropic-whole-201"])
def test_anthropic_tool_use_is_blocked(guard: GuardProcess, attack: str) -> None:
    answer = _messages(guard, attack)
    assert "[guard]" in answer.text and not _unchecked(answer.text)


def test_a_cut_stream_is_logged_as_failed(guard: GuardProcess) -> None:
    assert _admin(guard, "PUT", "/guard/sessions/cutlog", json={}).status_code == 200
    _chat(guard, "cut-stream", "/s/cutlog/v1/chat/completions", stream=True)
    _admin(guard, "GET", "/guard/sessions/cutlog")
    lines = (guard.log_dir / "cutlog" / "exchanges.jsonl").read_text().splitlines()
    assert [json.loads(line)["status"] for line in lines] == [502]


# -- 4. framing and resources ------------------------------------------------------------
def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith((b"HTTP/1.1 ", b"HTTP/1.0 ")) else 0


FRAMING = {
    "negative-chunk": b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n-6\r\nabc\r\n0\r\n\r\n",
    "plus-chunk": b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n+2\r\n{}\r\n0\r\n\r\n",
    "superscript-length": "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    "Content-Length: \u00b2\r\n\r\n{}".encode(),
    "length-and-chunked": b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /guard/health HTTP/1.1\r\nHost: x\r\n\r\n",
    "two-lengths": b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
    b"Content-Length: 40\r\n\r\n{}",
    "huge-head-one-read": b"GET /v1/models HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
    "gzip-te": b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("name", list(FRAMING))
def test_bad_framing_gets_a_clear_error_and_the_guard_stays_up(
    guard: GuardProcess, name: str
) -> None:
    answer = raw(guard.port, FRAMING[name], timeout=5)
    assert _status(answer) in (400, 413, 431, 501), answer[:200]
    assert answer.count(b"HTTP/1.") == 1  # a smuggled second request is never answered
    assert answer.partition(b"\r\n\r\n")[2].strip()  # says what is wrong (aiohttp's words)
    _up(guard)


def test_deep_json_is_a_400(guard: GuardProcess) -> None:
    deep = b"[" * 10_000 + b"]" * 10_000
    answer = requests.post(f"{guard.url}/v1/chat/completions", data=deep, timeout=10)
    assert answer.status_code == 400
    admin = _admin(guard, "PUT", "/guard/sessions/deep", data=deep)
    assert admin.status_code == 400
    _up(guard)


def test_a_silent_client_is_closed(guard: GuardProcess) -> None:
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", guard.port), timeout=15) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{"
        )
        assert sock.recv(100) == b""  # closed by the guard, no answer
    assert time.monotonic() - start < 10


def test_a_client_that_leaves_cancels_its_upstream_request(
    guard: GuardProcess, upstream: HostileUpstream
) -> None:
    upstream.left.clear()
    body = json.dumps({"model": "tiny", "messages": []}).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-attack: hold\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", guard.port), timeout=10) as sock:
        sock.sendall(head + body)
        time.sleep(0.5)
    assert upstream.left.wait(10)
    _up(guard)


def test_a_run_refuses_sessions_it_did_not_register(
    upstream: HostileUpstream, tmp_path: Path
) -> None:
    """With `--require-registered` (what runs set) a rollout cannot move its calls to a
    session of its own making; a registered one is served."""
    process = GuardProcess(upstream.base_url, tmp_path, "--require-registered")
    try:
        stray = _chat(process, "plain-200", "/s/made-up/v1/chat/completions")
        assert stray.status_code == 403
        assert stray.json()["error"]["type"] == "guard.unknown-session"
        assert _admin(process, "PUT", "/guard/sessions/known", json={}).status_code == 200
        known = _chat(process, "plain-200", "/s/known/v1/chat/completions")
        assert known.status_code == 200 and "[guard]" in known.text
    finally:
        process.stop()


def test_the_control_plane_listens_on_loopback_only() -> None:
    from pydantic import ValidationError

    from train.guard import GuardOptions

    with pytest.raises(ValidationError, match="loopback"):
        GuardOptions(upstream="http://127.0.0.1:1", admin_host="0.0.0.0")
    assert GuardOptions(upstream="http://127.0.0.1:1", admin_host="::1").admin_host == "::1"


def test_a_task_folder_brings_its_own_rules(guard: GuardProcess, tmp_path: Path) -> None:
    """The one way a rules file gets in: `[metadata.guard] rules_file`, inside the task
    folder the trainer names."""
    task = tmp_path / "task"
    task.mkdir()
    (task / "instruction.md").write_text("Fix it.")
    (task / "guard.py").write_text(
        "from train.guard.facts import Violation\n"
        "def no_ls(call, facts, view):\n"
        "    return [Violation('task.no-ls', 'no ls')] if 'ls' in call.raw else []\n"
        "RULES = [no_ls]\n"
    )
    (task / "task.toml").write_text('version = "1.0"\n[metadata.guard]\nrules_file = "guard.py"\n')
    answer = _admin(guard, "PUT", "/guard/sessions/taskrules", json={"task_dir": str(task)})
    assert answer.status_code == 200, answer.text
    assert answer.json()["plugin_problems"] == []
    outside = tmp_path / "outside.py"
    outside.write_text("RULES = []\n")
    (task / "task.toml").write_text(
        'version = "1.0"\n[metadata.guard]\nrules_file = "../outside.py"\n'
    )
    refused = _admin(guard, "PUT", "/guard/sessions/taskrules2", json={"task_dir": str(task)})
    assert refused.status_code == 400
    assert refused.json()["error"]["type"] == "context.rules-file-outside"


def test_malformed_requests_cost_the_log_one_short_line_at_most(
    upstream: HostileUpstream, tmp_path: Path
) -> None:
    """aiohttp would log a traceback quoting the client's bytes for each: a rollout could
    fill the run's log. Here every one is counted, and stderr gets a bounded number of
    short, single, markup-free lines whatever is sent."""
    process = GuardProcess(upstream.base_url, tmp_path)
    try:
        parser_errors = [data for name, data in FRAMING.items() if name != "gzip-te"]
        attacks = [*parser_errors, b"GARBAGE\r\n\r\n", b"[bold red]FAKE[/] \x1b[31m\r\n\r\n"]
        sent = 0
        began = time.monotonic()
        while sent < 400:
            for data in attacks:
                assert _status(raw(process.port, data, timeout=5)) in (400, 413, 431, 501)
                sent += 1
        elapsed = time.monotonic() - began
        health = _admin(process, "GET", "/guard/health").json()
        assert health["http_errors"] >= sent
        _up(process)
    finally:
        process.stop()
    logged = (tmp_path / "guard.stderr").read_text().partition("control plane on")[2]
    logged = logged.partition("\n")[2]  # what came after the start-up lines
    lines = logged.splitlines()
    assert "Traceback" not in logged
    assert len(lines) <= 2 + elapsed / 10, lines  # one per 10 s
    assert all(len(line) <= 200 and line.startswith("guard http: ") for line in lines), lines
    assert "\x1b" not in logged
