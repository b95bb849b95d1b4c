"""One harness trial in Docker: the agent phase in the harness layer, then the task's
own verifier exactly as `repo2rlenv validate` runs it.

The agent container starts from the harness layer on the internal harness network,
where `host.docker.internal` is the host's gateway address (the guard); the instruction
is copied in as a file and fed to the harness on stdin, so no task text is ever part of
a command line. After the agent phase (finished or timed out) the verifier runs as in
`DockerRuntime`: in `separate` mode only the declared artifacts (`/workspace`) are
copied, sanitised, into a fresh container of the *task* image; `tests/` is uploaded
only then. Every container is removed on every path (the runtime's live set also lets
`abort()` remove them on Ctrl-C).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import AttachedNetwork, DockerRuntime, RuntimeAborted, TrialResult
from repo2rlenv.runtime.archive import pack
from repo2rlenv.runtime.containers import LABEL
from train.harnesses.network import HarnessNetwork
from train.harnesses.profile import (
    HOME,
    INSTRUCTION_PATH,
    RUN_DIR,
    STDERR_PATH,
    TRANSCRIPT_PATH,
    HarnessProfile,
    RunSettings,
)

HOST_ALIAS = "host.docker.internal"
MAX_TRANSCRIPT_BYTES = 8 << 20
TAIL_BYTES = 16384


class AgentOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    exit_code: int | None = Field(description="None: the agent timeout stopped the harness.")
    transcript: str = Field(default="", description="The stdout lines the profile counts.")
    transcript_tail: str = ""
    stderr_tail: str = ""
    wall_s: float = 0.0

    @property
    def output_tail(self) -> str:
        """What the harness last said, for an error message (some print errors to stdout)."""
        return (self.stderr_tail.strip() or self.transcript_tail.strip())[-600:]


def harness_script(profile: HarnessProfile, settings: RunSettings, workdir: str) -> str:
    """The shell line run in the container: every word is quoted, and the instruction
    only ever travels as stdin from a file."""
    argv = " ".join(shlex.quote(word) for word in profile.command(settings))
    return (
        f"cd {shlex.quote(workdir)} && exec {argv} < {INSTRUCTION_PATH} "
        f"> {TRANSCRIPT_PATH} 2> {STDERR_PATH}"
    )


def run_file_map(
    profile: HarnessProfile, settings: RunSettings, instruction: str
) -> dict[str, bytes]:
    """The instruction and the harness's config files, by absolute container path."""
    files = {INSTRUCTION_PATH: instruction.encode("utf-8"), f"{HOME}/.keep": b""}
    for path, content in profile.config_files(settings).items():
        if not path.startswith(HOME + "/"):
            raise ValueError(f"{profile.name}: config file {path} is outside {HOME}")
        files[path] = content
    return files


def run_files(profile: HarnessProfile, settings: RunSettings, instruction: str) -> bytes:
    """A tar (rooted at /) with the instruction and the harness's config files."""
    files = run_file_map(profile, settings, instruction)
    return pack({path.lstrip("/"): (content, False) for path, content in files.items()})


def read_back_commands(profile: HarnessProfile) -> dict[str, str]:
    """What a runtime without container handles reads back after the run, as shell
    commands (the Docker path runs the same reads through `exec_run`)."""
    commands = {
        "transcript_tail": f"tail -c {TAIL_BYTES} {TRANSCRIPT_PATH}",
        "stderr_tail": f"tail -c {TAIL_BYTES} {STDERR_PATH}",
    }
    if profile.transcript_marker:
        marker = shlex.quote(profile.transcript_marker)
        commands["transcript"] = f"grep -F -- {marker} {TRANSCRIPT_PATH}"
    return commands


class TrialAborted(RuntimeError):
    reason = "rollout.aborted"


class HarnessTrial:
    """Runs trials through a `DockerRuntime`, reusing its exec, artifact hand-over and
    verifier steps so a rollout is scored exactly like a validation trial."""

    def __init__(self, runtime: DockerRuntime, network: HarnessNetwork) -> None:
        self.runtime = runtime
        self.network = network

    @contextmanager
    def agent_container(self, task: TaskTree, image: str, session_id: str) -> Iterator[Any]:
        """The runtime's task container, on the harness network with the guard's host
        alias, labelled with the rollout's session for cleanup."""
        network = AttachedNetwork(
            name=self.network.name, extra_hosts={HOST_ALIAS: self.network.gateway}
        )
        labels = {LABEL: "harness-trial", f"{LABEL}.session": session_id}
        try:
            with self.runtime.container(task, image, network, labels=labels) as container:
                yield container
        except RuntimeAborted as exc:
            raise TrialAborted(str(exc)) from exc

    def run_agent(
        self,
        container: Any,
        task: TaskTree,
        profile: HarnessProfile,
        settings: RunSettings,
        timeout_s: float,
    ) -> AgentOutcome:
        container.reload()
        workdir = self.runtime.workdir(task, container)
        user = str(task.config.agent.user or "")
        instruction = task.text("instruction.md") or ""
        container.put_archive("/", run_files(profile, settings, instruction))
        if user:
            container.exec_run(["chown", "-R", user, RUN_DIR])
        started = time.perf_counter()
        code, _ = self.runtime.run_script(
            container,
            harness_script(profile, settings, workdir),
            timeout=timeout_s,
            workdir=workdir,
            env=profile.env(settings),
            user=user,
        )
        wall = time.perf_counter() - started
        if code is None:
            container.reload()
            if container.status != "running":  # killed past the grace: restart to read back
                container.start()
        marker = profile.transcript_marker
        return AgentOutcome(
            exit_code=code,
            transcript=_read(container, ["grep", "-F", "--", marker, TRANSCRIPT_PATH])
            if marker
            else "",
            transcript_tail=_read(container, ["tail", "-c", str(TAIL_BYTES), TRANSCRIPT_PATH]),
            stderr_tail=_read(container, ["tail", "-c", str(TAIL_BYTES), STDERR_PATH]),
            wall_s=round(wall, 3),
        )

    def verify(
        self, task: TaskTree, task_image: str, agent: Any, result: TrialResult
    ) -> TrialResult:
        """The task's verifier on the agent's work, exactly as `validate` runs it."""
        workdir = self.runtime.workdir(task, agent)
        self.runtime.verify_work(task, task_image, agent, workdir, result)
        return result


def _read(container: Any, command: list[str]) -> str:
    """Output of a read-back command; grep's exit 1 (no line matched) is an empty read."""
    code, output = container.exec_run(command)
    if code not in (0, 1) or not isinstance(output, bytes):
        return ""
    return output[-MAX_TRANSCRIPT_BYTES:].decode("utf-8", errors="replace")
