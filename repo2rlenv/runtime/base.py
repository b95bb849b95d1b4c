"""The runtime contract: run one Harbor-style trial of a task and report its reward.

`validate`, smoldataenvs' answer reproduction and train's rollouts all go through this
interface. The Docker engine is the first backend; a second one that hands the same
trials to Harbor's own engine (cloud sandboxes) implements the same protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.bundle import TaskTree

TrialStatus = Literal[
    "ok",
    "build-failed",
    "reward-missing",
    "reward-invalid",
    "verifier-timeout",
    "solution-timeout",
    "error",
    "skipped",
]
"""`error`: the backend could not run the trial (engine or provider failure, after its
retries): infrastructure, never a verdict. `skipped`: `validate` did not start the trial
because an earlier trial of the task already refused it (see `validate.dynamic`); no
runtime returns it. Every other failed status is the task's own."""

INFRA_RETRIES = 2
"""Extra attempts a runtime gives a trial (or an environment start) that failed for
infrastructure reasons, the same bound on every backend; recorded per trial as
`infra_retries`, so they are counted apart from the task's own failures."""


class RuntimeUnavailableError(Exception):
    """The backend cannot run anything (for Docker: no daemon answers)."""


class EngineError(OSError):
    """The engine or provider failed while building or starting a task's environment
    (daemon gone, a server error, provider quota, network), after `retries` extra
    attempts: infrastructure, not the task's. `prepare` raises it where a broken
    Dockerfile raises `ImageBuildError`, so an outage never reads as a bad task. An
    `OSError`, so callers that already treat I/O failures as infrastructure (a
    trial's `error`) keep doing so."""

    def __init__(self, message: str, retries: int = 0) -> None:
        super().__init__(message)
        self.retries = retries


class TrialRequest(BaseModel):
    """What happens in the agent phase before the verifier runs."""

    model_config = ConfigDict(extra="forbid")

    label: str
    apply_solution: bool = False
    plant_files: dict[str, bytes] = Field(
        default_factory=dict, description="Absolute container path -> bytes, written as root."
    )
    agent_commands: list[str] = Field(
        default_factory=list, description="Shell commands run in the workdir after the solution."
    )


class TrialResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    status: TrialStatus
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict)
    detail: str = ""
    solution_exit_code: int | None = None
    verifier_exit_code: int | None = None
    wall_s: float = 0.0
    phase_s: dict[str, float] = Field(default_factory=dict)
    verifier_log_tail: str = ""
    infra_retries: int = 0
    """Times the backend re-ran this trial after an infrastructure failure (not the
    task's): a reply from a later attempt is the one reported."""
    agent_output: str = ""
    """Output tail of the request's agent commands: in-container checks print to it."""
    cost_usd: float | None = Field(default=None, ge=0)
    """What the provider charged for this trial, all attempts, where it reports it; None
    where it does not (the local engine, and every Harbor environment class so far)."""


class AgentRun(BaseModel):
    """A program run as the agent phase of a trial (a harness, in training and eval),
    in the runtime's terms: the runtime knows folders, files, a script and a network,
    never what a harness is (that stays in `train.harnesses`)."""

    model_config = ConfigDict(extra="forbid")

    label: str
    session_id: str
    layer: Path = Field(description="A folder baked into the agent's image at layer_target.")
    layer_target: str
    files: dict[str, bytes] = Field(
        default_factory=dict, description="Absolute container path -> bytes, written as root."
    )
    chown: str = Field(default="", description="A folder handed to the agent user after files.")
    script: str = Field(description="Run under bash in the agent's environment, as its user.")
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(gt=0)
    network: str = Field(description="The only network the agent's environment is on.")
    host_aliases: dict[str, str] = Field(
        default_factory=dict, description="Host name -> address inside the agent's environment."
    )
    read_back: dict[str, str] = Field(
        default_factory=dict,
        description="Name -> shell command whose stdout is read back after the run.",
    )


class AgentRunOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    exit_code: int | None = Field(description="None: the agent timeout stopped the run.")
    outputs: dict[str, str] = Field(default_factory=dict, description="read_back's outputs.")
    wall_s: float = 0.0


class Runtime(Protocol):
    name: str
    harness_trials: bool
    """Whether `run_agent` can run a harness trial: its agent environment reaches the
    guard on the harness network and carries the harness layer."""

    def check(self) -> None:
        """Raise RuntimeUnavailableError with advice when the backend cannot run trials."""

    def environment_key(self, task: TaskTree) -> str:
        """A cheap identity of the environment a trial would run in (for result caches)."""

    def prepare(self, task: TaskTree) -> str:
        """Build (or find in the cache) the task's environment; return its image reference.
        Raises `ImageBuildError` when the task's own build fails (a broken Dockerfile,
        a step that exits non-zero, a base image that does not exist) and `EngineError`
        when the engine or provider failed, after the runtime's retries."""

    def run_trial(self, task: TaskTree, image: str, request: TrialRequest) -> TrialResult: ...

    def abort(self) -> None:
        """Stop and remove everything this runtime started (Ctrl-C)."""
