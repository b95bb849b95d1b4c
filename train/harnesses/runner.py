"""`build_runner`: a `RolloutRunner` that runs one real harness per rollout.

One rollout: register a guard session for the task (its instruction, protected and
hidden paths, provenance lookup terms, and the request's adapter as the upstream
model), run the harness in its layer on the task image, verify the workspace like
`validate`, close the session, and build the rollout from the guard's verdict and
exchanges. Nothing a task or a harness does raises: it becomes a `failed` rollout
with a reason code in `error`. Containers still running when the process exits (its
rollout threads cut short by Ctrl-C) are removed then.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import docker
from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import (
    AgentRun,
    DockerRuntime,
    Runtime,
    TrialResult,
)
from repo2rlenv.runtime.docker_runtime import DEFAULT_AGENT_TIMEOUT
from repo2rlenv.runtime.images import ImageBuildError
from train.data.reward import RewardSettings
from train.data.reward import reward as score_reward
from train.data.tasks import TaskTrees
from train.guard import context_from_tree
from train.harnesses.install import ensure_bundle
from train.harnesses.layer import ensure_layer
from train.harnesses.network import ensure_network
from train.harnesses.profile import RUN_DIR, HarnessProfile, RunSettings
from train.harnesses.registry import get_profile
from train.harnesses.runtimes import owned_runtime, require_harness_trials
from train.harnesses.trial import (
    HOST_ALIAS,
    AgentOutcome,
    HarnessTrial,
    harness_script,
    read_back_commands,
    run_file_map,
)
from train.harnesses.turns import SessionRecord
from train.rollout.contract import GuardEndpoint, Rollout, RolloutRequest, RolloutRunner

ADMIN_TIMEOUT_S = 90.0


class RunnerOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context_window: int = Field(default=16384, ge=1024, description="The server's max-model-len.")
    max_tokens: int = Field(default=1024, ge=1)
    cache_dir: Path | None = Field(default=None, description="Harness bundles; None: default.")


class RolloutFailure(Exception):
    """A rollout that cannot be scored; `reason` is a stable code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class HarnessRunner:
    def __init__(
        self,
        profile: HarnessProfile,
        guard: GuardEndpoint,
        reward_settings: RewardSettings,
        work_dir: Path,
        agent_timeout_s: float | None = None,
        options: RunnerOptions | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        self.profile = profile
        self.guard = guard
        self.reward_settings = reward_settings
        self.work_dir = Path(work_dir)
        self.agent_timeout_s = agent_timeout_s
        self.options = options or RunnerOptions()
        self.trees = TaskTrees()
        """Each task folder read once for all its rollouts (train.data.tasks.TaskTrees)."""
        self.runtime = (
            require_harness_trials(runtime, "rollout.runtime-unsupported")
            if runtime is not None
            else owned_runtime()
        )

    def __call__(self, request: RolloutRequest) -> Rollout:
        started = time.time()
        try:
            fields = self._run(request)
            status = "scored"
        except RolloutFailure as exc:
            fields, status = {"error": f"{exc.reason}: {exc}"}, "failed"
        except Exception as exc:  # a rollout never takes the worker down
            reason = getattr(exc, "reason", None) or f"rollout.error: {type(exc).__name__}"
            fields, status = {"error": f"{reason}: {exc}"}, "failed"
        return Rollout(
            request=request, status=status, started_at=started, finished_at=time.time(), **fields
        )

    # -- one rollout -----------------------------------------------------------------
    def _run(self, request: RolloutRequest) -> dict[str, Any]:
        if request.harness != self.profile.name:
            raise RolloutFailure(
                "rollout.wrong-harness",
                f"a {request.harness} request reached the {self.profile.name} runner",
            )
        task = self.trees.get(request.task_dir)
        if task.config is None:
            raise RolloutFailure("task.unreadable", task.config_error or "no task.toml")
        settings = RunSettings(
            base_url=f"{self.guard.container_url.rstrip('/')}/s/{request.session_id}/v1",
            model=request.adapter,
            context_window=self.options.context_window,
            max_tokens=self.options.max_tokens,
        )
        minimum = self.profile.min_context_window
        if settings.context_window < minimum:
            raise RolloutFailure(
                "harness.context-too-small",
                f"{self.profile.name} refuses a context window under {minimum} tokens; "
                f"the server offers {settings.context_window}",
            )
        if (self.guard.log_dir / request.session_id / "exchanges.jsonl").exists():
            raise RolloutFailure(
                "rollout.session-reused",
                f"guard session {request.session_id} already has exchanges: its turns would "
                "mix with this rollout's (every attempt needs its own session id)",
            )
        self._open_session(request, task)
        try:
            outcome, result = self._trial(task, request, settings)
        finally:
            self._close_session(request.session_id)
        record = SessionRecord.read(self.guard.log_dir, request.session_id)
        self._save(request, outcome, result)
        if record.model_calls == 0 and outcome.exit_code not in (0, None):
            raise RolloutFailure(
                "harness.no-model-calls",
                f"{self.profile.name} exited {outcome.exit_code} before any model call: "
                f"{outcome.output_tail}",
            )
        upstream_errors = record.upstream_errors()
        if upstream_errors:
            raise RolloutFailure(
                "guard.upstream-error",
                f"{len(upstream_errors)} model call(s) failed upstream (HTTP "
                f"{', '.join(sorted({str(s) for s in upstream_errors}))}): the rollout "
                "does not show what the policy would have done",
            )
        if record.after_response_failures:
            raise RolloutFailure(
                "guard.after-response-failed",
                f"{record.after_response_failures} exchange line(s) or audit(s) of this "
                "session failed in the guard: its turns or its verdict are incomplete",
            )
        if not record.answered_calls:
            raise RolloutFailure(
                "rollout.no-model-answer",
                f"no model call was answered ({record.model_calls} made; harness exit "
                f"{outcome.exit_code}): {outcome.output_tail}",
            )
        if result.status != "ok" or result.reward is None:
            raise RolloutFailure(
                f"verifier.{result.status}", result.detail or "the verifier gave no reward"
            )
        counted = self.profile.count_tool_calls(outcome.transcript)
        tool_calls = counted if counted is not None else record.delivered_tool_calls()
        return {
            **scored_fields(record, result.reward, self.reward_settings),
            "tool_calls": tool_calls,
            "turns": record.turns(),
        }

    def _trial(self, task: TaskTree, request: RolloutRequest, settings: RunSettings):
        runtime = self.runtime
        try:
            task_image = runtime.prepare(task)
        except Exception as exc:
            raise RolloutFailure("task.image-build-failed", str(exc)) from exc
        bundle = ensure_bundle(self.profile, self.options.cache_dir)
        timeout = task.config.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT
        if self.agent_timeout_s is not None:  # a cap: never longer than the task allows
            timeout = min(timeout, self.agent_timeout_s)
        if not isinstance(runtime, DockerRuntime):
            return self._runtime_trial(task, task_image, bundle, request, settings, timeout)
        image = ensure_layer(runtime.client, task_image, self.profile, bundle)
        trial = HarnessTrial(runtime, ensure_network(runtime.client))
        result = TrialResult(label=f"{self.profile.name}:{request.session_id}", status="ok")
        with trial.agent_container(task, image, request.session_id) as agent:
            outcome = trial.run_agent(agent, task, self.profile, settings, timeout)
            result.phase_s["agent"] = outcome.wall_s
            trial.verify(task, task_image, agent, result)
        result.wall_s = round(outcome.wall_s + result.phase_s.get("verifier", 0.0), 3)
        return outcome, result

    def _runtime_trial(
        self,
        task: TaskTree,
        task_image: str,
        bundle: Path,
        request: RolloutRequest,
        settings: RunSettings,
        timeout: float,
    ) -> tuple[AgentOutcome, TrialResult]:
        """The same trial through a runtime's `run_agent` (Harbor's Docker environment):
        the harness layer as a derived environment, the harness network by name with the
        guard's host alias, the same script, files and read-backs as the Docker path."""
        network = ensure_network(docker.from_env())
        user = str(task.config.agent.user or "")
        workdir = task.config.environment.workdir or "."  # "." : the image's own
        run = AgentRun(
            label=f"{self.profile.name}:{request.session_id}",
            session_id=request.session_id,
            layer=bundle,
            layer_target=self.profile.bundle_dir,
            files=run_file_map(self.profile, settings, task.text("instruction.md") or ""),
            chown=RUN_DIR if user else "",
            script=harness_script(self.profile, settings, workdir),
            env=self.profile.env(settings),
            timeout_s=timeout,
            network=network.name,
            host_aliases={HOST_ALIAS: network.gateway},
            read_back=read_back_commands(self.profile),
        )
        try:
            ran, result = self.runtime.run_agent(task, task_image, run)
        except (ImageBuildError, OSError) as exc:  # the derived environment folder
            raise RolloutFailure("harness.layer-build-failed", str(exc)) from exc
        if "agent" not in result.phase_s and result.status in ("build-failed", "error"):
            reason = "harness.layer-build-failed" if result.status == "build-failed" else None
            raise RolloutFailure(reason or "runtime.error", result.detail or result.status)
        outputs = ran.outputs
        outcome = AgentOutcome(
            exit_code=ran.exit_code,
            transcript=outputs.get("transcript", ""),
            transcript_tail=outputs.get("transcript_tail", ""),
            stderr_tail=outputs.get("stderr_tail", ""),
            wall_s=ran.wall_s,
        )
        return outcome, result

    def _save(self, request: RolloutRequest, outcome: Any, result: TrialResult) -> None:
        """The harness's own output and the verifier's result, for a human to read."""
        folder = self.work_dir / request.session_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "stdout-tail.txt").write_text(outcome.transcript_tail)
        (folder / "stderr-tail.txt").write_text(outcome.stderr_tail)
        agent = outcome.model_dump(exclude={"transcript", "transcript_tail", "stderr_tail"})
        (folder / "trial.json").write_text(
            json.dumps(
                {
                    "task_id": request.task_id,
                    "runtime": self.runtime.name,
                    "agent": agent,
                    **result.model_dump(),
                },
                indent=2,
            )
            + "\n"
        )

    # -- guard sessions ----------------------------------------------------------------
    def _open_session(self, request: RolloutRequest, task: TaskTree) -> None:
        try:  # a task folder the guard would refuse fails here, with its reason
            context_from_tree(task, request.session_id)
        except ValueError as exc:
            raise RolloutFailure(getattr(exc, "reason", "context.invalid"), str(exc)) from exc
        # The guard reads the task folder itself (its rules file, entry-point plugins):
        # the control plane takes settings, never code.
        body = {"task_dir": str(Path(request.task_dir).resolve()), "adapter": request.adapter}
        self._admin("PUT", request.session_id, body)

    def _close_session(self, session_id: str) -> None:
        # On a failed close the verdict on disk still holds; a missing one fails the read.
        with contextlib.suppress(RolloutFailure):
            self._admin("DELETE", session_id)

    def _admin(self, method: str, session_id: str, body: Any = None) -> Any:
        url = f"{self.guard.admin_url.rstrip('/')}/guard/sessions/{session_id}"
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"}
        if self.guard.admin_token:
            headers["authorization"] = f"Bearer {self.guard.admin_token}"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=ADMIN_TIMEOUT_S) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", errors="replace")[:500]
            raise RolloutFailure("guard.session-refused", f"{method} {url}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise RolloutFailure("guard.unreachable", f"{method} {url}: {exc}") from exc


def scored_fields(
    record: SessionRecord, verifier_reward: float, settings: RewardSettings
) -> dict[str, Any]:
    """Score, reward and blocked count of a verified rollout: train.data.reward of the
    verifier's score and the model calls, and 0 whenever the guard blocked the session
    (a verdict can turn blocked by an audit finding with no call counted as blocked)."""
    score = min(max(verifier_reward, 0.0), 1.0)
    blocked = record.blocked_calls if record.blocked else 0
    value = score_reward(score, record.model_calls, blocked_calls=blocked, settings=settings)
    return {
        "verifier_score": score,
        "reward": 0.0 if record.blocked else value,
        "blocked_calls": record.blocked_calls,
    }


def build_runner(
    harness: str,
    *,
    guard: GuardEndpoint,
    reward: RewardSettings,
    work_dir: Path,
    agent_timeout_s: float | None = None,
    options: RunnerOptions | None = None,
    runtime: Runtime | None = None,
) -> RolloutRunner:
    """A runner for `harness` (a registered profile name); raises only for a name no
    profile has, which is a configuration error rather than a rollout's.
    `agent_timeout_s` caps the task's own agent timeout (`[agent].timeout_sec`)."""
    return HarnessRunner(
        get_profile(harness), guard, reward, work_dir, agent_timeout_s, options, runtime
    )
