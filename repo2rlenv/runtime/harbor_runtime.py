"""Trials through Harbor's own execution engine (`--runtime harbor[:ENV]`).

Harbor (Python >= 3.12) cannot be imported into the project's 3.11 interpreter, so
each trial is one process of Harbor's interpreter running `harbor_driver.py`, with a
JSON request on stdin and a JSON reply on stdout, both checked here by pydantic models
that forbid unknown fields. The driver uses Harbor's environment classes (start, exec,
upload, download, stop) for the same trial the Docker runtime runs: agent phase
(solution, planted files, agent commands), the separate verifier that receives only
the declared artifacts, the task's timeouts. The reward is parsed here, by the same
`parse_reward` as the Docker runtime, so both backends judge a trial identically.

The task is handed to Harbor as a fresh copy written from the checked `TaskTree`
(regular files only), never the folder on disk: what runs is what was hashed, and a
symlink in the task cannot point Harbor's uploads outside it (`harbor_copies`). The
request and reply models, and the judging of a reply, are `harbor_protocol`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import signal
import subprocess
import threading
import time
from pathlib import Path

from pydantic import ValidationError

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime.base import (
    INFRA_RETRIES,
    AgentRun,
    AgentRunOutcome,
    EngineError,
    RuntimeUnavailableError,
    TrialRequest,
    TrialResult,
)
from repo2rlenv.runtime.containers import LABEL, container_labels
from repo2rlenv.runtime.docker_runtime import DockerRuntime
from repo2rlenv.runtime.harbor_copies import TaskCopies
from repo2rlenv.runtime.harbor_protocol import (
    DEFAULT_AGENT_TIMEOUT,
    DriverReply,
    DriverRequest,
    judge_start,
    to_result,
)
from repo2rlenv.runtime.images import ImageBuildError, environment_files

DRIVER = Path(__file__).with_name("harbor_driver.py")
PROCESS_MARGIN_S = 120.0
"""Beyond the task's own timeouts, what one driver process may take (start, stop)."""
STOP_GRACE_S = 30.0


def default_python() -> Path:
    """`.venv-harbor/bin/python` beside the checkout this package runs from."""
    return Path(__file__).resolve().parents[2] / ".venv-harbor" / "bin" / "python"


def artifact_sources(task: TaskTree) -> list[str]:
    """The task's declared artifact folders (absolute paths), as the Docker runtime
    reads them."""
    sources = []
    for entry in task.config.artifacts or []:
        source = entry if isinstance(entry, str) else entry.get("source")
        if isinstance(source, str) and source.startswith("/"):
            sources.append(source.rstrip("/") or "/")
    return sources


