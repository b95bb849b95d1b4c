"""Where tasks run: a small protocol, and the Docker engine as its first backend."""

from repo2rlenv.runtime.base import (
    AgentRun,
    AgentRunOutcome,
    EngineError,
    Runtime,
    RuntimeUnavailableError,
    TrialRequest,
    TrialResult,
    TrialStatus,
)
from repo2rlenv.runtime.containers import AttachedNetwork
from repo2rlenv.runtime.docker_runtime import DockerRuntime, RuntimeAborted

__all__ = [
    "AgentRun",
    "AgentRunOutcome",
    "AttachedNetwork",
    "DockerRuntime",
    "EngineError",
    "Runtime",
    "RuntimeAborted",
    "RuntimeUnavailableError",
    "TrialRequest",
    "TrialResult",
    "TrialStatus",
]
