"""One trial through Harbor's own environment classes, run by Harbor's interpreter.

Harbor needs Python >= 3.12 and lives in its own venv (`.venv-harbor`); the project
runs on 3.11. So `HarborRuntime` starts this file with Harbor's interpreter, writes
one JSON request on stdin and reads one JSON reply from stdout. This file therefore
imports only the standard library and Harbor, never `repo2rlenv`; it executes what the
request says and interprets nothing: reward parsing, verdicts and labels stay on the
project side, so both runtimes judge with the same code.

Ops: `check` (Harbor's own preflight of the environment type: credentials, engine),
`prepare` (start and stop the environment once, so a build failure is reported before
any trial), `trial` (agent phase, artifact hand-over, verifier; the verifier's
/logs/verifier files are returned raw), `harness` (a harness run in the derived
environment on the harness network, its output read back, then the same verifier
half). An environment that does not start comes back raw (`start_failed`): the project
side tells the task's broken build from the engine's failure.

Offline Docker (`no-network` without Harbor's egress sidecar) is `harbor_environments`,
this file's sibling: run as a file by Harbor's interpreter, the driver imports it as
a top-level module, never through the project's package.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__:  # imported as part of the project (its tests)
    from repo2rlenv.runtime.harbor_environments import check as check_environment
    from repo2rlenv.runtime.harbor_environments import (
        environment_class,
        harness_network_compose,
        start_failed,
        why,
    )
else:  # run by Harbor's interpreter as a file: its sibling, never the project
    from harbor_environments import check as check_environment  # type: ignore[no-redef]
    from harbor_environments import (  # type: ignore[no-redef]
        environment_class,
        harness_network_compose,
        start_failed,
        why,
    )

LOG_TAIL = 4000
KILL_GRACE_S = 10
MAX_READ_BACK = 8 << 20


class Trial:
    """The environments of one request, each stopped and deleted on every way out."""

    def __init__(self, request: dict[str, Any], scratch: Path) -> None:
        from harbor.models.task.config import TaskConfig
        from harbor.models.trial.paths import TrialPaths

        self.request = request
        self.task_dir = Path(request["task_dir"])
        self.config = TaskConfig.model_validate_toml((self.task_dir / "task.toml").read_text())
        self.scratch = scratch
        self.paths = TrialPaths(trial_dir=scratch / "trial")
        self.paths.mkdir()
        self.live: list[Any] = []
        self.cls = environment_class(request["environment_type"])

    async def start(self, role: str, network_mode: str, *, harness: bool = False) -> Any:
        """An environment of the task's definition, or with `harness` of the derived
        definition (the task's plus the harness bundle) on the harness network."""
        from harbor.models.task.config import NetworkMode, NetworkPolicy

        policy = NetworkPolicy(network_mode=NetworkMode(network_mode))
        extra: dict[str, Any] = {}
        compose: list[Path] = []
        if self.request["environment_type"] == "docker" and self.request["labels"]:
            # Harbor's own hook for more compose files: the owner labels on `main`.
            labels = self.scratch / f"labels-compose-{role}.json"
            services = {"services": {"main": {"labels": self.request["labels"]}}}
            labels.write_text(json.dumps(services))
            compose.append(labels)
        environment_dir = self.task_dir / "environment"
        environment_name = self.task_dir.name
        task_env_config = self.config.environment
        if harness:
            environment_dir = Path(self.request["agent_environment"])
            environment_name = environment_dir.name
            # The derived Dockerfile starts FROM the task's prebuilt image itself when it
            # names one: Harbor must build it, not run the prebuilt image without the
            # harness in it.
            task_env_config = task_env_config.model_copy(update={"docker_image": None})
            if self.request["harness_network"]:
                compose.append(
                    harness_network_compose(
                        self.scratch / f"harness-network-{role}.yaml",
                        self.request["harness_network"],
                        self.request["host_aliases"],
                    )
                )
        if compose:
            extra["extra_docker_compose"] = compose
        env = self.cls(
            environment_dir=environment_dir,
            environment_name=environment_name,
            session_id=f"{self.request['session']}-{role}",
            trial_paths=self.paths,
            task_env_config=task_env_config,
            network_policy=policy,
            **extra,
        )
        env.validate_network_policy_support(policy)
        self.live.append(env)
        await env.start(force_build=False)
        return env

    async def stop(self, env: Any) -> None:
        if env in self.live:
            self.live.remove(env)
            await env.stop(delete=True)

    async def close(self) -> None:
        for env in list(self.live):
            try:
                await self.stop(env)
            except Exception as exc:  # keep stopping the others
                print(f"stopping an environment failed: {exc}", file=sys.stderr)

    async def script(
        self, env: Any, script: str, *, timeout: float, env_vars: dict[str, str], user: Any
    ) -> tuple[int | None, str]:
        """Run `script` under bash with an in-container timeout, as the Docker runtime
        does; (exit code or None on timeout, output tail)."""
        import shlex

        wrapped = f"timeout -k 5 {int(timeout)} bash -c {shlex.quote(script)}"
        try:
            result = await env.exec(
                f"bash -c {shlex.quote(wrapped)}",
                cwd=self.request.get("workdir"),
                env=env_vars or None,
                timeout_sec=int(timeout) + KILL_GRACE_S,
                user=user or None,
            )
        except TimeoutError:
            return None, ""
        code = result.return_code
        output = (result.stdout or "") + (result.stderr or "")
        return (None if code in (124, 137) else code), output[-LOG_TAIL:]

    async def prepare(self) -> dict[str, Any]:
        try:
            env = await self.start("prepare", "no-network")
        except ValueError as exc:  # Harbor refuses a policy it cannot enforce
            return {"status": "error", "detail": why(exc)}
        except Exception as exc:
            return start_failed(exc)
        await self.stop(env)
        return {"status": "ok"}

    async def trial(self) -> dict[str, Any]:
        req = self.request
        reply: dict[str, Any] = {"status": "ok", "detail": "", "phase_s": {}}
        started = time.perf_counter()
        try:
            agent = await self.start("agent", req["agent_network"])
        except ValueError as exc:  # Harbor refuses a policy it cannot enforce
            return {**reply, "status": "error", "detail": why(exc)}
        except Exception as exc:
            return {**reply, **start_failed(exc)}
        await self.agent_phase(agent, reply)
        reply["phase_s"]["agent"] = round(time.perf_counter() - started, 3)
        if reply["status"] != "ok":
            return reply
        started = time.perf_counter()
        await self.hand_over_and_verify(agent, reply)
        reply["phase_s"]["verifier"] = round(time.perf_counter() - started, 3)
        return reply

    async def harness(self) -> dict[str, Any]:
        """One harness run: the agent environment of the derived definition on the
        harness network, the run's files uploaded, the harness under the agent timeout,
        its output read back; then the task's verifier, as in `trial`, on an
        environment of the task's own definition (no harness in it)."""
        req = self.request
        reply: dict[str, Any] = {"status": "ok", "detail": "", "phase_s": {}}
        try:
            agent = await self.start("agent", "public", harness=True)
        except ValueError as exc:
            return {**reply, "status": "error", "detail": why(exc)}
        except Exception as exc:
            return {**reply, **start_failed(exc)}
        for index, (path, encoded) in enumerate(sorted(req["harness_files"].items())):
            local = self.scratch / f"run-{index}"
            local.write_bytes(base64.b64decode(encoded))
            await agent.exec(f"mkdir -p {_quote(os.path.dirname(path))}", user="root")
            await agent.upload_file(local, path)
        if req["agent_user"] and req["harness_chown"]:
            await agent.exec(
                f"chown -R {_quote(req['agent_user'])} {_quote(req['harness_chown'])}",
                user="root",
            )
        started = time.perf_counter()
        code, _ = await self.script(
            agent,
            req["harness_script"],
            timeout=req["agent_timeout"],
            env_vars=req["harness_env"],
            user=req["agent_user"],
        )
        reply["phase_s"]["agent"] = round(time.perf_counter() - started, 3)
        reply["harness_exit_code"] = code
        reply["harness_timed_out"] = code is None
        outputs: dict[str, str] = {}
        for name, command in sorted(req["read_back"].items()):
            result = await agent.exec(command, user="root")
            if result.return_code in (0, 1):  # grep's 1: no line matched
                outputs[name] = (result.stdout or "")[-MAX_READ_BACK:]
        reply["read_back"] = outputs
        started = time.perf_counter()
        await self.hand_over_and_verify(agent, reply)
        reply["phase_s"]["verifier"] = round(time.perf_counter() - started, 3)
        return reply

    async def hand_over_and_verify(self, agent: Any, reply: dict[str, Any]) -> None:
        """The verifier half of every trial: with a separate verifier, only the declared
        artifacts move, sanitised, into a fresh environment of the task's definition;
        otherwise the verifier runs in the agent's environment."""
        req = self.request
        if req["verifier_mode"] == "separate":
            handed = await self.collect(agent)
            await self.stop(agent)
            verifier = await self.start("verifier", req["verifier_network"])
            for source, local in handed:
                quoted = _quote(source)
                await verifier.exec(
                    f"mkdir -p {quoted} && find {quoted} -mindepth 1 -delete", user="root"
                )
                await verifier.upload_dir(local, source)
        else:
            verifier = agent
        await self.verify(verifier, reply)

    async def agent_phase(self, agent: Any, reply: dict[str, Any]) -> None:
        req = self.request
        timeout = req["agent_timeout"]
        if req["apply_solution"]:
            await agent.upload_dir(self.task_dir / "solution", "/solution")
            code, output = await self.script(
                agent,
                "chmod +x /solution/solve.sh && /solution/solve.sh",
                timeout=timeout,
                env_vars=req["solution_env"],
                user=None,  # the image's user, as the Docker runtime runs solve.sh
            )
            reply["solution_exit_code"] = code
            if code is None:
                reply["status"] = "solution-timeout"
                reply["detail"] = f"solve.sh ran past {timeout:g}s"
                return
            if code != 0:
                reply["detail"] = f"solve.sh exited {code}: {output[-300:]}"
        for index, (path, encoded) in enumerate(sorted(req["plant_files"].items())):
            local = self.scratch / f"plant-{index}"
            local.write_bytes(base64.b64decode(encoded))
            await agent.exec(f"mkdir -p {_quote(os.path.dirname(path))}", user="root")
            await agent.upload_file(local, path)
            await agent.exec(f"chown root:root {_quote(path)}", user="root")
        for command in req["agent_commands"]:
            _, output = await self.script(
                agent, command, timeout=timeout, env_vars={}, user=req["agent_user"]
            )
            reply["agent_output"] = (reply.get("agent_output", "") + output)[-LOG_TAIL:]

    async def collect(self, agent: Any) -> list[tuple[str, Path]]:
        """The declared artifacts, downloaded and made safe to hand to a verifier."""
        handed = []
        for index, source in enumerate(self.request["artifacts"]):
            probe = await agent.exec(f"test -d {_quote(source)}", user="root")
            if probe.return_code != 0:
                continue
            local = self.scratch / f"artifact-{index}"
            local.mkdir()
            await agent.download_dir(source, local)
            _sanitize_tree(local)
            handed.append((source, local))
        return handed

    async def verify(self, env: Any, reply: dict[str, Any]) -> None:
        req = self.request
        await env.exec(
            "mkdir -p /logs/verifier /tests && "
            "rm -f /logs/verifier/reward.txt /logs/verifier/reward.json && "
            "chmod 777 /logs/verifier",
            user="root",
        )
        await env.upload_dir(self.task_dir / "tests", "/tests")
        code, _ = await self.script(
            env,
            "chmod +x /tests/test.sh && /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1",
            timeout=req["verifier_timeout"],
            env_vars=req["verifier_env"],
            user=req["verifier_user"],
        )
        reply["verifier_exit_code"] = code
        if code is None:
            reply["verifier_timed_out"] = True
        logs = self.scratch / "verifier-logs"
        logs.mkdir()
        files: dict[str, str] = {}
        try:
            await env.download_dir("/logs/verifier", logs)
        except Exception as exc:
            print(f"reading /logs/verifier failed: {exc}", file=sys.stderr)
        for path in sorted(logs.rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(logs).as_posix()] = base64.b64encode(
                    path.read_bytes()
                ).decode()
        reply["verifier_files"] = files


def _quote(path: str) -> str:
    import shlex

    return shlex.quote(path)


def _sanitize_tree(root: Path) -> None:
    """What the Docker runtime's tar sanitiser keeps: files, folders, and symlinks
    that stay inside the artifact; setuid/setgid/sticky bits cleared."""
    for folder, dirs, files in os.walk(root, topdown=True):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                resolved = os.path.normpath(os.path.join(folder, target))
                inside = resolved == str(root) or resolved.startswith(str(root) + os.sep)
                if target.startswith("/") or not inside:
                    path.unlink()
                    if name in dirs:
                        dirs.remove(name)
                continue
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                path.unlink()
                continue
            os.chmod(path, stat.S_IMODE(info.st_mode) & 0o777)


async def run(request: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rlenv-harbor-") as scratch:
        trial = Trial(request, Path(scratch))
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if task is not None:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            if request["op"] == "prepare":
                return await trial.prepare()
            if request["op"] == "harness":
                return await trial.harness()
            return await trial.trial()
        except asyncio.CancelledError:
            return {"status": "error", "detail": "aborted"}
        except Exception as exc:  # the engine or provider failed mid-trial: worth a retry
            return {"status": "error", "detail": why(exc), "retryable": True}
        finally:
            await asyncio.shield(trial.close())


def main() -> int:
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # whatever Harbor prints goes to stderr; stdout carries the reply only
    request = json.loads(sys.stdin.read())
    if request["op"] == "check":
        reply = check_environment(request["environment_type"])
    else:
        reply = asyncio.run(run(request))
    with os.fdopen(reply_fd, "w") as out:
        out.write(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(main())
