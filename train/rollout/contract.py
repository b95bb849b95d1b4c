"""The records every part of training and evaluation exchanges about one rollout.

A rollout is one harness session on one task: the harness runs the task's instruction in
the task's container, every model call goes through the guard to one adapter on the
vLLM server, then the task's verifier scores the workspace. The scheduler asks for
rollouts (`RolloutRequest`), a runner produces them (`Rollout`), the trainer turns
finished groups into samples from the guard's recorded turns, and evaluation counts
them. Keeping these records here, apart from any of those parts, lets each be tested
with recorded rollouts instead of a live harness.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from train.data.config import Harness

RolloutStatus = Literal["scored", "failed", "unscorable"]
"""`scored`: the verifier ran and the reward stands. `failed`: something outside the
policy broke (container, harness crash, verifier error) and a retry may succeed.
`unscorable`: retries are spent or the task cannot be scored; never trained on."""


class GuardEndpoint(BaseModel):
    """Where the guard is: `admin_url` from the host (its loopback control plane, which
    answers only with `admin_token`), `container_url` as a harness container reaches its
    model port (e.g. `http://host.docker.internal:PORT`), and the `log_dir` it writes
    sessions to. Here, not in train.harnesses, so a trainer's spec carries it without
    importing the harnesses (and Docker)."""

    model_config = ConfigDict(extra="forbid")

    admin_url: str
    admin_token: str = Field(default="", repr=False)
    container_url: str
    log_dir: Path


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RolloutRequest(_Record):
    task_id: str = Field(min_length=1)
    task_dir: Path
    harness: Harness
    adapter: str = Field(min_length=1, description="Model name sent upstream: a versioned adapter.")
    model_version: int = Field(ge=0, description="Adapter version the rollout starts on.")
    group_id: int = Field(ge=0, description="All rollouts of one task in one GRPO group share it.")
    attempt: int = Field(default=0, ge=0, description="Index of this rollout within its group.")
    session_id: str = Field(
        pattern=r"^[A-Za-z0-9_.-]{1,128}$", description="Guard session; names the log folder."
    )
    seed: int = 0


class Turn(_Record):
    """One model call as the guard recorded it: what the policy saw and generated."""

    prompt_token_ids: list[int]
    completion_token_ids: list[int]
    completion_logprobs: list[float]
    model: str = Field(description="The upstream model (adapter) that answered.")


class Rollout(_Record):
    request: RolloutRequest
    status: RolloutStatus
    verifier_score: float | None = Field(default=None, ge=0.0, le=1.0)
    reward: float = Field(
        default=0.0, description="train.data.reward of the outcome; 0 unless scored."
    )
    tool_calls: int = Field(default=0, ge=0)
    blocked_calls: int = Field(default=0, ge=0)
    turns: list[Turn] = Field(default_factory=list)
    started_at: float = 0.0
    finished_at: float = 0.0
    error: str | None = Field(default=None, description="Why a rollout failed; None if scored.")

    @property
    def wall_s(self) -> float:
        return max(0.0, self.finished_at - self.started_at)


class RolloutRunner(Protocol):
    """Runs one rollout to the end. Blocking; the scheduler calls it from worker threads.
    It must not raise for anything a task or harness can cause: return status `failed`."""

    def __call__(self, request: RolloutRequest) -> Rollout: ...


class AdapterSlots(Protocol):
    """The server's LoRA adapter slots, by name (train.serving.adapters implements it)."""

    def load(self, name: str, path: Path) -> None: ...

    def unload(self, name: str) -> None: ...

    def loaded(self) -> list[str]: ...


def adapter_name(harness: str, version: int) -> str:
    """`<harness>-policy-v<N>`: a fresh name per version, because vLLM keys its prefix
    cache on the adapter name, and per harness, so trainers sharing a server never
    touch each other's adapters."""
    if version < 0:
        raise ValueError(f"adapter version must be >= 0, got {version}")
    return f"{harness}-policy-v{version}"


class Group(_Record):
    """All rollouts of one task for one GRPO group, handed over only once every rollout
    is scored or unscorable; `first_version` is the adapter version the earliest rollout
    started on, which decides staleness."""

    group_id: int = Field(ge=0)
    task_id: str
    harness: Harness
    first_version: int = Field(ge=0)
    rollouts: list[Rollout]

    @property
    def scored(self) -> list[Rollout]:
        return [r for r in self.rollouts if r.status == "scored"]


class GroupSource(Protocol):
    """What the trainer's rollout worker drains (train.rollout.scheduler implements it)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def set_version(self, version: int) -> None: ...

    def next_group(self, timeout: float | None = None) -> Group | None: ...


class TrainingRow(_Record):
    """One training sample: a turn's prompt and completion with its rollout's advantage."""

    input_ids: list[int]
    completion_mask: list[int] = Field(description="1 on generated tokens, 0 on the prompt.")
    old_logprobs: list[float] = Field(description="Per token; 0.0 on prompt tokens.")
    advantage: float
    model_version: int = Field(ge=0)
    group_id: int = Field(ge=0)
    task_id: str

    @property
    def tokens(self) -> int:
        return len(self.input_ids)
