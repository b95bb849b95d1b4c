"""The services under a run, each started and stopped as a context: the model (the
tiny one built offline), the vLLM server with LoRA slots for every trainer's live
adapter versions, the guard in front of it, a watch on the server's health, and the
sweep of the run's rollout containers. Kept apart from `run` (which starts one trainer
process per harness on top of them) so each can be checked without the other.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repo2rlenv.ui import info, warn
from train.data.config import TINY_MODEL, TrainConfig
from train.launch.errors import RunError
from train.launch.plan import ADAPTER_HEADROOM, gpu_layout, missing_in

DEFAULT_MAX_MODEL_LEN = 16384
SERVER_STOP_S = 8.0
SERVER_PROBE_EVERY_S = 5.0
SERVER_MISSES = 4
"""A server that fails this many /health probes in a row (SERVER_PROBE_EVERY_S apart)
has died: the run stops with run.server-died."""


def server_python(config: TrainConfig) -> Path:
    """The interpreter that runs vLLM: `server.python`, else the CPU build's venv on a
    CPU run and this interpreter on a GPU run (where `pip install vllm` puts it)."""
    from train.serving.install import DEFAULT_VENV, venv_python

    if config.server.python:
        return Path(config.server.python)
    return venv_python(DEFAULT_VENV) if config.device == "cpu" else Path(sys.executable)


def check_server_python(config: TrainConfig) -> Path:
    python = server_python(config)
    missing = missing_in(str(python), ("vllm",))
    if missing is None or missing:
        hint = "`make vllm`" if config.device == "cpu" else "pip install vllm, or set server.python"
        state = "does not run" if missing is None else "lacks the vllm package"
        raise RunError(f"run.no-vllm: {python} {state}: {hint}")
    return python


def resolve_model(config: TrainConfig, out: Path) -> Path | str:
    """`builtin:tiny` is built offline into `<out>/model` (by the server's interpreter, so
    both sides load the same files); any other name is handed to both sides as it is."""
    if config.model != TINY_MODEL:
        return config.model
    python = sys.executable if config.server.url else check_server_python(config)
    folder = out / "model"
    done = subprocess.run(
        [str(python), "-m", "train.serving.tiny_model", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RunError(f"run.model-build-failed: {done.stderr.strip()[-800:]}")
    return folder.resolve()


@contextmanager
def served(config: TrainConfig, model: Path | str, out: Path) -> Iterator[str]:
    """The configured server, or a local vLLM server with LoRA slots for every trainer's
    live versions (`--max-loras` = trainers x (max_staleness + 2)): the CPU build on a
    CPU run; on a GPU run the `vllm` of `server.python` on the plan's server GPUs."""
    if config.server.url:
        yield config.server.url.rstrip("/")
        return
    from train.serving.server import ServerError, ServerOptions, VllmServer

    python = check_server_python(config)
    gpus, _ = gpu_layout(config)
    gpu_args = ["--tensor-parallel-size", str(len(gpus))] if len(gpus) > 1 else []
    gpu_env = {"CUDA_VISIBLE_DEVICES": ",".join(visible_gpus(gpus))} if gpus else {}
    slots = len(config.harnesses) * (config.max_staleness + ADAPTER_HEADROOM)
    options = ServerOptions(
        model=Path(model),
        python=python,
        dtype="auto" if gpus else "float32",
        gpu_memory_utilization=0.9 if gpus else 0.3,
        max_model_len=config.server.max_model_len or DEFAULT_MAX_MODEL_LEN,
        tool_call_parser=config.server.tool_call_parser,
        extra_args=["--enable-lora", "--max-lora-rank", str(vllm_rank(config.lora.r)),
                    "--max-loras", str(slots), *gpu_args],
        extra_env={"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "1", "VLLM_SERVER_DEV_MODE": "1",
                   **gpu_env},
        log_path=out / "vllm.log",
    )  # fmt: skip
    server = VllmServer(options)
    where = f"GPUs {gpu_env['CUDA_VISIBLE_DEVICES']}" if gpus else "CPU"
    info(f"starting vLLM ({where}) on {model} with {slots} adapter slots; "
            f"log {out / 'vllm.log'}")  # fmt: skip
    try:
        server.start()
    except ServerError as exc:
        raise RunError(f"run.server-failed: {exc}") from exc
    except BaseException:  # interrupted while vLLM starts (minutes on a CPU)
        server.stop(timeout_s=SERVER_STOP_S)
        raise
    try:
        yield server.base_url
    finally:
        server.stop(timeout_s=SERVER_STOP_S)


