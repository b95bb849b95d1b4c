"""The Harbor runtime's project side, without a trial: choosing a runtime, reading the
driver's reply, the cache key, the artifact sanitiser, and the hosted providers'
credential check (Harbor's own preflight, run in Harbor's interpreter)."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir
from repo2rlenv.cli import main
from repo2rlenv.runtime import TrialRequest, harbor_runtime
from repo2rlenv.runtime.docker_runtime import DockerRuntime
from repo2rlenv.runtime.harbor_copies import TaskCopies
from repo2rlenv.runtime.harbor_driver import _sanitize_tree
from repo2rlenv.runtime.harbor_protocol import DriverReply, DriverRequest, judge_start, to_result
from repo2rlenv.runtime.harbor_runtime import HarborRuntime
from repo2rlenv.runtime.registry import RuntimeSpecError, make_runtime
from repo2rlenv.validate import ValidateOptions, validate_tasks

HARBOR_PYTHON = harbor_runtime.default_python()
needs_harbor = pytest.mark.skipif(
    not HARBOR_PYTHON.exists(), reason=f"Harbor's interpreter is not at {HARBOR_PYTHON}"
)


def _files(**named: bytes) -> dict[str, str]:
    return {name: base64.b64encode(data).decode() for name, data in named.items()}


def test_runtime_names_resolve_and_bad_ones_are_refused():
    assert isinstance(make_runtime("docker"), DockerRuntime)
    assert make_runtime("harbor").name == "harbor:docker"
    assert make_runtime("harbor:daytona").name == "harbor:daytona"
    assert make_runtime("harbor:modal").environment_type == "modal"
    with pytest.raises(RuntimeSpecError, match="unknown runtime 'podman'"):
        make_runtime("podman")
    with pytest.raises(RuntimeSpecError, match="takes no option"):
        make_runtime("docker:modal")


def test_reply_is_judged_by_the_reward_contract():
    ok = to_result(
        "reference", DriverReply(status="ok", verifier_files=_files(**{"reward.txt": b"1\n"})), 60
    )
    assert (ok.status, ok.reward) == ("ok", 1.0)
    json_wins = to_result(
        "noop",
        DriverReply(
            status="ok",
            verifier_files=_files(
                **{"reward.txt": b"1", "reward.json": b'{"reward": 0.0, "style": 1.0}'}
            ),
        ),
        60,
    )
    assert (json_wins.reward, json_wins.rewards) == (0.0, {"reward": 0.0, "style": 1.0})
    missing = to_result(
        "noop", DriverReply(status="ok", verifier_files=_files(**{"x.txt": b""})), 60
    )
    assert missing.status == "reward-missing" and missing.reward is None
    invalid = to_result(
        "noop", DriverReply(status="ok", verifier_files=_files(**{"reward.txt": b"2"})), 60
    )
    assert invalid.status == "reward-invalid"
    timed = to_result(
        "noop",
        DriverReply(
            status="ok", verifier_timed_out=True, verifier_files=_files(**{"reward.txt": b"1"})
        ),
        2,
    )
    assert timed.status == "verifier-timeout" and timed.reward is None
    log = to_result(
        "noop",
        DriverReply(
            status="ok",
            verifier_files=_files(**{"reward.txt": b"0", "test-stdout.txt": b"1 failed"}),
        ),
        60,
    )
    assert log.verifier_log_tail == "1 failed"
    scanned = to_result(  # the in-image leak scan reads what agent commands printed
        "leak.hidden-test-in-image",
        DriverReply(
            status="ok",
            agent_output="LEAK /x = tests/hidden/t.py\nSCANNED /\n",
            verifier_files=_files(**{"reward.txt": b"0"}),
        ),
        60,
    )
    assert scanned.agent_output.splitlines()[0] == "LEAK /x = tests/hidden/t.py"
    build = to_result("noop", DriverReply(status="build-failed", detail="no base"), 60)
    assert (build.status, build.detail) == ("build-failed", "no base")


def test_a_reply_outside_the_contract_is_an_error(tmp_path, monkeypatch):
    """The driver's reply is validated: an unknown field or no JSON at all is a trial
    error with the driver's stderr, never a silently accepted result."""
    fake = tmp_path / "driver.py"
    fake.write_text(
        "import sys, json\nsys.stdin.read()\n"
        "print('boom on stderr', file=sys.stderr)\n"
        "print(json.dumps({'status': 'ok', 'reward': 1.0}))\n"
    )
    monkeypatch.setattr(harbor_runtime, "DRIVER", fake)
    runtime = HarborRuntime("docker", python=Path(sys.executable))
    reply = runtime._call(DriverRequest(op="check", environment_type="docker"), 30)
    assert reply.status == "error" and "boom on stderr" in reply.detail
    with pytest.raises(Exception, match="boom on stderr"):
        runtime.check()


