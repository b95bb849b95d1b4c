"""The real run: model, vLLM server, guard, and one trainer per harness, stopped cleanly.

Order matters: the server comes first (trainers probe it when they are built), the
guard in front of it (harness containers reach only the guard, never vLLM), then one
process per harness (train.trainer_process: runner, scheduler, rollout worker, trainer).
A sync only loads and unloads that trainer's adapter names, so trainers sharing the
server never wait for each other. Steps are shown live as each trainer's metrics.jsonl
grows. Everything started is stopped in reverse order on the way out, Ctrl-C and
SIGTERM included; each rollout's container is removed by its runner.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from train import ui
from train.config import TINY_MODEL, TrainConfig
from train.metrics import LiveMetrics, MetricsLog
from train.plan import ADAPTER_HEADROOM, gpu_layout, missing_in
from train.scheduler import TaskRef
from train.trainer_process import OUTCOME, SPEC, GuardAddress, TrainerOutcome, TrainerSpec

DEFAULT_MAX_MODEL_LEN = 16384
TRAINER_LOG = "trainer.log"
STALE_AFTER_S = 3600.0
"""How long a trainer waits for its first packed step before it calls the run stuck: a
group needs every one of its rollouts finished, each within the task's agent timeout."""


class RunError(RuntimeError):
    """A run that cannot start or had to stop; the message starts with a reason code."""


class RunResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: dict[str, int]
    versions: dict[str, int]
    adapters: dict[str, Path]


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
    ui.info(f"starting vLLM ({where}) on {model} with {slots} adapter slots; "
            f"log {out / 'vllm.log'}")  # fmt: skip
    try:
        server.start()
    except ServerError as exc:
        raise RunError(f"run.server-failed: {exc}") from exc
    try:
        yield server.base_url
    finally:
        server.stop()


def vllm_rank(rank: int) -> int:
    """vLLM accepts only some `--max-lora-rank` values; the smallest that holds `rank`."""
    return next((r for r in (8, 16, 32, 64, 128, 256, 320, 512) if r >= rank), rank)


@contextmanager
def guarded(upstream: str, out: Path) -> Iterator[Any]:
    """The guard in-process on every address (containers reach it through the network
    gateway), asking vLLM for token ids and logprobs so turns can be trained on."""
    from train.guard import GuardOptions, GuardServer
    from train.harnesses import GuardEndpoint
    from train.harnesses.trial import HOST_ALIAS

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


def run_training(
    config: TrainConfig, tasks: list[TaskRef], out: Path, *, resume: bool = False
) -> RunResult:
    if not tasks:
        raise RunError("run.no-tasks: the train split is empty")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        import train.harnesses
        import train.trl_compat  # noqa: F401  (checks the trl pin)
    except ImportError as exc:
        raise RunError(f"run.missing-packages: {exc}; run `make train-deps`") from exc
    model = resolve_model(config, out)
    run_id = uuid.uuid4().hex[:8]
    with ExitStack() as stack:
        stack.enter_context(_sigterm_as_interrupt())
        url = stack.enter_context(served(config, model, out))
        guard = stack.enter_context(guarded(url, out))
        live = stack.enter_context(LiveMetrics(f"{config.preset} ({', '.join(config.harnesses)})"))
        specs = [
            TrainerSpec(
                harness=harness,
                config=config,
                tasks=tasks,
                server_url=url,
                model=str(model),
                guard=GuardAddress(**guard.model_dump()),
                home=out / harness,
                run_id=run_id,
                resume=resume,
                stale_after_s=STALE_AFTER_S,
            )
            for harness in config.harnesses
        ]
        _, trainer_gpus = gpu_layout(config)
        outcomes = _train_all(specs, live, trainer_gpus)
    failed = [o for o in outcomes if o.error]
    if failed:
        raise RunError(
            f"run.trainer-failed: {failed[0].harness}: {failed[0].error} "
            f"(log: {out / failed[0].harness / TRAINER_LOG})"
        )
    return RunResult(
        steps={o.harness: o.steps for o in outcomes},
        versions={o.harness: o.version for o in outcomes},
        adapters={o.harness: o.adapters for o in outcomes},
    )


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """A kill (CI's timeout, `docker stop`) cleans up like Ctrl-C: vLLM runs in its own
    session and the rollouts' containers outlive a process that just dies."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def visible_gpus(indices: list[int]) -> list[str]:
    """The plan's GPU indices as CUDA_VISIBLE_DEVICES entries: counted within what the
    run itself was given when CUDA_VISIBLE_DEVICES is already set, else as they are."""
    given = [g for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    return [given[i] if i < len(given) else str(i) for i in indices]


def trainer_env(gpu: int) -> dict[str, str]:
    """A trainer's environment: on a GPU run it sees only its own GPU (as cuda:0)."""
    env = dict(os.environ)
    if gpu >= 0:
        env["CUDA_VISIBLE_DEVICES"] = visible_gpus([gpu])[0]
    return env


def _train_all(
    specs: list[TrainerSpec], live: LiveMetrics, gpus: dict[str, int] | None = None
) -> list[TrainerOutcome]:
    """One process per trainer (train.trainer_process) on its planned GPU; their steps
    are shown as they land in each metrics.jsonl. Interrupted: each trainer is asked to
    stop (it waits for its rollouts' containers), then killed if it does not."""
    processes: dict[str, subprocess.Popen[bytes]] = {}
    shown = dict.fromkeys((s.harness for s in specs), 0)
    try:
        for spec in specs:
            spec.home.mkdir(parents=True, exist_ok=True)
            (spec.home / OUTCOME).unlink(missing_ok=True)
            path = spec.home / SPEC
            path.write_text(spec.model_dump_json(indent=2))
            with (spec.home / TRAINER_LOG).open("ab") as log:
                processes[spec.harness] = subprocess.Popen(
                    [sys.executable, "-m", "train.trainer_process", str(path)],
                    stdout=log, stderr=subprocess.STDOUT,
                    env=trainer_env((gpus or {}).get(spec.harness, -1)),
                )  # fmt: skip
        while any(p.poll() is None for p in processes.values()):
            _show_steps(specs, shown, live)
            time.sleep(1.0)
        _show_steps(specs, shown, live)
    except KeyboardInterrupt:
        _stop(processes)
        raise
    return [_outcome(spec, processes[spec.harness].returncode) for spec in specs]


def _show_steps(specs: list[TrainerSpec], shown: dict[str, int], live: LiveMetrics) -> None:
    for spec in specs:
        steps, _ = MetricsLog(spec.home / "metrics.jsonl").read()
        for metrics in steps[shown[spec.harness] :]:
            live.update(metrics)
        shown[spec.harness] = len(steps)


def _stop(processes: dict[str, subprocess.Popen[bytes]], grace_s: float = 180.0) -> None:
    for process in processes.values():
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for process in processes.values():
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _outcome(spec: TrainerSpec, code: int | None) -> TrainerOutcome:
    try:
        return TrainerOutcome.model_validate_json((spec.home / OUTCOME).read_text())
    except (OSError, ValueError):
        return TrainerOutcome(harness=spec.harness, adapters=spec.home / "adapters",
                              error=f"the trainer process exited with {code}")  # fmt: skip
