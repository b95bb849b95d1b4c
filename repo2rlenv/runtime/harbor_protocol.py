"""The wire between `HarborRuntime` and `harbor_driver.py`, and how a reply is judged.

The driver runs in Harbor's own interpreter and returns what happened raw; these models
check the JSON both ways (unknown fields are refused), and `judge_start`/`to_result`
turn a reply into the project's verdict with the same reward parsing as the Docker
runtime. Kept apart from the runtime, which starts and stops the driver processes,
because the judging is pure and tested without Harbor.
"""

from __future__ import annotations

import base64
import os
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.runtime.archive import RewardError, parse_reward
from repo2rlenv.runtime.base import TrialResult
from repo2rlenv.runtime.images import task_build_failed

DEFAULT_AGENT_TIMEOUT = 600.0
LOG_TAIL = 4000


def session_prefix(pid: int | None = None) -> str:
    """What every environment this process starts is named after (`rlenv-<pid>-`), so
    a test or a later run can tell this process's environments from anyone else's."""
    return f"rlenv-{pid or os.getpid()}-"


def session_id() -> str:
    return session_prefix() + uuid.uuid4().hex[:12]


class DriverRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Literal["check", "prepare", "trial", "harness"]
    environment_type: str
    session: str = Field(default_factory=lambda: session_id())
    labels: dict[str, str] = Field(default_factory=dict)
    """Container labels (`harbor:docker` only): the task and owner labels every task
    container carries, so a later run reaps them if this process dies unseen."""
    """Harbor's session id, the prefix of its compose project: names the owner process."""
    task_dir: str = ""
    apply_solution: bool = False
    plant_files: dict[str, str] = Field(default_factory=dict, description="path -> base64")
    agent_commands: list[str] = Field(default_factory=list)
    workdir: str | None = None
    agent_timeout: float = DEFAULT_AGENT_TIMEOUT
    verifier_timeout: float = 600.0
    solution_env: dict[str, str] = Field(default_factory=dict)
    verifier_env: dict[str, str] = Field(default_factory=dict)
    agent_user: str | None = None
    verifier_user: str | None = None
    agent_network: str = "no-network"
    verifier_network: str = "no-network"
    verifier_mode: Literal["separate", "shared"] = "separate"
    artifacts: list[str] = Field(default_factory=list)
    # -- op "harness" only ------------------------------------------------------
    agent_environment: str = ""
    """The derived environment folder (the task's plus the harness layer)."""
    harness_network: str = ""
    """The external Docker network `main` joins instead of the project's default one."""
    host_aliases: dict[str, str] = Field(default_factory=dict)
    harness_files: dict[str, str] = Field(default_factory=dict, description="path -> base64")
    harness_chown: str = ""
    harness_script: str = ""
    harness_env: dict[str, str] = Field(default_factory=dict)
    read_back: dict[str, str] = Field(default_factory=dict)


class DriverReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["ok", "build-failed", "solution-timeout", "error"]
    detail: str = ""
    phase_s: dict[str, float] = Field(default_factory=dict)
    solution_exit_code: int | None = None
    verifier_exit_code: int | None = None
    verifier_timed_out: bool = False
    verifier_files: dict[str, str] = Field(default_factory=dict, description="name -> base64")
    agent_output: str = ""
    """Output tail of the request's agent commands (in-container checks print to it)."""
    retryable: bool = False
    """An infrastructure failure (the engine or provider failed mid-trial), not the task's."""
    start_failed: bool = False
    """An environment did not start (the driver reports any exception raw); see
    `judge_start`."""
    harness_exit_code: int | None = None
    harness_timed_out: bool = False
    read_back: dict[str, str] = Field(default_factory=dict)


def judge_start(reply: DriverReply) -> DriverReply:
    """A failed environment start is the infrastructure's (an error, retried) unless its
    output shows the task's own build failing (`build-failed`, the task's verdict, not
    retried): the same line the Docker runtime draws between the engine and the build."""
    if reply.start_failed and reply.status == "error" and task_build_failed(reply.detail):
        return reply.model_copy(update={"status": "build-failed", "retryable": False})
    return reply


def to_result(label: str, reply: DriverReply, verifier_timeout: float) -> TrialResult:
    """The driver's raw reply as a `TrialResult`, judged as the Docker runtime judges."""
    result = TrialResult(
        label=label,
        status="ok",
        detail=reply.detail,
        solution_exit_code=reply.solution_exit_code,
        verifier_exit_code=reply.verifier_exit_code,
        phase_s=reply.phase_s,
        agent_output=reply.agent_output,
    )
    if reply.status != "ok":
        result.status = reply.status
        return result
    files = {name: base64.b64decode(data) for name, data in reply.verifier_files.items()}
    result.verifier_log_tail = files.get("test-stdout.txt", b"").decode("utf-8", errors="replace")[
        -LOG_TAIL:
    ]
    if reply.verifier_timed_out:
        result.status = "verifier-timeout"
        result.detail = f"test.sh ran past {verifier_timeout:g}s and was killed"
        return result
    try:
        result.reward, result.rewards = parse_reward(files)
    except RewardError as exc:
        result.status, result.detail = exc.status, str(exc)  # type: ignore[assignment]
    return result