def test_backend_is_part_of_the_cache_key_and_the_report(examples_dir, tmp_path):
    tree = read_task_dir(examples_dir / "example-repair-median")
    keys = {HarborRuntime(kind).environment_key(tree) for kind in ("docker", "modal", "daytona")}
    assert len(keys) == 3
    edited = examples_dir / "example-repair-median" / "environment" / "Dockerfile"
    before = HarborRuntime("docker").environment_key(tree)
    edited.write_text(edited.read_text() + "\n# changed\n")
    assert HarborRuntime("docker").environment_key(read_task_dir(edited.parents[1])) != before
    options = ValidateOptions(run=False, runtime="harbor:modal")
    report = validate_tasks([examples_dir / "example-qa-config"], options, None)
    assert json.loads(report.to_json())["options"]["runtime"] == "harbor:modal"


def test_artifact_sanitiser_keeps_what_the_docker_runtime_keeps(tmp_path):
    root = tmp_path / "workspace"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "tool").write_text("#!/bin/sh\n")
    os.chmod(root / "tool", 0o4755)
    os.symlink("pkg/mod.py", root / "inside")
    os.symlink("/etc/passwd", root / "absolute")
    os.symlink("../../outside", root / "pkg" / "escape")
    os.mkfifo(root / "pipe")
    _sanitize_tree(root)
    kept = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    assert kept == ["inside", "pkg", "pkg/mod.py", "tool"]
    assert (root / "tool").stat().st_mode & 0o7777 == 0o755


