"""`python -m train.device_check [--model PATH] [--out DIR]`: run the check, print and
write its summary (`<out>/device-check.json`); exit 0 passed, 1 failed, 2 could not run.

The packages are looked up before anything of the project is imported, so a bare GPU
machine answers with the whole list of what is missing in one go, not one import error
at a time.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from train.device_check.check import AdapterResult, CheckReport

REPORT = "device-check.json"
DEFAULT_OUT = Path("tasks_out/device-check")
NEEDED = {  # import name -> pip name: what the check and its trainers import
    "pydantic": "pydantic", "rich": "rich", "yaml": "pyyaml", "tomli_w": "tomli-w",
    "docker": "docker", "torch": "torch", "transformers": "transformers", "peft": "peft",
    "accelerate": "accelerate", "datasets": "datasets", "safetensors": "safetensors",
    "trl": "trl==1.16.0",
}  # fmt: skip


def early_missing(server_here: bool) -> list[str]:
    """pip names this interpreter lacks; `vllm` too when it is the one to start vLLM."""
    needed = {**NEEDED, **({"vllm": "vllm"} if server_here else {})}
    return [pip for name, pip in needed.items() if importlib.util.find_spec(name) is None]


def summary(report: CheckReport) -> None:
    from repo2rlenv import ui

    for r in report.adapters:
        ui.info(
            f"{r.harness}: {r.steps} step, v{r.version}, v2 differs from v1: "
            f"{r.v2_differs_from_v1}, {r.requests} requests to {', '.join(r.adapters_asked)}, "
            f"v2 output differs from the base's: {_proven(r)}, "
            f"foreign names: {r.foreign_names or 'none'}"
        )
    ui.info(f"server start {report.server_start_s}s, training {report.train_s}s, "
            f"wall {report.wall_s}s on {report.device}")  # fmt: skip
    for problem in report.problems:
        ui.error(problem)
    (ui.info if report.ok else ui.error)("device check " + ("passed" if report.ok else "FAILED"))


def _proven(result: AdapterResult) -> str:
    proof = result.proof
    if proof is None:
        return "not shown"
    how = "tokens" if proof.tokens_differ else f"logprobs by {proof.delta:.3g}"
    return f"yes ({how}, noise {proof.noise:.3g})" if proof.reason is None else "NO"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.device_check",
        description="A short GPU (or CPU) check of the training loop.",
    )
    parser.add_argument("--model", help="base model folder or hub id (default: tiny, built here)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    parser.add_argument("--device", choices=("auto", "gpu", "cpu"), default="auto")
    parser.add_argument("--server-url", help="use this running vLLM server (LoRA updating on)")
    parser.add_argument("--server-python", type=Path, help="interpreter with vllm installed")
    parser.add_argument("--timeout-s", type=float, default=480.0, help="for the trainers")
    args = parser.parse_args(argv)
    gpu = args.device == "gpu" or (args.device == "auto" and shutil.which("nvidia-smi"))
    missing = early_missing(bool(gpu) and not args.server_url and not args.server_python)
    if missing:
        code = "device.no-vllm" if "vllm" in missing else "device.no-train-deps"
        # Plain stderr: rich may be among the missing packages.
        print(f"{code}: missing packages in {sys.executable}: {' '.join(missing)}",
              file=sys.stderr)  # fmt: skip
        return 2
    from repo2rlenv import ui
    from train.device_check.check import CheckError, run_check

    try:
        report = run_check(args.out, model=args.model, device=args.device,
                           server_url=args.server_url, server_python=args.server_python,
                           timeout_s=args.timeout_s)  # fmt: skip
    except CheckError as exc:
        ui.error(str(exc))
        return 2
    (Path(args.out) / REPORT).write_text(report.model_dump_json(indent=2) + "\n")
    summary(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
