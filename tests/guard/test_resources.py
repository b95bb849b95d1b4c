"""Memory and open files of the real guard process stay bounded: 1,000 sessions (each
one request, then idle: they expire) and 200 slow clients (closed at the request
timeout); connections beyond `--max-connections` are closed at once. Measured from
/proc/PID (RSS, fd count)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.guard.hostile import TOOLS, GuardProcess, HostileUpstream

pytestmark = pytest.mark.slow
SESSIONS = 1000
SLOW_CLIENTS = 200
MAX_CONNECTIONS = 250


@pytest.fixture
def guard(upstream: HostileUpstream, tmp_path: Path) -> Iterator[GuardProcess]:
    process = GuardProcess(
        upstream.base_url,
        tmp_path,
        *("--session-idle-s", "1", "--client-timeout-s", "2"),
        *("--max-connections", str(MAX_CONNECTIONS)),
    )
    yield process
    process.stop()


def _health(guard: GuardProcess) -> dict:
    headers = {"authorization": f"Bearer {guard.token}"}
    return requests.get(f"{guard.admin_url}/guard/health", headers=headers, timeout=10).json()


def _settle(guard: GuardProcess, fds: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if guard.open_files() <= fds and _health(guard)["sessions"] == 0:
            break
        time.sleep(0.25)
    return guard.open_files()


def test_sessions_expire_and_their_files_close(guard: GuardProcess) -> None:
    client = requests.Session()
    body = {"model": "tiny", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}
    client.post(f"{guard.url}/s/warm/v1/chat/completions", json=body, timeout=10)
    fds0 = _settle(guard, 10_000, 3)
    rss0 = guard.rss_kb()
    for i in range(SESSIONS):
        answer = client.post(
            f"{guard.url}/s/r{i}/v1/chat/completions",
            json=body,
            headers={"x-attack": "plain-200"},
            timeout=10,
        )
        assert "[guard]" in answer.text
    peak = guard.open_files()
    fds = _settle(guard, fds0 + 2, 15)
    rss = guard.rss_kb()
    print(f"fds {fds0} -> peak {peak} -> {fds}; rss {rss0 >> 10} -> {rss >> 10} MiB")
    assert _health(guard)["sessions"] == 0 and _health(guard)["sessions_expired"] >= SESSIONS
    assert fds <= fds0 + 2
    assert rss - rss0 < 64 << 10  # KiB: 1,000 closed sessions leave less than 64 MiB
    assert guard.alive()


def test_slow_clients_are_closed_and_connections_are_bounded(guard: GuardProcess) -> None:
    fds0 = guard.open_files()
    rss0 = guard.rss_kb()
    clients = []
    for _ in range(SLOW_CLIENTS):
        sock = socket.create_connection(("127.0.0.1", guard.port), timeout=10)
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"
        )
        clients.append(sock)
    extra = [
        socket.create_connection(("127.0.0.1", guard.port), timeout=10)
        for _ in range(MAX_CONNECTIONS)
    ]
    time.sleep(0.5)
    during = guard.open_files()
    assert during <= fds0 + MAX_CONNECTIONS + 5  # the rest were closed at once
    for sock in clients:
        assert sock.recv(100) == b""  # closed at the request timeout, unanswered
    for sock in clients + extra:
        sock.close()
    fds = _settle(guard, fds0, 10)
    rss = guard.rss_kb()
    print(f"fds {fds0} -> {during} -> {fds}; rss {rss0 >> 10} -> {rss >> 10} MiB")
    assert fds <= fds0 + 2
    assert rss - rss0 < 32 << 10
    assert requests.get(f"{guard.url}/v1/models", timeout=10).status_code == 200
