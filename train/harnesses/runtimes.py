"""Which runtime runs harness rollouts, and the containers this process owns on it.

A harness rollout needs a runtime whose agent environment reaches the guard and carries
the harness layer (`harness_trials`); a command asked for any other gets one line and
exit 2 (`resolve_harness_runtime`). Rollouts run on daemon threads that die with the
process, so the runtimes a process makes (`owned_runtime`) are aborted when it exits.
Kept apart from `runner` (one rollout) because the commands check the runtime before a
runner exists.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import threading
from pathlib import Path

from docker.errors import DockerException

from repo2rlenv.runtime import DockerRuntime, Runtime, RuntimeUnavailableError
from repo2rlenv.settings import Settings


class RuntimeUnsupportedError(ValueError):
    """A runtime that cannot run harness trials; `reason` is the command's code."""

    def __init__(self, reason: str, runtime: Runtime) -> None:
        super().__init__(
            f"{reason}: attempts are harness rollouts, which need a runtime whose agent "
            f"environment reaches the guard and carries the harness layer; {runtime.name} "
            "does not (docs/harbor-runtime.md, 'Rollouts and train eval')"
        )
        self.reason = reason


def require_harness_trials(runtime: Runtime, reason: str) -> Runtime:
    """`runtime` when it declares `harness_trials`, else RuntimeUnsupportedError."""
    if not getattr(runtime, "harness_trials", False):
        raise RuntimeUnsupportedError(reason, runtime)
    return runtime


class RuntimeChoiceError(ValueError):
    """The runtime a command was asked for cannot run its harness trials here; the
    message is the command's one line (exit 2)."""


def resolve_harness_runtime(
    spec: str | None, reason: str, *, check: bool = True
) -> tuple[Runtime, Settings]:
    """The runtime `spec` names (else the settings file's `runtime`, else docker),
    resolved and checked as every repo2rlenv command does it, able to run harness
    trials (`reason` is the command's code when it is not), and the settings it was
    read with: what `python -m train` and `python -m train eval` both need."""
    from repo2rlenv.runtime.registry import (
        RuntimeSpecError,
        RuntimeUnavailableError,
        resolve_runtime,
    )
    from repo2rlenv.settings import load_settings

    try:
        settings = load_settings()
    except (OSError, ValueError) as exc:  # unreadable TOML, a setting that does not fit
        raise RuntimeChoiceError(f"settings: {exc}".splitlines()[0]) from exc
    try:
        runtime = resolve_runtime(spec, settings, check=check)
        return require_harness_trials(runtime, reason), settings
    except (RuntimeSpecError, RuntimeUnavailableError, RuntimeUnsupportedError) as exc:
        raise RuntimeChoiceError(str(exc)) from exc


_OWNED: list[Runtime] = []


def owned_runtime(spec: str = "docker", harbor_python: Path | None = None) -> Runtime:
    """A runtime whose containers (environments) this process removes when it exits.
    Rollouts run on daemon threads (train.rollout.scheduler), which die with the process without
    reaching their own cleanup: after Ctrl-C a trainer stops waiting for them as soon as
    the run's SIGTERM follows the terminal's SIGINT, and a rollout may outlast the wait
    anyway. On `docker`, containers of earlier runs that were killed outright are
    removed first (an engine that does not answer is reported by the first rollout, with
    its reason code). Raises RuntimeUnsupportedError for a runtime without harness trials
    and RuntimeSpecError for a name no runtime has."""
    from repo2rlenv.runtime.registry import make_runtime

    runtime = require_harness_trials(
        make_runtime(spec, harbor_python), "rollout.runtime-unsupported"
    )
    if isinstance(runtime, DockerRuntime):
        with contextlib.suppress(RuntimeUnavailableError, DockerException, OSError):
            runtime.reap_orphans()
    _OWNED.append(runtime)
    atexit.register(_abort_at_exit, runtime)
    return runtime


def abort_owned_runtimes() -> None:
    """Removes every container of this process's owned runtimes now, so the rollouts in
    flight fail at once instead of running to their timeout: a stopping trainer then
    waits seconds for its rollout threads, not minutes."""
    for runtime in list(_OWNED):
        runtime.abort()


def _abort_at_exit(runtime: Runtime) -> None:
    if threading.current_thread() is threading.main_thread():
        # A further Ctrl-C or SIGTERM must not cut the removal short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    runtime.abort()