class HarborRuntime:
    """`Runtime` backed by Harbor's environment type `environment_type`."""

    def __init__(
        self,
        environment_type: str = "docker",
        python: Path | None = None,
        retries: int = INFRA_RETRIES,
    ) -> None:
        self.environment_type = environment_type
        self.retries = retries
        self.name = f"harbor:{environment_type}"
        # Harness trials need the guard reachable from the agent's environment; only
        # Harbor's local Docker environment shares this host's harness network.
        self.harness_trials = environment_type == "docker"
        self.python = python or default_python()
        self._copies = TaskCopies()
        self._build_locks_lock = threading.Lock()
        self._build_locks: dict[str, threading.Lock] = {}
        self._live: set[subprocess.Popen[bytes]] = set()
        self._live_lock = threading.Lock()
        self._aborted = threading.Event()
        self._local = DockerRuntime() if environment_type == "docker" else None
        """Harbor's local Docker environment builds FROM this engine's images: an offline
        base of another Debian suite is built here first, as the Docker runtime does."""

    # -- driver ---------------------------------------------------------------
    def _call(self, request: DriverRequest, timeout: float) -> DriverReply:
        if self._aborted.is_set():
            return DriverReply(status="error", detail="aborted")
        proc = subprocess.Popen(
            [str(self.python), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # Ctrl-C reaches us; abort() stops the driver cleanly
        )
        with self._live_lock:
            self._live.add(proc)
            late = self._aborted.is_set()
        if late:
            # abort() listed the live drivers between the check above and this start
            # (likely with -j in the hundreds): stop this one as it would have.
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(request.model_dump_json().encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            self._stop(proc)
            return DriverReply(status="error", detail=f"Harbor's driver ran past {timeout:g}s")
        finally:
            with self._live_lock:
                self._live.discard(proc)
        if self._aborted.is_set() and proc.returncode != 0:
            return DriverReply(status="error", detail="aborted")
        try:
            return judge_start(DriverReply.model_validate_json(out or b"{}"))
        except ValidationError:
            # The exception's own line, not the traceback's file paths (home folders).
            lines = err.decode("utf-8", "replace").strip().splitlines() or ["no output"]
            return DriverReply(
                status="error",
                detail=f"Harbor's driver exited {proc.returncode}: {lines[-1]}"[-2000:],
                retryable=True,
            )

    @staticmethod
    def _stop(proc: subprocess.Popen[bytes]) -> None:
        """SIGTERM lets the driver stop and delete its environments; SIGKILL after a grace."""
        try:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        except OSError:
            pass

    # -- Runtime protocol -----------------------------------------------------
    def check(self) -> None:
        if not self.python.exists():
            raise RuntimeUnavailableError(
                f"{self.name}: Harbor's interpreter is not at {self.python}; run `make harbor` "
                "or set REPO2RLENV_HARBOR_PYTHON (or harbor_python in the settings file)"
            )
        reply = self._call(DriverRequest(op="check", environment_type=self.environment_type), 120)
        if reply.status != "ok":
            first = reply.detail.strip().splitlines()[0] if reply.detail.strip() else "failed"
            raise RuntimeUnavailableError(f"{self.name}: {first}")
        if self.environment_type == "docker":
            # Task containers of runs killed outright carry owner labels: remove them.
            DockerRuntime().check()

    def environment_key(self, task: TaskTree) -> str:
        """The backend and a hash of the environment's files: Harbor builds (and names)
        its images itself, so the key is the build context, not a local image id."""
        digest = hashlib.sha256(self.name.encode() + b"\0")
        files = environment_files(task)
        for rel in sorted(files):
            content, executable = files[rel]
            digest.update(f"{rel}\0{int(executable)}\0{len(content)}\0".encode() + content)
        digest.update(f"image\0{task.config.environment.docker_image or ''}".encode())
        return digest.hexdigest()[:24]

    def prepare(self, task: TaskTree) -> str:
        """Write the task's copy and have Harbor build and start its environment once, so
        a broken build is one finding instead of one error per trial."""
        if self._local is not None:
            self._local.ensure_bases(task)
        copy = self._copies.copy(task)
        # Harbor serialises builds of one image within a process only; tasks sharing an
        # environment build it once here, and their trials then start from its cache.
        with self._build_locks_lock:
            lock = self._build_locks.setdefault(self.environment_key(task), threading.Lock())
        with lock:
            reply, attempt = self._run_with_retries(
                DriverRequest(
                    op="prepare",
                    environment_type=self.environment_type,
                    task_dir=copy,
                    labels=container_labels(task),
                ),
                task.config.environment.build_timeout_sec + PROCESS_MARGIN_S,
            )
        if reply.status == "build-failed":
            raise ImageBuildError(f"{self.name}: the environment does not build: {reply.detail}")
        if reply.status != "ok":
            raise EngineError(
                f"{self.name} could not start the environment: {reply.detail}", retries=attempt
            )
        return copy

    def _task_request(self, op: str, task: TaskTree, image: str) -> DriverRequest:
        """What every trial of `task` tells the driver: its copy, timeouts, users,
        networks, verifier mode and artifacts."""
        config = task.config
        return DriverRequest(
            op=op,  # type: ignore[arg-type]
            environment_type=self.environment_type,
            task_dir=image,
            labels=container_labels(task),
            workdir=config.environment.workdir,
            agent_timeout=config.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT,
            verifier_timeout=config.verifier.timeout_sec,
            solution_env=dict(config.solution.env),
            verifier_env=dict(config.verifier.env),
            agent_user=None if config.agent.user is None else str(config.agent.user),
            verifier_user=None if config.verifier.user is None else str(config.verifier.user),
            agent_network=config.agent_network_mode,
            verifier_network=config.verifier_network_mode,
            verifier_mode=config.verifier_mode,
            artifacts=artifact_sources(task),
        )

    def _run_with_retries(self, request: DriverRequest, budget: float) -> tuple[DriverReply, int]:
        attempt = 0
        while True:
            reply = self._call(request, budget)
            if not reply.retryable or attempt >= self.retries or self._aborted.is_set():
                return reply, attempt
            attempt += 1

    def run_trial(self, task: TaskTree, image: str, request: TrialRequest) -> TrialResult:
        started = time.perf_counter()
        config = task.config
        driver_request = self._task_request("trial", task, image).model_copy(
            update={
                "apply_solution": request.apply_solution,
                "plant_files": {
                    path: base64.b64encode(data).decode()
                    for path, data in request.plant_files.items()
                },
                "agent_commands": request.agent_commands,
            }
        )
        budget = (
            config.environment.build_timeout_sec
            + driver_request.agent_timeout * (1 + len(request.agent_commands))
            + config.verifier.timeout_sec
            + PROCESS_MARGIN_S
        )
        reply, attempt = self._run_with_retries(driver_request, budget)
        result = to_result(request.label, reply, config.verifier.timeout_sec)
        result.infra_retries = attempt
        result.wall_s = round(time.perf_counter() - started, 3)
        return result

    def run_agent(
        self, task: TaskTree, image: str, run: AgentRun
    ) -> tuple[AgentRunOutcome, TrialResult]:
        """A harness trial: `run` in an agent environment of the derived definition
        (the task's plus `run.layer`) on `run.network` only, then the task's verifier as
        in `run_trial`. A build or infrastructure failure comes back as the result's
        status with no run (exit code None, nothing read back), never retried."""
        if not self.harness_trials:
            raise RuntimeUnavailableError(f"{self.name} cannot run harness trials")
        started = time.perf_counter()
        config = task.config
        derived = self._copies.derived_environment(task, image, run.layer, run.layer_target)
        driver_request = self._task_request("harness", task, image).model_copy(
            update={
                "labels": {
                    **container_labels(task),
                    LABEL: "harness-trial",
                    f"{LABEL}.session": run.session_id,
                },
                "agent_timeout": run.timeout_s,
                "agent_environment": str(derived),
                "harness_network": run.network,
                "host_aliases": dict(run.host_aliases),
                "harness_files": {
                    path: base64.b64encode(data).decode() for path, data in run.files.items()
                },
                "harness_chown": run.chown,
                "harness_script": run.script,
                "harness_env": dict(run.env),
                "read_back": dict(run.read_back),
            }
        )
        budget = (
            2 * config.environment.build_timeout_sec
            + run.timeout_s
            + config.verifier.timeout_sec
            + PROCESS_MARGIN_S
        )
        # Never retried here: a harness that already called the model through its guard
        # session would mix a second run's calls into the first's log. The caller
        # retries the whole attempt with a new session (eval's --retries).
        reply = self._call(driver_request, budget)
        result = to_result(run.label, reply, config.verifier.timeout_sec)
        result.wall_s = round(time.perf_counter() - started, 3)
        outcome = AgentRunOutcome(
            exit_code=None if reply.harness_timed_out else reply.harness_exit_code,
            outputs=reply.read_back,
            wall_s=reply.phase_s.get("agent", 0.0),
        )
        return outcome, result

    def abort(self) -> None:
        """SIGTERM every driver (each stops and deletes its environments), then SIGKILL
        what is still running after the grace. The threads waiting on the drivers
        read their replies themselves ("aborted")."""
        self._aborted.set()
        with self._live_lock:
            procs = list(self._live)
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
