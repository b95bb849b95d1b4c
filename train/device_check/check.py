"""The device check's parent: preflight, server, two trainers, verdict (see the package)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from repo2rlenv import ui
from train.data.config import TrainConfig, resolve_config
from train.device_check.proof import AdapterProof, ask_server, prove
from train.device_check.trainer import REQUESTS, SLOTS
from train.grpo.trainer_process import OUTCOME, SPEC, TrainerOutcome, TrainerSpec
from train.launch.plan import ADAPTER_HEADROOM, count_gpus
from train.launch.plan import missing_in as plan_missing_in

HARNESSES = ("pi", "hermes")
TRAINER_PACKAGES = ("torch", "transformers", "peft", "accelerate", "datasets", "trl")


class CheckError(RuntimeError):
    """The check could not run; the message starts with a reason code."""


class AdapterResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    harness: str
    steps: int
    version: int
    v2_differs_from_v1: bool
    requests: int
    adapters_asked: list[str]
    proof: AdapterProof | None = None
    """v2's output against the base's on a fixed prompt (train.device_check.proof)."""
    slot_calls: list[str]
    foreign_names: list[str]
    still_loaded: list[str]
    error: str | None = None


class CheckReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ok: bool
    device: Literal["gpu", "cpu"]
    model: str
    server_url: str
    server_started: bool
    server_start_s: float
    train_s: float
    wall_s: float
    adapters: list[AdapterResult]
    problems: list[str]


def missing_in(python: Path, names: tuple[str, ...]) -> list[str]:
    missing = plan_missing_in(str(python), names)
    if missing is None:
        raise CheckError(f"device.bad-python: {python} does not run")
    return missing


def preflight(device: str, server_python: Path | None) -> None:
    """Fails before anything starts when a package is missing, naming every one."""
    trainer_missing = missing_in(Path(sys.executable), TRAINER_PACKAGES)
    server_missing = missing_in(server_python, ("vllm",)) if server_python else []
    where = f"trainer ({sys.executable}): {', '.join(trainer_missing) or 'nothing'}"
    if server_missing:
        hint = "`make vllm`" if device == "cpu" else "pip install vllm (the GPU build)"
        raise CheckError(
            f"device.no-vllm: missing packages: {', '.join(server_missing + trainer_missing)}"
            f" (server ({server_python}): vllm; {where}); install with {hint}"
            + (" and `make train-deps`" if trainer_missing else "")
        )
    if trainer_missing:
        raise CheckError(f"device.no-train-deps: missing packages: "
                         f"{', '.join(trainer_missing)} ({where}): `make train-deps`")  # fmt: skip


def check_config(harnesses: tuple[str, ...] = HARNESSES) -> TrainConfig:
    """tiny-cpu's small loop, two trainers, one step each; LoRA r=32 as in the recipe."""
    return resolve_config(preset="tiny-cpu", overrides=[
        ("harnesses", list(harnesses)), ("steps", 1), ("rollouts_per_task", 4),
        ("sessions_per_trainer", 4), ("micro_batches_per_step", 2), ("token_budget", 4096),
        ("max_staleness", 1), ("server.max_model_len", 4096),
    ])  # fmt: skip