def vllm_rank(rank: int) -> int:
    """vLLM accepts only some `--max-lora-rank` values; the smallest that holds `rank`."""
    return next((r for r in (8, 16, 32, 64, 128, 256, 320, 512) if r >= rank), rank)


@contextmanager
def guarded(upstream: str, out: Path) -> Iterator[Any]:
    """The guard in-process on every address (containers reach it through the network
    gateway), asking vLLM for token ids and logprobs so turns can be trained on."""
    from train.guard import GuardOptions, GuardServer
    from train.harnesses.trial import HOST_ALIAS
    from train.rollout.contract import GuardEndpoint

    log_dir = out / "guard"
    guard = GuardServer(
        GuardOptions(upstream=upstream, host="0.0.0.0", port=0, log_dir=log_dir,
                     request_tokens=True, require_registered=True)
    )  # fmt: skip
    guard.start_background()
    try:
        yield GuardEndpoint(
            admin_url=guard.admin_url,
            admin_token=guard.options.admin_token,
            container_url=f"http://{HOST_ALIAS}:{guard.port}",
            log_dir=log_dir,
        )
    finally:
        guard.stop_background()


class ServerWatch:
    """Whether the model server is still there, probed every `every_s` from the run's
    loop; `dead()` once `misses` probes in a row found it down. A run whose server died
    can only fail its rollouts one by one, each after its harness gave up. Only a
    refused connection or a 5xx answer (vLLM's /health once its engine died) is a miss:
    a server too busy to answer in time is alive."""

    def __init__(
        self, url: str, every_s: float = SERVER_PROBE_EVERY_S, misses: int = SERVER_MISSES
    ) -> None:
        self.url = url.rstrip("/")
        self.every_s = every_s
        self.misses = misses
        self._missed = 0
        self._next = time.monotonic() + every_s

    def dead(self) -> bool:
        now = time.monotonic()
        if now < self._next:
            return self._missed >= self.misses
        self._next = now + self.every_s
        self._missed = self._missed + 1 if server_down(self.url) else 0
        return self._missed >= self.misses


def server_down(url: str, timeout_s: float = 5.0) -> bool:
    """True when `url`/health refuses the connection or answers 5xx; a timeout is not
    a verdict."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout_s):
            return False
    except urllib.error.HTTPError as exc:
        return exc.code >= 500
    except urllib.error.URLError as exc:
        return isinstance(exc.reason, ConnectionError)
    except ConnectionError:
        return True
    except OSError:  # a timeout: busy, not gone
        return False


def remove_run_containers(run_id: str) -> list[str]:
    """The run's rollout containers still there (a trainer killed before its runner
    removed them), found by the labels every rollout container carries, removed."""
    try:
        import docker
        import docker.errors

        from repo2rlenv.runtime.containers import LABEL
    except ImportError:
        return []
    removed = []
    try:
        client = docker.from_env()
        found = client.containers.list(all=True, filters={"label": f"{LABEL}=harness-trial"})
        for container in found:
            if container.labels.get(f"{LABEL}.session", "").startswith(f"{run_id}-"):
                container.remove(force=True)
                removed.append(container.name)
    except docker.errors.DockerException as exc:
        warn(f"could not check for the run's rollout containers: {exc}")
    return removed


def visible_gpus(indices: list[int]) -> list[str]:
    """The plan's GPU indices as CUDA_VISIBLE_DEVICES entries: counted within what the
    run itself was given when CUDA_VISIBLE_DEVICES is already set, else as they are."""
    given = [g for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    return [given[i] if i < len(given) else str(i) for i in indices]
