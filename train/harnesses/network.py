"""The network harness containers run on: internal, so the only way out is the host.

An internal Docker bridge has no route beyond its own subnet, but the host answers on
the bridge's gateway address, so a harness reaches the guard there (it must listen on
that address or on 0.0.0.0) and nothing on the internet. What else it can reach: any
host service listening on a non-loopback address; a vLLM server bound to 127.0.0.1 is
out of reach, which keeps the guard the only road to the model.
"""

from __future__ import annotations

import threading

import docker
from docker.errors import APIError, NotFound
from pydantic import BaseModel, ConfigDict

NETWORK_NAME = "rlenv-harvest-harness"
LABEL = "rlenv-harvest"
_lock = threading.Lock()


class HarnessNetwork(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    gateway: str
    """The host's address on this network: where containers reach host services."""


def ensure_network(client: docker.DockerClient, name: str = NETWORK_NAME) -> HarnessNetwork:
    """The internal network, created on first use; a creation race between processes
    ends with both using the one that won."""
    with _lock:
        try:
            network = client.networks.get(name)
        except NotFound:
            try:
                network = client.networks.create(
                    name,
                    driver="bridge",
                    internal=True,
                    check_duplicate=True,
                    labels={LABEL: "harness"},
                )
            except APIError:
                network = client.networks.get(name)
        network.reload()
    configs = (network.attrs.get("IPAM") or {}).get("Config") or []
    gateway = next((c.get("Gateway") for c in configs if c.get("Gateway")), None)
    if not gateway:
        raise RuntimeError(f"docker network {name} has no gateway address")
    return HarnessNetwork(name=name, gateway=gateway.split("/")[0])
