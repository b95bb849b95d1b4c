"""Solve counts per task from real attempts, measured by a solver found at run time.

`--model` is either an OpenAI-compatible endpoint URL (its model, `--model-name`, is
tried as served) or a peft adapter folder, loaded onto a vLLM server given by
`--server-url` or started from `--base-model`. Running attempts needs the rollout stack
(harnesses, guard, vLLM), a layer above this package: it registers its solver in the
entry-point group `rlenv_harvest.solvers` (`train.evaluate.solve_rates:measure`) and
this module finds it there, so `repo2rlenv` never imports the layers above it and
starts without torch, vLLM or the harness code.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class MeasureError(RuntimeError):
    """Set-up problem (no server, no harness); the message names what is missing."""


class MeasureOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    model_name: str = "default"
    k: int = Field(default=8, ge=1)
    harness: str = "pi"
    server_url: str | None = None
    base_model: Path | None = None
    slots: int = 1
    jobs: int = 2
    retries: int = 1
    max_tokens: int = Field(default=1024, ge=1)
    work_dir: Path = Path("tasks_out/difficulty")
    runtime: str = "docker"
    """The checked runtime attempts run on (`--runtime`); the solver refuses one its
    rollouts cannot use rather than running them elsewhere."""


def is_endpoint(model: str) -> bool:
    return model.startswith(("http://", "https://"))


def ledger_name(options: MeasureOptions) -> str:
    """One ledger per model tried, so attempts of one model never count for another."""
    who = f"{options.model}|{options.model_name}" if is_endpoint(options.model) else options.model
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(options.model).name or "model").strip("-")
    return f"{slug[:40]}-{hashlib.sha256(who.encode()).hexdigest()[:10]}"


SOLVERS_GROUP = "rlenv_harvest.solvers"

Solver = Callable[[dict[str, Path], "MeasureOptions"], dict[str, tuple[int, int]]]


def measure(task_dirs: dict[str, Path], options: MeasureOptions) -> dict[str, tuple[int, int]]:
    """task id -> (solved, scored) over `k` attempts each, from the installed solver."""
    found = sorted(entry_points(group=SOLVERS_GROUP), key=lambda ep: ep.name)
    if not found:
        raise MeasureError(
            f"difficulty.train-missing: no solver is installed ({SOLVERS_GROUP}); "
            "install rlenv-harvest with its train package"
        )
    try:
        solver: Solver = found[0].load()
    except ImportError as exc:
        raise MeasureError(f"difficulty.train-missing: the model path needs train ({exc})") from exc
    return solver(task_dirs, options)