def build_tiny_model(python: Path, folder: Path) -> Path:
    done = subprocess.run([str(python), "-m", "train.serving.tiny_model", str(folder)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise CheckError(f"device.model-build-failed: {done.stderr.strip()[-800:]}")
    return folder.resolve()


def _own(name: str, harness: str) -> bool:
    from train.grpo.trainer import adapter_version

    return adapter_version(name, harness) is not None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _differs(home: Path, harness: str) -> bool:
    from safetensors.torch import load_file

    folders = [home / "adapters" / f"{harness}-policy-v{v}" for v in (1, 2)]
    if not all((f / "adapter_model.safetensors").is_file() for f in folders):
        return False
    v1, v2 = (load_file(f / "adapter_model.safetensors") for f in folders)
    return v1.keys() == v2.keys() and any(not (v1[k] == v2[k]).all() for k in v1)


def judge(
    spec: TrainerSpec, loaded: list[str], proof: AdapterProof | None = None,
    proof_error: str | None = None,
) -> tuple[AdapterResult, list[str]]:  # fmt: skip
    """One trainer's result from the files its process left and the proof of its v2 by
    output (`proof`, or `proof_error` when it could not be asked), and what is wrong."""
    harness, home = spec.harness, spec.home
    try:
        outcome = TrainerOutcome.model_validate_json((home / OUTCOME).read_text())
    except (OSError, ValueError):
        outcome = TrainerOutcome(harness=harness, adapters=home / "adapters",
                                 error=f"no outcome; see {home / 'trainer.log'}")  # fmt: skip
    requests = _read_jsonl(home / REQUESTS)
    slots = _read_jsonl(home / SLOTS)
    asked = sorted({r["asked"] for r in requests})
    names = asked + [s["name"] for s in slots]
    result = AdapterResult(
        harness=harness, steps=outcome.steps, version=outcome.version,
        v2_differs_from_v1=_differs(home, harness), requests=len(requests),
        adapters_asked=asked, proof=proof,
        slot_calls=[f"{s['op']} {s['name']}" for s in slots],
        foreign_names=sorted({n for n in names if not _own(n, harness)}),
        still_loaded=sorted(n for n in loaded if _own(n, harness)), error=outcome.error,
    )  # fmt: skip
    problems = [f"{harness}: {outcome.error}"] if outcome.error else []
    unproven = proof_error or (proof.reason if proof else f"{harness}-policy-v2 was not asked")
    checks = [
        (result.steps == 1 and result.version == 2,
         f"ran {result.steps} steps to version {result.version}, not 1 step to v2"),
        (result.v2_differs_from_v1, f"{harness}-policy-v2 has the same weights as v1"),
        (result.requests > 0, "no completion was requested"),
        (proof is not None and proof.reason is None,
         f"device.adapter-unproven: {unproven}"),
        (not result.foreign_names, f"touched names not its own: {result.foreign_names}"),
        (f"{harness}-policy-v2" in result.still_loaded,
         f"{harness}-policy-v2 is not loaded at the end (loaded: {result.still_loaded})"),
    ]  # fmt: skip
    problems += [f"{harness}: {why}" for ok, why in checks if not ok and not outcome.error]
    return result, problems


def prove_adapters(
    server_url: str, harnesses: list[str], loaded: list[str]
) -> tuple[dict[str, AdapterProof], str | None]:
    """Each harness's loaded v2 proven by output against the base (see proof.py); the
    error instead when the server could not be asked."""
    from train.serving.adapters import AdapterClient

    names = {h: f"{h}-policy-v2" for h in harnesses if f"{h}-policy-v2" in loaded}
    if not names:
        return {}, None
    try:
        base = AdapterClient(server_url).base_model()
        proofs = prove(ask_server(server_url), base, list(names.values()))
    except Exception as exc:  # the proof is missing, which fails the check
        return {}, f"the server could not be asked for the proof: {type(exc).__name__}: {exc}"
    by_name = {p.adapter: p for p in proofs}
    return {h: by_name[n] for h, n in names.items()}, None


def run_trainers(specs: list[TrainerSpec], gpu: int | None, timeout_s: float) -> None:
    """Both trainers at once, each in its own process (accelerate's per-process state)."""
    from train.launch.run import trainer_env

    env = trainer_env(-1 if gpu is None else gpu)
    processes = []
    for spec in specs:
        spec.home.mkdir(parents=True, exist_ok=True)
        for name in (OUTCOME, REQUESTS, SLOTS):
            (spec.home / name).unlink(missing_ok=True)
        (spec.home / SPEC).write_text(spec.model_dump_json(indent=2))
        with (spec.home / "trainer.log").open("wb") as log:
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "train.device_check.trainer", str(spec.home / SPEC)],
                stdout=log, stderr=subprocess.STDOUT, env=env,
            ))  # fmt: skip
    deadline = time.monotonic() + timeout_s
    try:
        for process in processes:
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired as exc:
        raise CheckError(f"device.timeout: the trainers ran past {timeout_s:.0f}s") from exc
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def run_check(
    out: Path, *, model: str | None = None, device: str = "auto",
    server_url: str | None = None, server_python: Path | None = None,
    timeout_s: float = 480.0,
) -> CheckReport:  # fmt: skip
    from train.serving.adapters import AdapterClient
    from train.serving.install import DEFAULT_VENV, venv_python

    began = time.monotonic()
    gpus = count_gpus()
    mode: Literal["gpu", "cpu"] = ("gpu" if gpus else "cpu") if device == "auto" else device  # type: ignore[assignment]
    if mode == "gpu" and gpus == 0:
        raise CheckError("device.no-gpu: --device gpu, but nvidia-smi lists no GPU")
    if server_url and not model:
        raise CheckError("device.bad-args: --server-url needs --model (the server's weights)")
    if not server_url:
        server_python = server_python or (
            venv_python(DEFAULT_VENV) if mode == "cpu" else Path(sys.executable)
        )
    preflight(mode, None if server_url else server_python)
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = check_config()
    if model is None:
        model = str(build_tiny_model(server_python or Path(sys.executable), out / "model"))
    gpu = 0 if mode == "gpu" else None
    server, start_s = None, 0.0
    if not server_url:
        server = _start_server(config, Path(model), out, mode, server_python)
        server_url, start_s = server.base_url, time.monotonic() - began
    try:
        specs = [_spec(h, config, server_url, model, out) for h in config.harnesses]
        ui.info(f"training {', '.join(config.harnesses)}: one GRPO step each against {server_url}")
        trained = time.monotonic()
        run_trainers(specs, gpu, timeout_s)
        train_s = time.monotonic() - trained
        loaded = AdapterClient(server_url).loaded()
        proofs, proof_error = prove_adapters(server_url, list(config.harnesses), loaded)
    finally:
        if server is not None:
            server.stop()
    results, problems = [], []
    for spec in specs:
        result, wrong = judge(spec, loaded, proofs.get(spec.harness), proof_error)
        results.append(result)
        problems += wrong
    return CheckReport(
        ok=not problems, device=mode, model=model, server_url=server_url,
        server_started=server is not None, server_start_s=round(start_s, 1),
        train_s=round(train_s, 1), wall_s=round(time.monotonic() - began, 1),
        adapters=results, problems=problems,
    )  # fmt: skip


