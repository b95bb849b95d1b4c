"""From a container on the rollout network, as a rollout's task container sits there
(internal bridge, `host.docker.internal` -> the gateway): the model route works; the
guard's control plane, vLLM's dev and LoRA routes, and vLLM itself do not answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.guard.hostile import GuardProcess, HostileUpstream
from train.harnesses.trial import HOST_ALIAS

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PROBE = r"""
import json, socket, sys, urllib.request, urllib.error
host, port, admin, upstream = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = {}
def call(name, method, url, body=None, headers=None):
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            out[name] = [answer.status, answer.read().decode()[:2000]]
    except urllib.error.HTTPError as exc:
        out[name] = [exc.code, exc.read().decode()[:2000]]
    except OSError as exc:
        out[name] = [0, type(exc).__name__]
base = f"http://{host}:{port}"
call("models", "GET", f"{base}/v1/models")
chat = json.dumps({"model": "tiny", "messages": [], "tools": [{"type": "function",
    "function": {"name": "bash", "parameters": {"type": "object"}}}]}).encode()
call("chat", "POST", f"{base}/s/box/v1/chat/completions", chat,
     {"content-type": "application/json", "x-attack": "plain-200"})
for route in ("/v1/load_lora_adapter", "/v1/unload_lora_adapter", "//v1/load_lora_adapter",
              "/reset_prefix_cache", "/pause", "/server_info", "/guard/sessions/box",
              "/guard/health"):
    call(route, "POST", base + route, b"{}", {"content-type": "application/json"})
call("admin-port", "GET", f"http://{host}:{admin}/guard/health")
call("vllm-direct", "GET", f"http://{host}:{upstream}/v1/models")
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def docker_client(docker_ready: str):
    """The engine; `docker_ready` fails (never skips) without it or the base image."""
    import docker

    return docker.from_env()


def test_from_the_rollout_network(
    docker_client,
    docker_ready: str,
    upstream: HostileUpstream,
    tmp_path: Path,
) -> None:
    from train.harnesses.network import ensure_network

    network = ensure_network(docker_client)
    guard = GuardProcess(upstream.base_url, tmp_path, "--host", "0.0.0.0")
    try:
        logs = docker_client.containers.run(
            docker_ready,
            [
                "python3",
                "-c",
                PROBE,
                HOST_ALIAS,
                str(guard.port),
                str(guard.admin_port),
                str(upstream.port),
            ],
            network=network.name,
            extra_hosts={HOST_ALIAS: network.gateway},
            remove=True,
            stdout=True,
            stderr=True,
        )
    finally:
        guard.stop()
    seen = json.loads(logs.decode().strip().splitlines()[-1])
    assert seen["models"][0] == 200
    assert seen["chat"][0] == 200 and "[guard]" in seen["chat"][1]
    for route in (
        "/v1/load_lora_adapter",
        "/v1/unload_lora_adapter",
        "//v1/load_lora_adapter",
        "/reset_prefix_cache",
        "/pause",
        "/server_info",
        "/guard/sessions/box",
        "/guard/health",
    ):
        assert seen[route][0] in (404, 405), (route, seen[route])
        assert "guard.route-not-allowed" in seen[route][1]
    assert seen["admin-port"][0] == 0  # nothing listens there for the container
    assert seen["vllm-direct"][0] == 0
    assert all(target != "/v1/load_lora_adapter" for _, target in upstream.received)
