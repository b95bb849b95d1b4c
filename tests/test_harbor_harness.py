"""Harness trials on `--runtime harbor:docker`: the agent environment is Harbor's, built
from a derived environment folder (the task's plus the harness layer), on the internal
harness network only, where the guard's host alias is the network's gateway.

The "guard" here is a plain HTTP server on every host address. From the agent's
environment it must answer through `host.docker.internal`; a server in a container on
Docker's default bridge (an address beyond the host) must not answer; and the agent's
only interface besides loopback must be on the harness network, its default route the
harness network's gateway (on Harbor's default compose network it is that network's
gateway, from where the internet is routed: the check that fails without the override).
As on the Docker runtime's harness network, host services on any non-loopback address
stay reachable (train/harnesses/network.py): the host is the boundary.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.examples import example_bundle
from repo2rlenv.runtime import AgentRun
from repo2rlenv.runtime.harbor_protocol import session_prefix
from repo2rlenv.runtime.harbor_runtime import HarborRuntime, default_python
from tests.broken import SOURCE
from train.harnesses.network import ensure_network
from train.harnesses.trial import HOST_ALIAS

pytestmark = [
    pytest.mark.docker,
    pytest.mark.harbor,
    pytest.mark.skipif(
        not default_python().exists(), reason=f"Harbor's interpreter is not at {default_python()}"
    ),
]

PROBE = """
import sys, urllib.request
def reach(url):
    try:
        return urllib.request.urlopen(url, timeout=5).read().decode()
    except Exception as exc:
        return "unreachable"
port, outside = sys.argv[1], sys.argv[2]
with open("/tmp/probe.txt", "w") as out:
    out.write("guard=" + reach(f"http://host.docker.internal:{port}/") + "\\n")
    out.write("outside=" + reach(f"http://{outside}:8000/") + "\\n")
"""


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"guard-answered")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def host_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@pytest.fixture
def outside_server(docker_ready: str) -> Iterator[str]:
    """An HTTP server in a container on Docker's default bridge: its address."""
    client = docker.from_env()
    container = client.containers.run(
        docker_ready,
        ["python3", "-m", "http.server", "8000"],
        detach=True,
        network="bridge",
        labels={"rlenv-harvest": "test-outside"},
    )
    try:
        container.reload()
        yield container.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
    finally:
        container.remove(force=True)


def _gateway(route_table: str) -> str:
    """The default route's gateway from /proc/net/route (little-endian hex)."""
    for line in route_table.splitlines()[1:]:
        fields = line.split()
        if fields[1] == "00000000":
            return ".".join(str(b) for b in reversed(bytes.fromhex(fields[2])))
    return ""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_harness_trial_reaches_the_guard_only_and_carries_the_layer(
    docker_ready: str, tmp_path: Path, host_server: int, outside_server: str
) -> None:
    client = docker.from_env()
    network = ensure_network(client)
    task = read_task_dir(write_bundle(example_bundle(SOURCE, docker_ready), tmp_path).path)
    layer = tmp_path / "layer"
    (layer / "bin").mkdir(parents=True)
    (layer / "bin" / "probe.py").write_text(PROBE)
    runtime = HarborRuntime("docker")
    runtime.check()
    image = runtime.prepare(task)
    run = AgentRun(
        label="network",
        session_id="harbor-harness-network",
        layer=layer,
        layer_target="/opt/rlenv-harness/probe",
        files={"/tmp/rlenv-harness/instruction.md": b"say hi\n"},
        chown="/tmp/rlenv-harness",
        script=f"python3 /opt/rlenv-harness/probe/bin/probe.py {host_server} "
        f"{outside_server} && cat /tmp/rlenv-harness/instruction.md > /tmp/seen.txt",
        env={"PROBE_ENV": "set"},
        timeout_s=60,
        network=network.name,
        host_aliases={HOST_ALIAS: network.gateway},
        read_back={
            "probe": "cat /tmp/probe.txt",
            "seen": "cat /tmp/seen.txt",
            "networks": "ls /sys/class/net",
            "routes": "cat /proc/net/route",
            "owner": "stat -c %U /tmp/rlenv-harness/instruction.md",
        },
    )
    outcome, result = runtime.run_agent(task, image, run)

    assert outcome.exit_code == 0, (result.status, result.detail, outcome.outputs)
    probe = dict(line.split("=", 1) for line in outcome.outputs["probe"].splitlines())
    assert probe == {"guard": "guard-answered", "outside": "unreachable"}
    assert outcome.outputs["networks"].split() == ["eth0", "lo"]
    assert _gateway(outcome.outputs["routes"]) == network.gateway
    assert outcome.outputs["seen"] == "say hi\n"
    user = str(task.config.agent.user or "root")
    assert outcome.outputs["owner"].strip() == user
    # The verifier ran on the task's own definition after the agent phase.
    assert result.status == "ok" and result.verifier_exit_code is not None
    assert "verifier" in result.phase_s
    left = client.containers.list(all=True, filters={"label": "rlenv-harvest.session"})
    assert not [c for c in left if c.labels["rlenv-harvest.session"] == run.session_id]
    projects = client.containers.list(all=True, filters={"label": "com.docker.compose.project"})
    assert not [
        c for c in projects if c.labels["com.docker.compose.project"].startswith(session_prefix())
    ]


def test_a_runtime_without_harness_trials_refuses_to_run_one(tmp_path: Path) -> None:
    runtime = HarborRuntime("daytona")
    assert runtime.harness_trials is False
    with pytest.raises(Exception, match="cannot run harness trials"):
        runtime.run_agent(
            None,  # type: ignore[arg-type]
            "",
            AgentRun(
                label="x",
                session_id="x",
                layer=tmp_path,
                layer_target="/opt/x",
                script="true",
                timeout_s=1,
                network="n",
            ),
        )