@needs_harbor
@pytest.mark.harbor
@pytest.mark.parametrize(
    ("runtime", "variable", "clear"),
    [
        ("harbor:daytona", "DAYTONA_API_KEY", ("DAYTONA_API_KEY", "DAYTONA_JWT_TOKEN")),
        ("harbor:modal", "MODAL_TOKEN_ID", ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET")),
        ("harbor:e2b", "E2B_API_KEY", ("E2B_API_KEY",)),
    ],
)
def test_hosted_provider_without_credentials_is_a_one_line_setup_error(
    runtime, variable, clear, examples_dir, tmp_path, monkeypatch, capsys
):
    for name in clear:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.modal.toml
    monkeypatch.setenv("COLUMNS", "400")
    assert main(["validate", "-q", "--runtime", runtime, str(examples_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert runtime in err and variable in err


@needs_harbor
@pytest.mark.harbor
def test_a_provider_whose_sdk_is_missing_is_refused_before_any_trial(
    examples_dir, monkeypatch, capsys
):
    """Harbor's preflight checks credentials only and imports the provider's SDK when a
    sandbox starts: with credentials but no SDK, the check must name the extra to install
    rather than let every trial fail on an import."""
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('daytona') is None)"
    if subprocess.run([str(HARBOR_PYTHON), "-c", probe]).returncode == 0:
        pytest.skip("Harbor's daytona extra is installed here")
    monkeypatch.setenv("DAYTONA_API_KEY", "not-a-real-key")
    monkeypatch.setenv("COLUMNS", "400")
    assert main(["validate", "-q", "--runtime", "harbor:daytona", str(examples_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "needs its SDK" in err and "harbor[daytona]==" in err


@needs_harbor
@pytest.mark.harbor
def test_the_settings_file_chooses_the_default_runtime(examples_dir, tmp_path, monkeypatch, capsys):
    settings = tmp_path / "settings.toml"
    settings.write_text('runtime = "harbor:e2b"\n')
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(settings))
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    monkeypatch.setenv("COLUMNS", "400")
    assert main(["validate", "-q", str(examples_dir)]) == 2
    assert "E2B_API_KEY" in capsys.readouterr().err
    assert main(["validate", "-q", "--no-run", "--json", "-", str(examples_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["options"]["runtime"] == "harbor:e2b"
    assert main(["validate", "-q", "--runtime", "nowhere", str(examples_dir)]) == 2
    assert "unknown runtime 'nowhere'" in capsys.readouterr().err
    assert main(["validate", "-q", "--runtime", "harbor:nowhere", str(examples_dir)]) == 2
    err = capsys.readouterr().err
    assert "no environment type 'nowhere'" in err and "daytona" in err


FLAKY_DRIVER = """import json, sys
from pathlib import Path
sys.stdin.read()
count = Path(sys.argv[0]).with_name("calls")
calls = int(count.read_text()) if count.exists() else 0
count.write_text(str(calls + 1))
if calls < FAILURES:
    print("docker compose: connection reset", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"status": "ok", "verifier_files": {"reward.txt": "MQ=="}}))
"""


@pytest.mark.parametrize(
    ("failures", "retries", "status", "retried"),
    [
        (2, 2, "ok", 2),
        (2, 1, "error", 1),
        (0, 2, "ok", 0),
    ],
)
def test_infrastructure_failures_are_retried_and_counted_apart(
    failures, retries, status, retried, examples_dir, tmp_path, monkeypatch
):
    fake = tmp_path / "driver.py"
    fake.write_text(FLAKY_DRIVER.replace("FAILURES", str(failures)))
    monkeypatch.setattr(harbor_runtime, "DRIVER", fake)
    runtime = HarborRuntime("docker", python=Path(sys.executable), retries=retries)
    tree = read_task_dir(examples_dir / "example-repair-median")
    result = runtime.run_trial(tree, str(tmp_path), TrialRequest(label="reference"))
    assert (result.status, result.infra_retries) == (status, retried)
    assert (tmp_path / "calls").read_text() == str(retried + 1)
    if status == "ok":
        assert result.reward == 1.0


def test_a_task_failure_is_not_retried(examples_dir, tmp_path, monkeypatch):
    fake = tmp_path / "driver.py"
    fake.write_text(
        "import json, sys\nfrom pathlib import Path\nsys.stdin.read()\n"
        "c = Path(sys.argv[0]).with_name('calls')\n"
        "c.write_text(str(int(c.read_text()) + 1) if c.exists() else '1')\n"
        "print(json.dumps({'status': 'build-failed', 'detail': 'no such base image'}))\n"
    )
    monkeypatch.setattr(harbor_runtime, "DRIVER", fake)
    runtime = HarborRuntime("docker", python=Path(sys.executable))
    tree = read_task_dir(examples_dir / "example-repair-median")
    result = runtime.run_trial(tree, str(tmp_path), TrialRequest(label="noop"))
    assert (result.status, result.infra_retries) == ("build-failed", 0)
    assert (tmp_path / "calls").read_text() == "1"


def test_a_driver_started_while_abort_runs_is_stopped_too(examples_dir, tmp_path, monkeypatch):
    """With hundreds of trials in flight, a driver can start between a thread's check
    of the abort flag and abort()'s list of live drivers: it must be stopped as well,
    not run its whole trial after Ctrl-C."""
    fake = tmp_path / "driver.py"
    fake.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(60)\n")
    monkeypatch.setattr(harbor_runtime, "DRIVER", fake)
    runtime = HarborRuntime("docker", python=Path(sys.executable), retries=0)
    real_popen = harbor_runtime.subprocess.Popen

    def popen_after_abort(*args, **kwargs):
        runtime.abort()  # abort() runs after the flag was checked, before the start
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(harbor_runtime.subprocess, "Popen", popen_after_abort)
    tree = read_task_dir(examples_dir / "example-repair-median")
    started = time.monotonic()
    result = runtime.run_trial(tree, str(tmp_path), TrialRequest(label="reference"))
    assert (result.status, result.detail) == ("error", "aborted")
    assert time.monotonic() - started < 20


def test_only_harbors_docker_environment_takes_harness_trials():
    from train.harnesses.runtimes import RuntimeUnsupportedError, require_harness_trials

    assert make_runtime("docker").harness_trials is True
    assert require_harness_trials(make_runtime("harbor:docker"), "x.unsupported")
    for hosted in ("harbor:daytona", "harbor:modal"):
        with pytest.raises(RuntimeUnsupportedError, match=r"^x\.unsupported: .*" + hosted):
            require_harness_trials(make_runtime(hosted), "x.unsupported")


def _layer(root: Path) -> Path:
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    for name in (".rlenv-layer.Dockerfile", ".rlenv-complete", ".dockerignore"):
        (root / name).write_text("bundle build file\n")
    return root


def test_derived_environment_is_the_tasks_plus_one_copy_of_the_layer(examples_dir, tmp_path):
    task = read_task_dir(sorted(p for p in examples_dir.iterdir() if p.is_dir())[0])
    copies = TaskCopies()
    copy = copies.copy(task)
    (Path(copy) / "environment" / ".dockerignore").write_text("*\n")
    layer = _layer(tmp_path / "bundle")
    derived = copies.derived_environment(task, copy, layer, "/opt/rlenv-harness/pi")

    original = (Path(copy) / "environment" / "Dockerfile").read_text()
    recipe = (derived / "Dockerfile").read_text()
    assert recipe == original.rstrip("\n") + "\nCOPY .rlenv-harness-layer/ /opt/rlenv-harness/pi/\n"
    assert (derived / ".dockerignore").read_text().splitlines()[-2:] == [
        "!.rlenv-harness-layer",
        "!.rlenv-harness-layer/**",
    ]
    placed = derived / ".rlenv-harness-layer"
    assert (placed / "node_modules" / "pkg" / "index.js").read_text() == "module.exports = 1\n"
    assert sorted(p.name for p in placed.iterdir()) == ["node_modules"]  # no build files
    # The task's copy, which the verifier is built from, is left as it was.
    assert "rlenv-harness" not in (Path(copy) / "environment" / "Dockerfile").read_text()
    # Once per task copy and layer: the same folder again, not a rewrite.
    assert copies.derived_environment(task, copy, layer, "/opt/rlenv-harness/pi") == derived


def test_a_prebuilt_image_task_derives_from_its_image(examples_dir, tmp_path):
    task = read_task_dir(sorted(p for p in examples_dir.iterdir() if p.is_dir())[0])
    copies = TaskCopies()
    copy = Path(copies.copy(task))
    (copy / "environment" / "Dockerfile").unlink()
    image = "registry.example/team/env:1"
    config = task.config.model_copy(
        update={"environment": task.config.environment.model_copy(update={"docker_image": image})}
    )
    prebuilt = dataclasses.replace(task, config=config)
    derived = copies.derived_environment(prebuilt, str(copy), _layer(tmp_path / "b"), "/opt/x")
    assert (derived / "Dockerfile").read_text() == (
        f"FROM {image}\nCOPY .rlenv-harness-layer/ /opt/x/\n"
    )


def test_a_prebuilt_image_name_cannot_add_instructions(examples_dir, tmp_path):
    from repo2rlenv.runtime.images import ImageBuildError

    task = read_task_dir(sorted(p for p in examples_dir.iterdir() if p.is_dir())[0])
    copies = TaskCopies()
    copy = Path(copies.copy(task))
    (copy / "environment" / "Dockerfile").unlink()
    hostile = "debian:12\nRUN touch /pwned"
    environment = task.config.environment.model_copy(update={"docker_image": hostile})
    config = task.config.model_copy(update={"environment": environment})
    with pytest.raises(ImageBuildError, match="is no image"):
        copies.derived_environment(
            dataclasses.replace(task, config=config), str(copy), _layer(tmp_path / "b"), "/opt/x"
        )


# -- an environment that does not start: the engine's, or the task's build ------------


def _fake_harbor(monkeypatch) -> None:
    """The two names of Harbor the driver's `Trial.start` imports, so it runs here with
    a fake environment class (Harbor itself lives in another interpreter)."""
    from types import ModuleType, SimpleNamespace

    config = ModuleType("harbor.models.task.config")
    config.NetworkMode = str  # type: ignore[attr-defined]
    config.NetworkPolicy = lambda network_mode: SimpleNamespace(network_mode=network_mode)  # type: ignore[attr-defined]
    for name in ("harbor", "harbor.models", "harbor.models.task"):
        monkeypatch.setitem(sys.modules, name, ModuleType(name))
    monkeypatch.setitem(sys.modules, "harbor.models.task.config", config)


def _driver_trial(tmp_path, raises: BaseException, *, refuse: BaseException | None = None):
    from types import SimpleNamespace

    from repo2rlenv.runtime import harbor_driver

    class FailingEnvironment:
        """A Harbor environment whose start fails (a daemon gone, a provider quota)."""

        def __init__(self, **_kwargs) -> None: ...

        def validate_network_policy_support(self, _policy) -> None:
            if refuse is not None:
                raise refuse

        async def start(self, force_build: bool) -> None:
            raise raises

        async def stop(self, delete: bool) -> None: ...

    trial = harbor_driver.Trial.__new__(harbor_driver.Trial)
    trial.request = {
        "environment_type": "docker",
        "labels": {},
        "session": "s",
        "agent_network": "no-network",
    }
    trial.task_dir, trial.scratch, trial.paths, trial.live = tmp_path, tmp_path, None, []
    trial.config = SimpleNamespace(environment=SimpleNamespace())
    trial.cls = FailingEnvironment
    return trial


def test_the_driver_reports_any_start_failure_raw_never_as_the_tasks(tmp_path, monkeypatch):
    """It was `build-failed` (the task's, never retried) for any exception at start."""
    import asyncio

    _fake_harbor(monkeypatch)
    quota = RuntimeError("429 Too Many Requests: sandbox quota exceeded")
    for op in ("prepare", "trial"):
        reply = asyncio.run(getattr(_driver_trial(tmp_path, quota), op)())
        assert (reply["status"], reply["retryable"], reply["start_failed"]) == (
            "error",
            True,
            True,
        ), op
        assert "quota exceeded" in reply["detail"]
    refused = _driver_trial(tmp_path, quota, refuse=ValueError("allowlist needs the sidecar"))
    reply = asyncio.run(refused.prepare())
    assert (reply["status"], reply.get("retryable", False)) == ("error", False)


@pytest.mark.parametrize(
    ("detail", "status"),
    [
        (
            "RuntimeError: Cannot connect to the Docker daemon at unix:///var/run/docker.sock",
            "error",
        ),
        ("RuntimeError: 429 Too Many Requests: sandbox quota exceeded", "error"),
        ("ConnectError: [Errno -3] Temporary failure in name resolution", "error"),
        (
            "RuntimeError: Docker compose command failed ... failed to solve: process "
            '"/bin/sh -c pip install flask" did not complete successfully: exit code: 1',
            "build-failed",
        ),
        ("dockerfile parse error on line 2: unknown instruction: RUNN", "build-failed"),
        (
            "failed to solve: RUN ... did not complete successfully: no space left on device",
            "error",
        ),
    ],
)
def test_a_start_failure_is_the_engines_unless_the_build_log_says_the_tasks(detail, status):
    reply = judge_start(
        DriverReply(status="error", detail=detail, retryable=True, start_failed=True)
    )
    assert reply.status == status and reply.retryable == (status == "error")
    mid_trial = DriverReply(status="error", detail=detail, retryable=True)
    assert judge_start(mid_trial).status == "error"  # only a start is judged


START_FAILED_DRIVER = """import json, sys
from pathlib import Path
sys.stdin.read()
count = Path(sys.argv[0]).with_name("calls")
count.write_text(str(int(count.read_text()) + 1) if count.exists() else "1")
print(json.dumps({"status": "error", "detail": DETAIL, "retryable": True, "start_failed": True}))
"""


def _start_failing(tmp_path, monkeypatch, detail: str) -> HarborRuntime:
    fake = tmp_path / "driver.py"
    fake.write_text(START_FAILED_DRIVER.replace("DETAIL", repr(detail)))
    monkeypatch.setattr(harbor_runtime, "DRIVER", fake)
    return HarborRuntime("docker", python=Path(sys.executable), retries=1)


def test_a_harbor_start_failure_is_infrastructure_retried_then_every_trial_not_run(
    examples_dir, tmp_path, monkeypatch
):
    from repo2rlenv.runtime import EngineError
    from repo2rlenv.validate.dynamic import run_dynamic
    from repo2rlenv.validate.report import TaskReport

    runtime = _start_failing(tmp_path, monkeypatch, "RuntimeError: provider quota exceeded")
    tree = read_task_dir(examples_dir / "example-repair-median")
    with pytest.raises(EngineError) as caught:
        runtime.prepare(tree)
    assert caught.value.retries == 1 and (tmp_path / "calls").read_text() == "2"
    findings, trials = run_dynamic(tree, runtime, reruns=0, probes=False)
    assert [f.rule_id for f in findings] == ["run.error"]
    assert {t.status for t in trials} == {"error"} and len(trials) == 2
    report = TaskReport(path="t", task_id="t", findings=findings, trials=trials, dynamic_ran=True)
    assert report.derive_label().status == "unverified"


def test_a_harbor_build_that_fails_on_the_tasks_own_step_is_the_tasks(
    examples_dir, tmp_path, monkeypatch
):
    from repo2rlenv.runtime.images import ImageBuildError

    log = 'failed to solve: process "/bin/sh -c exit 3" did not complete successfully'
    runtime = _start_failing(tmp_path, monkeypatch, f"RuntimeError: {log}")
    tree = read_task_dir(examples_dir / "example-repair-median")
    with pytest.raises(ImageBuildError, match="does not build"):
        runtime.prepare(tree)
    assert (tmp_path / "calls").read_text() == "1"  # the task's verdict: not retried