def _spec(harness: str, config: TrainConfig, url: str, model: str, out: Path) -> TrainerSpec:
    """No guard: the completion runner talks to the server itself. Four prompts, one
    group of four rollouts each; a step needs only the first group or two."""
    from train.rollout.scheduler import TaskRef

    tasks = [TaskRef(task_id=f"check-{i}", task_dir=out) for i in range(4)]
    return TrainerSpec(harness=harness, config=config, tasks=tasks, server_url=url,
                       model=model, home=out / harness, run_id="device-check")  # fmt: skip


def _start_server(
    config: TrainConfig, model: Path, out: Path, mode: str, python: Path | None
) -> Any:
    from train.launch.services import visible_gpus, vllm_rank
    from train.serving.server import ServerError, ServerOptions, VllmServer

    slots = len(config.harnesses) * (config.max_staleness + ADAPTER_HEADROOM)
    options = ServerOptions(
        model=model, python=python, max_model_len=config.server.max_model_len or 4096,
        dtype="auto" if mode == "gpu" else "float32",
        # On a GPU, eager mode skips the compile and graph capture (a minute or two) that
        # one step's worth of short completions never pays back.
        extra_args=["--enable-lora", "--max-lora-rank", str(vllm_rank(config.lora.r)),
                    "--max-loras", str(slots), *(["--enforce-eager"] if mode == "gpu" else [])],
        extra_env={"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "1", "VLLM_SERVER_DEV_MODE": "1",
                   **({"CUDA_VISIBLE_DEVICES": visible_gpus([0])[0]} if mode == "gpu" else {})},
        log_path=out / "vllm.log", startup_timeout_s=600.0,
    )  # fmt: skip
    ui.info(f"starting vLLM ({mode}) on {model} with {slots} adapter slots; log {out / 'vllm.log'}")
    try:
        return VllmServer(options).start()
    except ServerError as exc:
        raise CheckError(f"device.server-failed: {exc}") from exc
