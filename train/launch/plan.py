"""What a run would start, worked out from the config alone, and whether it could start.

The plan is the dry run's product: one vLLM server holding the base model and every
trainer's adapters, one trainer per harness on its GPU share, each with its own
versioned adapter name (TRL hard-codes one name and pauses the whole server on sync, so
trainers sharing a server must not share names) and its sessions. Checking readiness
here, before any task is loaded, lets a real run fail in a second instead of after the
split.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess

from pydantic import BaseModel, ConfigDict

from train.data.config import TrainConfig
from train.serving.server import KEEP_ALIVE_ENV

TRAIN_PACKAGES = ("torch", "trl", "peft")
SERVE_PACKAGES = ("vllm",)
ADAPTER_HEADROOM = 2
"""Adapter slots per trainer beyond the staleness window: the one being loaded and the
one being unloaded (TRL syncs by load-then-unload)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerPlan(_Model):
    url: str | None
    """A configured server to use; None when the run starts its own."""
    gpus: list[int]
    model: str
    max_loras: int
    max_lora_rank: int
    command: list[str]
    env: dict[str, str]


class TrainerPlan(_Model):
    harness: str
    gpu: int
    """GPU index the trainer runs on; -1 on a CPU run."""
    adapter: str
    """Versioned adapter names: `<adapter>-v0`, `-v1`, ...; never the base model's name."""
    live_versions: int
    sessions: int
    task_groups_in_flight: int
    steps: int
    micro_batches_per_step: int
    token_budget: int


class Plan(_Model):
    preset: str
    server: ServerPlan
    trainers: list[TrainerPlan]
    total_sessions: int
    train_tasks: int
    heldout_tasks: int
    rebalance: bool
    weight_by_kind: dict[str, float]


def build_plan(
    config: TrainConfig, train_tasks: int, heldout_tasks: int, weight_by_kind: dict[str, float]
) -> Plan:
    server_gpus, trainer_gpus = gpu_layout(config)
    per_trainer = config.max_staleness + ADAPTER_HEADROOM
    max_loras = per_trainer * len(config.harnesses)
    command = [
        "python", "-m", "vllm.entrypoints.openai.api_server",
        "--model", config.model,
        *(["--tensor-parallel-size", str(len(server_gpus))] if server_gpus else []),
        "--enable-lora",
        "--max-lora-rank", str(config.lora.r),
        "--max-loras", str(max_loras),
        "--enable-auto-tool-choice",
        "--tool-call-parser", config.server.tool_call_parser,
    ]  # fmt: skip
    if config.server.max_model_len is not None:
        command += ["--max-model-len", str(config.server.max_model_len)]
    server = ServerPlan(
        url=config.server.url,
        gpus=server_gpus,
        model=config.model,
        max_loras=max_loras,
        max_lora_rank=config.lora.r,
        command=command,
        env={
            "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "1",
            "VLLM_SERVER_DEV_MODE": "1",
            **KEEP_ALIVE_ENV,
        },
    )
    trainers = [
        TrainerPlan(
            harness=harness,
            gpu=trainer_gpus[harness],
            adapter=f"{harness}-policy",
            live_versions=config.max_staleness + 1,
            sessions=config.sessions_per_trainer,
            task_groups_in_flight=max(1, config.sessions_per_trainer // config.rollouts_per_task),
            steps=config.steps,
            micro_batches_per_step=config.micro_batches_per_step,
            token_budget=config.token_budget,
        )
        for harness in config.harnesses
    ]
    return Plan(
        preset=config.preset,
        server=server,
        trainers=trainers,
        total_sessions=config.sessions_per_trainer * len(trainers),
        train_tasks=train_tasks,
        heldout_tasks=heldout_tasks,
        rebalance=config.imbalance.rebalance,
        weight_by_kind=weight_by_kind,
    )


def gpu_layout(config: TrainConfig) -> tuple[list[int], dict[str, int]]:
    """The server's GPU indices, then each harness's trainer GPU (-1 on a CPU run): the
    server takes the first `server_gpus`, trainers fill the rest `trainers_per_gpu` at a
    time. With `server.url` the server runs elsewhere and trainers start at GPU 0. A real
    run sets CUDA_VISIBLE_DEVICES from this, so each process sees only its share."""
    if config.device == "cpu":
        return [], dict.fromkeys(config.harnesses, -1)
    first = 0 if config.server.url else config.server_gpus
    trainers = {
        harness: first + index // config.trainers_per_gpu
        for index, harness in enumerate(config.harnesses)
    }
    return ([] if config.server.url else list(range(config.server_gpus))), trainers


def missing_in(python: str, names: tuple[str, ...]) -> list[str] | None:
    """Which of `names` another interpreter cannot import (find_spec: nothing heavy is
    loaded); None when that interpreter does not run at all."""
    code = (
        "import importlib.util, sys; "
        "print(' '.join(n for n in sys.argv[1:] if importlib.util.find_spec(n) is None))"
    )
    try:
        done = subprocess.run([python, "-c", code, *names], capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.split() if done.returncode == 0 else None


def count_gpus() -> int:
    """NVIDIA GPUs `nvidia-smi -L` lists; 0 when there is no driver or it fails."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return 0
    try:
        done = subprocess.run(
            [binary, "-L"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return 0
    if done.returncode != 0:
        return 0
    return sum(1 for line in done.stdout.splitlines() if line.startswith("GPU "))


def missing_packages(names: tuple[str, ...]) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def training_blockers(config: TrainConfig, gpus: int) -> list[str]:
    """Why a real run cannot start here; empty when nothing but the loop itself is missing."""
    blockers: list[str] = []
    if config.server.url is None:
        if gpus == 0:
            blockers.append(
                "a vLLM server: set [server] url (or --server-url) to a running one; "
                "none is configured and no GPU was found to start one"
            )
        elif config.server.python is not None:
            missing = missing_in(config.server.python, SERVE_PACKAGES)
            if missing is None or missing:
                blockers.append(
                    f"a vLLM server: server.python {config.server.python} "
                    + ("does not run" if missing is None else "has no vllm")
                )
        elif missing_packages(SERVE_PACKAGES):
            blockers.append(
                "a vLLM server: set [server] url (or --server-url), or install the [serve] "
                "extra (pip install 'rlenv-harvest[serve]') to start one on the GPUs"
            )
    missing = missing_packages(TRAIN_PACKAGES)
    if missing:
        blockers.append(
            f"the [train] extra (missing {', '.join(missing)}): pip install 'rlenv-harvest[train]'"
        )
    needed = config.gpus if config.server.url is None else config.trainer_gpus
    if gpus < needed:
        blockers.append(f"{needed} GPUs for the {config.preset} set-up; found {gpus}")
    return blockers
